"""Flows: matchmaking (ruling 8) — join, lobby updates, the 8th seat starting the tournament,
leaving before the start (free), the rating window — through the real handlers on moto."""

from __future__ import annotations

from shared.adapters.dynamo import schema
from shared.domain.matchmaking import Lobby, Seat
from shared.services.model import LobbyRecord
from tests.functional.stored import lobby_item, player_item, set_rating, types


def test_first_join_opens_a_waiting_lobby(backend):
    a = backend.player("a")

    a.send("join", language="en", request_id="j1")

    lobby = a.last("lobby")
    assert lobby["status"] == "waiting"
    assert lobby["language"] == "en"
    assert [p["id"] for p in lobby["players"]] == [a.id]
    assert lobby["seats"] == 8
    assert lobby["alphabet"]
    assert types(a) == ["session", "lobby"]

    me = player_item(backend, a)
    assert (me["status"], me["lobby_id"], me["language"]) == ("queued", lobby["lobby_id"], "en")
    item = lobby_item(backend, lobby["lobby_id"])
    assert item["status"] == "waiting"
    assert item["waiting_pk"].startswith("WAITING#en#")  # findable through gsi_lobbies
    assert (item["waiting_lo"], item["waiting_hi"], item["seat_count"]) == (800, 1200, 1)
    assert [s["player_id"] for s in item["seats"]] == [a.id]
    assert item["connections"] == {a.id: a.connection_id}
    assert "ttl" not in item


def test_second_player_takes_a_seat_and_both_are_told(backend):
    a, b = backend.player("a"), backend.player("b")
    a.join("en")
    b.join("en")

    lobby_id = a.last("lobby")["lobby_id"]
    assert b.last("lobby")["lobby_id"] == lobby_id
    assert [[p["id"] for p in m["players"]] for m in a.all("lobby")] == [[a.id], [a.id, b.id]]
    assert [[p["id"] for p in m["players"]] for m in b.all("lobby")] == [[a.id, b.id]]
    assert [s["player_id"] for s in lobby_item(backend, lobby_id)["seats"]] == [a.id, b.id]
    assert player_item(backend, b)["lobby_id"] == lobby_id


def test_eighth_seat_starts_the_tournament_for_everyone(backend):
    players = backend.fill_lobby("en")
    lobby_id = players[0].all("lobby")[0]["lobby_id"]

    item = lobby_item(backend, lobby_id)
    assert item["status"] == "started"
    assert "waiting_pk" not in item  # out of the waiting index
    assert item["ttl"] > backend.clock.now // 1000  # cleaned up after it finished
    tid = item["tournament_id"]
    assert len(item["seats"]) == 8
    for i, p in enumerate(players):
        lobbies = p.all("lobby")
        assert [len(m["players"]) for m in lobbies] == list(range(i + 1, 9))
        assert [m["status"] for m in lobbies][-1] == "started"
        assert lobbies[-1]["tournament_id"] == tid
        rnd = p.last("round")
        assert rnd["tournament_id"] == tid
        assert rnd["round"] == 1
        assert not p.errors
        me = player_item(backend, p)
        assert (me["status"], me["tournament_id"]) == ("playing", tid)
        assert "lobby_id" not in me
    rec = backend.tournament(tid)
    assert {p.player_id for p in rec.tournament.players} == {p.id for p in players}
    assert rec.connections == {p.id: p.connection_id for p in players}
    assert backend.item(schema.tournament_key(tid))["due_pk"].startswith("DUE#")

    # playing: a second join is refused and changes nothing
    before = backend.snapshot()
    players[0].send("join", language="en")
    players[1].send("join", language="de")
    assert players[0].errors == ["already_playing"]
    assert players[1].errors == ["already_playing"]
    assert backend.snapshot() == before

    # a newcomer opens a fresh lobby: the started one admits nobody
    late = backend.player("late")
    late.join("en")
    assert late.last("lobby")["lobby_id"] != lobby_id
    assert len(lobby_item(backend, lobby_id)["seats"]) == 8


def test_join_while_queued_is_refused(backend):
    a = backend.player("a")
    a.join("en")
    before = backend.snapshot()

    a.send("join", language="en", request_id="again")
    a.send("join", language="de")

    assert [(m["code"], m["request_id"]) for m in a.all("error")] == [
        ("already_queued", "again"),
        ("already_queued", None),
    ]
    assert backend.snapshot() == before


def test_join_of_an_unknown_language_is_refused(backend):
    a = backend.player("a")
    before = backend.snapshot()

    a.send("join", language="xx")
    a.send("join", language="klingon")

    assert a.errors == ["unknown_language", "unknown_language"]
    assert backend.snapshot() == before


def test_leave_before_the_start_frees_the_seat(backend):
    a, b = backend.player("a"), backend.player("b")
    a.join("en")
    b.join("en")
    lobby_id = a.last("lobby")["lobby_id"]

    b.send("leave")

    assert b.last("lobby")["status"] == "left"
    assert [p["id"] for p in a.last("lobby")["players"]] == [a.id]
    me = player_item(backend, b)
    assert me["status"] == "idle"
    assert "lobby_id" not in me
    item = lobby_item(backend, lobby_id)
    assert [s["player_id"] for s in item["seats"]] == [a.id]
    assert b.id not in item["connections"]
    assert me["rating"] == 1000  # free

    # the freed seat is taken by the next player; b may queue again
    c = backend.player("c")
    c.join("en")
    assert c.last("lobby")["lobby_id"] == lobby_id
    b.join("en")
    assert [s["player_id"] for s in lobby_item(backend, lobby_id)["seats"]] == [a.id, c.id, b.id]


def test_last_player_leaving_empties_the_lobby(backend):
    a = backend.player("a")
    a.join("en")
    lobby_id = a.last("lobby")["lobby_id"]

    a.send("leave")

    item = lobby_item(backend, lobby_id)
    assert item["status"] == "empty"
    assert item["seats"] == []
    assert "waiting_pk" not in item
    assert "ttl" in item
    b = backend.player("b")
    b.join("en")
    assert b.last("lobby")["lobby_id"] != lobby_id


def test_leave_when_not_queued_is_refused(backend):
    a = backend.player("a")
    before = backend.snapshot()
    a.send("leave")
    assert a.errors == ["not_queued"]
    assert backend.snapshot() == before


def test_rating_window_separates_1000_and_1300_and_admits_exactly_200(backend):
    low, high, edge, beyond = (backend.player(n) for n in ("low", "high", "edge", "beyond"))
    set_rating(backend, high, 1300)
    set_rating(backend, edge, 1200)
    set_rating(backend, beyond, 1201)

    low.join("en")
    high.join("en")
    edge.join("en")
    beyond.join("en")

    lobby_low = low.last("lobby")["lobby_id"]
    lobby_high = high.last("lobby")["lobby_id"]
    assert lobby_low != lobby_high
    assert edge.last("lobby")["lobby_id"] == lobby_low  # |1200 - 1000| == 200: admitted
    assert beyond.last("lobby")["lobby_id"] == lobby_high  # 201 from 1000, 99 from 1300
    assert [s["player_id"] for s in lobby_item(backend, lobby_low)["seats"]] == [low.id, edge.id]
    assert [s["player_id"] for s in lobby_item(backend, lobby_high)["seats"]] == [
        high.id,
        beyond.id,
    ]
    assert [len(m["players"]) for m in high.all("lobby")] == [1, 2]
    assert [len(m["players"]) for m in low.all("lobby")] == [1, 2]


def test_languages_never_share_a_lobby(backend):
    a, b = backend.player("a"), backend.player("b")
    a.join("en")
    b.join("de")
    assert a.last("lobby")["lobby_id"] != b.last("lobby")["lobby_id"]
    assert b.last("lobby")["language"] == "de"


def test_resume_in_a_running_tournament_gets_a_full_snapshot(backend):
    players = backend.fill_lobby("en")
    p, other = players[2], players[3]
    tid = p.last("round")["tournament_id"]
    p.disconnect()
    assert other.last("player_status")["tournament_id"] == tid
    assert other.last("player_status")["status"] == "disconnected"

    p.resume()

    snap = p.last("session")["snapshot"]
    assert snap["round"]["tournament_id"] == tid
    assert {s["player_id"] for s in snap["standings"]["players"]} == {x.id for x in players}
    own = backend.tournament(tid).tournament.duel_of(p.id)
    assert (snap["duel"] or {}).get("duel_id") == (own.duel_id if own else None)
    assert snap["lobby"] is None
    assert other.last("player_status")["status"] == "connected"
    assert backend.tournament(tid).connections[p.id] == p.connection_id


def _waiting_lobby(backend, lobby_id: str, rating: int, created_ms: int) -> None:
    """A lobby with one seat rated ``rating``, stored as earlier joins would have left it."""
    seat = Seat(f"{lobby_id}-p", rating, None, "Someone")
    lobby = Lobby(lobby_id, "en", (seat,), created_ms=created_ms)
    backend.store.commit([LobbyRecord(lobby, {seat.player_id: None})])


def test_1199_and_1201_share_a_lobby_behind_sixty_older_ones(backend):
    """No blind spot: however many older lobbies wait that admit neither, two
    players 2 points apart (in different rating buckets) meet in one lobby (ruling 8)."""
    for i in range(60):
        _waiting_lobby(backend, f"old{i:02d}", 1500 + 201 * i, created_ms=i)
    a, b = backend.player("a"), backend.player("b")
    set_rating(backend, a, 1199)
    set_rating(backend, b, 1201)

    a.join("en")
    b.join("en")

    lobby_id = a.last("lobby")["lobby_id"]
    assert b.last("lobby")["lobby_id"] == lobby_id
    assert [s["player_id"] for s in lobby_item(backend, lobby_id)["seats"]] == [a.id, b.id]
    assert (player_item(backend, b)["status"], player_item(backend, b)["lobby_id"]) == (
        "queued",
        lobby_id,
    )


def test_a_joiner_takes_the_fullest_admitting_lobby_among_many(backend):
    for i in range(40):
        _waiting_lobby(backend, f"far{i:02d}", 2000 + 201 * i, created_ms=i)
    _waiting_lobby(backend, "near-new", 1100, created_ms=100)
    _waiting_lobby(backend, "near-old", 900, created_ms=50)
    x = backend.player("x")

    x.join("en")

    assert x.last("lobby")["lobby_id"] == "near-old"  # both admit 1000: the older one


def test_at_low_load_lobbies_fill_one_at_a_time(backend):
    """Sequential joins (no contention) never leave two compatible lobbies waiting."""
    players = [backend.player(f"p{i}") for i in range(20)]
    for i, p in enumerate(players):
        p.join("en")
        lobbies = [i for i in backend.items() if i["pk"].startswith("LOBBY#")]
        waiting = [len(item["seats"]) for item in lobbies if item["status"] == "waiting"]
        assert waiting == ([] if i % 8 == 7 else [i % 8 + 1])
        assert len(lobbies) == i // 8 + 1
