"""Local runtime: the worker pool handlers run on, which takes queued work by priority.

:class:`WorkerPool` runs ``max_workers`` threads and takes queued calls by priority, then in
arrival order: :data:`PLAY` (:data:`PLAY_ROUTES`: ``guess`` from a seated connection, which the
opponent is watching for), :data:`CLOCK` (the clock function; one queued
:data:`CLOCK_MAX_WAIT_SECONDS` goes before guesses), :data:`SEATED` (the other messages of
seated connections, ``session`` (resumes), ``$connect``, ``$disconnect``), :data:`OTHER` (the
messages of connections without a session: no priority); :data:`SEATED` and :data:`OTHER`
together on at most ``max_workers - 1`` threads at once (:func:`message_priority`).
Nothing is dropped or interrupted; results come back through a
:class:`~concurrent.futures.Future`. Why: ``shared/domain/RULINGS.md``, design notes,
"Worker pool".
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future
from typing import Any, Final, TypeVar

T = TypeVar("T")

PLAY: Final = 0
"""Priority of the routes of a duel in progress (:data:`PLAY_ROUTES`)."""
CLOCK: Final = 1
"""Priority of the clock function's invocations (``LocalClock``)."""
SEATED: Final = 2
"""Priority of seated connections' other messages, resumes and connection events."""
OTHER: Final = 3
"""Priority of everything else (the default of :meth:`WorkerPool.submit`): the messages of
connections without a session."""
PRIORITIES: Final = (PLAY, CLOCK, SEATED, OTHER)
_SHARED: Final = (SEATED, OTHER)
"""The priorities that share ``max_workers - 1`` threads."""

CLOCK_MAX_WAIT_SECONDS: Final = 0.5
"""A clock call queued this long goes before guesses: a deadline is applied at most about this
much later for the pool's sake (the goal is within 1 s), however many guesses arrive. Not
shorter: the clock's wakes come in bursts on the whole second (the Wait state's timestamps are
whole seconds), and at 0.1 s a burst's tail went before the guesses of the next few hundred
milliseconds (at 100 tournaments, 129 instead of 15 guesses waited over 80 ms in the steady
part; one run each)."""

PLAY_ROUTES: Final[Mapping[str, int]] = {"guess": PLAY}
"""Route key -> priority for a seated connection, for the routes that do not take
:data:`SEATED`."""
OPEN_ROUTES: Final = frozenset({"session", "$connect", "$disconnect"})
"""Routes that take :data:`SEATED` from any connection: how a player gets (back) its seat."""


def message_priority(route_key: str, seated: bool) -> int:
    """The pool priority of an invocation of ``route_key`` from a connection that is
    ``seated`` (holds a session) or not: a message from a connection without a session
    gets no priority (:data:`OTHER`) whatever its ``action`` says, but for :data:`OPEN_ROUTES`.
    Why: ``shared/domain/RULINGS.md``, design notes, "Worker pool"."""
    if seated:
        return PLAY_ROUTES.get(route_key, SEATED)
    return SEATED if route_key in OPEN_ROUTES else OTHER


class _Job:
    __slots__ = ("args", "fn", "future", "kwargs")

    def __init__(
        self, future: Future[Any], fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Any
    ) -> None:
        self.future, self.fn, self.args, self.kwargs = future, fn, args, kwargs

    def run(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return
        try:
            result = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:
            self.future.set_exception(exc)
        else:
            self.future.set_result(result)
        finally:
            del self.fn, self.args, self.kwargs  # free the event and its state at once


class WorkerPool(Executor):
    """``max_workers`` threads (named ``<thread_name_prefix>_<n>``, started as work arrives)
    taking queued calls by priority (:data:`PLAY`, :data:`CLOCK`, :data:`SEATED`,
    :data:`OTHER`), first in, first out within one, except that a :data:`CLOCK` call queued for
    :data:`CLOCK_MAX_WAIT_SECONDS` goes before guesses (so a stream of guesses cannot make a
    deadline late); calls at :data:`SEATED` and :data:`OTHER` run on at most
    ``max(1, max_workers - 1)`` threads at once.

    :meth:`submit` queues at :data:`OTHER`; :meth:`submit_at` at a given priority;
    :meth:`lane` is an :class:`~concurrent.futures.Executor` that submits at one priority (for
    code that takes an executor, such as ``LocalClock``). :meth:`shutdown` as
    ``ThreadPoolExecutor``'s: no new work (``RuntimeError``), queued work still runs unless
    ``cancel_futures``, ``wait`` joins the threads. ``monotonic`` (seconds) times the waits."""

    def __init__(
        self,
        max_workers: int,
        thread_name_prefix: str = "worker",
        *,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.max_workers = max_workers
        self._prefix = thread_name_prefix
        self._monotonic = monotonic
        self._cond = threading.Condition()
        self._queues: dict[int, deque[tuple[float, _Job]]] = {p: deque() for p in PRIORITIES}
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._closed = False
        self._other_limit = max(1, max_workers - 1)
        self._other_running = 0

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Queue ``fn(*args, **kwargs)`` at :data:`OTHER`."""
        return self.submit_at(OTHER, fn, *args, **kwargs)

    def submit_at(
        self, priority: int, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> Future[T]:
        """Queue ``fn(*args, **kwargs)`` at ``priority`` (one of :data:`PRIORITIES`); its
        future. ``ValueError`` for another priority, ``RuntimeError`` after shutdown."""
        if priority not in PRIORITIES:
            raise ValueError(f"priority must be one of {PRIORITIES}, got {priority!r}")
        future: Future[T] = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError("cannot schedule new work after shutdown")
            self._queues[priority].append((self._monotonic(), _Job(future, fn, args, kwargs)))
            if self._idle:
                self._cond.notify_all()  # the first to wake may not be allowed to take it
            elif len(self._threads) < self.max_workers:
                thread = threading.Thread(
                    target=self._work, name=f"{self._prefix}_{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        return future

    def lane(self, priority: int) -> Executor:
        """An executor whose ``submit`` queues on this pool at ``priority``; its ``shutdown``
        leaves the pool running."""
        return _Lane(self, priority)

    def queued(self) -> int:
        """How many calls wait for a thread."""
        with self._cond:
            return self._queued_locked()

    def _next(self) -> int | None:
        """The priority whose oldest call a free thread takes now, or None (under the lock)."""
        play, clock = self._queues[PLAY], self._queues[CLOCK]
        if clock and self._monotonic() - clock[0][0] >= CLOCK_MAX_WAIT_SECONDS:
            return CLOCK
        if play:
            return PLAY
        if clock:
            return CLOCK
        if self._other_running < self._other_limit:
            for priority in _SHARED:
                if self._queues[priority]:
                    return priority
        return None

    def _work(self) -> None:
        while True:
            with self._cond:
                while (priority := self._next()) is None:
                    if self._closed and not self._queued_locked():
                        return
                    self._idle += 1
                    self._cond.wait()
                    self._idle -= 1
                job = self._queues[priority].popleft()[1]
                other = priority in _SHARED
                if other:
                    self._other_running += 1
            try:
                job.run()
            finally:
                del job
                if other:
                    with self._cond:
                        self._other_running -= 1
                        self._cond.notify_all()

    def _queued_locked(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._cond:
            self._closed = True
            if cancel_futures:
                for queue in self._queues.values():
                    for _, job in queue:
                        job.future.cancel()
                    queue.clear()
            self._cond.notify_all()
            threads = list(self._threads)
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()


class _Lane(Executor):
    def __init__(self, pool: WorkerPool, priority: int) -> None:
        self._pool, self._priority = pool, priority

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        return self._pool.submit_at(self._priority, fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """The pool's owner shuts it down; a lane has nothing of its own to stop."""
