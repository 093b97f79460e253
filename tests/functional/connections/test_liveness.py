"""Flows: ruling 14 (liveness) and ruling 9 (no absent player is seated), through the real
handlers on moto with the production heartbeat timeout (60 s).

Scripted players stand for clients: the ones that "ping" send ``ping`` every 10 s of manual
time (clients must every 20 s); API Gateway answers it (a MOCK route: no function runs) and the
connection's ``LastActiveAt`` moves (the harness's ``RecordingNotifier.active``). The silent one
sends nothing, its socket still open and its pushes still accepted (a half-open peer:
``$disconnect`` never comes). Silence is read with GetConnection (``last_active_ms``) only when
it matters: a turn of the player's ran out, or the 8th seat fills."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from infra.emulator.testing import Backend, running_backend
from shared.adapters.dynamo import schema
from tests.functional.stored import lobby_item, player_item

HEARTBEAT_MS = 60_000
RECONNECT_MS = 60_000


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    yield from running_backend(monkeypatch, heartbeat_timeout_seconds=HEARTBEAT_MS / 1000)


def _step(backend: Backend, alive: list[Any], ms: int = 10_000) -> None:
    for p in alive:
        p.ping()
    backend.clock.advance(ms)


def _statuses(player: Any, about: str) -> list[tuple[str, int | None]]:
    return [
        (m["status"], m.get("reconnect_deadline_ms"))
        for m in player.all("player_status")
        if m["player_id"] == about
    ]


def test_a_silent_duelist_is_disconnected_at_a_skip_then_left_after_the_window(live):
    players = live.fill_lobby("en")
    t0 = live.clock.now  # every session (a sign of life) was at t0
    live.end_intro()
    silent = live.to_move()[0]
    opponent = next(p for p in players if p.id in silent.current_duel().players and p is not silent)
    alive = [p for p in players if p is not silent]
    cid = silent.connection_id

    while not _statuses(opponent, silent.id) and live.clock.now < t0 + 200_000:
        if opponent.my_turn():
            opponent.guess()
        _step(live, alive)

    # treated as disconnected from the moment the heartbeat timeout passed (ruling 14) ...
    deadline = t0 + HEARTBEAT_MS + RECONNECT_MS
    assert _statuses(opponent, silent.id) == [("disconnected", deadline)]
    assert live.clock.now >= t0 + HEARTBEAT_MS  # never before the timeout
    me = player_item(live, silent)
    assert (me["connected"], me["reconnect_deadline_ms"]) == (False, deadline)
    # ... and the server closed the connection (DeleteConnection)
    assert cid in live.notifier.closed
    assert live.item(schema.connection_key(cid))["closed_ms"] is not None  # a tombstone

    while live.clock.now < deadline + 2_000:
        if opponent.my_turn():
            opponent.guess()
        _step(live, alive, 1_000)

    gone = [m for m in opponent.all("eliminated") if m["player_id"] == silent.id]
    assert [m["reason"] for m in gone] == ["timeout"]
    state = live.tournament(opponent.tournament_id()).tournament.player(silent.id)
    assert state.left
    assert not state.alive
    assert player_item(live, silent)["status"] == "idle"


def _skips(players: list[Any]) -> set[tuple[str, int]]:
    return {
        (m["duel_id"], m["turn"]) for p in players for m in p.all("turn") if m["row"]["skipped"]
    }


def test_players_who_ping_stay_connected_however_many_turns_they_skip(live):
    players = live.fill_lobby("en")
    t0 = live.clock.now
    live.end_intro()
    live.notifier.reads.clear()
    while live.clock.now < t0 + 4 * HEARTBEAT_MS:
        _step(live, players)  # nobody guesses: every turn is a skip
    assert not any(p.all("player_status") for p in players)
    assert live.notifier.closed == []
    assert all(player_item(live, p)["connected"] for p in players)
    # one GetConnection per skipped turn, of the skipped player's connection; none per ping
    assert len(live.notifier.reads) == len(_skips(players)) > 0
    assert set(live.notifier.reads) <= {p.connection_id for p in players}


def _lobby_of_seven(backend: Backend) -> list[Any]:
    seated = [backend.player(f"s{i}") for i in range(7)]
    for p in seated:
        p.join("en")
    return seated


def test_a_disconnected_holder_is_released_when_the_eighth_seat_fills(backend):
    """Ruling 9: a tournament never starts with a player who is offline at that moment."""
    seated = _lobby_of_seven(backend)
    lobby_id = seated[0].last("lobby")["lobby_id"]
    away = seated[3]
    away.disconnect()  # within its 60 s: the seat is kept ...
    assert len(lobby_item(backend, lobby_id)["seats"]) == 7

    eighth = backend.player("eighth")
    eighth.join("en")

    # ... but not into a tournament: released, and the lobby waits for more
    item = lobby_item(backend, lobby_id)
    assert item["status"] == "waiting"
    assert [s["player_id"] for s in item["seats"]] == [
        *(p.id for p in seated if p is not away),
        eighth.id,
    ]
    assert away.id not in item["connections"]
    assert not any(p.all("round") for p in [*seated, eighth])
    assert [p["id"] for p in eighth.last("lobby")["players"]] == [
        *(p.id for p in seated if p is not away),
        eighth.id,
    ]
    me = player_item(backend, away)
    assert me["status"] == "idle"
    assert "lobby_id" not in me
    assert "due_ms" not in me
    # its reconnect deadline is stale now: firing it changes nothing
    before = backend.snapshot()
    backend.clock.advance(RECONNECT_MS)
    assert backend.snapshot() == before

    # the holder learns it on resume: not queued any more
    away.resume()
    session = away.last("session")
    assert session["resumed"] is True
    assert session["snapshot"].get("lobby") is None
    assert player_item(backend, away)["status"] == "idle"

    # the next player fills the lobby with everyone there: it starts
    ninth = backend.player("ninth")
    ninth.join("en")
    assert lobby_item(backend, lobby_id)["status"] == "started"
    assert ninth.last("round")["round"] == 1


def test_a_silent_holder_is_released_and_closed_when_the_eighth_seat_fills(live):
    seated = _lobby_of_seven(live)
    lobby_id = seated[0].last("lobby")["lobby_id"]
    quiet = seated[5]
    alive = [p for p in seated if p is not quiet]
    for _ in range(7):
        _step(live, alive)  # 70 s: quiet has not been heard from for more than 60 s

    eighth = live.player("eighth")
    eighth.join("en")  # the one who just joined is alive by definition

    item = lobby_item(live, lobby_id)
    assert item["status"] == "waiting"
    assert quiet.id not in [s["player_id"] for s in item["seats"]]
    assert quiet.connection_id in live.notifier.closed
    me = player_item(live, quiet)
    assert (me["status"], me["connected"]) == ("idle", False)


def test_a_lobby_of_pinging_players_starts_with_everyone(live):
    seated = _lobby_of_seven(live)
    for _ in range(7):
        _step(live, seated)
    eighth = live.player("eighth")
    eighth.join("en")
    assert {p["player_id"] for p in eighth.last("round")["standings"]} == {
        p.id for p in [*seated, eighth]
    }
    assert live.notifier.closed == []


def test_a_ping_runs_no_function_and_reads_or_writes_nothing(live):
    p = live.player("p")
    calls: list[str] = []
    client = live.store.client
    original = client._make_api_call

    def spy(operation: str, params: dict[str, Any]) -> Any:
        calls.append(operation)
        return original(operation, params)

    client._make_api_call = spy
    live.clock.advance(5_000)
    try:
        p.ping()
    finally:
        client._make_api_call = original
    assert calls == []
    assert p.messages[-1] == {
        "type": "pong",
        "server_time_ms": live.clock.now,
        "request_id": None,
        "seq": None,
    }
    assert live.notifier.reads == []  # nobody asked the gateway either
    assert live.notifier.active[p.connection_id] == live.clock.now
    assert "heard_ms" not in live.item(schema.connection_key(p.connection_id))
