"""Every handler's event delivered twice: the second delivery never applies
twice. State-based idempotency does the work — conditional writes on versions, turn numbers and
disconnect counters — so the duplicate meets the state the first one left and is refused with
the code that state calls for, or changes nothing.

Why no request-id dedupe store (Powertools Idempotency, or a "last request_id" on the CONN
item): a guess reads only the tournament item and writes it once (RULINGS.md, "Message
functions"). A dedupe record would add a read and a write to *every* action — doubling the
guess's cost — to turn an already-harmless duplicate's ``not_your_turn`` into silence. The
duplicate cannot double-apply: the first guess moved the turn on, and the row it produced was
pushed to the caller. A client that lost its connection before seeing the reply learns from the
``session`` snapshot whether its row is on the board, so it never needs to resend blindly (the
protocol notes this).
"""

from __future__ import annotations

import json

from shared.adapters.dynamo import schema
from tests.faults.support import record, started


def _twice(backend, route, connection_id, body=None):
    from infra.emulator.events import ws_event

    event = ws_event(route, connection_id, body, backend.clock.now)
    name = route if route in backend.entrypoints else "$default"
    backend.call(name, event)
    after_first = backend.snapshot()
    backend.call(name, event)  # the very same event, again
    return after_first


def test_connect_twice_keeps_one_connection_and_a_later_duplicate_keeps_the_session(backend):
    p = backend.player("p", session=False)
    after = _twice(backend, "$connect", p.connection_id)
    assert backend.snapshot() == after
    p.send("session")
    pid = p.last("session")["player"]["id"]
    backend.invoke("$connect", p.connection_id)  # a very late duplicate
    assert backend.item(schema.connection_key(p.connection_id))["player_id"] == pid
    p.send("nickname", nickname="Still Me")
    assert p.last("player")["player"]["nickname"] == "Still Me"


def test_session_create_twice_makes_one_player_and_refuses_the_duplicate(backend):
    """``session`` without a token means "a new player", once per connection (ruling 11: a
    connection belongs to one player for its whole life): a duplicate delivery is refused
    ``session_bound`` and creates nothing; the connection stays bound to the first player."""
    p = backend.player("p", session=False)
    body = json.dumps({"action": "session", "request_id": "s1"})
    before_players = [i for i in backend.items() if i["sk"] == "PROFILE"]
    _twice(backend, "session", p.connection_id, body)
    (first,) = p.all("session")
    assert p.errors == ["session_bound"]
    conn = backend.item(schema.connection_key(p.connection_id))
    assert conn["player_id"] == first["player"]["id"]
    after_players = [i for i in backend.items() if i["sk"] == "PROFILE"]
    assert len(after_players) == len(before_players) + 1


def test_session_resume_twice_is_one_resume(backend):
    _players, mover, _opponent, tid = started(backend)
    mover.disconnect()
    cid = "again="
    backend.invoke("$connect", cid)
    body = json.dumps({"action": "session", "token": mover.token})
    _twice(backend, "session", cid, body)
    sent = backend.notifier.sent[cid]
    assert [m["type"] for m in sent] == ["session", "session"]
    assert all(m["resumed"] for m in sent)
    assert "error" not in [m["type"] for m in sent]  # not "replaced" by itself
    assert record(backend, tid).connections[mover.id] == cid
    assert backend.item(schema.player_key(mover.id))["connected"] is True


def test_join_twice_takes_one_seat(backend):
    a = backend.player("a")
    _twice(backend, "join", a.connection_id, json.dumps({"action": "join", "language": "en"}))
    assert a.errors == ["already_queued"]
    assert len(a.last("lobby")["players"]) == 1


def test_guess_twice_plays_one_row(backend):
    _players, mover, opponent, tid = started(backend)
    duel_id = mover.current_duel().duel_id
    body = json.dumps({"action": "guess", "duel_id": duel_id, "word": mover.any_valid_word()})
    after = _twice(backend, "guess", mover.connection_id, body)
    assert backend.snapshot() == after
    assert len(record(backend, tid).tournament.duel(duel_id).rows) == 1
    assert mover.errors == ["not_your_turn"]
    assert [m["turn"] for m in opponent.all("turn")] == [1]


def test_leave_twice_in_a_lobby_and_in_a_tournament(backend):
    a = backend.player("a")
    a.join("en")
    _twice(backend, "leave", a.connection_id, json.dumps({"action": "leave"}))
    assert a.errors == ["not_queued"]
    _players, mover, opponent, tid = started(backend)
    after = _twice(backend, "leave", mover.connection_id, json.dumps({"action": "leave"}))
    # the duplicate finds an eliminated spectator: ``leave`` then means "stop watching" — only
    # the player's own item changes (no tournament_id), nothing else
    key = schema.player_key(mover.id)
    changed = [i for i in json.loads(after) if i["pk"] == key["pk"] and i["sk"] == key["sk"]]
    assert [i for i in json.loads(after) if i not in changed] == [
        i
        for i in json.loads(backend.snapshot())
        if not (i["pk"] == key["pk"] and i["sk"] == key["sk"])
    ]
    assert changed[0]["tournament_id"] == tid
    assert backend.item(key).get("tournament_id") is None
    assert mover.errors == []
    t = record(backend, tid).tournament
    assert t.player(mover.id).left
    # every request is answered (issue 37): the duplicate, a leave from a player already out,
    # gets the player's own ``eliminated`` again, the same as the first (ruling 18's spirit: a
    # repeated request gets the original outcome); the others hear nothing more
    # repeated to the sender only, so not numbered (seq null: the client guide)
    first, again = mover.all("eliminated")
    assert {**first, "seq": None} == again
    assert isinstance(first["seq"], int)
    assert len(list(opponent.all("duel_end"))) == 1


def test_nickname_and_party_actions_twice(backend):
    a, b = backend.player("a"), backend.player("b")
    _twice(backend, "nickname", a.connection_id, '{"action":"nickname","nickname":"Twice Me"}')
    assert a.errors == []
    assert backend.item(schema.player_key(a.id))["nickname"] == "Twice Me"
    _twice(backend, "party_create", a.connection_id, '{"action":"party_create"}')
    assert a.errors == ["already_in_party"]
    invite = a.last("party")["invite"]
    body = json.dumps({"action": "party_join", "invite": invite})
    _twice(backend, "party_join", b.connection_id, body)
    assert b.errors == ["already_in_party"]
    assert len(b.last("party")["members"]) == 2
    _twice(backend, "party_start", a.connection_id, '{"action":"party_start","language":"en"}')
    assert a.errors[-1] in ("party_member_playing", "already_queued")
    assert backend.item(schema.player_key(b.id))["status"] == "queued"
    lobby = backend.item(schema.lobby_key(backend.item(schema.player_key(a.id))["lobby_id"]))
    assert [s["player_id"] for s in lobby["seats"]] == [a.id, b.id]


def test_disconnect_twice_is_one_disconnect(backend):
    a = backend.player("a")
    a.join("en")
    backend.notifier.gone.add(a.connection_id)
    after = _twice(backend, "$disconnect", a.connection_id)
    assert backend.snapshot() == after
    assert len([t for t in backend.clock.pending() if t.ref == a.id]) == 1
