"""Unit: leaving a party (the last one out closes it; the others' screens are pushed even
when one finds a connection gone) and the refusal texts of a party's actions; on the fakes."""

from __future__ import annotations

import pytest

from shared.domain.errors import AlreadyInPartyError, NotInPartyError
from shared.services import matchmaking, parties
from shared.services.deps import Deps
from shared.services.outbox import Request
from tests.fakes import fake_deps, new_player, sent_of, stored_player


def _party_of(deps: Deps, n: int) -> tuple[str, list[tuple[str, str]]]:
    """A party of ``n`` (the first leads): (invite, [(connection, player)])."""
    members = [(f"m{i}", new_player(deps, f"m{i}")) for i in range(n)]
    parties.create(deps, Request("m0"), members[0][1])
    invite = sent_of(deps, "m0", "party")[-1]["invite"]
    for cid, pid in members[1:]:
        parties.join(deps, Request(cid), pid, invite)
    return invite, members


def test_the_last_one_out_closes_the_party_and_is_in_no_party() -> None:
    deps = fake_deps()
    invite, [(cid, pid)] = _party_of(deps, 1)
    parties.leave(deps, Request(cid, "out"), pid)
    assert stored_player(deps, pid).party_id is None
    assert deps.store.party_id_for_invite(invite) is None
    left = sent_of(deps, cid, "party")[-1]
    assert (left["status"], left["party_id"], left["request_id"]) == ("left", None, "out")
    with pytest.raises(NotInPartyError, match=r"^you are not in a party$"):
        parties.leave(deps, Request(cid), pid)


def test_leaving_a_party_whose_push_finds_a_members_connection_gone_disconnects_it() -> None:
    deps = fake_deps()
    _, [(lead_cid, lead), (cid, pid)] = _party_of(deps, 2)
    deps.notifier.gone.add(lead_cid)  # type: ignore[attr-defined]
    parties.leave(deps, Request(cid), pid)
    assert stored_player(deps, lead).connected is False


def test_party_refusals_say_why_word_for_word() -> None:
    deps = fake_deps()
    loner = new_player(deps, "loner")
    with pytest.raises(NotInPartyError, match=r"^you are not in a party$"):
        parties.start(deps, Request("loner"), loner, "en")
    _, [_, (cid, pid)] = _party_of(deps, 2)
    with pytest.raises(
        AlreadyInPartyError, match=r"^you are in a party: the leader starts the game$"
    ):
        matchmaking.join(deps, Request(cid), pid, "en")
