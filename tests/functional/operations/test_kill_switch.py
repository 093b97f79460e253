"""Operations: the kill switch (``infra.operations.pause``) through the real handlers on moto —
a pause refuses moves and tournament starts with ``paused`` and changes nothing, stops every
round's clock loop and the watchdog; a resume shifts every deadline by the pause's length (no
turn is skipped for time nobody could play) and restarts the loops."""

from __future__ import annotations

import pytest

from infra.operations.pause import PauseRefusedError, pause, resume
from shared.adapters.dynamo import schema
from shared.protocol.limits import PAUSED_RETRY_AFTER_MS
from tests.functional.driver import Game, peek_player, wrong_word

PAUSE_MS = 600_000
"""Ten minutes: far longer than a turn (30 s) and a reconnect window (60 s)."""


def _switch(backend):
    assert backend.deps.switch is not None
    return backend.deps.switch


def _pause(backend):
    return pause(backend.deps, _switch(backend), settle_s=0, sleep=lambda s: None)


def test_a_paused_game_refuses_moves_and_starts_and_changes_nothing(backend):
    game = Game.start(backend)
    game.end_intro()
    duel = game.t.duels[0]
    mover = game.by_id[duel.next_player]
    newcomer = backend.player("late")
    since, swept = _pause(backend)
    assert since == backend.clock.now
    assert swept.tournaments == 1
    before = backend.snapshot()

    mover.send("guess", duel_id=duel.duel_id, word=wrong_word(backend, "en", duel), request_id="g")
    assert mover.last("error") == {
        "type": "error",
        "code": "paused",
        "message": mover.last("error")["message"],
        "request_id": "g",
        "retry_after_ms": PAUSED_RETRY_AFTER_MS,
        "seq": None,
    }
    mover.send("leave", request_id="l")
    assert mover.last("error")["code"] == "paused"
    newcomer.send("join", language="en", request_id="j")
    assert newcomer.last("error")["code"] == "paused"
    assert backend.snapshot() == before  # every refusal answered, nothing written


def test_a_pause_ends_every_round_loop_and_idles_the_watchdog(backend):
    game = Game.start(backend)
    game.end_intro()
    assert backend.clock.pending()  # the round's loop waits for the first turn deadline
    _pause(backend)
    before = game.t
    backend.clock.advance(PAUSE_MS)  # the loop wakes once, applies nothing, and ends
    assert backend.clock.pending() == []
    assert backend.call("watchdog", {}) == {"handled": 0}  # overdue, but paused
    assert game.t == before


def test_resume_shifts_every_deadline_by_the_pause_and_skips_no_turn(backend):
    game = Game.start(backend)
    game.end_intro()
    t0 = game.t
    duel = t0.duels[0]
    mover = game.by_id[duel.next_player]
    backend.clock.advance(10_000)  # 20 s of the turn left
    _pause(backend)
    paused_at = backend.clock.now
    backend.clock.advance(PAUSE_MS)
    swept = resume(backend.deps, _switch(backend))
    assert swept.tournaments == 1
    assert swept.loops == 1
    shift = backend.clock.now - paused_at
    t1 = game.t
    assert t1.paused_ms is None
    assert [d.turn_deadline_ms for d in t1.duels] == [d.turn_deadline_ms + shift for d in t0.duels]
    assert all(not d.rows for d in t1.duels)  # nothing skipped over the pause
    assert backend.item(schema.switch_key()) is None

    # the mover still has the 20 s they had: a guess 19 s in counts ...
    backend.clock.advance(19_000)
    assert all(not d.rows for d in game.t.duels)
    mover.send("guess", duel_id=duel.duel_id, word=wrong_word(backend, "en", duel))
    assert len(game.t.duel(duel.duel_id).rows) == 1
    # ... and the restarted loop skips the other duels' turns once their 20 s have run
    backend.pass_deadline(game.t.duels[1].turn_deadline_ms)
    assert all(d.rows for d in game.t.duels)


def test_resume_moves_an_away_players_reconnect_deadline_and_restarts_its_timer(backend):
    game = Game.start(backend)
    game.end_intro()
    away = game.players[0]
    away.disconnect()
    deadline = peek_player(away.id).reconnect_deadline_ms
    assert deadline is not None
    _pause(backend)
    paused_at = backend.clock.now
    backend.clock.advance(PAUSE_MS)  # the reconnect wake comes and cannot apply
    assert peek_player(away.id).tournament_id == game.tid
    assert game.t.player(away.id).alive
    swept = resume(backend.deps, _switch(backend))
    assert swept.players == 1
    moved = peek_player(away.id).reconnect_deadline_ms
    assert moved == deadline + backend.clock.now - paused_at
    backend.clock.advance_to(moved - 1_000)
    assert game.t.player(away.id).alive  # the window still runs
    backend.clock.advance_to(moved + 1_000)
    assert not game.t.player(away.id).alive  # then it is a leave (ruling 3), once


def test_pausing_twice_keeps_the_first_time_and_resume_refuses_a_running_game(backend):
    Game.start(backend)
    first, _ = _pause(backend)
    backend.clock.advance(5_000)
    again, swept = _pause(backend)
    assert again == first
    assert swept.tournaments == 0
    resume(backend.deps, _switch(backend))
    with pytest.raises(PauseRefusedError):
        resume(backend.deps, _switch(backend))


def test_stop_loops_throttles_the_clock_to_zero_and_start_loops_restores_the_stage(backend):
    """On moto's Lambda and EventBridge: the brake and its release, with the stage's
    reservation read from the CDK source; then one loop per running tournament."""
    import boto3

    from infra.cdk.stack import STAGES
    from infra.operations.pause import restore_loops, stage_reservation, stop_loops
    from shared.services.pausing import start_loops

    iam = boto3.client("iam", region_name="us-east-1")
    role = iam.create_role(
        RoleName="clock", AssumeRolePolicyDocument='{"Version": "2012-10-17", "Statement": []}'
    )["Role"]["Arn"]
    lam = boto3.client("lambda", region_name="us-east-1")
    lam.create_function(
        FunctionName="clock",
        Runtime="python3.13",
        Role=role,
        Handler="functions.apply_deadlines.handler",
        Code={"ZipFile": _zip()},
    )
    lam.put_function_concurrency(FunctionName="clock", ReservedConcurrentExecutions=50)
    events = boto3.client("events", region_name="us-east-1")
    events.put_rule(Name="watchdog", ScheduleExpression="rate(1 minute)")

    stop_loops(lam, events, "clock", "watchdog")
    assert lam.get_function_concurrency(FunctionName="clock")["ReservedConcurrentExecutions"] == 0
    assert events.describe_rule(Name="watchdog")["State"] == "DISABLED"

    game = Game.start(backend)
    backend.clock.service.abandon()  # the throttled loops died
    assert backend.clock.pending() == []
    restore_loops(lam, events, "clock", "watchdog", stage_reservation("prod"))
    assert (
        lam.get_function_concurrency(FunctionName="clock")["ReservedConcurrentExecutions"]
        == (STAGES["prod"].reserved["apply_deadlines"])
    )
    assert events.describe_rule(Name="watchdog")["State"] == "ENABLED"
    assert start_loops(backend.deps).loops == 1
    backend.end_intro()
    assert game.t.phase.value == "playing"  # the restarted loop ran the intro's deadline
    assert stage_reservation("prod", reserve_concurrency=False) is None


def _zip() -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("handler.py", "def handler(event, context):\n    return event\n")
    return buf.getvalue()
