"""Engine: the watchdog applies deadlines whose timer never started, found
through the due-time index, so no duel or round can hang."""

from __future__ import annotations

from tests.functional.driver import AwsCalls, Game, check_final, check_messages, peek_raw


def _watchdog(backend) -> dict:
    return backend.call("watchdog", {})


def test_watchdog_applies_an_intro_whose_timer_never_fired(backend):
    game = Game.start(backend)
    backend.clock.service.abandon()  # the intro's execution failed to start
    backend.clock.advance(6_000 + 4_000)  # due, but within the grace (5 s)
    assert _watchdog(backend) == {"handled": 0}
    assert game.t.phase.value == "intro"
    backend.clock.advance(2_000)
    calls = AwsCalls(backend)
    with calls as made:
        assert _watchdog(backend) == {"handled": 1}
    assert made.count("Scan") == 0
    assert game.t.phase.value == "playing"
    before = peek_raw(game.tid)["version"]
    assert _watchdog(backend) == {"handled": 0}  # nothing overdue any more
    assert peek_raw(game.tid)["version"] == before


def test_a_watchdog_hours_late_plays_every_due_deadline_in_one_change(backend):
    game = Game.start(backend)
    backend.clock.service.abandon()  # no timer ever fires: only the watchdog moves the game
    backend.clock.advance(3 * 3_600_000)
    assert _watchdog(backend) == {"handled": 1}
    # every turn timed out: three rounds of drawn duels put everyone out together
    t = game.t
    assert t.over
    assert t.round_no == 3
    check_final(game)
    check_messages(game)
    rounds = [m for m in game.players[0].messages if m["type"] == "round"]
    assert [m["round"] for m in rounds] == [1, 2, 3]
    assert {len(m["pairs"]) for m in rounds} == {4}
