"""The benchmarks' meters count what they claim (benchmarks measure; these tests
only check that the counting is honest, never a figure).

``MeteredClock`` runs the deployed state machine in the local interpreter: each StartExecution
(the adapter's, and the successor's of a handover) is counted once, on the invocation that made
it; each wake of the clock function is one invocation, routed by execution; each execution's
answers and span come from the interpreter. ``play.turn_deadlines`` reads the turn deadlines a
per-deadline clock would have scheduled from the messages sent.
"""

from __future__ import annotations

from typing import Any

from infra.benchmarks.calls import CallCounter, MeteredClock
from infra.benchmarks.clocks import loop_wakes, wake_ms
from infra.benchmarks.play import duel_ends, timer_deadlines, turn_deadlines
from shared.adapters.step_functions import HANDOVER_AFTER_MS, loop_state
from shared.services.ports import Timer, TimerKind

START = 1_800_000_000_000
STEP_MS = 60_000


def _clock(wakes: int, stale: set[int]) -> MeteredClock:
    """A metered clock whose clock function loops ``wakes`` times, ``STEP_MS`` apart (the
    ``stale`` wakes, 1-based, answer ``applied: false``), then ends."""
    counter = CallCounter(raw_dynamodb=None)
    answered: list[int] = []

    def function(state: dict[str, Any]) -> dict[str, Any]:
        answered.append(1)
        n = len(answered)
        next_due = clock.now + STEP_MS if n < wakes else None
        answer = loop_state(state, next_due, clock.now)
        return {**answer, "applied": n not in stale, "name": "x"}

    clock = MeteredClock(counter, function)
    return clock


def _run_all(clock: MeteredClock) -> None:
    while (due := clock.next_due()) is not None:
        clock.advance_to(due)


def test_a_looping_round_hands_over_and_every_start_is_counted_once() -> None:
    wakes = 2 + HANDOVER_AFTER_MS // STEP_MS + 2  # past the handover budget
    clock = _clock(wakes, stale={2, 3})
    with clock.counter.invocation("join"):
        clock.schedule(Timer(TimerKind.INTRO, "t1", 1, START + 6_000))

    _run_all(clock)

    invocations = clock.counter.invocations
    join, *clock_invs = invocations
    assert [c.op for c in join.calls] == ["StartExecution"]
    assert clock_invs[0].route == "clock:intro:t1"
    assert {i.route for i in clock_invs[1:]} == {"clock:wake:t1"}
    assert len(clock_invs) == wakes

    first, second = clock.executions
    assert not first.successor
    assert second.successor
    assert first.handed_over
    assert not second.handed_over
    assert first.wakes + second.wakes == wakes
    assert first.stale_wakes == 2
    assert second.stale_wakes == 0
    # the successor's StartExecution is charged to the wake that answered handover
    handing = first.last_wake
    assert handing is not None
    assert [c.op for c in handing.calls] == ["StartExecution"]
    starts = [c for inv in invocations for c in inv.calls if c.op == "StartExecution"]
    assert len(starts) == len(clock.executions) == 2
    # spans come from the interpreter's history: start to end, within Express's 5 minutes
    assert first.started_ms == START
    assert first.ended_ms == second.started_ms
    assert first.seconds * 1000 <= HANDOVER_AFTER_MS
    assert second.ended_ms == second.execution.history[-1][0]
    assert [t for t, _ in clock.scheduled] == [Timer(TimerKind.INTRO, "t1", 1, START + 6_000)]


def test_turn_deadlines_are_read_from_the_messages_once_each() -> None:
    log: list[tuple[int, str, dict[str, Any]]] = [
        (1, "a", {"type": "duel_start", "duel_id": "t.1.1", "deadline_ms": 36}),
        (1, "b", {"type": "duel_start", "duel_id": "t.1.1", "deadline_ms": 36}),
        (9, "a", {"type": "turn", "duel_id": "t.1.1", "turn": 1, "deadline_ms": 39}),
        (9, "b", {"type": "turn", "duel_id": "t.1.1", "turn": 1, "deadline_ms": 39}),
        (12, "a", {"type": "turn", "duel_id": "t.1.1", "turn": 2, "deadline_ms": None}),
        (12, "a", {"type": "duel_end", "duel_id": "t.1.1"}),
        (12, "b", {"type": "duel_end", "duel_id": "t.1.1"}),
    ]

    found = sorted((d.ref, d.seq, d.due_ms, d.set_ms) for d in turn_deadlines(log))

    assert found == [("t.1.1", 1, 36, 1), ("t.1.1", 2, 39, 9)]
    assert duel_ends(log) == {"t.1.1": 12}
    timer = Timer(TimerKind.INTRO, "t", 1, 6)
    assert [d.name for d in timer_deadlines([(timer, 0), (timer, 0)])] == [timer.name]


def test_the_loop_model_wakes_when_a_skip_is_due() -> None:
    # one duel: turn 1 due at 30.2 s is skipped (applied at 32 s: grace 1 s, whole second),
    # turn 2 due 60.2 s is played at 40 s, the duel ends at 50 s
    duels = {"t.1.1": [(30_200, 0), (60_200, 32_000)]}

    wakes, span = loop_wakes(duels, {"t.1.1": 50_000}, None, grace_ms=1_000)

    assert wake_ms(30_200, 1_000) == 32_000
    assert wakes == 2  # the skip at 32 s, then the stale wake at 62 s that finds it over
    assert span == 62.0
