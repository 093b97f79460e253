"""Contract: ``InMemoryStore`` (``shared/adapters/memory.py``) and ``DynamoStore`` on moto
behave the same.

Every case runs against both, so the fake the unit tests rely on cannot drift from the real
adapter (STYLE.md: "fakes need a contract test run against the real adapter too").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from shared.adapters.memory import InMemoryStore
from shared.adapters.writes import TokenCreated
from shared.domain.matchmaking import Lobby, LobbyStatus, Seat
from shared.domain.party import Party
from shared.domain.tournament import Phase, PlayerState, Tournament
from shared.services.errors import ConflictError
from shared.services.model import (
    Connection,
    InviteCreated,
    InviteDeleted,
    IssuedToken,
    LobbyOpener,
    LobbyRecord,
    OpenerUnchanged,
    PartyDeleted,
    PartyRecord,
    Player,
    PlayerStatus,
    RatingApplied,
    TokenIssued,
    TournamentRecord,
)

NOW = 1_800_000_000_000
INVITE = "A" * 43


@pytest.fixture(params=["memory", "dynamo"])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemoryStore()
        return
    import boto3
    from moto import mock_aws

    from shared.adapters.dynamo.schema import create_tables
    from shared.adapters.dynamo.store import DynamoStore

    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_tables(client, "contract")
        yield DynamoStore(client, "contract", lambda: NOW)


def _player(pid: str = "p1", **kw: Any) -> Player:
    return Player(player_id=pid, nickname=f"Nick{pid}", rating=1000, created_ms=NOW, **kw)


def _lobby(
    lid: str,
    language: str = "en",
    created: int = NOW,
    *,
    connections: dict[str, str | None] | None = None,
    **kw: Any,
) -> LobbyRecord:
    lobby = Lobby(lobby_id=lid, language=language, created_ms=created, **kw)
    return LobbyRecord(lobby, connections=dict(connections or {}))


def _tournament(tid: str, intro_deadline_ms: int, phase: Phase = Phase.INTRO) -> Tournament:
    players = (PlayerState("a", "Aa1", 1000), PlayerState("b", "Bb1", 1000))
    return Tournament(tid, "en", players, phase=phase, intro_deadline_ms=intro_deadline_ms)


# ---------------------------------------------------------------------------- create / get
def test_created_player_is_found_by_id_and_by_token_hash(store: Any) -> None:
    store.create_player(_player("p1", connection_id="c1", connected=True), "h" * 64)

    got = store.get_player("p1")
    assert got is not None
    assert (got.player_id, got.nickname, got.rating, got.status) == (
        "p1",
        "Nickp1",
        1000,
        PlayerStatus.IDLE,
    )
    assert (got.connection_id, got.connected, got.version) == ("c1", True, 1)
    assert store.player_id_for_token("h" * 64) == "p1"
    assert store.player_id_for_token("x" * 64) is None
    assert store.get_player("nobody") is None


def test_get_players_returns_the_existing_ones_by_id(store: Any) -> None:
    for pid in ("p1", "p2", "p3"):
        store.create_player(_player(pid), f"{pid}-hash")
    found = store.get_players(["p3", "p1", "ghost", "p1"])
    assert sorted(found) == ["p1", "p3"]
    assert found["p3"].player_id == "p3"
    assert store.get_players([]) == {}


def test_create_player_refuses_a_taken_token_or_id_and_writes_nothing(store: Any) -> None:
    store.create_player(_player("p1"), "hash-1")
    with pytest.raises(ConflictError):
        store.create_player(_player("p2"), "hash-1")
    assert store.get_player("p2") is None
    with pytest.raises(ConflictError):
        store.create_player(_player("p1"), "hash-2")
    assert store.player_id_for_token("hash-2") is None


def test_create_player_binds_the_connection_in_the_same_transaction(store: Any) -> None:
    store.commit([Connection("c1", 1_000)])
    conn = store.get_connection("c1")
    stale = dataclasses.replace(conn)
    conn.player_id = "p0"
    store.commit([conn])  # another writer got there first: ``stale`` is behind
    stale.player_id = "p1"
    with pytest.raises(ConflictError):
        store.create_player(_player("p1", connection_id="c1"), "hash-1", stale)
    assert store.get_player("p1") is None  # no orphan player
    assert store.player_id_for_token("hash-1") is None
    assert store.get_connection("c1").player_id == "p0"
    fresh = store.get_connection("c1")
    fresh.player_id = "p1"
    store.create_player(_player("p1", connection_id="c1"), "hash-1", fresh)
    assert store.get_connection("c1").player_id == "p1"
    assert store.player_id_for_token("hash-1") == "p1"


# ---------------------------------------------------------------------------- versions
def test_versioned_save_increments_the_version_in_place(store: Any) -> None:
    p = _player("p1")
    store.create_player(p, "hash")
    assert p.version == 1
    p.nickname = "Renamed"
    store.commit([p])
    assert p.version == 2
    again = store.get_player("p1")
    assert (again.nickname, again.version) == ("Renamed", 2)


def test_stale_save_conflicts_and_keeps_the_winner(store: Any) -> None:
    store.create_player(_player("p1"), "hash")
    first, second = store.get_player("p1"), store.get_player("p1")
    first.nickname = "First"
    store.commit([first])
    second.nickname = "Second"
    with pytest.raises(ConflictError):
        store.commit([second])
    assert second.version == 1  # a failed commit leaves the loaded version alone
    assert store.get_player("p1").nickname == "First"


def test_creating_an_existing_record_conflicts(store: Any) -> None:
    store.commit([_lobby("l1", seats=(Seat("a", 1000, None, "Aa1"),))])
    with pytest.raises(ConflictError):
        store.commit([_lobby("l1")])
    assert [s.player_id for s in store.get_lobby("l1").lobby.seats] == ["a"]


def test_saving_a_record_that_vanished_conflicts(store: Any) -> None:
    ghost = _lobby("l1")
    ghost.version = 3
    with pytest.raises(ConflictError):
        store.commit([ghost])
    assert store.get_lobby("l1") is None


# ---------------------------------------------------------------------------- transactions
def test_transaction_is_all_or_nothing(store: Any) -> None:
    store.create_player(_player("p1"), "hash")
    stale = store.get_player("p1")
    fresh = store.get_player("p1")
    fresh.rating = 1100
    store.commit([fresh])

    lobby = _lobby("l1", seats=(Seat("p1", 1000, None, "Nickp1"),))
    stale.status = PlayerStatus.QUEUED
    stale.lobby_id = "l1"
    with pytest.raises(ConflictError):
        store.commit([lobby, stale, InviteCreated(INVITE, "party1")])
    assert store.get_lobby("l1") is None
    assert store.party_id_for_invite(INVITE) is None
    assert store.get_player("p1").status is PlayerStatus.IDLE
    assert lobby.version == 0


def test_transaction_of_several_records_commits_them_all(store: Any) -> None:
    store.create_player(_player("p1"), "hash")
    p = store.get_player("p1")
    party = PartyRecord(Party("party1", INVITE, ("p1",)))
    p.party_id = "party1"
    store.commit([party, InviteCreated(INVITE, "party1"), p])
    assert (party.version, p.version) == (1, 2)
    assert store.get_party("party1").party.members == ("p1",)
    assert store.get_player("p1").party_id == "party1"
    assert store.party_id_for_invite(INVITE) == "party1"


def test_empty_commit_is_a_no_op(store: Any) -> None:
    store.commit([])


# ---------------------------------------------------------------------------- connections
def test_connection_round_trip_and_close_keeps_a_tombstone(store: Any) -> None:
    c = Connection("c1=", NOW)
    store.commit([c])
    c.player_id = "p1"
    store.commit([c])
    got = store.get_connection("c1=")
    assert (got.player_id, got.connected_ms, got.version, got.closed_ms) == ("p1", NOW, 2, None)
    old = store.close_connection("c1=", NOW + 5)
    assert old is not None
    assert (old.player_id, old.closed_ms) == ("p1", None)  # what it held while open
    tomb = store.get_connection("c1=")
    assert (tomb.player_id, tomb.closed_ms, tomb.version) == ("p1", NOW + 5, 3)
    assert store.close_connection("c1=", NOW + 9) is None  # closed once
    assert store.get_connection("c1=").closed_ms == NOW + 5
    assert store.close_connection("unknown=", NOW) is None
    got.player_id = "p2"
    with pytest.raises(ConflictError):  # a save from a read of the open item conflicts
        store.commit([got])


def test_strikes_add_up_on_the_connection_and_survive_its_saves(store: Any) -> None:
    """``add_strike``: one update per strike, counted across callers (containers); a later
    versioned save of the connection (it read the strikes) keeps them; a closed connection
    is not struck."""
    store.commit([Connection("c2=", NOW)])

    assert [store.add_strike("c2=") for _ in range(2)] == [1, 2]
    conn = store.get_connection("c2=")
    assert conn.strikes == 2
    conn.player_id = "p1"
    store.commit([conn])
    assert store.add_strike("c2=") == 3
    assert store.get_connection("c2=").player_id == "p1"
    store.close_connection("c2=", NOW + 1)
    assert store.add_strike("c2=") is None
    assert store.get_connection("c2=").strikes == 3


# ---------------------------------------------------------------------------- queries
def _seated(lid: str, *ratings: int, language: str = "en", party: str | None = None, **kw: Any):
    seats = tuple(Seat(f"{lid}-{i}", r, party, f"N{i}") for i, r in enumerate(ratings))
    return _lobby(lid, language, seats=seats, party_id=party, **kw)


def _ids(found: list[Any]) -> list[str]:
    return sorted(w.lobby_id for w in found)


def test_waiting_lobbies_are_those_admitting_the_rating(store: Any) -> None:
    store.commit([_seated("at1000", 1000, created=NOW + 5)])
    store.commit([_seated("pair", 900, 1050, created=NOW + 1)])  # admits 850..1100
    store.commit([_seated("low", 700)])  # admits 500..900
    store.commit([_seated("high", 1201)])  # admits 1001..1401
    store.commit([_seated("party", 1000, 900, party="pa")])  # highest 1000: admits 800..1200
    store.commit([_seated("other-language", 1000, language="de")])
    store.commit([_seated("started", *[1000] * 8, status=LobbyStatus.STARTED)])
    store.commit([_seated("empty", status=LobbyStatus.EMPTY)])

    assert _ids(store.waiting_lobbies("en", 1000)) == ["at1000", "pair", "party"]
    assert _ids(store.waiting_lobbies("en", 1100)) == ["at1000", "high", "pair", "party"]
    assert _ids(store.waiting_lobbies("en", 1200)) == ["at1000", "high", "party"]
    assert _ids(store.waiting_lobbies("en", 1201)) == ["high"]
    assert _ids(store.waiting_lobbies("en", 800)) == ["at1000", "low", "party"]
    assert _ids(store.waiting_lobbies("en", 799)) == ["low"]
    assert _ids(store.waiting_lobbies("de", 1000)) == ["other-language"]
    assert store.waiting_lobbies("fr", 1000) == []
    (pair,) = [w for w in store.waiting_lobbies("en", 1000) if w.lobby_id == "pair"]
    assert (pair.seats, pair.created_ms, pair.lo, pair.hi) == (2, NOW + 1, 850, 1100)


def test_waiting_lobbies_finds_one_behind_hundreds(store: Any) -> None:
    """No blind spot: far more lobbies than one page of answers wait."""
    for i in range(120):
        store.commit([_seated(f"far{i:03d}", 1500 + i % 50, created=NOW + i)])
    store.commit([_seated("near", 1199, created=NOW + 999)])

    assert _ids(store.waiting_lobbies("en", 1201)) == ["near"]
    assert len(store.waiting_lobbies("en", 1550)) == 120


def test_a_lobby_leaves_the_waiting_query_when_it_starts(store: Any) -> None:
    lobby = _seated("l1", *[1000] * 8)
    store.commit([lobby])
    assert store.waiting_lobbies("en", 1000) == []  # full: admits nobody
    lobby.lobby = dataclasses.replace(lobby.lobby, status=LobbyStatus.STARTED, tournament_id="t1")
    store.commit([lobby])
    assert store.waiting_lobbies("en", 1000) == []
    assert store.get_lobby("l1").lobby.tournament_id == "t1"


def test_a_seat_taken_narrows_the_range_found(store: Any) -> None:
    lobby = _seated("l1", 1000)
    store.commit([lobby])
    lobby.lobby = dataclasses.replace(lobby.lobby, seats=(*lobby.lobby.seats, Seat("x", 1150)))
    store.commit([lobby])
    assert _ids(store.waiting_lobbies("en", 850)) == []
    (found,) = store.waiting_lobbies("en", 950)
    assert (found.seats, found.lo, found.hi) == (2, 950, 1200)


def test_openers_by_bucket_and_lane(store: Any) -> None:
    store.commit(
        [
            LobbyOpener("en", 5, "l5"),
            LobbyOpener("en", 6, "l6", lane=3, opened_ms=1_800_000_000_123, streak=4),
        ]
    )
    store.commit([LobbyOpener("de", 5, "d5")])

    got = store.get_openers("en", 0, [4, 5, 6])
    assert {b: (o.lobby_id, o.lane, o.version) for b, o in got.items()} == {5: ("l5", 0, 1)}
    got = store.get_openers("en", 3, [5, 6, 7])
    assert {b: (o.lobby_id, o.lane, o.opened_ms, o.streak) for b, o in got.items()} == {
        6: ("l6", 3, 1_800_000_000_123, 4)
    }


def test_a_lobby_keeps_the_streak_it_was_opened_with(store: Any) -> None:
    rec = _lobby("l1")
    rec.streak = 3
    store.commit([rec, _lobby("l2")])
    assert (store.get_lobby("l1").streak, store.get_lobby("l2").streak) == (3, 0)


def test_an_opener_checked_unchanged_fails_the_commit_once_it_moved(store: Any) -> None:
    opener = LobbyOpener("en", 5, "l1")
    store.commit([opener])  # version 1
    store.commit(
        [_seated("a", 1000), OpenerUnchanged("en", 5, 0, 1), OpenerUnchanged("en", 6, 0, 0)]
    )
    assert store.get_lobby("a") is not None

    opener.lobby_id = "l2"
    store.commit([opener])  # version 2
    with pytest.raises(ConflictError):
        store.commit([_seated("b", 1000), OpenerUnchanged("en", 5, 0, 1)])
    with pytest.raises(ConflictError):
        store.commit([_seated("c", 1000), OpenerUnchanged("en", 5, 0, 0)])  # it exists now
    assert store.get_lobby("b") is None
    assert store.get_lobby("c") is None
    assert store.get_openers("en", 0, [5])[5].version == 2  # a check writes nothing


def test_overdue_lists_due_tournaments_and_disconnected_players(store: Any) -> None:
    store.commit([TournamentRecord(_tournament("t-due", NOW - 10))])
    store.commit([TournamentRecord(_tournament("t-later", NOW + 10))])
    store.commit([TournamentRecord(_tournament("t-over", NOW - 10, phase=Phase.OVER))])
    away = _player("away", connected=False, reconnect_deadline_ms=NOW - 5)
    back = _player("back", connected=True, reconnect_deadline_ms=NOW - 5)
    later = _player("later", connected=False, reconnect_deadline_ms=NOW + 5)
    for p in (away, back, later):
        store.create_player(p, f"{p.player_id}-hash")

    assert sorted(store.overdue(NOW)) == [("player", "away"), ("tournament", "t-due")]
    assert store.overdue(NOW - 10) == []  # strictly before
    away.connected = True
    store.commit([away])  # reconnected: out of the index
    assert store.overdue(NOW) == [("tournament", "t-due")]


# ---------------------------------------------------------------------------- ratings
def test_rating_change_applies_exactly_once(store: Any) -> None:
    store.create_player(_player("p1"), "hash")
    change = RatingApplied("p1", "t1", place=1, change=25, rating_before=1000, at_ms=NOW)
    store.commit([change])
    assert store.get_player("p1").rating == 1025
    assert store.get_player("p1").version == 2
    with pytest.raises(ConflictError):
        store.commit([change])
    assert store.get_player("p1").rating == 1025
    store.commit([RatingApplied("p1", "t2", place=8, change=-25, rating_before=1025)])
    assert store.get_player("p1").rating == 1000


def test_rating_with_the_player_saved_in_the_same_commit(store: Any) -> None:
    store.create_player(_player("p1"), "hash")
    p = store.get_player("p1")
    p.rating = 1018
    p.status = PlayerStatus.IDLE
    change = RatingApplied("p1", "t1", 2, 18, 1000, update_player=False)
    store.commit([p, change])
    assert store.get_player("p1").rating == 1018
    p2 = store.get_player("p1")
    with pytest.raises(ConflictError):
        store.commit([p2, change])  # the history item makes the retry a conflict
    assert store.get_player("p1").version == p2.version


def test_rating_for_an_unknown_player_conflicts(store: Any) -> None:
    with pytest.raises(ConflictError):
        store.commit([RatingApplied("ghost", "t1", 1, 25, 1000)])


# ---------------------------------------------------------------------------- invites, tokens
def test_invite_create_lookup_and_delete(store: Any) -> None:
    store.commit([InviteCreated(INVITE, "party1")])
    assert store.party_id_for_invite(INVITE) == "party1"
    with pytest.raises(ConflictError):
        store.commit([InviteCreated(INVITE, "party2")])
    assert store.party_id_for_invite(INVITE) == "party1"
    store.commit([InviteDeleted(INVITE)])
    assert store.party_id_for_invite(INVITE) is None
    store.commit([InviteDeleted(INVITE)])  # deleting twice is harmless


def test_a_party_is_deleted_on_its_version_with_its_invite(store: Any) -> None:
    party = PartyRecord(Party("party1", INVITE, ("p1",)))
    store.commit([party, InviteCreated(INVITE, "party1")])
    stale = store.get_party("party1")
    moved = store.get_party("party1")
    store.commit([moved])  # version 2 now

    with pytest.raises(ConflictError):
        store.commit([PartyDeleted("party1", stale.version), InviteDeleted(INVITE)])
    assert store.get_party("party1") is not None
    assert store.party_id_for_invite(INVITE) == "party1"

    store.commit([PartyDeleted("party1", moved.version), InviteDeleted(INVITE)])
    assert store.get_party("party1") is None
    assert store.party_id_for_invite(INVITE) is None
    with pytest.raises(ConflictError):  # gone: a stale save cannot bring it back
        store.commit([moved])
    with pytest.raises(ConflictError):
        store.commit([PartyDeleted("party1", moved.version)])


def test_token_item_is_create_only(store: Any) -> None:
    store.commit([TokenCreated("h1", "p1")])
    with pytest.raises(ConflictError):
        store.commit([TokenCreated("h1", "p2")])
    assert store.player_id_for_token("h1") == "p1"


def test_two_writes_to_one_item_in_a_commit_are_a_programming_error(store: Any) -> None:
    store.create_player(_player("p1"), "hash")
    a, b = store.get_player("p1"), store.get_player("p1")
    with pytest.raises((ValueError, ClientError)) as info:  # DynamoDB: ValidationException
        store.commit([a, b])
    assert not isinstance(info.value, ConflictError)
    assert store.get_player("p1").version == 1


# ---------------------------------------------------------------------------- records
def test_records_round_trip_every_field(store: Any) -> None:
    p = _player(
        "p1",
        status=PlayerStatus.QUEUED,
        lobby_id="l1",
        tournament_id="t0",
        party_id="party1",
        connection_id=None,
        connected=False,
        disconnect_seq=3,
        reconnect_deadline_ms=NOW + 60_000,
        language="de",
    )
    store.create_player(p, "hash")
    got = store.get_player("p1")
    p.version = got.version
    assert got == p

    lobby = _lobby(
        "l1",
        language="de",
        seats=(Seat("p1", 1000, "party1", "Nickp1"), Seat("p2", 1190, None, "Zoë")),
        party_id="party1",
        connections={"p1": None, "p2": "c2="},
    )
    store.commit([lobby])
    assert store.get_lobby("l1") == lobby

    party = PartyRecord(Party("party1", INVITE, ("p1", "p2")), language="de", lobby_id="l1")
    store.commit([party])
    assert store.get_party("party1") == party

    rec = TournamentRecord(
        _tournament("t1", NOW), connections={"a": "c1=", "b": None}, party_ids={"a": "party1"}
    )
    store.commit([rec])
    assert store.get_tournament("t1") == rec


# ---------------------------------------------------------------------------- ruling 17
def test_a_connection_keeps_its_source_address(store: Any) -> None:
    store.commit([Connection("c9=", NOW, source="203.0.113.7")])

    assert store.get_connection("c9=").source == "203.0.113.7"
    assert store.get_connection("c9=").player_id is None


def test_new_players_are_counted_per_source_and_window_up_to_the_limit(store: Any) -> None:
    window = 3_600_000

    counted = [store.count_new_player("203.0.113.7", NOW, 3, NOW + window) for _ in range(5)]

    assert counted == [True, True, True, False, False]
    # another source, or the next window, counts from zero
    assert store.count_new_player("203.0.113.8", NOW, 3, NOW + window) is True
    assert store.count_new_player("203.0.113.7", NOW + window, 3, NOW + 2 * window) is True


@pytest.mark.parametrize("store", ["dynamo"], indirect=True)  # TTL is DynamoDB's own
def test_a_new_player_counter_expires_by_ttl(store: Any) -> None:
    from shared.adapters.dynamo.schema import new_players_key
    from shared.adapters.dynamo.store import from_av, to_av

    store.count_new_player("2001:db8::/64", NOW, 10, NOW + 3_600_000)

    item = store.client.get_item(
        TableName="contract", Key=to_av(new_players_key("2001:db8::/64", NOW))
    )["Item"]
    assert from_av(item)["ttl"] == (NOW + 3_600_000) // 1000
    assert from_av(item)["count"] == 1


# ---------------------------------------------------------------------------- ruling 11
def test_a_rotated_token_names_its_player_and_generation_and_is_create_only(store: Any) -> None:
    p = _player("p1")
    store.create_player(p, "h0")
    p.token_generation, p.token_grace_until_ms = 1, NOW + 120_000
    store.commit([p, TokenIssued("h1", "p1", 1, NOW + 86_400_000)])

    assert store.get_token("h0") == IssuedToken("p1", 0)  # created before rotation: 0
    assert store.get_token("h1") == IssuedToken("p1", 1)
    assert store.get_token("nope") is None
    got = store.get_player("p1")
    assert (got.token_generation, got.token_grace_until_ms) == (1, NOW + 120_000)
    with pytest.raises(ConflictError):
        store.commit([TokenIssued("h1", "p2", 1, NOW)])
    assert store.get_token("h1") == IssuedToken("p1", 1)


def test_a_tournament_keeps_its_fresh_seats_and_its_flag(store: Any) -> None:
    rec = TournamentRecord(_tournament("t7", NOW), fresh=frozenset({"b"}))
    store.commit([rec])
    assert store.get_tournament("t7") == rec

    rec.fresh, rec.flagged = frozenset(), True
    store.commit([rec])
    got = store.get_tournament("t7")
    assert (got.fresh, got.flagged) == (frozenset(), True)
