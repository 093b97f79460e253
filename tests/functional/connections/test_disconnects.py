"""Flows: ``$disconnect`` and pushes to gone connections (ruling 9: a seat is kept 60 s),
through the real handlers on moto; and the API Gateway notifier's GoneException handling."""

from __future__ import annotations

import json

import boto3
from botocore.stub import Stubber

from shared.adapters.dynamo import schema
from shared.adapters.notifier import ApiGatewayNotifier
from shared.services.ports import TimerKind
from tests.functional.stored import lobby_item, player_item


def test_disconnect_in_a_lobby_keeps_the_seat_and_tells_the_lobby(backend):
    a, b = backend.player("a"), backend.player("b")
    a.join("en")
    b.join("en")
    lobby_id = a.last("lobby")["lobby_id"]
    old = b.connection_id
    now = backend.clock.now

    b.disconnect()

    assert backend.item(schema.connection_key(old))["closed_ms"] == now  # a tombstone
    me = player_item(backend, b)
    assert me["connected"] is False
    assert "connection_id" not in me
    assert me["reconnect_deadline_ms"] == now + 60_000
    assert me["due_pk"].startswith("DUE#")  # the watchdog finds it if the timer is lost
    assert me["due_ms"] == now + 60_000
    assert me["status"] == "queued"
    item = lobby_item(backend, lobby_id)
    assert [s["player_id"] for s in item["seats"]] == [a.id, b.id]
    assert item["connections"] == {a.id: a.connection_id, b.id: None}
    status = a.last("player_status")
    assert (status["lobby_id"], status["player_id"], status["status"]) == (
        lobby_id,
        b.id,
        "disconnected",
    )
    assert status["reconnect_deadline_ms"] == now + 60_000
    timers = backend.clock.pending()
    assert [(t.kind, t.ref, t.due_ms) for t in timers] == [
        (TimerKind.RECONNECT, b.id, now + 60_000)
    ]

    # 60 s later the seat is freed (ruling 9)
    backend.clock.advance(60_000)

    assert [p["id"] for p in a.last("lobby")["players"]] == [a.id]
    me = player_item(backend, b)
    assert me["status"] == "idle"
    assert "lobby_id" not in me
    assert "due_pk" not in me
    assert "reconnect_deadline_ms" not in me
    assert [s["player_id"] for s in lobby_item(backend, lobby_id)["seats"]] == [a.id]


def test_resume_within_the_deadline_keeps_the_seat(backend):
    a, b = backend.player("a"), backend.player("b")
    a.join("en")
    b.join("en")
    lobby_id = a.last("lobby")["lobby_id"]
    b.disconnect()
    backend.clock.advance(30_000)

    b.resume()

    reply = b.last("session")
    assert reply["resumed"] is True
    assert reply["snapshot"]["lobby"]["lobby_id"] == lobby_id
    assert a.last("player_status")["status"] == "connected"
    assert lobby_item(backend, lobby_id)["connections"][b.id] == b.connection_id
    me = player_item(backend, b)
    assert (me["connected"], me["status"]) == (True, "queued")
    assert "due_pk" not in me

    backend.clock.advance(60_000)  # the stale reconnect timer changes nothing
    assert [s["player_id"] for s in lobby_item(backend, lobby_id)["seats"]] == [a.id, b.id]
    assert player_item(backend, b)["status"] == "queued"


def test_disconnect_of_an_idle_player_starts_no_deadline(backend):
    a = backend.player("a")
    a.disconnect()
    me = player_item(backend, a)
    assert me["connected"] is False
    assert "reconnect_deadline_ms" not in me
    assert "due_pk" not in me
    assert backend.clock.pending() == []


def test_disconnect_before_a_session_only_closes_the_connection(backend):
    a = backend.player("a")
    stranger = backend.player("stranger", session=False)
    key = f"CONN#{stranger.connection_id}"
    before = [i for i in backend.items() if i["pk"] != key]

    stranger.disconnect()

    assert [i for i in backend.items() if i["pk"] != key] == before
    assert backend.item(schema.connection_key(stranger.connection_id))["closed_ms"] == (
        backend.clock.now
    )
    assert [m["type"] for m in a.messages] == ["session"]


def test_push_to_a_gone_connection_starts_the_disconnect_flow(backend):
    a, b, c = backend.player("a"), backend.player("b"), backend.player("c")
    a.join("en")
    b.join("en")
    lobby_id = a.last("lobby")["lobby_id"]
    backend.notifier.gone.add(b.connection_id)  # vanished without a $disconnect

    c.join("en")  # the lobby update to b gets a 410

    me = player_item(backend, b)
    assert me["connected"] is False
    assert me["reconnect_deadline_ms"] == backend.clock.now + 60_000
    assert backend.item(schema.connection_key(b.connection_id))["closed_ms"] == backend.clock.now
    assert lobby_item(backend, lobby_id)["connections"][b.id] is None
    for p in (a, c):
        status = p.last("player_status")
        assert (status["player_id"], status["status"]) == (b.id, "disconnected")
    assert [len(m["players"]) for m in c.all("lobby")] == [3]
    assert [t.ref for t in backend.clock.pending()] == [b.id]

    before = backend.snapshot()
    b.disconnect()  # API Gateway's own $disconnect arrives later: nothing more happens
    assert backend.snapshot() == before


# ------------------------------------------------------------------ ApiGatewayNotifier
def test_notifier_reports_gone_connections_and_keeps_sending_to_the_others():
    client = boto3.client(
        "apigatewaymanagementapi",
        region_name="us-east-1",
        endpoint_url="https://example.execute-api.us-east-1.amazonaws.com/prod",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )
    notifier = ApiGatewayNotifier(client)
    with Stubber(client) as stub:
        stub.add_client_error("post_to_connection", "GoneException", http_status_code=410)
        stub.add_client_error("post_to_connection", "LimitExceededException", 429)
        stub.add_response(
            "post_to_connection", {}, {"ConnectionId": "ok=", "Data": b'{"type":"pong"}'}
        )
        gone = notifier.send(
            [
                ("gone=", json.dumps({"type": "pong"})),
                ("gone=", json.dumps({"type": "pong"})),  # not retried after a 410
                ("busy=", json.dumps({"type": "pong"})),
                ("ok=", '{"type":"pong"}'),
            ]
        )
        stub.assert_no_pending_responses()
    assert gone == ["gone="]


def test_notifier_close_ignores_gone_connections():
    client = boto3.client(
        "apigatewaymanagementapi",
        region_name="us-east-1",
        endpoint_url="https://example.execute-api.us-east-1.amazonaws.com/prod",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )
    with Stubber(client) as stub:
        stub.add_client_error("delete_connection", "GoneException", http_status_code=410)
        stub.add_client_error("delete_connection", "ForbiddenException", http_status_code=403)
        ApiGatewayNotifier(client).close("gone=")
        ApiGatewayNotifier(client).close("other=")
        stub.assert_no_pending_responses()


def test_a_resume_between_the_disconnects_two_writes_keeps_the_new_connection(backend, monkeypatch):
    """Interleaving: ``$disconnect`` of the old socket saved the player as away; before it
    records that in the tournament, the player resumes on a new socket. The disconnect's
    second write must not clear the new connection (found by a browser reload test: the
    resumed player's guesses were refused ``not_in_tournament``)."""
    from shared.services import presence

    players = backend.fill_lobby("en")
    backend.end_intro()
    p = backend.to_move()[0]
    original = presence.set_connection
    resumed: list[str] = []

    def interleaved(deps, player, connection_id, deadline, **kw):
        if connection_id is None and not resumed:
            resumed.append("yes")
            p.resume()  # the new socket binds first
        return original(deps, player, connection_id, deadline, **kw)

    monkeypatch.setattr(presence, "set_connection", interleaved)
    p.disconnect()
    assert resumed == ["yes"]

    rec = backend.tournament(p.tournament_id())
    assert rec.connections[p.id] == p.connection_id
    assert rec.tournament.player(p.id).connected
    p.guess()
    assert p.last("turn")["row"]["player"] == p.id
    other = next(x for x in players if x is not p)
    told = [m["status"] for m in other.all("player_status") if m["player_id"] == p.id]
    assert told[-1:] in ([], ["connected"]), "the others never end up seeing them away"
