"""Ruling 18 for ``join``, ``leave`` and ``party_start``: a request sent again with the same
``request_id`` (its reply was lost, or API Gateway throttled the first send) is applied once
and answered with the first outcome; the id is kept on the player item, in the same write."""

from __future__ import annotations

from tests.functional.driver import Game
from tests.functional.stored import lobby_item, party_item, player_item


def _replies(player, request_id: str) -> list[dict]:
    return [m for m in player.messages if m.get("request_id") == request_id]


def test_a_join_sent_again_is_seated_once_and_answered_with_the_lobby(backend):
    a, b = backend.player("a"), backend.player("b")
    a.join("en")

    b.send("join", language="en", request_id="j1")
    (first,) = _replies(b, "j1")
    b.send("join", language="en", request_id="j1")  # the reply was lost: sent again

    lobby_id = first["lobby_id"]
    assert [s["player_id"] for s in lobby_item(backend, lobby_id)["seats"]] == [a.id, b.id]
    again = _replies(b, "j1")
    assert [m["type"] for m in again] == ["lobby", "lobby"]
    assert again[1] == first
    assert b.errors == []  # not already_queued
    assert len(a.all("lobby")) == 2  # a heard of b's seat once


def test_a_throttled_join_lands_on_the_retry(backend):
    b = backend.player("b")
    backend.throttle(b.connection_id)

    b.send("join", language="en", request_id="j1")
    assert [f["message"] for f in b.gateway_frames] == ["Too Many Requests"]
    assert player_item(backend, b)["status"] == "idle"
    b.send("join", language="en", request_id="j1")

    assert player_item(backend, b)["status"] == "queued"
    assert [m["type"] for m in _replies(b, "j1")] == ["lobby"]


def test_a_lobby_leave_sent_again_is_answered_left_once(backend):
    a, b = backend.player("a"), backend.player("b")
    a.join("en")
    b.join("en")
    lobby_id = a.last("lobby")["lobby_id"]

    b.send("leave", request_id="l1")
    (first,) = _replies(b, "l1")
    b.send("leave", request_id="l1")

    assert first["status"] == "left"
    again = _replies(b, "l1")
    assert [(m["type"], m["status"]) for m in again] == [("lobby", "left")] * 2
    assert b.errors == []  # not not_queued
    assert [s["player_id"] for s in lobby_item(backend, lobby_id)["seats"]] == [a.id]


def test_a_tournament_leave_sent_again_is_applied_once(backend):
    game = Game.start(backend)
    game.end_intro()
    leaver = game.players[0]

    leaver.send("leave", request_id="l1")
    first = _replies(leaver, "l1")
    version = backend.tournament(game.tid).version
    leaver.send("leave", request_id="l1")

    assert [m["type"] for m in first] == ["eliminated"]
    # the same eliminated again; the repeat is not numbered (seq null, the client guide)
    assert _replies(leaver, "l1") == [first[0], {**first[0], "seq": None}]
    assert isinstance(first[0]["seq"], int)
    assert backend.tournament(game.tid).version == version  # nothing written
    assert leaver.errors == []


def test_a_party_start_sent_again_starts_the_party_once(backend):
    leader, member = backend.player("leader"), backend.player("member")
    leader.send("party_create")
    party_id = leader.last("party")["party_id"]
    member.send("party_join", invite=leader.last("party")["invite"])

    leader.send("party_start", language="en", request_id="s1")
    (first,) = [m for m in _replies(leader, "s1") if m["type"] == "lobby"]
    lobbies = len(member.all("lobby"))
    leader.send("party_start", language="en", request_id="s1")

    assert party_item(backend, party_id)["lobby_id"] == first["lobby_id"]
    assert [m["type"] for m in _replies(leader, "s1")] == ["lobby", "lobby"]
    assert _replies(leader, "s1")[1] == first
    assert leader.errors == []  # not party_member_playing
    assert len(member.all("lobby")) == lobbies  # the member was seated once


def test_the_player_item_remembers_at_most_eight_requests(backend):
    a, b = backend.player("a"), backend.player("b")
    a.join("en")
    for n in range(6):
        b.send("join", language="en", request_id=f"j{n}")
        b.send("leave", request_id=f"l{n}")

    recent = player_item(backend, b)["recent"]
    assert len(recent) == 8
    assert [r[0] for r in recent] == ["j2", "l2", "j3", "l3", "j4", "l4", "j5", "l5"]
