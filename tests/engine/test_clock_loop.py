"""Engine: the looping clock's parts — the adapter's routing of each Timer kind (a stubbed
Step Functions client), the state each wake hands to the next (``loop_state``: loop, handover),
and the clock function's answer on the harness (``fire_round``: the round's next deadline, or
the end of the loop). The whole machine runs in tests/engine/test_step_functions.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from engine.support import Game, peek_raw
from infra.emulator.testing import _Context
from shared.adapters.step_functions import (
    EXPRESS_LIMIT_MS,
    HANDOVER_AFTER_MS,
    StepFunctionsClock,
    iso_utc,
    loop_state,
)
from shared.services.ports import Timer, TimerKind

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
        "due": iso_utc(NOW + 6_000),
        "loop_started_ms": NOW,
    }


def test_a_turn_timer_starts_nothing():
    stub = StubSfn()
    _clock(stub).schedule(Timer(TimerKind.TURN, "t1.2.0", 3, NOW + 30_000))
    assert stub.calls == []


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
    return {"kind": "intro", "ref": "t1", "seq": 1, "due_ms": NOW, "due": iso_utc(NOW), **extra}


def test_the_loop_goes_on_to_the_rounds_next_deadline():
    state = loop_state(_state(loop_started_ms=NOW - 1_000), NOW + 30_000, NOW + 5)
    assert state == {
        "kind": "intro",
        "ref": "t1",
        "seq": 1,
        "due_ms": NOW + 30_000,
        "due": iso_utc(NOW + 30_000),
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
    # the last wake of the old execution came within the budget, with a minute to spare
    assert HANDOVER_AFTER_MS + 60_000 <= EXPRESS_LIMIT_MS
    # exactly at the budget: no handover
    at = loop_state(_state(loop_started_ms=NOW - 210_000), NOW + 30_000, NOW)
    assert at["handover"] is False


def test_a_plain_timer_event_is_accepted():
    """The local clock and older callers send ``{kind, ref, seq, due_ms}`` only."""
    event = Timer(TimerKind.TURN, "t1.1.0", 2, NOW).to_event()
    state = loop_state(event, NOW + 30_000, NOW + 5)
    assert state["loop"] is True
    assert state["loop_started_ms"] == NOW + 5
    assert (state["kind"], state["ref"], state["seq"]) == ("turn", "t1.1.0", 2)


# ---------------------------------------------------------------- the clock function


def _fire(backend: Any, timer: Timer, **extra: Any) -> dict[str, Any]:
    from functions.apply_deadlines import handler

    return dict(handler({**timer.to_event(), **extra}, _Context()))


def test_the_clock_function_answers_the_rounds_next_deadline(backend):
    game = Game.start(backend)
    backend.clock._heap.clear()  # only this test fires
    t = game.t
    backend.clock.now = t.intro_deadline_ms
    out = _fire(backend, Timer(TimerKind.INTRO, game.tid, 1, t.intro_deadline_ms))
    assert out["applied"] is True
    assert out["loop"] is True
    assert out["due_ms"] == game.t.next_deadline() == t.intro_deadline_ms + 30_000
    assert out["name"] == f"intro-{game.tid}-1"
    # a wake too early for anything (a duplicate loop, a clock skew): only read, same answer
    version = peek_raw(game.tid)["version"]
    again = _fire(backend, Timer(TimerKind.INTRO, game.tid, 1, t.intro_deadline_ms))
    assert again["applied"] is False
    assert again["due_ms"] == out["due_ms"]
    assert peek_raw(game.tid)["version"] == version
    # a turn timer (the local clock's shape) answers the same round's next deadline
    duel = game.t.duels[0]
    backend.clock.now = duel.turn_deadline_ms
    turn = _fire(backend, Timer(TimerKind.TURN, duel.duel_id, 1, duel.turn_deadline_ms))
    assert turn["applied"] is True
    assert turn["loop"] is True
    assert turn["due_ms"] == duel.turn_deadline_ms + 30_000


def test_the_loop_ends_when_its_round_is_not_the_tournaments_round(backend):
    game = Game.start(backend)
    backend.clock._heap.clear()
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
    the next deadline); the adapter starts it."""
    game = Game.start(backend)
    backend.clock._heap.clear()  # the intro's execution never started
    scheduled: list[Timer] = []
    monkeypatch.setattr(backend.clock, "schedule", scheduled.append)
    backend.clock.advance(6_000 + 6_000)
    assert backend._handlers["watchdog"]({}, _Context()) == {"handled": 1}
    t = game.t
    assert t.phase.value == "playing"
    loops = [x for x in scheduled if x.kind is TimerKind.INTRO]
    assert loops == [Timer(TimerKind.INTRO, game.tid, t.round_no, t.next_deadline())]
