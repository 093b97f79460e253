"""The clients' one fold (``infra.players.state.ClientState``): the conformance kit's recorded
message sequences, folded, give what each player knows."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from infra.players.state import (
    RETRY_CAP_MS,
    ClientState,
    is_gateway_frame,
    retry_delay_ms,
    retry_in_time,
)

KIT = Path(__file__).resolve().parents[3] / "shared" / "protocol" / "conformance"


def connections(scenario: str) -> list[dict[str, Any]]:
    return json.loads((KIT / f"{scenario}.json").read_text(encoding="utf-8"))["connections"]


def received(connection: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["message"] for e in connection["transcript"] if e.get("from") == "server"]


def folded(connection: dict[str, Any]) -> ClientState:
    return ClientState.from_messages(received(connection))


def by_player(scenario: str) -> dict[str, ClientState]:
    return {c["player"]: folded(c) for c in connections(scenario)}


def test_after_a_whole_tournament_every_player_knows_the_end_its_place_and_rating():
    states = [(c, folded(c)) for c in connections("play")]
    ends = {s.end.tournament_id for _, s in states if s.end is not None}
    assert len(ends) == 1
    for conn, s in states:
        assert s.phase == "ended"
        assert s.player_id == conn["player_id"]
        assert s.token == received(conn)[0]["token"]
        (mine,) = [p for p in s.end.places if p.player_id == s.player_id]  # type: ignore[union-attr]
        assert s.result is not None
        assert s.place == mine.place == s.result.place
        assert s.me is not None
        assert s.me.rating == s.result.rating
        assert s.round is None
        assert s.boards == {}
        assert s.my_turn is None
    places = sorted(s.place for _, s in states if s.place is not None)
    assert places[0] == 1
    assert len(places) == 8


def test_a_bye_is_known_for_the_round_it_sits_out():
    byes: set[tuple[str, int]] = set()
    for conn in connections("play"):
        s = ClientState()
        for m in received(conn):
            s.apply(m)
            if s.bye:
                assert s.round is not None
                assert s.round.bye == s.player_id
                assert s.own_board is None
                byes.add((conn["player"], s.round.number))
    assert byes  # the play kit has rounds of an odd number of players


def test_a_batch_is_unpacked_and_the_first_mover_knows_its_turn_and_deadline():
    for conn in connections("join"):
        s = ClientState()
        batches = [m for m in received(conn) if m["type"] == "batch"]
        assert batches
        for m in received(conn):
            events = s.apply(m)
            assert events == (m["events"] if m["type"] == "batch" else [m])
        assert s.round is not None
        assert s.round.number == 1
        assert s.round.bye is None
        assert s.standings is not None
        assert {r.lives for r in s.standings.values()} == {3}
        own = s.own_board
        assert own is not None
        assert s.player_id in own.players
        assert not own.over
        start = next(
            m for m in received(conn) if m["type"] == "duel_start" and m["duel_id"] == own.duel_id
        )
        if start["next_player"] == s.player_id:
            assert s.my_turn == (own.duel_id, start["deadline_ms"])
        else:
            assert s.my_turn is None
        assert s.phase == "duel"


def test_a_skipped_turn_is_a_row_and_moves_the_turn_on():
    for conn in connections("skip"):
        s = folded(conn)
        skipped = [(b.duel_id, r) for b in s.boards.values() for r in b.rows if r.skipped]
        if not skipped:
            continue
        (duel_id, row) = skipped[0]
        board = s.boards[duel_id]
        assert row.word is None
        assert row.tiles is None
        assert board.next_player != row.player or len(board.rows) > 1
        return
    pytest.fail("no skipped row in the skip kit")


def test_a_resume_restores_the_duel_and_keeps_the_newest_token():
    conns = connections("resume")
    first, again = [c for c in conns if c["player"] == "p2"][:2]
    s = folded(first)
    token = s.token
    assert token
    board_before = s.own_board
    assert board_before is not None
    for m in received(again):
        s.apply(m)
    session = received(again)[0]
    assert session["resumed"] is True
    assert session["token"] not in (None, token)  # tokens rotate (ruling 11)
    assert s.token == session["token"]
    assert s.phase == "duel"
    assert s.own_board is not None
    assert s.own_board.duel_id == board_before.duel_id
    resumed = ClientState.from_snapshot(session)
    assert resumed.own_board is not None
    assert [r.as_message() for r in resumed.own_board.rows] == session["snapshot"]["duel"]["rows"]
    with pytest.raises(ValueError, match="not a resumed session"):
        ClientState.from_snapshot(received(first)[0])  # not a resume


def test_a_leaver_is_out_with_its_place_fixed():
    s = by_player("leave")["p2"]
    assert s.phase == "eliminated"
    assert s.eliminated
    assert s.out is not None
    assert s.out.left
    assert s.out.round == 1
    assert s.place == 8
    assert s.round is None
    assert s.boards == {}


def test_a_party_is_known_to_its_members_and_forgotten_by_who_left_it():
    states = by_player("party")
    leader = states["leader"]
    assert leader.party is not None
    assert leader.party.leader == leader.player_id
    members = {p.id for p in leader.party.members}
    assert leader.player_id in members
    assert len(members) == 3
    assert states["friend1"].party == leader.party
    assert states["friend3"].party is None  # left with party_leave
    assert states["friend3"].phase == "idle"
    assert states["friend1"].me is not None
    renamed = next(m for m in received(connections("party")[1]) if m["type"] == "player")
    assert states["friend1"].me.nickname == renamed["player"]["nickname"]


def test_unknown_types_and_missing_fields_are_tolerated():
    s = ClientState()
    assert s.apply({"type": "something_newer", "x": 1}) == [{"type": "something_newer", "x": 1}]
    s.apply({"type": "session", "player": {"id": "me"}, "token": "t", "resumed": False})
    s.apply({"type": "tournament_end", "tournament_id": "t-1", "places": [{"player_id": "me"}]})
    assert s.end is not None
    assert s.end.winners == ()
    assert s.place is None
    assert s.phase == "ended"
    assert s.token == "t"


def test_a_gateway_frame_leaves_the_request_unanswered_for_a_retry():

    state = ClientState()
    join = {"action": "join", "language": "en", "request_id": "jo-1"}
    state.sent(join)
    state.sent({"action": "ping", "request_id": "pi-1"})  # the gateway answers: never retried
    frame = {"message": "Too Many Requests", "connectionId": "c=", "requestId": "x"}

    assert is_gateway_frame(frame)
    assert state.apply(frame) == []
    assert (state.gateway_frames, state.unanswered) == (1, {"jo-1": join})
    state.apply({"type": "error", "request_id": "jo-1", "code": "already_queued", "message": ""})
    assert state.unanswered == {}

    rng = random.Random(3)
    delays = [retry_delay_ms(n, rng) for n in range(12)]
    assert all(0 <= d <= min(RETRY_CAP_MS, 100 * 2**n) for n, d in enumerate(delays))
    assert retry_in_time(1_000, 100, 2_000)
    assert not retry_in_time(1_000, 800, 2_000)  # within the safety margin of the deadline
    assert retry_in_time(1_000, 10_000, None)
