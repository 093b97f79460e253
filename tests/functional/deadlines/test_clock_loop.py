"""Engine: the looping clock's parts — the adapter's routing of each Timer kind (a stubbed
Step Functions client), the state each wake hands to the next (``loop_state``: loop, handover),
and the clock function's answer on the harness (``fire_round``: the round's next deadline, or
the end of the loop). The whole machine runs in
tests/functional/deadlines/test_step_functions.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from shared.adapters.step_functions import (
    CLOCK_FUNCTION_TIMEOUT_S,
    EXPRESS_LIMIT_MS,
    HANDOVER_AFTER_MS,
    StepFunctionsClock,
    loop_state,
    state_machine_definition,
    task_worst_case_ms,
    wait_timestamp,
    worst_case_tail_ms,
)
from shared.services.ports import Timer, TimerKind
from tests.functional.driver import Game, peek_raw

ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:deadlines"
NOW = 1_800_000_000_000


class StubSfn:
    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.error = error

    def start_execution(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        if self.error is not None:
            raise self.error
        return {"executionArn": f"{ARN}:x"}


def _clock(stub: StubSfn) -> StepFunctionsClock:
    clock = StepFunctionsClock(stub, ARN)
    clock.now_ms = lambda: NOW  # type: ignore[method-assign]
    return clock


def test_an_intro_timer_starts_the_rounds_loop():
    stub = StubSfn()
    timer = Timer(TimerKind.INTRO, "t1", 2, NOW + 6_000)
    _clock(stub).schedule(timer)
    (call,) = stub.calls
    assert call["stateMachineArn"] == ARN
    assert call["name"] == timer.name
    assert json.loads(call["input"]) == {
        "kind": "intro",
        "ref": "t1",
        "seq": 2,
        "due_ms": NOW + 6_000,
        "due": wait_timestamp(NOW + 6_000),
        "loop_started_ms": NOW,
    }


def test_a_reconnect_timer_starts_one_execution():
    stub = StubSfn()
    timer = Timer(TimerKind.RECONNECT, "p1", 4, NOW + 60_000)
    _clock(stub).schedule(timer)
    (call,) = stub.calls
    assert json.loads(call["input"])["kind"] == "reconnect"
    assert call["name"] == timer.name


@pytest.mark.parametrize(
    "error",
    [
        ClientError({"Error": {"Code": "ExecutionAlreadyExists"}}, "StartExecution"),
        ClientError({"Error": {"Code": "ThrottlingException"}}, "StartExecution"),
        EndpointConnectionError(endpoint_url="https://states.us-east-1.amazonaws.com"),
    ],
)
def test_a_failed_start_never_raises(error):
    """The change that scheduled it is committed; the watchdog applies the deadline later."""
    stub = StubSfn(error)
    _clock(stub).schedule(Timer(TimerKind.INTRO, "t1", 1, NOW))
    assert len(stub.calls) == 1


# ---------------------------------------------------------------- loop_state


def _state(**extra: Any) -> dict[str, Any]:
    return {
        "kind": "intro",
        "ref": "t1",
        "seq": 1,
        "due_ms": NOW,
        "due": wait_timestamp(NOW),
        **extra,
    }


def test_the_loop_goes_on_to_the_rounds_next_deadline():
    state = loop_state(_state(loop_started_ms=NOW - 1_000), NOW + 30_000, NOW + 5)
    assert state == {
        "kind": "intro",
        "ref": "t1",
        "seq": 1,
        "due_ms": NOW + 30_000,
        "due": wait_timestamp(NOW + 30_000),
        "loop_started_ms": NOW - 1_000,
        "loop": True,
        "handover": False,
    }


def test_the_loop_ends_without_a_next_deadline():
    state = loop_state(_state(loop_started_ms=NOW), None, NOW + 5)
    assert state["loop"] is False
    assert state["handover"] is False
    assert state["due_ms"] == NOW


def test_a_wake_past_the_budget_hands_over_to_a_fresh_execution():
    started = NOW - HANDOVER_AFTER_MS + 10_000
    state = loop_state(_state(loop_started_ms=started), NOW + 30_000, NOW + 5)
    assert state["loop"] is True
    assert state["handover"] is True
    assert state["loop_started_ms"] == NOW + 5  # the successor's budget starts now
    assert state["successor"] == f"intro-t1-1-h{NOW + 30_000}"
    # exactly at the budget: no handover
    at = loop_state(_state(loop_started_ms=NOW + 30_000 - HANDOVER_AFTER_MS), NOW + 30_000, NOW)
    assert at["handover"] is False


def test_a_wait_longer_than_the_budget_is_cut_into_wakes_that_only_read():
    """A deadline further away than an Express execution may live (e.g. a long reconnect
    setting) is reached through intermediate wakes, never by one Wait past 5 minutes."""
    far = NOW + 20 * 60_000
    state = loop_state(_state(loop_started_ms=NOW), far, NOW)
    assert state["handover"] is True
    assert state["due_ms"] == far
    assert state["due"] == wait_timestamp(NOW + HANDOVER_AFTER_MS)
    stub = StubSfn()
    _clock(stub).schedule(Timer(TimerKind.RECONNECT, "p1", 1, far))
    (call,) = stub.calls
    assert json.loads(call["input"])["due"] == wait_timestamp(NOW + HANDOVER_AFTER_MS)


@pytest.mark.parametrize("ms", [0, 1, 499, 999])
def test_wait_timestamps_are_rounded_up_to_the_whole_second(ms):
    """Step Functions truncates a Wait timestamp's milliseconds ("Wait workflow state"):
    rounding up is the only way the wake is never early."""
    from infra.emulator.states import parse_timestamp_ms

    second = 1_800_000_000_000
    woken = parse_timestamp_ms(wait_timestamp(second + ms))
    assert woken >= second + ms
    assert woken - (second + ms) < 1_000
    assert wait_timestamp(second) == "2027-01-15T08:00:00Z"


def test_the_worst_case_after_the_last_wake_fits_in_an_express_execution():
    """Every attempt of the apply Task and of the successor's start running to its timeout,
    with the real backoff between attempts (IntervalSeconds * BackoffRate**n), after a Wait
    that ends up to 1 s late, still ends before Express's 5 minutes."""
    definition = state_machine_definition("arn:aws:lambda:us-east-1:1:function:clock")
    apply, start = definition["States"]["ApplyDeadline"], definition["States"]["StartSuccessor"]
    assert apply["TimeoutSeconds"] >= CLOCK_FUNCTION_TIMEOUT_S
    retry = apply["Retry"][0]
    assert {"States.TaskFailed", "States.Timeout"} <= set(retry["ErrorEquals"])
    by_hand = (retry["MaxAttempts"] + 1) * apply["TimeoutSeconds"] * 1000 + sum(
        retry["IntervalSeconds"] * retry["BackoffRate"] ** n * 1000
        for n in range(retry["MaxAttempts"])
    )
    assert task_worst_case_ms(apply) == by_hand == 55_000
    assert HANDOVER_AFTER_MS + 1_000 + by_hand + task_worst_case_ms(start) <= EXPRESS_LIMIT_MS
    assert HANDOVER_AFTER_MS + worst_case_tail_ms(definition) < EXPRESS_LIMIT_MS
    # and a loop still covers several 30 s turns before it hands over
    assert HANDOVER_AFTER_MS >= 5 * 30_000


def test_the_clock_functions_timeout_is_the_one_the_budget_counts():
    from infra.cdk.constructs.functions import SPECS

    assert SPECS["apply_deadlines"].timeout_s == CLOCK_FUNCTION_TIMEOUT_S


# ---------------------------------------------------------------- the clock function


def _fire(backend: Any, timer: Timer, **extra: Any) -> dict[str, Any]:
    return dict(backend.call("clock", {**timer.to_event(), **extra}))


def test_the_clock_function_answers_the_rounds_next_due_time(backend):
    game = Game.start(backend)
    backend.clock.service.abandon()  # only this test wakes the loop
    t = game.t
    grace = backend.deps.timing.skip_grace_ms
    backend.clock.now = t.intro_deadline_ms
    out = _fire(backend, Timer(TimerKind.INTRO, game.tid, 1, t.intro_deadline_ms))
    assert out["applied"] is True
    assert out["loop"] is True
    deadline = game.t.next_deadline()
    assert deadline == t.intro_deadline_ms + 30_000
    assert out["due_ms"] == deadline + grace  # the skip waits for guesses in flight
    assert out["due"] == wait_timestamp(deadline + grace)
    assert out["name"] == f"intro-{game.tid}-1"
    # a wake too early for anything (a duplicate loop, a truncated Wait): only read, same answer
    version = peek_raw(game.tid)["version"]
    backend.clock.now = deadline + grace - 1
    again = _fire(backend, Timer(TimerKind.INTRO, game.tid, 1, t.intro_deadline_ms))
    assert again["applied"] is False
    assert again["due_ms"] == out["due_ms"]
    assert peek_raw(game.tid)["version"] == version
    # at the due time the skips are applied and the loop moves on by one turn
    backend.clock.now = deadline + grace
    turn = _fire(backend, Timer(TimerKind.INTRO, game.tid, 1, out["due_ms"]))
    assert turn["applied"] is True
    assert turn["loop"] is True
    assert turn["due_ms"] == deadline + 30_000 + grace


def test_the_loop_ends_when_its_round_is_not_the_tournaments_round(backend):
    game = Game.start(backend)
    backend.clock.service.abandon()
    t = game.t
    backend.clock.now = t.intro_deadline_ms
    stale_round = Timer(TimerKind.INTRO, game.tid, 0, t.intro_deadline_ms)  # not round 0 any more
    out = _fire(backend, stale_round)
    assert out["applied"] is True  # what was due is applied whichever timer woke
    assert out["loop"] is False


def test_a_reconnect_deadline_never_loops(backend):
    game = Game.start(backend)
    p = game.players[0]
    out = _fire(backend, Timer(TimerKind.RECONNECT, p.id, 99, backend.clock.now))
    assert out["applied"] is None
    assert out["loop"] is False


def test_the_watchdog_restarts_the_loop_of_a_round_whose_clock_died(backend, monkeypatch):
    """An overdue tournament means its round has no running loop: after applying, the
    watchdog schedules the round's loop again (an intro timer of the current round, due at
    the next due time); the adapter starts it."""
    game = Game.start(backend)
    backend.clock.service.abandon()  # the intro's execution died
    scheduled: list[Timer] = []
    monkeypatch.setattr(backend.clock, "schedule", scheduled.append)
    backend.clock.advance(6_000 + 6_000)
    assert backend.call("watchdog", {}) == {"handled": 1}
    t = game.t
    assert t.phase.value == "playing"
    loops = [x for x in scheduled if x.kind is TimerKind.INTRO]
    due = t.next_deadline() + backend.deps.timing.skip_grace_ms
    assert loops == [Timer(TimerKind.INTRO, game.tid, t.round_no, due)]
