"""Local runtime: LocalClock fires the clock function like the state machine would.

Timers already due when the clock starts fire at once, so order and idempotency are checked
without waiting; one test waits for a timer a few tens of milliseconds in the future.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from infra.emulator.states import LocalClock
from shared.services.ports import Clock, Timer, TimerKind


class Fired:
    """The clock handler: records ``(event, context)`` and lets tests wait for a count."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.calls: list[tuple[dict[str, Any], Any]] = []

    def __call__(self, event: dict[str, Any], context: Any) -> None:
        with self._cond:
            self.calls.append((event, context))
            self._cond.notify_all()

    def wait(self, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.calls) >= count, timeout), self.calls
            return [event for event, _ in self.calls]


def timer(ref: str, due_ms: int, seq: int = 1, kind: TimerKind = TimerKind.TURN) -> Timer:
    return Timer(kind, ref, seq, due_ms)


@pytest.fixture
def serial() -> Any:
    with ThreadPoolExecutor(max_workers=1) as executor:
        yield executor


def test_local_clock_implements_the_clock_port() -> None:
    clock: Clock = LocalClock()
    now = clock.now_ms()
    assert abs(now - LocalClock().now_ms()) < 60_000
    assert now > 1_700_000_000_000  # absolute UTC milliseconds, not seconds


def test_due_timers_fire_in_due_order_then_scheduling_order(serial: Any) -> None:
    fired = Fired()
    clock = LocalClock(fired, executor=serial)
    base = clock.now_ms() - 10_000
    timers = [
        timer("c", base + 300),
        timer("a", base + 100),
        timer("tie-1", base + 200),
        timer("tie-2", base + 200),
        timer("b", base + 150, kind=TimerKind.INTRO),
    ]
    for t in timers:
        clock.schedule(t)
    assert [t.ref for t in clock.pending()] == ["a", "b", "tie-1", "tie-2", "c"]
    with clock:
        events = fired.wait(len(timers))
    assert [e["ref"] for e in events] == ["a", "b", "tie-1", "tie-2", "c"]
    assert events[1] == timers[4].to_event()
    assert clock.pending() == []


def test_the_handler_gets_the_state_machine_input_and_a_lambda_context(serial: Any) -> None:
    fired = Fired()
    t = Timer(TimerKind.RECONNECT, "player-7", 3, LocalClock().now_ms() - 1)
    with LocalClock(fired, executor=serial) as clock:
        clock.schedule(t)
        fired.wait(1)
    ((event, context),) = fired.calls
    assert event == {"kind": "reconnect", "ref": "player-7", "seq": 3, "due_ms": t.due_ms}
    assert Timer.from_event(event) == t
    assert context.function_name == "wordle-tournament-clock"
    assert context.get_remaining_time_in_millis() > 0
    assert context.aws_request_id


def test_schedule_is_idempotent_by_timer_name(serial: Any) -> None:
    fired = Fired()
    clock = LocalClock(fired, executor=serial)
    past = clock.now_ms() - 1_000
    clock.schedule(timer("duel-1", past, seq=4))
    clock.schedule(timer("duel-1", past, seq=4))  # a retried schedule
    clock.schedule(timer("duel-1", past + 5, seq=4))  # same name, other due: still one
    clock.schedule(timer("duel-1", past, seq=5))  # the next turn: a new name
    assert [t.seq for t in clock.pending()] == [4, 5]
    with clock:
        fired.wait(2)
        clock.schedule(timer("duel-1", past, seq=4))  # after it fired: still nothing new
        clock.schedule(timer("duel-2", past, seq=1))
        events = fired.wait(3)
    assert [(e["ref"], e["seq"]) for e in events] == [("duel-1", 4), ("duel-1", 5), ("duel-2", 1)]


def test_a_future_timer_fires_at_its_deadline_not_before() -> None:
    fired = Fired()
    with LocalClock(fired) as clock:
        due = clock.now_ms() + 50
        clock.schedule(timer("soon", due))
        fired.wait(1)
        fired_at = clock.now_ms()
    assert fired_at >= due


def test_schedule_is_thread_safe_and_every_timer_fires_once() -> None:
    fired = Fired()
    clock = LocalClock(fired)
    past = clock.now_ms() - 1

    def schedule_many(worker: int) -> None:
        for i in range(50):
            clock.schedule(timer(f"w{worker}-{i}", past))
            clock.schedule(timer(f"w{worker}-{i}", past))

    with clock:
        threads = [threading.Thread(target=schedule_many, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        events = fired.wait(400)
    assert len(events) == 400
    assert len({e["ref"] for e in events}) == 400


def test_stop_keeps_unfired_timers_pending_and_a_failing_handler_is_contained() -> None:
    calls: list[dict[str, Any]] = []
    done = threading.Event()

    def failing(event: dict[str, Any], context: Any) -> None:
        calls.append(event)
        done.set()
        raise RuntimeError("clock handler failure")

    clock = LocalClock(failing)
    clock.schedule(timer("now", clock.now_ms() - 1))
    clock.schedule(timer("much-later", clock.now_ms() + 3_600_000))
    clock.start()
    assert done.wait(10)
    clock.stop()
    assert [e["ref"] for e in calls] == ["now"]
    assert [t.ref for t in clock.pending()] == ["much-later"]


def test_the_handler_can_be_given_after_construction(serial: Any) -> None:
    """The emulator builds the clock before it imports the handlers."""
    fired = Fired()
    clock = LocalClock(executor=serial)
    clock.schedule(timer("early", clock.now_ms() - 1))
    clock.set_handler(fired)
    with clock:
        events = fired.wait(1)
    assert [e["ref"] for e in events] == ["early"]
