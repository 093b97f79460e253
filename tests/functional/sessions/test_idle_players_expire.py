"""Flows: idle players and their tokens expire by the table's TTL a token lifetime (30 days,
``shared.services.deps.TOKEN_IDLE_MS``) after their current token was issued
(``shared.adapters.dynamo.schema.idle_player_ttl``), through the real handlers on moto.

moto keeps expired items; DynamoDB deletes them "within a few days" of their expiry, one item
at a time, in no stated order, and returns them to reads until then (AWS, "Time to Live (TTL)",
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html and
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html).
``expire`` below does what that sweeper does, for the items a test names, in the order it names
them; the tests run both with items still there past their expiry and with one of a pair gone.
"""

from __future__ import annotations

from typing import Any

from shared.adapters.dynamo import schema
from shared.services.deps import TOKEN_IDLE_MS
from shared.services.sessions import hash_token

DAY_MS = 24 * 3600 * 1000
LIFETIME_S = 30 * 24 * 3600


def _ttl(backend: Any, key: dict[str, str]) -> int | None:
    item = backend.item(key)
    assert item is not None, f"no item {key}"
    return item.get(schema.TTL_ATTRIBUTE)


def _expire(backend: Any, *keys: dict[str, str]) -> None:
    """DynamoDB's TTL sweeper on ``keys``, in that order: each item whose ``ttl`` (epoch
    seconds) is before now is deleted (moto never deletes by TTL)."""
    from shared.adapters.dynamo.store import to_av

    now_s = backend.clock.now // 1000
    for key in keys:
        ttl = _ttl(backend, key)
        assert ttl is not None, f"{key} has no TTL"
        assert ttl < now_s, f"{key} is not expired ({ttl} >= {now_s})"
        backend.client.delete_item(TableName=backend.table_name, Key=to_av(key))


def _reconnect(backend: Any, player: Any) -> None:
    player.disconnect()
    cid = f"conn{next(backend._ids):03d}="
    backend.invoke("$connect", cid)
    player.connection_id = cid
    player.clear()


def _token_key(token: str) -> dict[str, str]:
    return schema.token_key(hash_token(token))


def _expires_at(issued_ms: int) -> int:
    return -(-issued_ms // 1000) + LIFETIME_S


def test_a_new_player_and_its_token_expire_one_lifetime_after_the_session(backend):
    assert LIFETIME_S * 1000 == TOKEN_IDLE_MS
    backend.clock.advance(1)  # not on a whole second: the TTL is rounded up, never down
    a = backend.player("a")

    expected = _expires_at(backend.clock.now)
    assert _ttl(backend, schema.player_key(a.id)) == expected
    assert _ttl(backend, _token_key(a.token)) == expected
    assert expected * 1000 >= backend.clock.now + TOKEN_IDLE_MS


def test_playing_moves_no_ttl_and_adds_no_write(backend):
    """Only a session moves the player's TTL: a join, a rename and a leave save the player
    with the same ``ttl`` (it is derived from ``token_used_ms``, not from the save)."""
    a = backend.player("a")
    expected = _ttl(backend, schema.player_key(a.id))
    token_item = backend.item(_token_key(a.token))
    backend.clock.advance(5 * DAY_MS)
    for action, fields in (("join", {"language": "en"}), ("nickname", {"nickname": "Zed"})):
        a.send(action, **fields)
        assert a.errors == []
    a.send("leave")
    profile = backend.item(schema.player_key(a.id))
    assert profile["version"] >= 3  # saved by each of them
    assert profile[schema.TTL_ATTRIBUTE] == expected
    assert backend.item(_token_key(a.token)) == token_item


def test_a_returning_player_inside_the_lifetime_keeps_identity_and_rating(backend):
    a = backend.player("a")
    first = a.token
    profile = backend.store.get_player(a.id)
    profile.rating = 1234  # as earlier tournaments would have left it
    backend.store.commit([profile])
    first_expiry = _ttl(backend, _token_key(first))

    backend.clock.advance(TOKEN_IDLE_MS - 1_000)  # its last second
    _reconnect(backend, a)
    a.send("session", token=first)
    reply = a.last("session")
    assert reply["resumed"] is True
    assert (reply["player"]["id"], reply["player"]["rating"]) == (a.id, 1234)
    a.token = reply["token"]

    # the player and its new token live a lifetime from now; the rotated-out token keeps its
    # own TTL (recognised, and refused past the grace, until then)
    moved = _expires_at(backend.clock.now)
    assert _ttl(backend, schema.player_key(a.id)) == moved
    assert _ttl(backend, _token_key(a.token)) == moved
    assert _ttl(backend, _token_key(first)) == first_expiry

    backend.clock.advance(2_000)  # the old token's item expires and goes; the player stays
    _expire(backend, _token_key(first))
    _reconnect(backend, a)
    a.send("session", token=a.token)
    again = a.last("session")
    assert (again["player"]["id"], again["player"]["rating"]) == (a.id, 1234)
    assert a.errors == []


def test_an_idle_player_is_removed_with_its_token_and_the_token_is_refused(backend):
    a = backend.player("a")
    backend.clock.advance(TOKEN_IDLE_MS + 1_000)
    _expire(backend, schema.player_key(a.id), _token_key(a.token))
    _reconnect(backend, a)
    before = backend.snapshot()

    a.send("session", token=a.token, request_id="r1")

    assert [(m["type"], m["code"], m["request_id"]) for m in a.messages] == [
        ("error", "invalid_token", "r1")
    ]
    assert backend.snapshot() == before
    assert not [i for i in backend.items() if i["pk"] == f"PLAYER#{a.id}"]


def test_a_token_whose_player_ttl_removed_first_is_refused_as_expired(backend):
    """TTL deletes the two items independently: a token item left without its player is an
    expired token (nothing written), not a crash; and while both still sit past their expiry,
    the token's age refuses it."""
    a = backend.player("a")
    backend.clock.advance(TOKEN_IDLE_MS + 1_000)
    _reconnect(backend, a)
    a.send("session", token=a.token, request_id="both-still-there")
    assert a.errors == ["invalid_token"]

    _expire(backend, schema.player_key(a.id))  # the token's item not yet
    _reconnect(backend, a)
    before = backend.snapshot()
    a.send("session", token=a.token, request_id="player-gone")

    assert [(m["type"], m["code"], m["request_id"]) for m in a.messages] == [
        ("error", "invalid_token", "player-gone")
    ]
    assert backend.snapshot() == before


def test_rotation_and_sign_out_move_the_players_ttl_with_the_newest_token(backend):
    a = backend.player("a")
    created = backend.clock.now
    for day in (10, 20):
        backend.clock.advance(10 * DAY_MS)
        _reconnect(backend, a)
        a.send("session", token=a.token)
        a.token = a.last("session")["token"]
        assert _ttl(backend, schema.player_key(a.id)) == _expires_at(created + day * DAY_MS)
        assert _ttl(backend, _token_key(a.token)) == _expires_at(created + day * DAY_MS)

    backend.clock.advance(DAY_MS)
    a.send("sign_out_everywhere")
    fresh = a.last("session")["token"]
    now_expiry = _expires_at(backend.clock.now)
    assert _ttl(backend, schema.player_key(a.id)) == now_expiry
    assert _ttl(backend, _token_key(fresh)) == now_expiry

    # 30 days after the first session the player is still there (its TTL moved); the revoked
    # tokens' items go by their own TTLs, the player and its current token stay
    backend.clock.advance(TOKEN_IDLE_MS - 21 * DAY_MS + 1_000)
    first_items = [i for i in backend.items() if i["pk"].startswith("TOKEN#")]
    expired = [i for i in first_items if i[schema.TTL_ATTRIBUTE] < backend.clock.now // 1000]
    assert len(expired) == 1  # the first token's
    _expire(backend, *({"pk": i["pk"], "sk": i["sk"]} for i in expired))
    _reconnect(backend, a)
    a.send("session", token=fresh)
    assert a.last("session")["player"]["id"] == a.id
    assert a.errors == []
