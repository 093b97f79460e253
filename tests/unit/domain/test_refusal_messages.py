"""Unit: what each refusal of the domain tells the player (or the programmer), word for word.

The codes are the contract (shared/protocol); the messages are what a player reads in the error
message, so a changed message is a changed behaviour too: each one is pinned here, with the
rule that raises it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from shared.domain import matchmaking as mm
from shared.domain import party
from shared.domain.errors import (
    AlreadyInPartyError,
    AlreadyQueuedError,
    LobbyFullError,
    NotInPartyError,
    NotPartyLeaderError,
    NotQueuedError,
    PartyFullError,
    PartyMemberPlayingError,
    RatingWindowError,
    UnknownLanguageError,
    WrongLengthError,
)
from shared.domain.languages import get_language
from shared.domain.pairing import candidate_pairings
from shared.domain.rating import rating_change, rating_changes
from shared.domain.scoring import score

INVITE = "A" * 22


def _lobby(*seats: mm.Seat) -> mm.Lobby:
    return mm.Lobby("l1", "en", seats)


def _solo(i: int, rating: int = 1000) -> mm.Seat:
    return mm.Seat(f"p{i}", rating)


def _full() -> mm.Lobby:
    return _lobby(*(_solo(i) for i in range(8)))


def _raise_party_full() -> object:
    team = party.create("x", INVITE, "p0")
    for i in range(1, 8):
        team = party.join(team, f"p{i}")
    return party.join(team, "p8")


REFUSALS: list[tuple[str, Callable[[], object], type[Exception], str]] = [
    ("nine seats", lambda: _lobby(*(_solo(i) for i in range(9))), LobbyFullError,
     "a lobby has at most 8 seats, got 9"),
    ("a seat twice", lambda: _lobby(_solo(1), _solo(1)), AlreadyQueuedError,
     "a player cannot hold two seats in one lobby"),
    ("a party member alone", lambda: mm.check_admission(_lobby(), mm.Seat("p1", 1000, "x")),
     AlreadyInPartyError,
     "a party member cannot take a seat alone; the party leader starts the party"),
    ("already seated", lambda: mm.check_admission(_lobby(_solo(1)), _solo(1)),
     AlreadyQueuedError, "the player already holds a seat in this lobby"),
    ("full", lambda: mm.check_admission(_full(), _solo(9)), LobbyFullError,
     "The lobby has no free seat."),
    ("far from a solo player", lambda: mm.check_admission(_lobby(_solo(1)), _solo(2, 1201)),
     RatingWindowError,
     "rating 1201 is more than 200 points from a solo player's rating in this lobby"),
    ("far from a party", lambda: mm.check_admission(
        _lobby(mm.Seat("a", 1000, "x"), mm.Seat("b", 1100, "x")), _solo(2, 899)),
     RatingWindowError, "rating 899 is more than 200 points from the highest rating of a "
     "party in this lobby"),
    ("an empty party lobby", lambda: mm.party_lobby("l", "en", [], "x", 0), ValueError,
     "a party lobby needs at least one member"),
    ("a party lobby of nine", lambda: mm.party_lobby(
        "l", "en", [mm.Seat(f"p{i}", 1000, "x") for i in range(9)], "x", 0), PartyFullError,
     "a party has at most 8 members, got 9"),
    ("a stranger in a party lobby", lambda: mm.party_lobby(
        "l", "en", [mm.Seat("p1", 1000, "y")], "x", 0), NotInPartyError,
     "every seat of a party lobby must belong to the party opening it"),
    ("leaving a lobby one is not in", lambda: mm.without_player(_lobby(_solo(1)), "p2"),
     NotQueuedError, "the player holds no seat in this lobby"),
    ("starting a lobby not full", lambda: mm.started(_lobby(_solo(1)), "t"), ValueError,
     "only a full lobby starts a tournament"),
    ("an empty party", lambda: party.Party("x", INVITE, ()), ValueError,
     "a party has at least one member"),
    ("a party of nine", lambda: party.Party("x", INVITE, tuple(f"p{i}" for i in range(9))),
     PartyFullError, "a party has at most 8 members, got 9"),
    ("a member twice", lambda: party.Party("x", INVITE, ("p1", "p1")), AlreadyInPartyError,
     "a player cannot be in the same party twice"),
    ("a malformed invite", lambda: party.create("x", "short", "p1"), ValueError,
     "the invite token is not 22..64 URL-safe base64 characters"),
    ("joining twice", lambda: party.join(party.create("x", INVITE, "p1"), "p1"),
     AlreadyInPartyError, "The player is already in a party."),
    ("a ninth member", _raise_party_full, PartyFullError, "The party already has 8 members."),
    ("leaving a party one is not in", lambda: party.leave(party.create("x", INVITE, "p1"), "p2"),
     NotInPartyError, "The player is not in a party."),
    ("a stranger starting", lambda: party.check_start(party.create("x", INVITE, "p1"), "p2", ()),
     NotInPartyError, "The player is not in a party."),
    ("a member starting", lambda: party.check_start(
        party.join(party.create("x", INVITE, "p1"), "p2"), "p2", ()), NotPartyLeaderError,
     "only the party leader can start the party"),
    ("one member busy", lambda: party.check_start(
        party.join(party.create("x", INVITE, "p1"), "p2"), "p1", ("p2",)),
     PartyMemberPlayingError, "1 party member is still in a lobby or tournament"),
    ("two members busy", lambda: party.check_start(
        party.join(party.create("x", INVITE, "p1"), "p2"), "p1", ("p1", "p2", "p9")),
     PartyMemberPlayingError, "2 party members are still in a lobby or tournament"),
    ("pairing one player", lambda: candidate_pairings(["p1"], (), None, byes={}), ValueError,
     "pairing needs at least two players"),
    ("one rating, two places", lambda: rating_change(0, [1000], [1, 2]), ValueError,
     "ratings and places must have the same length"),
    ("two ratings, one place", lambda: rating_changes([1000, 1000], [1]), ValueError,
     "ratings and places must have the same length"),
    ("scoring a shorter guess", lambda: score("abc", "abcd"), WrongLengthError,
     "guess has 3 tiles, the answer has 4"),
    ("an unknown language", lambda: get_language("xx"), UnknownLanguageError,
     "unknown language 'xx'"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("action", "error", "message"),
    [pytest.param(a, e, m, id=name) for name, a, e, m in REFUSALS],
)
def test_a_refusal_says_what_went_wrong(
    action: Callable[[], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        action()
