"""Engine: races, deterministically interleaved at the service layer.

``Interleaver.run(first, second)`` lets ``first`` load and decide, runs ``second`` to the end,
then lets ``first`` commit: its conditional write on the tournament's ``version`` fails, it
re-reads and re-decides. Every test checks that exactly one outcome won: the board, the
messages (each sent once), the tournament version and the rating items.
"""

from __future__ import annotations

from shared.services.ports import Timer, TimerKind
from tests.functional.driver import Game, Interleaver, messages, peek_player, peek_rating, peek_raw


def fire(backend, kind: TimerKind, ref: str, seq: int, due_ms: int) -> None:
    """Deliver one clock event to the real clock handler (as Step Functions would)."""
    backend.call("clock", Timer(kind, ref, seq, due_ms).to_event())


def wake(backend, game: Game) -> None:
    """One wake of the current round's clock loop, at the clock's now (the state machine
    hands the round's identity: the intro timer's kind, tournament and round)."""
    fire(backend, TimerKind.INTRO, game.tid, game.t.round_no, backend.clock.now)


GRACE = 2_000  # Timing.skip_grace_ms: a skip is due this long after its deadline


def started(backend) -> Game:
    game = Game.start(backend)
    game.end_intro()
    return game


def sent(backend) -> int:
    return len(backend.notifier.raw)


def version(game: Game) -> int:
    return int(peek_raw(game.tid)["version"])


def turn_messages(game: Game, duel_id: str) -> list[dict]:
    return [m for sp in game.players for m in messages(sp) if m.get("duel_id") == duel_id]


# ------------------------------------------------------------------ guess vs turn deadline
def test_deadline_committing_first_makes_the_guess_in_flight_meet_the_skip(backend):
    """A guess received 1 ms before the deadline whose handler runs past the grace: the
    clock's skip commits first, the guess re-reads and meets it (``turn_over``)."""
    game = started(backend)
    duel = game.t.duels[0]
    mover = game.by_id[duel.next_player]
    deadline = duel.turn_deadline_ms
    backend.clock.now = deadline + GRACE  # the loop's wake
    race = Interleaver(backend)
    race.run(
        lambda: mover.send(
            "guess", duel_id=duel.duel_id, word=_word(game, duel), received_ms=deadline - 1
        ),
        lambda: wake(backend, game),
    )
    d = game.t.duel(duel.duel_id)
    assert [r.skipped for r in d.rows] == [True]
    assert d.rows[0].player == mover.id
    assert mover.errors == ["turn_over"]
    assert race.commits == [True, False]  # the deadline won; the guess re-read and refused
    turns = [m for m in turn_messages(game, duel.duel_id) if m["type"] == "turn"]
    assert {m["turn"] for m in turns} == {1}
    assert all(m["row"]["skipped"] for m in turns)


def test_guess_committing_first_makes_the_deadline_in_flight_a_no_op(backend):
    """The same guess (received 1 ms before the deadline) committing first: the wake in
    flight re-reads, finds nothing due and writes nothing."""
    game = started(backend)
    duel = game.t.duels[0]
    mover = game.by_id[duel.next_player]
    deadline = duel.turn_deadline_ms
    backend.clock.now = deadline - 1
    for other in game.t.duels[1:]:  # the other duels move on: only this one is due at D
        game.act(other, "wrong")
    word = _word(game, duel)
    backend.clock.now = deadline + GRACE
    race = Interleaver(backend)
    race.run(
        lambda: wake(backend, game),
        lambda: mover.send("guess", duel_id=duel.duel_id, word=word, received_ms=deadline - 1),
    )
    d = game.t.duel(duel.duel_id)
    assert [r.word for r in d.rows] == [word]
    assert d.turn_deadline_ms == deadline + GRACE + 30_000  # the opponent's full turn
    assert mover.errors == []
    # the guess won; the deadline re-read and found nothing due: no second write
    assert race.commits == [True, False]
    assert all(not r.skipped for x in game.t.duels for r in x.rows)


def test_guess_received_at_the_deadline_instant_meets_the_skip(backend):
    """Received exactly at the deadline: too late, whether the skip is applied yet or not."""
    game = started(backend)
    duel = game.t.duels[0]
    mover = game.by_id[duel.next_player]
    deadline = duel.turn_deadline_ms
    backend.clock.now = deadline
    word = _word(game, duel)
    before, count = version(game), sent(backend)
    mover.send("guess", duel_id=duel.duel_id, word=word, received_ms=deadline)
    assert mover.errors == ["turn_over"]
    assert (version(game), sent(backend) - 1) == (before, count)  # only the error was sent
    backend.clock.now = deadline + GRACE
    wake(backend, game)
    d = game.t.duel(duel.duel_id)
    assert [(r.player, r.skipped) for r in d.rows] == [(mover.id, True)]
    mover.send("guess", duel_id=duel.duel_id, word=word)
    assert mover.errors == ["turn_over", "turn_over"]
    before, count = version(game), sent(backend)
    wake(backend, game)  # the loop, late, once more
    assert (version(game), sent(backend)) == (before, count)


# ------------------------------------------------------------------ two guesses, guess vs leave
def test_two_guesses_in_one_turn_play_exactly_one_row(backend):
    game = started(backend)
    duel = game.t.duels[1]
    mover = game.by_id[duel.next_player]
    w1, w2 = _word(game, duel, 1), _word(game, duel, 2)
    race = Interleaver(backend)
    race.run(
        lambda: mover.send("guess", duel_id=duel.duel_id, word=w1),
        lambda: mover.send("guess", duel_id=duel.duel_id, word=w2),
    )
    d = game.t.duel(duel.duel_id)
    assert [r.word for r in d.rows] == [w2]
    assert mover.errors == ["not_your_turn"]
    assert race.commits == [True, False]
    turns = [m for m in messages(mover) if m["type"] == "turn"]
    assert [m["row"]["word"] for m in turns] == [w2]


def test_opponent_guessing_out_of_turn_during_a_guess_changes_nothing(backend):
    game = started(backend)
    duel = game.t.duels[1]
    mover = game.by_id[duel.next_player]
    other = game.by_id[duel.opponent_of(mover.id)]
    w1 = _word(game, duel, 1)
    race = Interleaver(backend)
    race.run(
        lambda: mover.send("guess", duel_id=duel.duel_id, word=w1),
        lambda: other.send("guess", duel_id=duel.duel_id, word=w1),
    )
    assert [r.word for r in game.t.duel(duel.duel_id).rows] == [w1]
    assert other.errors == ["not_your_turn"]
    assert race.commits == [True]  # the refusal wrote nothing, so no conflict


def test_leave_committing_first_ends_the_duel_and_the_guess_meets_duel_over(backend):
    game = started(backend)
    duel = game.t.duels[2]
    mover = game.by_id[duel.next_player]
    leaver = game.by_id[duel.opponent_of(mover.id)]
    race = Interleaver(backend)
    race.run(
        lambda: mover.send("guess", duel_id=duel.duel_id, word=_word(game, duel)),
        lambda: leaver.send("leave"),
    )
    d = game.t.duel(duel.duel_id)
    assert d.rows == ()
    assert d.winner == mover.id
    assert d.reason.value == "left"
    assert mover.errors == ["duel_over"]
    assert game.t.player(leaver.id).left
    assert race.commits == [True, False]


def test_guess_committing_first_then_the_leave_still_applies(backend):
    game = started(backend)
    duel = game.t.duels[2]
    mover = game.by_id[duel.next_player]
    leaver = game.by_id[duel.opponent_of(mover.id)]
    word = _word(game, duel)
    race = Interleaver(backend)
    race.run(
        lambda: leaver.send("leave"),
        lambda: mover.send("guess", duel_id=duel.duel_id, word=word),
    )
    d = game.t.duel(duel.duel_id)
    assert [r.word for r in d.rows] == [word]
    assert d.winner == mover.id
    assert d.reason.value == "left"
    assert game.t.player(leaver.id).left
    assert peek_player(leaver.id).status.value == "idle"
    assert race.commits == [True, False, True]
    ends = [m for m in messages(mover) if m["type"] == "duel_end"]
    assert len(ends) == 1


# ------------------------------------------------------------------ the round closes once
def test_last_two_duels_ending_together_close_the_round_exactly_once(backend):
    game = started(backend)
    # quick rounds (first mover solves) until someone alive is down to their last life
    while not any(p.lives == 1 for p in game.t.alive):
        game.play_round(lambda g, d, m: "solve")
        game.end_intro()
    t = game.t
    round_no = t.round_no
    doomed = next(p.player_id for p in t.alive if p.lives == 1 and t.duel_of(p.player_id))
    x = t.duel_of(doomed)
    y = next(d for d in t.duels if d.duel_id != x.duel_id)
    for d in t.duels:
        if d.duel_id not in (x.duel_id, y.duel_id):
            game.act(d, "solve")
    if game.t.duel(x.duel_id).next_player == doomed:
        game.act(game.t.duel(x.duel_id), "wrong")
    x, y = game.t.duel(x.duel_id), game.t.duel(y.duel_id)
    assert game.t.round_no == round_no
    race = Interleaver(backend)
    race.run(
        lambda: game.by_id[x.next_player].send("guess", duel_id=x.duel_id, word=x.word),
        lambda: game.by_id[y.next_player].send("guess", duel_id=y.duel_id, word=y.word),
    )
    assert race.commits == [True, False, True]
    t = game.t
    assert t.round_no == round_no + 1 or t.over
    p = t.player(doomed)
    assert p.lives == 0
    assert p.out_round == round_no
    assert p.place is not None
    for sp in game.players:
        # standings follow every duel end; the round's places are in exactly one of them
        got = [
            m
            for m in messages(sp)
            if m["type"] == "standings"
            and any(s["player_id"] == doomed and s["place"] for s in m["players"])
        ]
        assert len(got) == 1, sp.name
        nxt = [m for m in messages(sp) if m["type"] == "round" and m["round"] == round_no + 1]
        assert len(nxt) == (0 if t.over else 1)
    rated = [m for m in messages(game.by_id[doomed]) if m["type"] == "rating"]
    assert len(rated) == 1
    item = peek_rating(doomed, game.tid)
    assert item["change"] == p.rating_change
    assert peek_player(doomed).rating == p.rating + p.rating_change


# ------------------------------------------------------------------ duplicate and stale timers
def test_clock_event_delivered_twice_applies_once(backend):
    game = Game.start(backend)
    t = game.t
    intro = t.intro_deadline_ms
    backend.clock.now = intro
    fire(backend, TimerKind.INTRO, game.tid, 1, intro)
    assert game.t.phase.value == "playing"
    before, count = version(game), sent(backend)
    fire(backend, TimerKind.INTRO, game.tid, 1, intro)
    assert (version(game), sent(backend)) == (before, count)
    # a wake delivered twice at once (Express is at-least-once): one skip per duel, not two
    deadline = game.t.duels[0].turn_deadline_ms
    backend.clock.now = deadline + GRACE
    race = Interleaver(backend)
    race.run(lambda: wake(backend, game), lambda: wake(backend, game))
    assert race.commits == [True, False]
    assert all(len(d.rows) == 1 and d.rows[0].skipped for d in game.t.duels)
    for sp in game.players:
        turns = [m for m in messages(sp) if m["type"] == "turn"]
        assert len(turns) == len({m["duel_id"] for m in turns})


def test_stale_clock_event_from_an_earlier_turn_changes_nothing(backend):
    game = started(backend)
    duel = game.t.duels[3]
    old_deadline = duel.turn_deadline_ms
    backend.clock.now = old_deadline - 10_000
    for d in game.t.duels:  # turn 2 starts everywhere, deadline old - 10 s + 30 s
        game.act(d, "wrong")
    backend.clock.now = old_deadline + 5_000  # past turn 1's deadline, before turn 2's
    before, count = version(game), sent(backend)
    fire(backend, TimerKind.INTRO, game.tid, 1, old_deadline)
    fire(backend, TimerKind.INTRO, game.tid, 1, game.t.intro_deadline_ms)
    assert (version(game), sent(backend)) == (before, count)
    assert all(not r.skipped for d in game.t.duels for r in d.rows)


def _word(game: Game, duel, salt: int = 0) -> str:
    from tests.functional.driver import wrong_word

    return wrong_word(game.backend, game.t.language, duel, salt)


# ------------------------------------------------------------------ reconnect deadline vs resume
def test_resume_committing_first_makes_the_reconnect_deadline_in_flight_a_no_op(backend):
    from tests.functional.driver import resume

    game = started(backend)
    duel = game.t.duels[0]
    away = game.by_id[duel.players[0]]
    away.disconnect()
    player = peek_player(away.id)
    due = player.reconnect_deadline_ms
    backend.clock.now = due
    race = Interleaver(backend)
    race.run(
        lambda: fire(backend, TimerKind.RECONNECT, away.id, player.disconnect_seq, due),
        lambda: resume(away),
    )
    t = game.t
    assert t.player(away.id).alive
    assert t.player(away.id).connected
    assert not game.t.duel(duel.duel_id).over
    assert game.rec.connections[away.id] == away.connection_id
    assert race.commits[0] is True  # the resume's tournament write; the deadline lost
    assert race.commits[1:] == [False]
    assert peek_player(away.id).status.value == "playing"


def test_reconnect_deadline_committing_first_leaves_the_resumed_player_out(backend):
    from tests.functional.driver import resume

    game = started(backend)
    duel = game.t.duels[0]
    away = game.by_id[duel.players[0]]
    away.disconnect()
    player = peek_player(away.id)
    due = player.reconnect_deadline_ms
    backend.clock.now = due
    race = Interleaver(backend)
    race.run(
        lambda: resume(away),
        lambda: fire(backend, TimerKind.RECONNECT, away.id, player.disconnect_seq, due),
    )
    # the resume's player write (seq + 1) precedes its tournament write, where it paused:
    # the deadline then finds the player back (seq moved on) and writes nothing
    t = game.t
    assert t.player(away.id).alive
    assert t.player(away.id).connected
    assert race.commits == [True]
    snap = away.last("session")["snapshot"]
    mine = next(s for s in snap["standings"]["players"] if s["player_id"] == away.id)
    assert not mine["eliminated"]
