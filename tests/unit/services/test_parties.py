"""Unit: parties on the in-memory fakes (ruling 10) — create, join by invite, leave (leadership
passes on, the last one closes the party), start (the whole party in one lobby that solo
players fill), and what each refusal tells the player."""

from __future__ import annotations

from typing import Any

import pytest

from shared.domain.errors import (
    AlreadyInPartyError,
    AlreadyPlayingError,
    NotInPartyError,
    NotPartyLeaderError,
    PartyMemberOfflineError,
    PartyMemberPlayingError,
    UnknownInviteError,
)
from shared.services import matchmaking, parties, sessions
from shared.services.deps import Deps
from shared.services.model import PlayerStatus
from shared.services.outbox import Request
from tests.fakes import fake_deps, new_player, sent, stored_player


def _party(deps: Deps, cid: str) -> dict[str, Any]:
    return [m for m in sent(deps, cid) if m["type"] == "party"][-1]


def _party_of(deps: Deps, n: int) -> tuple[str, list[tuple[str, str]]]:
    """A party of ``n`` (the first is the leader): (invite, [(connection, player)])."""
    members = [(f"m{i}", new_player(deps, f"m{i}")) for i in range(n)]
    parties.create(deps, Request("m0", "create"), members[0][1])
    invite = _party(deps, "m0")["invite"]
    for cid, pid in members[1:]:
        parties.join(deps, Request(cid, "join"), pid, invite)
    return invite, members


def test_a_new_party_is_open_led_by_its_creator_with_an_invite() -> None:
    deps = fake_deps()
    invite, [(cid, pid)] = _party_of(deps, 1)
    msg = _party(deps, cid)
    assert msg["request_id"] == "create"
    assert (msg["leader"], msg["status"]) == (pid, "open")
    assert [m["id"] for m in msg["members"]] == [pid]
    assert len(invite) >= 22
    assert stored_player(deps, pid).party_id == msg["party_id"]
    with pytest.raises(AlreadyInPartyError, match=r"^you are already in a party$"):
        parties.create(deps, Request(cid), pid)


def test_joining_by_invite_shows_every_member_the_new_party() -> None:
    deps = fake_deps()
    _, members = _party_of(deps, 3)
    ids = [pid for _, pid in members]
    for cid, _ in members:
        msg = _party(deps, cid)
        assert [m["id"] for m in msg["members"]] == ids
        assert msg["leader"] == ids[0]
        assert msg["status"] == "open"
        assert [m["nickname"] for m in msg["members"]] == [
            stored_player(deps, p).nickname for p in ids
        ]
    assert _party(deps, members[2][0])["request_id"] == "join"


def test_join_refusals_say_why() -> None:
    deps = fake_deps()
    invite, [(c0, p0), (c1, p1)] = _party_of(deps, 2)
    with pytest.raises(UnknownInviteError, match=r"^no party has this invite$"):
        parties.join(deps, Request(c1), p1, "short")
    with pytest.raises(UnknownInviteError, match=r"^no party has this invite$"):
        parties.join(deps, Request(c1), p1, "A" * 22)
    with pytest.raises(AlreadyInPartyError, match=r"^you are already in this party$"):
        parties.join(deps, Request(c1), p1, invite)
    other = new_player(deps, "o")
    parties.create(deps, Request("o"), other)
    with pytest.raises(AlreadyInPartyError, match=r"^leave your party first$"):
        parties.join(deps, Request("o"), other, invite)
    queued = new_player(deps, "q")
    matchmaking.join(deps, Request("q"), queued, "en")
    with pytest.raises(AlreadyPlayingError, match=r"^leave your lobby or tournament first$"):
        parties.join(deps, Request("q"), queued, invite)
    parties.start(deps, Request(c0), p0, "en")
    late = new_player(deps, "late")
    with pytest.raises(
        PartyMemberPlayingError, match=r"^the party is in a game; join when it is back$"
    ):
        parties.join(deps, Request("late"), late, invite)


def test_the_leader_leaving_passes_the_lead_and_the_last_one_closes_the_party() -> None:
    deps = fake_deps()
    invite, [(c0, p0), (c1, p1), (c2, p2)] = _party_of(deps, 3)
    parties.leave(deps, Request(c0, "out"), p0)
    left = _party(deps, c0)
    assert (left["status"], left["party_id"], left["members"], left["request_id"]) == (
        "left",
        None,
        [],
        "out",
    )
    assert stored_player(deps, p0).party_id is None
    now = _party(deps, c1)
    assert (now["leader"], [m["id"] for m in now["members"]]) == (p1, [p1, p2])
    assert _party(deps, c2)["leader"] == p1
    with pytest.raises(NotInPartyError, match=r"^you are not in a party$"):
        parties.leave(deps, Request(c0), p0)
    parties.leave(deps, Request(c1), p1)
    parties.leave(deps, Request(c2), p2)
    assert deps.store.party_id_for_invite(invite) is None  # closed: the invite is gone
    with pytest.raises(UnknownInviteError):
        parties.join(deps, Request(c0), p0, invite)


def test_a_party_start_seats_everyone_and_solo_players_fill_the_lobby() -> None:
    deps = fake_deps()
    _, members = _party_of(deps, 3)
    (c0, p0) = members[0]
    parties.start(deps, Request(c0, "go"), p0, "en")
    party_id = stored_player(deps, p0).party_id
    rec = deps.store.get_party(party_id)
    assert rec is not None
    assert (rec.language, rec.lobby_id) == ("en", stored_player(deps, p0).lobby_id)
    lobby = deps.store.get_lobby(rec.lobby_id)
    assert lobby is not None
    assert lobby.lobby.created_ms == deps.clock.now_ms()
    assert all(stored_player(deps, pid).tournament_id is None for _, pid in members)
    for cid, pid in members:
        player = stored_player(deps, pid)
        assert player.status is PlayerStatus.QUEUED
        lobby = [m for m in sent(deps, cid) if m["type"] == "lobby"][-1]
        assert lobby["party_id"] == party_id
        assert [p["id"] for p in lobby["players"]] == [pid for _, pid in members]
        assert _party(deps, cid)["status"] == "queued"
    solos = [(f"s{i}", new_player(deps, f"s{i}")) for i in range(5)]
    for cid, pid in solos:
        matchmaking.join(deps, Request(cid), pid, "en")
    for cid, pid in members:
        assert stored_player(deps, pid).status is PlayerStatus.PLAYING
        assert _party(deps, cid)["status"] == "playing"


def test_start_refusals_say_why() -> None:
    deps = fake_deps()
    _, [(c0, p0), (c1, p1)] = _party_of(deps, 2)
    with pytest.raises(NotPartyLeaderError):
        parties.start(deps, Request(c1), p1, "en")
    solo = new_player(deps, "solo")
    with pytest.raises(NotInPartyError, match=r"^you are not in a party$"):
        parties.start(deps, Request("solo"), solo, "en")
    sessions.disconnect(deps, c1)
    with pytest.raises(
        PartyMemberOfflineError,
        match=r"^a party member is not connected; unless they come back, they leave the party "
        r"within 60 s and the party can start without them$",
    ):
        parties.start(deps, Request(c0), p0, "en")
    assert stored_player(deps, p0).status is PlayerStatus.IDLE


def test_a_member_leaving_the_party_in_its_lobby_gives_up_the_seat() -> None:
    deps = fake_deps()
    _, [(c0, p0), (c1, p1)] = _party_of(deps, 2)
    parties.start(deps, Request(c0), p0, "en")
    parties.leave(deps, Request(c1), p1)
    player = stored_player(deps, p1)
    assert (player.status, player.lobby_id, player.party_id) == (PlayerStatus.IDLE, None, None)
    lobby = [m for m in sent(deps, c0) if m["type"] == "lobby"][-1]
    assert [p["id"] for p in lobby["players"]] == [p0]


def test_after_the_tournament_the_party_is_back_open_and_leavers_see_the_end() -> None:
    """Ruling 10: after a tournament the members are back in their party (its screen says
    ``open`` again, with the new ratings); ruling 15: ``tournament_end`` reaches every player
    still connected, leavers included."""
    deps = fake_deps()
    _, members = _party_of(deps, 2)
    parties.start(deps, Request("m0"), members[0][1], "en")
    solos = [(f"s{i}", new_player(deps, f"s{i}")) for i in range(6)]
    for cid, pid in solos:
        matchmaking.join(deps, Request(cid), pid, "en")
    everyone = members + solos
    for cid, pid in everyone[:-1]:  # all but the last solo player leave: the last one wins
        matchmaking.leave(deps, Request(cid), pid)
    for cid, _ in everyone:
        [end] = [m for m in sent(deps, cid) if m["type"] == "tournament_end"]
        assert end["winners"] == [everyone[-1][1]]
    for cid, pid in members:
        back = _party(deps, cid)
        assert back["status"] == "open"
        rating = stored_player(deps, pid).rating
        assert rating < 1000  # a leaver's place is below everyone's
        assert {m["id"]: m["rating"] for m in back["members"]}[pid] == rating


def test_a_party_start_that_finds_a_members_connection_gone_disconnects_them() -> None:
    deps = fake_deps()
    _, [(c0, p0), (c1, p1)] = _party_of(deps, 2)
    deps.notifier.gone.add(c1)  # type: ignore[attr-defined]
    parties.start(deps, Request(c0), p0, "en")
    member = stored_player(deps, p1)
    assert (member.connected, member.status) == (False, PlayerStatus.QUEUED)
    assert member.reconnect_deadline_ms is not None
