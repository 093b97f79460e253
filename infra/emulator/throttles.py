"""Local runtime: API Gateway's throttles, Lambda's concurrency limits and timeouts, and cold
starts, from the limits the stack deploys (``infra.limits``).

- :class:`TokenBucket`: API Gateway's token bucket (``rate`` tokens a second up to ``burst``;
  one message, one token), clocked by the message's arrival time (``requestTimeEpoch``).
- :class:`RouteThrottles`: one bucket per route key (its own throttle, else the stage default's
  values: API Gateway applies stage limits per route, "at the API method level") plus the
  account's bucket shared by every route (AWS default 10,000/s, burst 5,000). A throttled
  message reaches no integration; the client gets API Gateway's own frame
  :func:`throttled_frame`; a throttled ``$connect`` gets HTTP 429. AWS, "Throttle requests to
  your WebSocket APIs",
  https://docs.aws.amazon.com/apigateway/latest/developerguide/websocket-api-protect.html
- :class:`Concurrency`: a function with reserved concurrency runs at most that many
  invocations at once, the others share the account's unreserved rest; an invocation beyond
  is rejected at once (``TooManyRequestsException``), never queued (Lambda, "Configuring
  reserved concurrency",
  https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html). API Gateway
  reports the failed integration as "Internal server error".
- :class:`ColdStarts`: the init delay of a new execution environment, per function.
- :class:`TwinLimits`: all of it for one twin; :meth:`TwinLimits.for_stage` reads a deployed
  stage's values, scaled for a test (``TwinLimits.for_stage("prod", stage_rate=20)``: every
  throttle scaled so the stage default is 20 messages/s).

The gateway (``infra.emulator.gateway``) applies them; why and what differs from AWS:
``shared/domain/RULINGS.md``, design notes, "Throttles, concurrency and timeouts in the twin".
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from infra.limits import (
    FUNCTION_TIMEOUT_S,
    STAGE_LIMITS,
    StageLimits,
    Throttle,
    account_concurrency_needed,
)

ACCOUNT_THROTTLE: Final = Throttle(10_000, 5_000)
"""API Gateway's default account-level throttle per Region, across all APIs (Amazon API
Gateway quotas, https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html)."""
ACCOUNT_CONCURRENCY: Final = 1_000
"""Lambda's default concurrent executions per Region
(https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html)."""

TOO_MANY_REQUESTS: Final = "Too Many Requests"
"""The ``message`` of API Gateway's answer to a throttled request (HTTP 429)."""


def throttled_frame(connection_id: str, request_id: str) -> str:
    """API Gateway's frame for a throttled WebSocket message: no ``type``, the shape of its
    other error frames (``{"message", "connectionId", "requestId"}``); the message reached no
    integration."""
    payload = {"message": TOO_MANY_REQUESTS, "connectionId": connection_id, "requestId": request_id}
    return json.dumps(payload)


class TokenBucket:
    """A token bucket of ``throttle.burst`` tokens refilled at ``throttle.rate`` a second, full
    at first. :meth:`take` is thread-safe; its clock (``now``, seconds) is the message's
    arrival: an arrival earlier than the last one seen refills nothing."""

    def __init__(self, throttle: Throttle) -> None:
        self.throttle = throttle
        self._tokens = float(throttle.burst)
        self._last: float | None = None
        self._lock = threading.Lock()

    def take(self, now: float) -> bool:
        """Spend one token at ``now`` (seconds); False (nothing spent) when the bucket is
        empty."""
        with self._lock:
            if self._last is not None and now > self._last:
                refill = (now - self._last) * self.throttle.rate
                self._tokens = min(float(self.throttle.burst), self._tokens + refill)
            if self._last is None or now > self._last:
                self._last = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            return False

    def give_back(self) -> None:
        """Return a token taken by a message another bucket then refused."""
        with self._lock:
            self._tokens = min(float(self.throttle.burst), self._tokens + 1.0)


class RouteThrottles:
    """API Gateway's throttles for one stage: a bucket per route key, and the account's.
    Counts what it admitted and refused per route (``admitted``, ``throttled``)."""

    def __init__(self, limits: StageLimits, account: Throttle | None = ACCOUNT_THROTTLE) -> None:
        self.limits = limits
        self._account = TokenBucket(account) if account is not None else None
        self._routes: dict[str, TokenBucket] = {}
        self._lock = threading.Lock()
        self.admitted: Counter[str] = Counter()
        self.throttled: Counter[str] = Counter()

    def _bucket(self, route_key: str) -> TokenBucket:
        with self._lock:
            bucket = self._routes.get(route_key)
            if bucket is None:
                bucket = self._routes[route_key] = TokenBucket(self.limits.throttle_for(route_key))
            return bucket

    def admit(self, route_key: str, arrived_s: float) -> bool:
        """Whether a message (or ``$connect``) for ``route_key`` that arrived at ``arrived_s``
        (epoch seconds) passes its route's bucket and the account's."""
        route = self._bucket(route_key)
        ok = route.take(arrived_s)
        if ok and self._account is not None and not self._account.take(arrived_s):
            route.give_back()
            ok = False
        with self._lock:
            (self.admitted if ok else self.throttled)[route_key] += 1
        return ok


class TooManyRequestsError(Exception):
    """Lambda refused a synchronous invocation: the function is at its reserved concurrency
    (or the unreserved pool is used up): ``TooManyRequestsException``, HTTP 429."""


class FunctionTimeoutError(Exception):
    """The invocation ran past its function's timeout: Lambda stops it and reports
    ``Task timed out after N seconds``; API Gateway sees a failed integration."""


class Concurrency:
    """Lambda's concurrency limits: ``reserved`` function -> its cap (and guarantee); the
    others share ``account - sum(reserved)``. Thread-safe; counts ``rejected`` per function."""

    def __init__(self, reserved: Mapping[str, int], account: int = ACCOUNT_CONCURRENCY) -> None:
        self.reserved = dict(reserved)
        self.unreserved = max(0, account - sum(self.reserved.values()))
        self._running: Counter[str] = Counter()
        self._shared = 0
        self._lock = threading.Lock()
        self.rejected: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()

    def acquire(self, function: str) -> bool:
        """Start an invocation of ``function``; False (rejected) when it has no room."""
        with self._lock:
            cap = self.reserved.get(function)
            if cap is None:
                if self._shared >= self.unreserved:
                    self.rejected[function] += 1
                    return False
                self._shared += 1
            elif self._running[function] >= cap:
                self.rejected[function] += 1
                return False
            self._running[function] += 1
            self.peak[function] = max(self.peak[function], self._running[function])
            return True

    def release(self, function: str) -> None:
        """End an invocation started by :meth:`acquire`."""
        with self._lock:
            self._running[function] -= 1
            if function not in self.reserved:
                self._shared -= 1

    def running(self, function: str) -> int:
        with self._lock:
            return self._running[function]


@dataclass
class ColdStarts:
    """Init delays of new execution environments: ``seconds`` function -> its init time (a
    missing function starts warm). A function keeps as many warm environments as it has run
    at once; an invocation beyond them pays the delay (and adds one). ``share``: besides, each
    invocation finds its environment recycled (Lambda reclaims idle ones and replaces the
    others every few hours) with this probability, and pays the delay too. ``jitter``: each
    delay is drawn uniformly within +-jitter of it (a fraction). Counts ``cold`` per function."""

    seconds: Mapping[str, float]
    jitter: float = 0.0
    seed: int | None = None
    share: float = 0.0
    cold: Counter[str] = field(default_factory=Counter)
    _warm: Counter[str] = field(default_factory=Counter)
    _busy: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def start(self, function: str) -> float:
        """An invocation of ``function`` begins: the init delay it pays (seconds, 0 if warm)."""
        with self._lock:
            self._busy[function] += 1
            recycled = self.share > 0 and self._rng.random() < self.share
            if self._busy[function] <= self._warm[function] and not recycled:
                return 0.0
            if not recycled:
                self._warm[function] += 1
            base = self.seconds.get(function, 0.0)
            if base <= 0:
                return 0.0
            self.cold[function] += 1
            return base * (1 + self._rng.uniform(-self.jitter, self.jitter))

    def end(self, function: str) -> None:
        with self._lock:
            self._busy[function] -= 1


@dataclass
class TwinLimits:
    """What the twin enforces. ``throttles``: the stage's route throttles and the account
    throttle (None: none); ``concurrency``: reserved concurrency (None: unlimited);
    ``timeouts``: function -> seconds (default: the deployed ones, ``infra.limits``);
    ``cold_starts``: init delays (None: every invocation warm)."""

    throttles: RouteThrottles | None = None
    concurrency: Concurrency | None = None
    timeouts: Mapping[str, float] = field(default_factory=lambda: dict(FUNCTION_TIMEOUT_S))
    cold_starts: ColdStarts | None = None

    @classmethod
    def for_stage(
        cls,
        stage: str = "prod",
        *,
        scale: float = 1.0,
        stage_rate: float | None = None,
        account: Throttle | None = ACCOUNT_THROTTLE,
        account_concurrency: int | None = None,
        reserved: Mapping[str, int] | None = None,
        cold_starts: ColdStarts | None = None,
    ) -> TwinLimits:
        """The deployed ``stage``'s limits (``infra.limits.STAGE_LIMITS``). ``scale``
        multiplies every throttle's rate and burst (the account's too); ``stage_rate`` instead
        picks the factor that makes the stage default that many messages a second.
        ``reserved`` replaces the reservations (e.g. scaled down with the throttles).
        ``account_concurrency`` defaults to the quota the stage needs (its reservations plus
        Lambda's unreserved 100, at least AWS's default 1,000: a stage deploys only into an
        account whose quota holds its reservations)."""
        limits = STAGE_LIMITS[stage]
        if stage_rate is not None:
            scale = stage_rate / limits.stage.rate
        if scale != 1.0:
            limits = limits.scaled(scale)
            account = account.scaled(scale) if account is not None else None
        if reserved is not None:
            limits = replace(limits, reserved=dict(reserved))
        if account_concurrency is None:
            account_concurrency = max(ACCOUNT_CONCURRENCY, account_concurrency_needed(limits))
        return cls(
            throttles=RouteThrottles(limits, account),
            concurrency=Concurrency(limits.reserved, account_concurrency),
            cold_starts=cold_starts,
        )

    def timeout_for(self, function: str, default: float) -> float:
        """``function``'s timeout in seconds (``default`` for one the stack does not deploy)."""
        return float(self.timeouts.get(function, default))

    def counts(self) -> dict[str, Any]:
        """What was refused so far: ``throttled`` / ``admitted`` per route,
        ``rejected`` / ``peak`` concurrency per function, ``cold`` starts per function."""
        out: dict[str, Any] = {}
        if self.throttles is not None:
            out["throttled"] = dict(self.throttles.throttled)
            out["admitted"] = dict(self.throttles.admitted)
        if self.concurrency is not None:
            out["rejected"] = dict(self.concurrency.rejected)
            out["peak"] = dict(self.concurrency.peak)
        if self.cold_starts is not None:
            out["cold"] = dict(self.cold_starts.cold)
        return out


def now_s() -> float:
    """Epoch seconds (the buckets' clock when no arrival time is given)."""
    return time.time()


class _Stopped(BaseException):
    """Raised inside a handler's thread at its timeout (a ``BaseException``: a handler's
    ``except Exception`` does not swallow it)."""


def _set_async_exc(thread_id: int, exc: type[BaseException] | None) -> None:
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None
    )


class Invocation:
    """One invocation run on a worker thread with its function's timeout: :meth:`run` (on the
    thread) pays the cold start, then calls ``handler(event, context)`` with a context made as
    it starts (``make_context()``: the timeout counts from there, as Lambda's does; the init
    phase does not count). :meth:`stop` (at the timeout) raises :class:`_Stopped` inside the
    handler's thread, so what it would do after that moment does not happen (Lambda ends the
    runtime); ``run`` then raises :class:`FunctionTimeoutError`. A handler blocked in a socket call
    stops when the call returns."""

    def __init__(
        self, handler: Any, event: Any, make_context: Any, cold_seconds: float = 0.0
    ) -> None:
        self.handler, self.event, self.make_context = handler, event, make_context
        self.cold_seconds = cold_seconds
        self.started = threading.Event()
        self.on_start: Any = None
        """Called (on the worker thread) as the handler starts."""
        self._lock = threading.Lock()
        self._thread: int | None = None
        self._finished = False
        self._stopped = False

    def run(self) -> Any:
        if self.cold_seconds > 0:
            time.sleep(self.cold_seconds)
        context = self.make_context()
        with self._lock:
            self._thread = threading.get_ident()
        self.started.set()
        if self.on_start is not None:
            self.on_start()
        try:
            try:
                return self.handler(self.event, context)
            finally:
                with self._lock:
                    self._finished = True
        except _Stopped:
            raise FunctionTimeoutError(f"Task timed out ({context.function_name})") from None
        finally:
            if self._stopped:  # a stop raised too late to land: clear it off this thread
                _set_async_exc(threading.get_ident(), None)

    def stop(self) -> bool:
        """Stop the handler now (its timeout); False if it already finished."""
        with self._lock:
            if self._finished or self._thread is None:
                return False
            self._stopped = True
            _set_async_exc(self._thread, _Stopped)
            return True
