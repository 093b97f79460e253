"""Engine: the AWS calls one guess makes (RULINGS.md, "Message functions"; "tests assert
per-action counts of AWS calls").

A guess finds its player by the connection id inside the tournament item: one strongly
consistent GetItem, one conditional PutItem on the item's ``version``, then one push per
recipient; no timer: the round's clock loop, started by the intro, covers every turn deadline.
Refusals and stale wakes only read.
"""

from __future__ import annotations

from shared.services.ports import Timer, TimerKind
from tests.functional.driver import AwsCalls, Game, wrong_word


def test_a_guess_is_one_read_one_conditional_write_and_its_pushes(backend):
    game = Game.start(backend)
    game.end_intro()
    duel = game.t.duels[0]
    mover = game.by_id[duel.next_player]
    calls = AwsCalls(backend)
    pending = len(backend.clock.pending())
    pushed = len(backend.notifier.raw)
    with calls as made:
        mover.send("guess", duel_id=duel.duel_id, word=wrong_word(backend, "en", duel))
    assert made == ["GetItem", "PutItem"]
    assert len(backend.clock.pending()) == pending  # no execution started: the loop covers it
    # the row goes to both duelists only: nobody is a spectator yet in round 1
    recipients = [cid for cid, _ in backend.notifier.raw[pushed:]]
    assert sorted(recipients) == sorted(game.by_id[p].connection_id for p in duel.players)


def test_a_refused_guess_and_a_stale_timer_only_read(backend):
    game = Game.start(backend)
    game.end_intro()
    duel = game.t.duels[0]
    waiting = game.by_id[duel.opponent_of(duel.next_player)]
    calls = AwsCalls(backend)
    with calls as made:
        waiting.send("guess", duel_id=duel.duel_id, word=wrong_word(backend, "en", duel))
    assert made == ["GetItem"]
    with calls as made:
        backend.call(
            "clock", Timer(TimerKind.INTRO, game.tid, 1, game.t.intro_deadline_ms).to_event()
        )
    assert made == ["GetItem"]


def test_a_guess_closing_a_round_with_places_is_one_transaction(backend):
    game = Game.start(backend)
    game.end_intro()
    while not any(p.lives == 1 for p in game.t.alive):
        game.play_round(lambda g, d, m: "solve")
        game.end_intro()
    t = game.t
    doomed = next(p.player_id for p in t.alive if p.lives == 1 and t.duel_of(p.player_id))
    last = t.duel_of(doomed)
    for d in t.duels:
        if d.duel_id != last.duel_id:
            game.act(d, "solve")
    d = game.t.duel(last.duel_id)
    if d.next_player == doomed:
        game.act(d, "wrong")
        d = game.t.duel(last.duel_id)
    calls = AwsCalls(backend)
    with calls as made:
        game.by_id[d.next_player].send("guess", duel_id=d.duel_id, word=d.word)
    # read the tournament, read the placed players' profiles in one batch, then one
    # transaction: the tournament, the players back to idle with their new rating, and one
    # RATING# item each (put only if absent)
    assert made == ["GetItem", "BatchGetItem", "TransactWriteItems"]
    assert game.t.player(doomed).place is not None
