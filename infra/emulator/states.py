"""Local runtime: the Clock port on one machine, in place of the Step Functions state machine.

``LocalClock.schedule(timer)`` does what ``StepFunctionsClock`` arranges on AWS: at
``timer.due_ms`` the clock function is invoked with ``timer.to_event()`` (``{kind, ref, seq,
due_ms}``, the state machine's input) and a Lambda-like context, in a thread pool. Like Step
Functions execution names, ``timer.name`` is unique: scheduling a name that is pending or has
already fired does nothing (DESIGN.md §3 Clocks). Firings happen in due order (ties: in
scheduling order); each firing is one invocation, and invocations may overlap, as on AWS.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

from infra.emulator.lambda_context import DEFAULT_REGION, make_context
from shared.services.ports import Timer

log = logging.getLogger(__name__)

ClockHandler = Callable[[dict[str, Any], Any], Any]
"""The clock function: ``handler(timer.to_event(), context)``."""


class LocalClock:
    """Wall-clock time and in-process deadlines; implements ``shared.services.ports.Clock``.

    ``clock_handler`` may be given later with :meth:`set_handler` (a timer that comes due with no
    handler is logged and dropped). Nothing fires before :meth:`start`; :meth:`stop` stops firing
    and waits for invocations in flight. Thread-safe: handlers call :meth:`schedule` from
    their threads.
    """

    def __init__(
        self,
        clock_handler: ClockHandler | None = None,
        *,
        executor: Executor | None = None,
        function_name: str = "wordle-tournament-clock",
        region: str = DEFAULT_REGION,
    ) -> None:
        self._handler = clock_handler
        self._own_executor = executor is None
        self._executor: Executor = executor or ThreadPoolExecutor(
            max_workers=8, thread_name_prefix="clock"
        )
        self._function_name = function_name
        self._region = region
        self._cond = threading.Condition()
        self._heap: list[tuple[int, int, Timer]] = []  # (due_ms, order, timer)
        self._order = itertools.count()
        self._names: set[str] = set()  # every name ever scheduled (pending or fired)
        self._in_flight: set[Future[Any]] = set()
        self._running = False
        self._thread: threading.Thread | None = None

    # -- the Clock port --------------------------------------------------------------------

    def now_ms(self) -> int:
        """Absolute UTC wall-clock time in milliseconds."""
        return time.time_ns() // 1_000_000

    def schedule(self, timer: Timer) -> None:
        """Invoke the clock handler with ``timer.to_event()`` at ``timer.due_ms``.

        Idempotent by ``timer.name``: a name already pending or fired is ignored (even if the
        other fields differ, which Step Functions would reject as ExecutionAlreadyExists).
        """
        with self._cond:
            if timer.name in self._names:
                log.debug("timer %s already scheduled; ignored", timer.name)
                return
            self._names.add(timer.name)
            heapq.heappush(self._heap, (timer.due_ms, next(self._order), timer))
            self._cond.notify()

    # -- control and introspection ---------------------------------------------------------

    def set_handler(self, clock_handler: ClockHandler | None) -> None:
        """Set (or clear) the function invoked when a timer comes due."""
        self._handler = clock_handler

    def pending(self) -> list[Timer]:
        """Timers not yet fired, soonest first."""
        with self._cond:
            return [timer for _, _, timer in sorted(self._heap)]

    def start(self) -> LocalClock:
        """Start firing due timers (those already overdue fire at once, in due order)."""
        with self._cond:
            if self._running:
                return self
            self._running = True
        self._thread = threading.Thread(target=self._run, name="local-clock", daemon=True)
        self._thread.start()
        return self

    def stop(self, *, timeout: float | None = 10.0) -> None:
        """Stop firing; wait up to ``timeout`` s for invocations in flight. Pending timers stay."""
        with self._cond:
            self._running = False
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        with self._cond:
            in_flight = list(self._in_flight)
        deadline = None if timeout is None else time.monotonic() + timeout
        for future in in_flight:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                future.exception(timeout=remaining)
            except TimeoutError:
                log.warning("clock handler still running at shutdown")
        if self._own_executor:
            self._executor.shutdown(wait=False)

    def __enter__(self) -> LocalClock:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the firing thread -----------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._running:
                    if not self._heap:
                        self._cond.wait()
                        continue
                    delay_ms = self._heap[0][0] - self.now_ms()
                    if delay_ms <= 0:
                        break
                    self._cond.wait(delay_ms / 1000)
                if not self._running:
                    return
                _, _, timer = heapq.heappop(self._heap)
                future = self._executor.submit(self._fire, timer)
                self._in_flight.add(future)
            future.add_done_callback(self._done)

    def _done(self, future: Future[Any]) -> None:
        with self._cond:
            self._in_flight.discard(future)

    def _fire(self, timer: Timer) -> None:
        handler = self._handler
        if handler is None:
            log.warning("timer %s came due but no clock handler is set; dropped", timer.name)
            return
        context = make_context(self._function_name, region=self._region)
        try:
            handler(timer.to_event(), context)
        except Exception:  # the Lambda boundary: a failed execution is logged, as on AWS
            log.exception("clock handler failed for timer %s", timer.name)
