"""Ruling 18: a guess repeated with the same ``request_id`` gets the first outcome again and is
applied once; a guess API Gateway throttled (its type-less frame) lands on the retry.

The guess's ``request_id`` is kept in the row it played (the tournament item the guess writes
anyway: no extra write), so a repeat finds the row and answers its ``turn`` again.
"""

from __future__ import annotations

from tests.functional.driver import Game, wrong_word


def _started(backend) -> Game:
    game = Game.start(backend)
    game.end_intro()
    return game


def _mover(game: Game):
    duel = game.t.duels[0]
    return duel, game.by_id[duel.next_player], game.by_id[duel.opponent_of(duel.next_player)]


def _turns(player, request_id: str) -> list[dict]:
    return [m for m in player.all("turn") if m.get("request_id") == request_id]


def test_a_throttled_guess_lands_on_the_retry(backend):
    game = _started(backend)
    duel, mover, opponent = _mover(game)
    word = wrong_word(backend, game.t.language, duel)
    backend.throttle(mover.connection_id)

    mover.send("guess", duel_id=duel.duel_id, word=word, request_id="g1")

    (frame,) = mover.gateway_frames
    assert frame["message"] == "Too Many Requests"
    assert frame["connectionId"] == mover.connection_id
    assert "type" not in frame
    assert game.t.duel(duel.duel_id).rows == ()  # not processed

    mover.send("guess", duel_id=duel.duel_id, word=word, request_id="g1")  # the retry

    assert [(r.player, r.word) for r in game.t.duel(duel.duel_id).rows] == [(mover.id, word)]
    assert [m["turn"] for m in _turns(mover, "g1")] == [1]
    assert [m["turn"] for m in opponent.all("turn")] == [1]


def test_a_guess_sent_again_after_a_lost_reply_is_applied_once_with_the_same_turn(backend):
    game = _started(backend)
    duel, mover, opponent = _mover(game)
    word = wrong_word(backend, game.t.language, duel)

    mover.send("guess", duel_id=duel.duel_id, word=word, request_id="g1")
    first = _turns(mover, "g1")
    backend.clock.now += 700  # the reply was lost; the client retries within the turn
    mover.send("guess", duel_id=duel.duel_id, word=word, request_id="g1")

    d = game.t.duel(duel.duel_id)
    assert [(r.player, r.word) for r in d.rows] == [(mover.id, word)]
    again = _turns(mover, "g1")
    assert len(first) == 1
    # the same turn, deadline included; the repeat is not numbered (seq null, the guide) and
    # its countdown runs from when it is sent, 700 ms later
    remaining = first[0]["remaining_ms"] - 700
    assert again == [first[0], {**first[0], "seq": None, "remaining_ms": remaining}]
    assert isinstance(first[0]["seq"], int)
    assert mover.errors == []
    assert len(opponent.all("turn")) == 1  # the opponent heard of the row once


def test_a_repeat_of_a_duel_ending_guess_answers_the_same_turn(backend):
    game = _started(backend)
    duel, mover, _ = _mover(game)

    mover.send("guess", duel_id=duel.duel_id, word=duel.word, request_id="win")
    first = _turns(mover, "win")
    mover.send("guess", duel_id=duel.duel_id, word=duel.word, request_id="win")

    assert len(game.t.duel(duel.duel_id).rows) == 1
    assert first[0]["next_player"] is None
    assert first[0]["deadline_ms"] is None
    assert _turns(mover, "win") == [first[0], {**first[0], "seq": None}]


def test_a_guess_sent_again_from_a_resumed_connection_is_applied_once(backend):
    """The reply was lost with the connection: the client resumes and sends the same guess
    (same ``request_id``) on its new connection."""
    game = _started(backend)
    duel, mover, _ = _mover(game)
    word = wrong_word(backend, game.t.language, duel)

    mover.send("guess", duel_id=duel.duel_id, word=word, request_id="g1")
    mover.disconnect()
    mover.resume()
    mover.send("guess", duel_id=duel.duel_id, word=word, request_id="g1")

    assert len(game.t.duel(duel.duel_id).rows) == 1
    assert [m["turn"] for m in _turns(mover, "g1")] == [1]  # on the new connection
    assert mover.errors == []


def test_another_request_id_is_a_new_guess(backend):
    game = _started(backend)
    duel, mover, _ = _mover(game)
    word = wrong_word(backend, game.t.language, duel)

    mover.send("guess", duel_id=duel.duel_id, word=word, request_id="g1")
    mover.send("guess", duel_id=duel.duel_id, word=word, request_id="g2")

    assert len(game.t.duel(duel.duel_id).rows) == 1
    assert mover.errors == ["not_your_turn"]
