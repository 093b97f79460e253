"""Simulation: a discrete-event scheduler in simulated time, whose tasks are real threads.

Each task (one Lambda invocation: a message handler, a clock wake) runs the real synchronous
code in a worker thread, but only one thread ever runs at a time: a task that waits (a
DynamoDB call, a post, a retry's backoff: ``Sim.sleep``) hands control back to the scheduler,
which advances simulated time to the earliest pending event and resumes (or starts) that one.
Other tasks' writes thus land between a task's read and its conditional write exactly as they
would under real concurrency, and the order of everything is fixed by the seed alone. Events
at the same instant run in the order they were scheduled.

A wait whose end nobody observes (the second half of a call, after its effect) is deferred
(``Sim.defer``) and added to the task's next wait: the same timing with half the thread switches.

Callbacks scheduled with ``Sim.call_at`` run on the scheduler's own thread and must not wait
(a scripted player deciding what to send next); ``Sim.spawn_at`` starts a task.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable
from typing import Any

_CALL, _SPAWN, _RESUME = 0, 1, 2


class _Worker:
    """A thread that runs tasks one after the other, only when the scheduler hands it the baton."""

    def __init__(self, sim: Sim) -> None:
        self.sim = sim
        self.go = threading.Lock()
        self.go.acquire()
        self.fn: Callable[[], Any] | None = None
        self.ctx: dict[str, Any] = {}
        self.debt = 0.0
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            self.go.acquire()
            fn = self.fn
            if fn is None:
                self.sim._back.release()
                return
            try:
                fn()
            except BaseException as err:  # recorded; the report counts them
                self.sim.errors.append((self.ctx.get("route", "?"), repr(err)))
            self.fn = None
            self.ctx = {}
            self.debt = 0.0
            self.sim._idle.append(self)
            self.sim._back.release()


class Sim:
    """Simulated time in seconds from 0 (``now``); ``start_ms`` is the UTC ms of time 0."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self.now = 0.0
        self.start_ms = start_ms
        self._heap: list[tuple[float, int, int, Any]] = []
        self._seq = itertools.count()
        self._back = threading.Lock()
        self._back.acquire()
        self._idle: list[_Worker] = []
        self._workers: list[_Worker] = []
        self.current: _Worker | None = None
        self.errors: list[tuple[str, str]] = []
        self.tasks_run = 0

    def now_ms(self) -> int:
        """UTC ms now, as the running task sees it (its deferred wait included)."""
        return self.start_ms + int((self.now + self.owed) * 1000)

    # -------------------------------------------------------------- scheduling
    def call_at(self, t: float, fn: Callable[[], Any]) -> None:
        """Run ``fn`` (which must not wait) on the scheduler's thread at time ``t``."""
        heapq.heappush(self._heap, (max(t, self.now), next(self._seq), _CALL, fn))

    def spawn_at(self, t: float, fn: Callable[[], Any], **ctx: Any) -> None:
        """Start a task running ``fn`` at time ``t``; ``ctx`` is its context (``Sim.ctx``)."""
        heapq.heappush(self._heap, (max(t, self.now), next(self._seq), _SPAWN, (fn, ctx)))

    @property
    def ctx(self) -> dict[str, Any]:
        """The running task's context (empty on the scheduler's thread)."""
        return self.current.ctx if self.current is not None else {}

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of simulated time (only inside a task): other events run meanwhile.
        Raises ``TimeoutError`` when the task's ``deadline`` (its context's, simulated seconds)
        passed meanwhile: the invocation's timeout, at its next wait."""
        me = self.current
        if me is None or threading.current_thread() is not me.thread:
            raise RuntimeError("Sim.sleep outside a task")
        heapq.heappush(self._heap, (self.now + max(0.0, seconds), next(self._seq), _RESUME, me))
        self._back.release()
        me.go.acquire()
        deadline = me.ctx.get("deadline")
        if deadline is not None and self.now > deadline:
            raise TimeoutError("Task timed out")  # Lambda stops the invocation at its timeout

    def defer(self, seconds: float) -> None:
        """Owe ``seconds`` of waiting, paid at the task's next ``sleep`` (or never, if it ends
        first): for a wait after which nothing the task does is seen by others until its next
        call (the second half of a DynamoDB call, a post). Half the thread switches."""
        if self.current is not None:
            self.current.debt += max(0.0, seconds)

    @property
    def owed(self) -> float:
        """The running task's deferred wait (its true time is ``now + owed``)."""
        return self.current.debt if self.current is not None else 0.0

    def run(self, until: float | None = None) -> None:
        """Run events in time order until none is left or the next is after ``until``."""
        heap = self._heap
        while heap and (until is None or heap[0][0] <= until):
            t, _, kind, obj = heapq.heappop(heap)
            self.now = t
            if kind == _CALL:
                obj()
                continue
            if kind == _SPAWN:
                fn, ctx = obj
                worker = self._idle.pop() if self._idle else self._new_worker()
                worker.fn = fn
                worker.ctx = dict(ctx)
                self.tasks_run += 1
            else:
                worker = obj
            self.current = worker
            worker.go.release()
            self._back.acquire()
            self.current = None
        if until is not None:
            self.now = max(self.now, until)

    def pending(self) -> int:
        return len(self._heap)

    def _new_worker(self) -> _Worker:
        w = _Worker(self)
        self._workers.append(w)
        return w

    def close(self) -> None:
        """End the idle worker threads (tasks still waiting are abandoned as daemons)."""
        for w in self._idle:
            w.fn = None
            w.go.release()
            self._back.acquire()
        self._idle.clear()
