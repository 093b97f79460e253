"""Service layer: what every use case shares — the dependencies, the retry loop for
optimistic concurrency, and pushing messages to players' connections."""

from __future__ import annotations

import json
import random
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from shared.domain.languages import Language
from shared.domain.tournament import Dealer, SecretSource
from shared.protocol.outbound import OutboundEvent, dump_event
from shared.services.errors import BusyError, ConflictError, ContentionError, TryAgainError
from shared.services.ports import Clock, Notifier, Store, Timer

T = TypeVar("T")


class Lexicon(Protocol):
    """The word lists of the game languages (adapter: ``shared.adapters.lexicon``)."""

    def language(self, code: str) -> Language:
        """Raises UnknownLanguageError."""
        ...

    def secrets(self, code: str) -> SecretSource: ...

    def allowed(self, code: str, length: int) -> frozenset[str]: ...

    def display(self, code: str, word: str) -> str | None: ...


@dataclass(frozen=True)
class Timing:
    """Clock durations in milliseconds (rules page: 30 s turns, 6 s intros; ruling 9: 60 s;
    ``skip_grace_ms``: a skip applies this long after its turn deadline, DESIGN.md §3 Clocks;
    ``heartbeat_ms``: ruling 14's silence after which a player counts as disconnected — None
    turns the liveness check off, for tests of other rules whose players never ping)."""

    turn_ms: int = 30_000
    intro_ms: int = 6_000
    reconnect_ms: int = 60_000
    skip_grace_ms: int = 1_000
    heartbeat_ms: int | None = None


@dataclass
class Deps:
    """Everything a use case may touch. Built by ``shared.runtime.bootstrap``; tests inject
    fakes (``tests/fakes.py``)."""

    store: Store
    notifier: Notifier
    clock: Clock
    lexicon: Lexicon
    timing: Timing = field(default_factory=Timing)
    rng_factory: Callable[[], random.Random] = field(default=lambda: random.SystemRandom())
    new_id: Callable[[], str] = field(default=lambda: uuid.uuid4().hex[:16])
    new_secret: Callable[[], str] = field(default=lambda: secrets.token_urlsafe(32))
    max_attempts: int = 10
    backoff_base_s: float = 0.01
    backoff_cap_s: float = 0.2
    sleep: Callable[[float], None] = field(default=time.sleep)
    """Waits between retries of a conflicted use case (tests inject a no-op or a recorder)."""
    metric: Callable[[str, float], None] = field(default=lambda name, value: None)
    """Counts an operational metric (name, count); bootstrap wires Powertools Metrics."""
    on_gone: Callable[[str], None] | None = None
    """Called with each connection id the notifier found gone (starts the disconnect flow)."""
    limiter: RateLimiter | None = None
    """Per-connection action rate limit (``functions._handler``); None: unlimited."""

    def dealer(self, language: str) -> Dealer:
        return Dealer(
            rng=self.rng_factory(),
            words=self.lexicon.secrets(language),
            turn_ms=self.timing.turn_ms,
            intro_ms=self.timing.intro_ms,
            skip_grace_ms=self.timing.skip_grace_ms,
        )


def retrying(deps: Deps, attempt: Callable[[], T], *, busy_budget_ms: int = 2_000) -> T:
    """Run ``attempt`` (load, decide, commit) until it commits, retrying the whole use case
    (fresh reads, a fresh decision) when the store reports a transient failure:

    - ``ConflictError``: another writer got there first (a failed condition);
    - ``ContentionError``: another transaction was writing the item (DynamoDB's
      ``TransactionConflictException`` / ``TransactionConflict``); nothing was written;
    - ``BusyError``: the table was throttled or unavailable after botocore's own retries
      (which already waited); nothing was written. Retried only while less than
      ``busy_budget_ms`` (``deps.clock``) has passed since the first try, so that a table that
      stays busy is answered ``try_again`` well within the function's timeout.

    Between tries it waits a "full jitter" exponential backoff (uniform in
    ``[0, min(cap, base * 2**n)]``: 10, 20, 40, 80, 160, 200... ms ceilings by default, under
    1.5 s over the 10 attempts), so racers that keep colliding spread out instead of retrying
    in lockstep (AWS Architecture Blog, "Exponential Backoff And Jitter"; DynamoDB developer
    guide, "Error retries and exponential backoff"). Raises a plain ``TryAgainError``
    (``try_again`` to the player; nothing was saved by the failed tries) after
    ``deps.max_attempts`` tries or the busy budget; a plain ``TryAgainError`` is never retried,
    so an inner ``retrying`` that gave up is not multiplied by an outer one. Anything else
    (a refusal of the rules, a non-transient DynamoDB error) propagates at once.
    """
    started = deps.clock.now_ms()
    for n in range(deps.max_attempts):
        try:
            return attempt()
        except (ConflictError, ContentionError):
            pass
        except BusyError:
            if deps.clock.now_ms() - started >= busy_budget_ms:
                break
        if n + 1 < deps.max_attempts:
            ceiling = min(deps.backoff_cap_s, deps.backoff_base_s * 2**n)
            deps.sleep(random.uniform(0, ceiling))
    raise TryAgainError("the server was busy, please try again")


class RateLimiter:
    """Per-connection token buckets: ``per_second`` tokens refill continuously up to
    ``burst``; every inbound message takes one (``allow``), refused when the bucket is empty.

    Where the state lives — in this process, per Lambda container, deliberately:

    - the guess hot path stays at 1 read + 1 write (DESIGN.md §3). A bucket in the CONN item
      would cost every message a write (and the guess, which never reads CONN, a read too):
      doubling the cost of every action to police the rare abuser;
    - a container runs one invocation at a time and API Gateway reuses warm containers, so a
      client looping on one connection mostly meets the same bucket: it is refused with
      ``rate_limited`` without a single DynamoDB call;
    - documented limit: a flood fanned out over N concurrent containers gets up to N buckets.
      The hard ceilings behind it are API Gateway's stage/route throttling and the functions'
      reserved concurrency (CDK). Every action is also safe to repeat (conditional writes), so
      what leaks through can only cost money, never corrupt a game.

    Bounded memory: at most ``max_connections`` buckets, least recently used evicted (an
    evicted connection starts again with a full bucket). Thread-safe.
    """

    def __init__(self, per_second: float, burst: int, max_connections: int = 10_000) -> None:
        self.per_second = per_second
        self.burst = burst
        self._max = max_connections
        self._buckets: OrderedDict[str, tuple[float, int]] = OrderedDict()
        self._lock = threading.Lock()

    def allow(self, connection_id: str, now_ms: int) -> bool:
        """Take one token for ``connection_id`` at ``now_ms`` (UTC ms); False when empty."""
        with self._lock:
            tokens, at = self._buckets.pop(connection_id, (float(self.burst), now_ms))
            tokens = min(float(self.burst), tokens + max(0, now_ms - at) * self.per_second / 1000)
            allowed = tokens >= 1.0
            if allowed:
                tokens -= 1.0
            self._buckets[connection_id] = (tokens, max(at, now_ms))
            while len(self._buckets) > self._max:
                self._buckets.popitem(last=False)
            return allowed

    def forget(self, connection_id: str) -> None:
        """Drop a closed connection's bucket (``$disconnect``)."""
        with self._lock:
            self._buckets.pop(connection_id, None)


REQUEST: ContextVar[tuple[str, str] | None] = ContextVar("request", default=None)
"""``(connection_id, request_id)`` of the inbound message being handled (set by the handler
wrapper): the first message pushed back to that connection echoes the ``request_id``
(DESIGN.md §4: "Every inbound message may carry request_id, echoed in the reply")."""


def _echo_request_id(messages: list[tuple[str, str]]) -> None:
    request = REQUEST.get()
    if request is None:
        return
    connection_id, request_id = request
    for i, (cid, text) in enumerate(messages):
        if cid == connection_id:
            doc = json.loads(text)
            if doc.get("request_id") is None:
                doc["request_id"] = request_id
                messages[i] = (cid, json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
            REQUEST.set(None)  # one reply per request
            return


@dataclass
class Outbox:
    """Messages to push after a commit (never before: nothing is sent for a change that was
    not saved) and timers to schedule."""

    messages: list[tuple[str, str]] = field(default_factory=list)
    timers: list[Timer] = field(default_factory=list)
    closes: list[str] = field(default_factory=list)
    """Connections to close after the messages (a silent player's, ruling 14)."""

    def add(self, connections: Iterable[str | None], event: OutboundEvent) -> None:
        text = dump_event(event)
        for cid in dict.fromkeys(connections):
            if cid:
                self.messages.append((cid, text))

    def flush(self, deps: Deps) -> None:
        for timer in self.timers:
            deps.clock.schedule(timer)
        _echo_request_id(self.messages)
        gone = deps.notifier.send(self.messages) if self.messages else []
        for cid in dict.fromkeys(self.closes):
            deps.notifier.close(cid)
        self.messages = []
        self.timers = []
        self.closes = []
        if deps.on_gone is not None:
            for cid in gone:
                deps.on_gone(cid)


def first(items: Sequence[T]) -> T | None:
    return items[0] if items else None
