"""Flows: sessions (ruling 11) and nicknames through the real handlers on moto.

Asserts the stored items (raw, via the moto client) and every message each connection got.
"""

from __future__ import annotations

import base64
import hashlib

import pytest

from shared.adapters.dynamo import schema


def _token_bits(token: str) -> int:
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    return len(raw) * 8


def test_first_session_creates_a_player_whose_token_is_stored_only_hashed(backend):
    a = backend.player("a")
    b = backend.player("b")

    reply = a.last("session")
    assert [m["type"] for m in a.messages] == ["session"]
    assert reply["resumed"] is False
    assert reply["player"]["rating"] == 1000
    assert 3 <= len(reply["player"]["nickname"]) <= 20
    assert _token_bits(a.token) >= 256
    assert a.token != b.token
    assert a.id != b.id

    everything = backend.snapshot()
    for token in (a.token, b.token):
        assert token not in everything  # the raw token is nowhere in the table
    digest = hashlib.sha256(a.token.encode()).hexdigest()
    token_item = backend.item(schema.token_key(digest))
    assert token_item is not None
    assert token_item["player_id"] == a.id
    profile = backend.item(schema.player_key(a.id))
    assert profile["connection_id"] == a.connection_id
    assert profile["connected"] is True
    assert profile["status"] == "idle"
    assert profile["rating"] == 1000
    assert profile["version"] == 1  # one conditional create, no second write
    assert backend.item(schema.connection_key(a.connection_id))["player_id"] == a.id
    kinds = sorted(i["pk"].split("#")[0] for i in backend.items())
    assert kinds == ["CONN", "CONN", "PLAYER", "PLAYER", "TOKEN", "TOKEN"]


def test_resume_binds_the_new_connection_and_closes_the_old_one(backend):
    a = backend.player("a")
    old = a.connection_id
    created = a.last("session")

    a.resume()  # the old connection is still open

    assert a.connection_id != old
    reply = a.last("session")
    assert reply["resumed"] is True
    assert reply["token"] not in (None, created["token"])  # rotated (ruling 11)
    assert reply["player"] == created["player"]
    assert reply["snapshot"] is not None
    assert [m["type"] for m in a.messages] == ["session"]
    old_msgs = backend.notifier.sent[old]
    assert [(m["type"], m.get("code")) for m in old_msgs] == [
        ("session", None),
        ("error", "session_replaced"),
    ]
    assert backend.notifier.closed == [old]

    profile = backend.item(schema.player_key(a.id))
    assert profile["connection_id"] == a.connection_id
    assert profile["connected"] is True
    assert backend.item(schema.connection_key(a.connection_id))["player_id"] == a.id

    # the replaced connection no longer acts for the player
    backend.notifier.gone.discard(old)
    backend.send_raw(old, '{"action":"join","language":"en"}')
    assert backend.notifier.sent[old][-1]["code"] == "no_session"
    assert backend.item(schema.player_key(a.id))["status"] == "idle"

    # closing it makes API Gateway send its $disconnect: the player stays connected
    backend.invoke("$disconnect", old)
    assert backend.item(schema.connection_key(old))["closed_ms"] == backend.clock.now
    profile = backend.item(schema.player_key(a.id))
    assert (profile["connected"], profile["connection_id"]) == (True, a.connection_id)
    assert backend.clock.pending() == []


def test_resume_after_a_disconnect_sends_no_session_replaced(backend):
    a = backend.player("a")
    old = a.connection_id
    a.disconnect()
    assert backend.item(schema.connection_key(old))["closed_ms"] == backend.clock.now
    profile = backend.item(schema.player_key(a.id))
    assert profile["connected"] is False
    assert "connection_id" not in profile

    a.resume()

    assert a.last("session")["resumed"] is True
    assert [m["type"] for m in backend.notifier.sent[old]] == ["session"]
    assert backend.notifier.closed == []
    profile = backend.item(schema.player_key(a.id))
    assert (profile["connected"], profile["connection_id"]) == (True, a.connection_id)


@pytest.mark.parametrize(
    "token",
    ["not-a-token", "A" * 43, "", "x" * 128],
    ids=["garbage", "well-formed-unknown", "empty", "longest"],
)
def test_bad_token_is_refused_and_nothing_changes(backend, token):
    known = backend.player("known")
    stranger = backend.player("stranger", session=False)
    before = backend.snapshot()

    stranger.send("session", token=token, request_id="r1")

    assert [(m["type"], m["code"], m["request_id"]) for m in stranger.messages] == [
        ("error", "invalid_token", "r1")
    ]
    assert backend.snapshot() == before
    assert [m["type"] for m in known.messages] == ["session"]


def test_nickname_change_is_cleaned_saved_and_confirmed(backend):
    a = backend.player("a")

    a.send("nickname", nickname="  Zoë\u00a0\u00a0Ünal  ", request_id="n1")

    reply = a.last("player")
    assert reply["player"]["nickname"] == "Zoë Ünal"
    assert reply["request_id"] == "n1"
    assert backend.item(schema.player_key(a.id))["nickname"] == "Zoë Ünal"


@pytest.mark.parametrize(
    "nickname",
    ["", "   ", "ab", "x" * 21, "bad\x07name", "tab\tname", "zero\u200bwidth", "semi;colon"],
    ids=["empty", "only-spaces", "too-short", "too-long", "bell", "tab", "zwsp", "punct"],
)
def test_invalid_nickname_is_refused_and_nothing_is_stored(backend, nickname):
    a = backend.player("a")
    before = backend.snapshot()

    a.send("nickname", nickname=nickname)

    assert a.errors == ["invalid_nickname"]
    assert backend.snapshot() == before


def test_offensive_nickname_is_refused_as_invalid_nickname(backend):
    a = backend.player("a")
    before = backend.snapshot()

    a.send("nickname", nickname="shit head")

    assert a.errors == ["invalid_nickname"]
    assert backend.snapshot() == before


def test_nickname_that_looks_like_a_lobby_neighbours_is_refused(backend):
    bob = backend.player("bob")
    bob.send("nickname", nickname="Tomas Cox")
    mallory = backend.player("mallory")
    outsider = backend.player("outsider")
    for p in (bob, mallory):
        p.send("join", language="en")
    before = backend.snapshot()

    # All in Cyrillic capitals; zeros for the Os; the same name in capitals: each passes for it.
    for copy in ("ТОМАЅ СОХ", "T0mas C0x", "TOMAS COX"):
        mallory.send("nickname", nickname=copy)
    assert mallory.errors == ["nickname_lookalike"] * 3
    assert backend.snapshot() == before

    outsider.send("nickname", nickname="ТОМАЅ СОХ")  # in no lobby: nobody to mistake
    assert outsider.last("player")["player"]["nickname"] == "ТОМАЅ СОХ"
    mallory.send("nickname", nickname="Tomas Fox")
    assert mallory.last("player")["player"]["nickname"] == "Tomas Fox"


def test_a_lookalike_chosen_while_idle_is_seated_in_another_lobby(backend):
    bob = backend.player("bob")
    bob.send("nickname", nickname="Tomas Cox")
    bob.join("en")
    mallory = backend.player("mallory")
    mallory.send("nickname", nickname="ТОМАЅ СОХ")  # idle: nobody beside her to mistake
    mallory.join("en")

    bobs, mallorys = bob.last("lobby"), mallory.last("lobby")
    assert mallorys["lobby_id"] != bobs["lobby_id"]
    assert [p["nickname"] for p in mallorys["players"]] == ["ТОМАЅ СОХ"]
    assert mallory.errors == []
