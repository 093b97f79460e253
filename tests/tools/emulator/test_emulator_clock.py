"""Local runtime: the interpreter of the deployed deadline state machine
(``infra.emulator.states``) behaves as Step Functions does — Wait truncates milliseconds, Task
Retry with the real backoff, Task timeouts, the Express 5-minute limit, handover to a successor,
duplicate executions — and the two drivers (manual time for tests, wall-clock time for the
local runtime) run it through the same adapter as AWS (``StepFunctionsClock``).
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from infra.emulator.states import (
    LocalClock,
    LocalStepFunctions,
    ManualClock,
    UnsupportedStateError,
    parse_timestamp_ms,
)
from shared.adapters.step_functions import (
    EXPRESS_LIMIT_MS,
    HANDOVER_AFTER_MS,
    loop_state,
    state_machine_definition,
    wait_timestamp,
)
from shared.services.ports import Clock, Timer, TimerKind

T0 = 1_800_000_000_000  # a whole second


class Function:
    """A stand-in clock function: answers with ``loop_state`` towards ``dues`` (one per
    call; None ends the loop) and records ``(now, state)`` of every call."""

    def __init__(self, clock: ManualClock, dues: list[int | None]) -> None:
        self.clock = clock
        self.dues = list(dues)
        self.calls: list[tuple[int, dict[str, Any]]] = []
        self.fail_first = 0
        self.takes_ms = 0

    def __call__(self, state: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((self.clock.now, state))
        if self.fail_first > 0:
            self.fail_first -= 1
            raise RuntimeError("boom")
        self.clock.now += self.takes_ms
        nxt = self.dues.pop(0) if self.dues else None
        return loop_state(state, nxt, self.clock.now)


def _manual(dues: list[int | None], **kwargs: Any) -> tuple[ManualClock, Function]:
    clock = ManualClock(T0, **kwargs)
    fn = Function(clock, dues)
    clock.fire = fn
    return clock, fn


def test_both_drivers_implement_the_clock_port() -> None:
    live: Clock = LocalClock()
    manual: Clock = ManualClock(T0)
    assert live.now_ms() > 1_700_000_000_000  # absolute UTC milliseconds, not seconds
    assert manual.now_ms() == T0


@pytest.mark.parametrize(
    ("stamp", "ms"),
    [
        ("2027-01-15T08:00:00Z", T0),
        ("2027-01-15T08:00:00.999Z", T0),  # truncated, as Step Functions does
        ("2027-01-15T08:00:01.000Z", T0 + 1_000),
        ("2027-01-15T08:00:00.5+00:00", T0),
    ],
)
def test_wait_timestamps_lose_their_milliseconds(stamp: str, ms: int) -> None:
    assert parse_timestamp_ms(stamp) == ms


def test_an_intro_timer_runs_one_loop_that_waits_applies_and_ends() -> None:
    clock, fn = _manual([T0 + 36_000, None])
    clock.schedule(Timer(TimerKind.INTRO, "t1", 1, T0 + 6_000))
    assert clock.next_due() == T0 + 6_000
    assert [t.name for t in clock.pending()] == ["intro-t1-1"]
    clock.advance_to(T0 + 5_999)
    assert fn.calls == []  # never before its Wait ends
    clock.advance_to(T0 + 100_000)
    assert [now for now, _ in fn.calls] == [T0 + 6_000, T0 + 36_000]
    assert fn.calls[0][1]["due_ms"] == T0 + 6_000
    assert fn.calls[1][1]["due_ms"] == T0 + 36_000  # the loop handed its state on
    (done,) = clock.service.finished
    assert done.status == "SUCCEEDED"
    assert clock.next_due() is None


def test_a_due_with_milliseconds_wakes_early_and_the_adapter_rounds_up() -> None:
    clock, _fn = _manual([None])
    state = {"kind": "intro", "ref": "t1", "seq": 1, "due_ms": T0 + 1_500}
    raw = {**state, "due": "2027-01-15T08:00:01.500Z", "loop_started_ms": T0}
    clock.service.start_execution(clock.state_machine_arn, "raw", json.dumps(raw))
    assert clock.next_due() == T0 + 1_000  # 500 ms before the time it names
    clock.service.abandon()
    clock.schedule(Timer(TimerKind.INTRO, "t1", 1, T0 + 1_500))  # the adapter: rounded up
    assert clock.next_due() == T0 + 2_000
    assert wait_timestamp(T0 + 1_500) == "2027-01-15T08:00:02Z"


def test_a_reconnect_timer_is_one_wait_and_one_apply() -> None:
    clock, fn = _manual([None])
    clock.schedule(Timer(TimerKind.RECONNECT, "p1", 3, T0 + 60_000))
    clock.advance(120_000)
    assert [(now, s["kind"], s["seq"]) for now, s in fn.calls] == [(T0 + 60_000, "reconnect", 3)]


def test_a_failing_function_is_retried_with_the_real_backoff_then_succeeds() -> None:
    clock, fn = _manual([None])
    fn.fail_first = 3  # MaxAttempts 3: the 4th attempt is the last
    clock.schedule(Timer(TimerKind.INTRO, "t1", 1, T0))
    clock.advance(60_000)
    assert [now - T0 for now, _ in fn.calls] == [0, 1_000, 3_000, 7_000]  # 1, 2, 4 s
    assert clock.service.finished[-1].status == "SUCCEEDED"


def test_a_function_failing_past_the_retries_fails_the_execution() -> None:
    clock, fn = _manual([T0 + 30_000])
    fn.fail_first = 4
    clock.schedule(Timer(TimerKind.INTRO, "t1", 1, T0))
    clock.advance(600_000)
    assert len(fn.calls) == 4
    (failed,) = clock.service.finished
    assert failed.status == "FAILED"
    assert failed.error is not None
    assert failed.error.startswith("RuntimeError")  # Lambda's errorType
    assert clock.next_due() is None  # a dead loop: the watchdog's case


def test_a_function_running_past_the_tasks_timeout_is_retried() -> None:
    clock, fn = _manual([None, None])
    fn.takes_ms = 13_000  # past TimeoutSeconds (12 s)
    clock.schedule(Timer(TimerKind.INTRO, "t1", 1, T0))
    clock.advance(10_000)
    assert len(fn.calls) == 1
    fn.takes_ms = 0
    clock.advance(60_000)
    assert len(fn.calls) == 2  # retried after States.Timeout
    assert clock.service.finished[-1].status == "SUCCEEDED"


def test_a_long_round_hands_over_to_a_successor_before_five_minutes() -> None:
    dues = [T0 + 6_000 + 30_000 * k for k in range(1, 14)] + [None]
    clock, fn = _manual(dues)
    clock.schedule(Timer(TimerKind.INTRO, "t1", 1, T0 + 6_000))
    clock.advance(900_000)
    assert len(fn.calls) == 14
    finished = clock.service.finished
    assert len(finished) >= 2  # at least one handover
    assert all(e.status == "SUCCEEDED" for e in finished)
    for e in finished:
        last_step = e.history[-1][0]
        assert last_step - e.started_ms < EXPRESS_LIMIT_MS
        assert e.history[0][0] - e.started_ms <= HANDOVER_AFTER_MS
    # every wake came at its due time, across the handover
    assert [now for now, _ in fn.calls] == [T0 + 6000, *dues[:-1]]


def test_an_execution_still_running_at_five_minutes_fails() -> None:
    service = LocalStepFunctions(lambda name, payload: {}, lambda: T0)
    definition = {
        "StartAt": "W",
        "States": {"W": {"Type": "Wait", "Seconds": 400, "Next": "S"}, "S": {"Type": "Succeed"}},
    }
    arn = service.create_state_machine("long", definition)
    service.start_execution(arn, "x", "{}")
    running = service.take_due(T0)
    assert running is not None
    service.put_back(service.run(running))
    assert service.next_wake() == T0 + EXPRESS_LIMIT_MS  # not T0 + 400 s
    now = [T0 + EXPRESS_LIMIT_MS]
    service._now = lambda: now[0]
    running = service.take_due(now[0])
    assert running is not None
    assert service.run(running).status == "FAILED"
    assert running.error is not None
    assert running.error.startswith("States.Timeout")


def test_duplicate_starts_run_twice_and_each_wake_is_harmless_to_the_count() -> None:
    clock, fn = _manual([None, None], duplicate_starts=True)
    clock.schedule(Timer(TimerKind.INTRO, "t1", 1, T0 + 6_000))
    clock.advance(10_000)
    assert [now for now, _ in fn.calls] == [T0 + 6_000, T0 + 6_000]


def test_definitions_with_states_it_does_not_run_are_refused() -> None:
    service = LocalStepFunctions(lambda name, payload: {}, lambda: T0)
    with pytest.raises(UnsupportedStateError):
        service.create_state_machine("m", {"StartAt": "P", "States": {"P": {"Type": "Map"}}})
    task = {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage", "End": True}
    with pytest.raises(UnsupportedStateError):
        service.create_state_machine("t", {"StartAt": "T", "States": {"T": task}})
    # the deployed definition is accepted as it is
    service.create_state_machine("d", state_machine_definition("arn:aws:lambda:x"))


def test_the_live_clock_runs_an_overdue_loop_in_its_own_thread() -> None:
    calls: list[dict[str, Any]] = []
    done = threading.Event()

    def handler(payload: dict[str, Any], context: Any) -> dict[str, Any]:
        # the clock function gets what the deployed Task passes: the state and the machine
        assert context.function_name
        calls.append(payload)
        done.set()
        return loop_state(payload["state"], None, 0)

    clock = LocalClock(handler)
    with clock:
        clock.schedule(Timer(TimerKind.INTRO, "t1", 1, clock.now_ms() - 5_000))
        assert done.wait(10)
    assert [c["state"]["ref"] for c in calls] == ["t1"]
    assert all(":stateMachine:" in c["machine"] for c in calls)
    assert clock.pending() == []


def test_stop_keeps_waiting_executions() -> None:
    clock = LocalClock(lambda state, context: loop_state(state, None, 0))
    with clock:
        clock.schedule(Timer(TimerKind.INTRO, "later", 1, clock.now_ms() + 3_600_000))
    assert [t.ref for t in clock.pending()] == ["later"]
