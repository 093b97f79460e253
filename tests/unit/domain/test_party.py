"""Unit tests: party membership, leadership and start rules (ruling 10)."""

from __future__ import annotations

import secrets

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.domain.errors import (
    AlreadyInPartyError,
    DomainError,
    NotInPartyError,
    NotPartyLeaderError,
    PartyFullError,
    PartyMemberPlayingError,
)
from shared.domain.party import (
    MAX_PARTY_MEMBERS,
    Party,
    check_start,
    create,
    is_well_formed_invite,
    join,
    leave,
    remove,
    reset_invite,
)

INVITE = "A" * 11 + "b_-" + "9" * 8  # 22 URL-safe characters


def party_of(*members: str) -> Party:
    party = create("P", INVITE, members[0])
    for member in members[1:]:
        party = join(party, member)
    return party


def test_create_makes_the_creator_sole_member_and_leader() -> None:
    """Ruling 10: the player who creates a party leads it."""
    party = create("P", INVITE, "alice")
    assert party == Party("P", INVITE, ("alice",))
    assert party.leader == "alice"


def test_create_refuses_a_malformed_invite() -> None:
    """Ruling 10: parties are joined by an unguessable token; a short one is a programming error."""
    with pytest.raises(ValueError, match="invite"):
        create("P", "short", "alice")


def test_join_adds_members_in_joining_order() -> None:
    """Ruling 10: members are kept in joining order; the first is the leader."""
    party = party_of("alice", "bob", "carol")
    assert party.members == ("alice", "bob", "carol")
    assert party.leader == "alice"


def test_party_holds_up_to_eight_members() -> None:
    """Ruling 10 / rules page: a party is a group of up to 8 friends."""
    assert MAX_PARTY_MEMBERS == 8
    party = party_of(*(f"m{i}" for i in range(8)))
    assert len(party.members) == 8
    with pytest.raises(PartyFullError) as caught:
        join(party, "ninth")
    assert caught.value.code == "party_full"


def test_join_refuses_a_current_member() -> None:
    """Ruling 10: a player is in a party once."""
    with pytest.raises(AlreadyInPartyError):
        join(party_of("alice", "bob"), "bob")


def test_party_value_cannot_hold_nine_members_or_duplicates() -> None:
    """Ruling 10: the invariants hold even for a hand-built (e.g. loaded) value."""
    with pytest.raises(PartyFullError):
        Party("P", INVITE, tuple(f"m{i}" for i in range(9)))
    with pytest.raises(AlreadyInPartyError):
        Party("P", INVITE, ("a", "a"))
    with pytest.raises(ValueError, match="at least one member"):
        Party("P", INVITE, ())


def test_member_leaving_keeps_the_others_in_order() -> None:
    """Ruling 10: a member may leave the party."""
    assert leave(party_of("alice", "bob", "carol"), "bob") == party_of("alice", "carol")


def test_leadership_passes_to_the_longest_standing_member() -> None:
    """Ruling 10: if the leader leaves, the longest-standing member leads."""
    party = leave(party_of("alice", "bob", "carol"), "alice")
    assert party is not None
    assert party.leader == "bob"
    party = leave(party, "bob")
    assert party is not None
    assert party.leader == "carol"


def test_last_member_leaving_ends_the_party() -> None:
    """Ruling 10: a party with no members is gone."""
    assert leave(party_of("alice"), "alice") is None


def test_leave_by_a_non_member_is_refused() -> None:
    """Ruling 10: only members can leave."""
    with pytest.raises(NotInPartyError):
        leave(party_of("alice"), "mallory")


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 11)), max_size=60))
def test_leader_is_always_the_longest_standing_member(ops: list[tuple[bool, int]]) -> None:
    """Ruling 10: through any joins and leaves, the leader is the earliest joiner still present."""
    party: Party | None = create("P", INVITE, "p0")
    joined_order = ["p0"]
    for is_join, n in ops:
        if party is None:
            break
        player = f"p{n}"
        if is_join and player not in party.members and len(party.members) < MAX_PARTY_MEMBERS:
            party = join(party, player)
            joined_order.append(player)
        elif not is_join and player in party.members:
            party = leave(party, player)
            joined_order.remove(player)
        if party is not None:
            assert party.members == tuple(joined_order)
            assert party.leader == joined_order[0]
            assert len(party.members) <= MAX_PARTY_MEMBERS


def test_leader_may_start_when_nobody_is_busy() -> None:
    """Ruling 10: the leader starts the party game."""
    check_start(party_of("alice", "bob"), "alice", busy_members=set())
    check_start(party_of("alice", "bob"), "alice", busy_members={"stranger"})


def test_start_by_a_non_leader_is_refused() -> None:
    """Ruling 10: only the leader starts."""
    with pytest.raises(NotPartyLeaderError) as caught:
        check_start(party_of("alice", "bob"), "bob", busy_members=set())
    assert caught.value.code == "not_party_leader"


def test_start_by_a_non_member_is_refused_as_not_in_party() -> None:
    """Ruling 10: a stranger is not even in the party."""
    with pytest.raises(NotInPartyError):
        check_start(party_of("alice", "bob"), "mallory", busy_members=set())


@pytest.mark.parametrize("busy", [{"bob"}, {"alice"}, {"bob", "carol"}])
def test_start_while_a_member_is_still_playing_is_refused(busy: set[str]) -> None:
    """Ruling 10: a start is refused while any member is still in a lobby or tournament."""
    with pytest.raises(PartyMemberPlayingError) as caught:
        check_start(party_of("alice", "bob", "carol"), "alice", busy_members=busy)
    assert caught.value.code == "party_member_playing"


def test_members_are_back_in_the_party_after_a_tournament() -> None:
    """Ruling 10: once nobody is in a tournament any more, the same party can start again."""
    party = party_of("alice", "bob")
    with pytest.raises(PartyMemberPlayingError):
        check_start(party, "alice", busy_members=["bob"])
    check_start(party, "alice", busy_members=[])


@pytest.mark.parametrize("nbytes", [16, 24, 32, 48])
def test_tokens_from_secrets_are_well_formed_invites(nbytes: int) -> None:
    """Ruling 10: services make invites with secrets.token_urlsafe (16+ bytes)."""
    assert is_well_formed_invite(secrets.token_urlsafe(nbytes))


@pytest.mark.parametrize(
    "token",
    [
        "",
        "A" * 21,  # too short to be unguessable
        "A" * 65,  # too long
        "A" * 21 + "=",  # padding is not part of the URL-safe alphabet
        "A" * 21 + "+",  # standard, not URL-safe, base64
        "A" * 21 + "/",
        "A" * 21 + "é",  # letters of other scripts are not base64
        "A" * 22 + "\n",
        " " + "A" * 22,
    ],
)
def test_malformed_invites_are_recognised(token: str) -> None:
    """Ruling 10: an invite is 22..64 URL-safe base64 characters."""
    assert not is_well_formed_invite(token)


@pytest.mark.parametrize("length", [22, 43, 64])
def test_invites_of_22_to_64_urlsafe_characters_are_well_formed(length: int) -> None:
    """Ruling 10: the edges of the accepted token length."""
    assert is_well_formed_invite(("Az09_-" * 11)[:length])


# ------------------------------------------------------------------ the leader's controls
def test_the_leader_removes_a_member_and_the_others_keep_their_order() -> None:
    """Ruling 10: the leader can remove a member; the rest keep their joining order."""
    party = party_of("alice", "bob", "carol", "dave")

    after = remove(party, "alice", "carol", busy_members=())

    assert after.members == ("alice", "bob", "dave")
    assert (after.leader, after.invite, after.party_id) == ("alice", INVITE, "P")


def test_remove_refusals_say_why_in_order() -> None:
    """Only the leader removes, only a member, never themselves, only while nobody plays."""
    party = party_of("alice", "bob", "carol")

    with pytest.raises(NotInPartyError):
        remove(party, "mallory", "bob", busy_members=())
    with pytest.raises(NotPartyLeaderError):
        remove(party, "bob", "carol", busy_members=())
    with pytest.raises(NotInPartyError):
        remove(party, "alice", "mallory", busy_members=())
    with pytest.raises(DomainError) as own:
        remove(party, "alice", "alice", busy_members=())
    assert own.value.code == "rule_violation"
    for busy in ({"bob"}, {"carol"}, {"alice"}):
        with pytest.raises(PartyMemberPlayingError):
            remove(party, "alice", "bob", busy_members=busy)
    assert remove(party, "alice", "bob", busy_members={"mallory"}).members == ("alice", "carol")


def test_the_leader_replaces_the_invite() -> None:
    """Ruling 10: a new unguessable invite replaces the old one; members and leader stay."""
    party = party_of("alice", "bob")
    fresh = secrets.token_urlsafe(32)

    after = reset_invite(party, "alice", fresh)

    assert (after.invite, after.members) == (fresh, party.members)


def test_only_the_leader_replaces_the_invite_and_only_with_a_fresh_token() -> None:
    party = party_of("alice", "bob")
    fresh = secrets.token_urlsafe(32)

    with pytest.raises(NotPartyLeaderError):
        reset_invite(party, "bob", fresh)
    with pytest.raises(NotInPartyError):
        reset_invite(party, "mallory", fresh)
    for bad in (INVITE, "short", "not/a+token=" * 3):
        with pytest.raises(ValueError, match="fresh"):
            reset_invite(party, "alice", bad)
