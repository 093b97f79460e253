"""The client guide: every inbound message may carry ``request_id``, echoed in the reply."""

from __future__ import annotations


def test_join_reply_echoes_the_request_id_only_to_the_requester(backend):
    a, b = backend.player("a"), backend.player("b")
    a.join("en")
    b.send("join", language="en", request_id="j-1")
    assert b.last("lobby")["request_id"] == "j-1"
    assert a.last("lobby")["request_id"] is None


def test_guess_reply_echoes_the_request_id(backend):
    backend.fill_lobby("en")
    backend.end_intro()
    p = backend.to_move()[0]
    d = p.current_duel()
    p.send("guess", duel_id=d.duel_id, word=p.any_valid_word(), request_id="g-7")
    assert p.last("turn")["request_id"] == "g-7"
    other = next(x for x in backend.players if x.id == d.opponent_of(p.id))
    assert other.last("turn")["request_id"] is None


def test_ping_and_errors_echo_the_request_id(backend):
    a = backend.player("a")
    a.send("ping", request_id="p-1")
    assert a.last("pong")["request_id"] == "p-1"
    a.send("join", language="xx", request_id="e-1")
    assert a.last("error")["request_id"] == "e-1"
