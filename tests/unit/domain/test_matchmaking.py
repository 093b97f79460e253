"""Unit tests: lobby admission and lobby choice (ruling 8; party lobbies, ruling 10)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.domain.errors import (
    AlreadyInPartyError,
    AlreadyQueuedError,
    LobbyFullError,
    LookalikeNicknameError,
    NotInPartyError,
    NotQueuedError,
    PartyFullError,
    RatingWindowError,
)
from shared.domain.matchmaking import (
    LOBBY_SEATS,
    RATING_WINDOW,
    Lobby,
    LobbyStatus,
    Seat,
    WaitingLobby,
    admission_range,
    admits,
    check_admission,
    choose_lobby,
    is_full,
    party_lobby,
    preference,
    started,
    waiting_lobby,
    with_seat,
    without_player,
)


def solo_lobby(
    *ratings: int, lobby_id: str = "L1", language: str = "en", created_ms: int = 0
) -> Lobby:
    """A solo lobby whose seats have ``ratings``, players p0, p1, ..."""
    seats = tuple(Seat(f"p{i}", rating) for i, rating in enumerate(ratings))
    return Lobby(lobby_id, language, seats, created_ms=created_ms)


def party_seats(party_id: str, *ratings: int) -> list[Seat]:
    return [Seat(f"{party_id}-m{i}", rating, party_id) for i, rating in enumerate(ratings)]


# --- the window and its edges ---------------------------------------------------------------
def test_rating_window_is_200_points() -> None:
    """Ruling 8 / rules page: matchmaking looks within 200 rating points, 8 seats a lobby."""
    assert RATING_WINDOW == 200
    assert LOBBY_SEATS == 8


@pytest.mark.parametrize("rating", [1200, 800])
def test_solo_entrant_exactly_200_from_a_solo_seat_is_admitted(rating: int) -> None:
    """Ruling 8: within 200 of every solo player, the edge included."""
    check_admission(solo_lobby(1000), Seat("new", rating))


@pytest.mark.parametrize("rating", [1201, 799])
def test_solo_entrant_201_from_a_solo_seat_is_refused(rating: int) -> None:
    """Ruling 8: 201 points from a solo player is outside the window."""
    with pytest.raises(RatingWindowError) as caught:
        check_admission(solo_lobby(1000), Seat("new", rating))
    assert caught.value.code == "rating_window"


def test_solo_entrant_must_be_within_200_of_every_solo_seat() -> None:
    """Ruling 8: the window is checked against each solo player, not against their mean."""
    lobby = solo_lobby(900, 1100)  # mean 1000, but 1250 is 350 from 900
    assert not admits(lobby, Seat("new", 1250))
    assert admits(lobby, Seat("new", 1100))
    assert not admits(lobby, Seat("new", 1301))


def test_solo_entrant_is_measured_against_the_partys_highest_rating() -> None:
    """Ruling 8: within 200 of the highest rating of each party in the lobby (a party is as
    strong as its strongest member), not of each member nor of the party's mean."""
    # Highest 1300; 1100 is 400 from the 700 member but exactly 200 from the highest.
    lobby = party_lobby("L", "en", party_seats("P", 700, 1300), "P", 0)
    assert admits(lobby, Seat("new", 1500))
    assert admits(lobby, Seat("new", 1100))
    assert not admits(lobby, Seat("new", 1501))
    with pytest.raises(RatingWindowError):
        check_admission(lobby, Seat("new", 1099))
    assert not admits(lobby, Seat("at-the-mean", 1000))  # the mean 1000 no longer counts


def test_a_boosted_leader_cannot_bring_weak_accounts_among_new_players() -> None:
    """Ruling 8: a 1355 leader with three 1000 accounts (mean 1089) is a 1355 party, so a
    brand-new 1000 player (355 below the leader) is refused and a 1200 one is admitted."""
    lobby = party_lobby("L", "en", party_seats("P", 1355, 1000, 1000, 1000), "P", 0)
    assert not admits(lobby, Seat("new", 1000))
    assert not admits(lobby, Seat("new", 1154))
    assert admits(lobby, Seat("mid", 1155))
    assert admits(lobby, Seat("strong", 1200))
    assert admission_range(lobby) == (1155, 1555)


def test_solo_entrant_in_party_lobby_is_checked_against_solos_and_party_highest() -> None:
    """Ruling 8: solo players and the party's highest rating are both part of the window."""
    lobby = party_lobby("L", "en", party_seats("P", 900, 1000), "P", 0)
    lobby = with_seat(lobby, Seat("s1", 1150))
    assert admits(lobby, Seat("ok", 1100))
    assert not admits(lobby, Seat("too-low", 940))  # 210 from the solo 1150, 60 from the party
    assert not admits(lobby, Seat("too-high", 1201))  # 51 from the solo, 201 from the party


def test_each_party_in_a_lobby_is_checked_on_its_own_highest_rating() -> None:
    """Ruling 8: within 200 of the highest rating of *each* party present."""
    seats = (*party_seats("A", 800, 1000), *party_seats("B", 1100, 1300))
    lobby = Lobby("L", "en", seats)
    assert admits(lobby, Seat("mid", 1150))
    assert not admits(lobby, Seat("low", 1050))  # 50 from A's 1000, 250 from B's 1300
    assert admission_range(lobby) == (1100, 1200)


def test_party_members_are_exempt_from_the_window_among_themselves() -> None:
    """Ruling 8: a party's members are exempt from the window among themselves."""
    members = party_seats("P", 600, 1000, 1900)
    lobby = party_lobby("L", "en", members, "P", 0)
    assert lobby.seats == tuple(members)
    assert lobby.party_id == "P"


@given(
    seat_ratings=st.lists(st.integers(0, 3000), min_size=1, max_size=7),
    entrant_rating=st.integers(0, 3000),
    created_ms=st.integers(0, 10**13),
)
def test_the_window_never_widens_with_waiting(
    seat_ratings: list[int], entrant_rating: int, created_ms: int
) -> None:
    """Ruling 8: the window never widens; the lobby's age changes nothing."""
    fresh = solo_lobby(*seat_ratings, created_ms=0)
    old = solo_lobby(*seat_ratings, created_ms=created_ms)
    expected = all(abs(entrant_rating - r) <= RATING_WINDOW for r in seat_ratings)
    assert admits(fresh, Seat("new", entrant_rating)) is expected
    assert admits(old, Seat("new", entrant_rating)) is expected


# --- seats ----------------------------------------------------------------------------------
def test_full_lobby_refuses_a_ninth_player() -> None:
    """Ruling 8: a lobby has 8 seats; it starts when the 8th fills."""
    lobby = solo_lobby(*([1000] * 8))
    assert is_full(lobby)
    with pytest.raises(LobbyFullError):
        check_admission(lobby, Seat("ninth", 1000))
    with pytest.raises(LobbyFullError):
        with_seat(lobby, Seat("ninth", 1000))


def test_lobby_is_not_full_with_seven_seats() -> None:
    """Ruling 8: a lobby starts only when its 8th seat fills."""
    assert not is_full(solo_lobby(*([1000] * 7)))
    assert is_full(with_seat(solo_lobby(*([1000] * 7)), Seat("eighth", 1000)))


def test_a_lobby_never_holds_nine_seats() -> None:
    """Ruling 8: even a hand-built lobby value cannot hold more than 8 seats."""
    with pytest.raises(LobbyFullError):
        solo_lobby(*([1000] * 9))


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(800, 1200)), max_size=40))
def test_seating_any_sequence_of_entrants_never_exceeds_eight(
    entrants: list[tuple[int, int]],
) -> None:
    """Ruling 8: whatever the order of arrivals, seats never exceed 8 and never repeat."""
    lobby = solo_lobby()
    for player, rating in entrants:
        if admits(lobby, Seat(f"x{player}", rating)):
            lobby = with_seat(lobby, Seat(f"x{player}", rating))
        assert len(lobby.seats) <= LOBBY_SEATS
    ids = [seat.player_id for seat in lobby.seats]
    assert len(ids) == len(set(ids))


def test_already_seated_player_is_refused() -> None:
    """Ruling 8: a player waits in one seat only."""
    lobby = solo_lobby(1000, 1000)
    with pytest.raises(AlreadyQueuedError):
        check_admission(lobby, Seat("p1", 1000))


def test_already_seated_is_reported_before_full() -> None:
    """Ruling 8: a seated player retrying a join in a full lobby hears they are already seated."""
    with pytest.raises(AlreadyQueuedError):
        check_admission(solo_lobby(*([1000] * 8)), Seat("p3", 1000))


def test_party_member_cannot_join_a_lobby_alone() -> None:
    """Ruling 8/10: party members only sit in their own party lobby; entrants are solo."""
    with pytest.raises(AlreadyInPartyError):
        check_admission(solo_lobby(1000), Seat("m", 1000, "P"))
    assert not admits(solo_lobby(1000), Seat("m", 1000, "P"))


def test_with_seat_adds_the_seat_last_and_keeps_the_rest() -> None:
    """Ruling 8: admission is checked, then the seat is added."""
    lobby = solo_lobby(1000, created_ms=5)
    after = with_seat(lobby, Seat("new", 1100))
    assert after.seats == (Seat("p0", 1000), Seat("new", 1100))
    assert (after.lobby_id, after.language, after.created_ms) == ("L1", "en", 5)
    assert lobby.seats == (Seat("p0", 1000),)  # values are immutable


def test_with_seat_refuses_out_of_window_player() -> None:
    """Ruling 8: with_seat checks admission."""
    with pytest.raises(RatingWindowError):
        with_seat(solo_lobby(1000), Seat("far", 1500))


def test_without_player_frees_the_seat() -> None:
    """Ruling 9: leaving a waiting lobby is free; the other seats keep their order."""
    lobby = solo_lobby(1000, 1010, 1020)
    after = without_player(lobby, "p1")
    assert [seat.player_id for seat in after.seats] == ["p0", "p2"]


def test_without_absent_player_is_not_queued() -> None:
    """Ruling 9: only a seated player can leave the lobby."""
    with pytest.raises(NotQueuedError):
        without_player(solo_lobby(1000), "ghost")


def test_empty_lobby_admits_anyone_solo() -> None:
    """Ruling 8: with nobody seated there is nobody to be far from."""
    assert admits(solo_lobby(), Seat("first", 3000))


# --- party lobbies --------------------------------------------------------------------------
def test_party_lobby_seats_the_whole_party() -> None:
    """Ruling 10: the whole party lands in one lobby; matchmaking fills the rest with solos."""
    lobby = party_lobby("L9", "de", party_seats("P", 1000, 1100, 1200), "P", 42)
    assert (lobby.lobby_id, lobby.language, lobby.party_id, lobby.created_ms) == (
        "L9",
        "de",
        "P",
        42,
    )
    assert len(lobby.seats) == 3
    filled = with_seat(lobby, Seat("solo", 1050))
    assert len(filled.seats) == 4


def test_party_of_eight_fills_its_lobby() -> None:
    """Ruling 10: a party of 8 is a full lobby by itself."""
    lobby = party_lobby("L", "en", party_seats("P", *([1000] * 8)), "P", 0)
    assert is_full(lobby)


def test_party_lobby_refuses_more_than_eight_members() -> None:
    """Ruling 10: a party has at most 8 members."""
    with pytest.raises(PartyFullError):
        party_lobby("L", "en", party_seats("P", *([1000] * 9)), "P", 0)


def test_party_lobby_refuses_seats_of_another_party_or_solo() -> None:
    """Ruling 8: a party lobby holds one party; everyone else comes in solo later."""
    with pytest.raises(NotInPartyError):
        party_lobby("L", "en", [*party_seats("P", 1000), Seat("s", 1000)], "P", 0)
    with pytest.raises(NotInPartyError):
        party_lobby("L", "en", [*party_seats("P", 1000), *party_seats("Q", 1000)], "P", 0)


def test_party_lobby_refuses_a_member_listed_twice() -> None:
    """Ruling 8: one seat per player."""
    seat = Seat("m", 1000, "P")
    with pytest.raises(AlreadyQueuedError):
        party_lobby("L", "en", [seat, seat], "P", 0)


def test_party_lobby_needs_a_member() -> None:
    """Ruling 10: a party always has a leader, so an empty party lobby is a programming error."""
    with pytest.raises(ValueError, match="at least one member"):
        party_lobby("L", "en", [], "P", 0)


# --- choosing a lobby -----------------------------------------------------------------------
def test_choose_lobby_prefers_the_fullest() -> None:
    """Ruling 8: fill lobbies so that tournaments start sooner."""
    small = solo_lobby(1000, lobby_id="A", created_ms=1)
    big = solo_lobby(1000, 1000, 1000, lobby_id="B", created_ms=9)
    assert choose_lobby([small, big], Seat("new", 1000), language="en") == big


def test_choose_lobby_prefers_the_oldest_among_equally_full() -> None:
    """Ruling 8: the oldest of equally full lobbies has waited longest."""
    young = solo_lobby(1000, lobby_id="A", created_ms=20)
    old = solo_lobby(1000, lobby_id="B", created_ms=10)
    assert choose_lobby([young, old], Seat("new", 1000), language="en") == old


def test_choose_lobby_breaks_remaining_ties_by_lobby_id() -> None:
    """Ruling 8: the choice is deterministic."""
    b = solo_lobby(1000, lobby_id="B", created_ms=10)
    a = solo_lobby(1000, lobby_id="A", created_ms=10)
    assert choose_lobby([b, a], Seat("new", 1000), language="en") == a
    assert choose_lobby([a, b], Seat("new", 1000), language="en") == a


def test_choose_lobby_skips_other_languages_full_and_out_of_window_lobbies() -> None:
    """Ruling 8: matchmaking is per game language and within the window."""
    german = solo_lobby(1000, 1000, 1000, 1000, lobby_id="DE", language="de")
    full = solo_lobby(*([1000] * 8), lobby_id="FULL")
    far = solo_lobby(1500, 1500, 1500, lobby_id="FAR")
    fits = solo_lobby(1000, lobby_id="FITS", created_ms=99)
    lobbies = [german, full, far, fits]
    assert choose_lobby(lobbies, Seat("new", 1000), language="en") == fits
    assert choose_lobby(lobbies, Seat("new", 1000), language="de") == german


def test_choose_lobby_returns_none_when_nothing_admits() -> None:
    """Ruling 8: the window never widens; the caller opens a new lobby instead."""
    lobbies = [solo_lobby(1500, lobby_id="FAR"), solo_lobby(1000, lobby_id="X", language="fr")]
    assert choose_lobby(lobbies, Seat("new", 1000), language="en") is None
    assert choose_lobby([], Seat("new", 1000), language="en") is None


def test_choose_lobby_offers_party_lobbies_to_solo_players() -> None:
    """Ruling 8: a party lobby is filled by solo players."""
    party = party_lobby("P-LOBBY", "en", party_seats("P", 1000, 1000, 1000), "P", 50)
    solo = solo_lobby(1000, lobby_id="SOLO", created_ms=1)
    assert choose_lobby([solo, party], Seat("new", 1000), language="en") == party


def test_choose_lobby_skips_a_lobby_the_player_already_sits_in() -> None:
    """Ruling 8: a player waits in one lobby only."""
    mine = solo_lobby(1000, 1000, lobby_id="MINE")
    other = solo_lobby(1000, lobby_id="OTHER")
    assert choose_lobby([mine, other], Seat("p1", 1000), language="en") == other


def test_a_lobby_whose_last_player_leaves_is_empty_and_others_keep_it_waiting() -> None:
    """A waiting lobby whose last seat leaves is EMPTY (never used again); while seats
    remain it keeps waiting."""
    lobby = solo_lobby(1000, 1010)
    one_left = without_player(lobby, "p0")
    assert one_left.status is LobbyStatus.WAITING
    assert without_player(one_left, "p1").status is LobbyStatus.EMPTY
    assert without_player(one_left, "p1").seats == ()


def test_a_full_lobby_starts_its_tournament() -> None:
    """Ruling 8: the 8th seat starts the tournament; the lobby records which one."""
    lobby = solo_lobby(*([1000] * 8))
    begun = started(lobby, "t9")
    assert (begun.status, begun.tournament_id) == (LobbyStatus.STARTED, "t9")
    assert (begun.seats, begun.lobby_id, begun.language) == (
        lobby.seats,
        lobby.lobby_id,
        lobby.language,
    )


# ------------------------------------------------- the window as an interval
_seats = st.lists(
    st.tuples(st.sampled_from([None, "pa", "pb"]), st.integers(-300, 3000)),
    min_size=1,
    max_size=LOBBY_SEATS,
)


def _lobby_of(seats: list[tuple[str | None, int]]) -> Lobby:
    return Lobby(
        "L1",
        "en",
        tuple(Seat(f"p{i}", r, party) for i, (party, r) in enumerate(seats)),
    )


@given(_seats, st.integers(-800, 3800))
def test_admission_range_is_exactly_the_ratings_admitted(
    seats: list[tuple[str | None, int]], rating: int
) -> None:
    lobby = _lobby_of(seats)
    lo, hi = admission_range(lobby)  # type: ignore[misc]
    entrant = Seat("new", rating)
    assert admits(lobby, entrant) == (not is_full(lobby) and lo <= rating <= hi)
    summary = waiting_lobby(lobby)
    if summary is not None:
        assert summary.admits(rating) == admits(lobby, entrant)
    else:
        assert not admits(lobby, entrant)


@given(_seats)
def test_a_non_empty_admission_range_spans_at_most_twice_the_window(
    seats: list[tuple[str | None, int]],
) -> None:
    lo, hi = admission_range(_lobby_of(seats))  # type: ignore[misc]
    assert lo > hi or hi - lo <= 2 * RATING_WINDOW


def test_admission_range_counts_a_party_by_its_highest_rating() -> None:
    lobby = _lobby_of([("pa", 999), ("pa", 1000), (None, 1100)])  # the party counts as 1000
    assert admission_range(lobby) == (900, 1200)


def test_a_lobby_without_seats_has_no_range_and_is_no_candidate() -> None:
    assert admission_range(solo_lobby()) is None
    assert waiting_lobby(solo_lobby()) is None


def test_only_a_waiting_lobby_with_a_free_seat_is_a_candidate() -> None:
    assert waiting_lobby(solo_lobby(1000, 1100)) == WaitingLobby("L1", 2, 0, 900, 1200)
    assert waiting_lobby(solo_lobby(*[1000] * LOBBY_SEATS)) is None
    assert waiting_lobby(started(solo_lobby(*[1000] * LOBBY_SEATS), "t")) is None


def test_preference_is_fullest_then_oldest_then_id() -> None:
    lobbies = [
        WaitingLobby("b", 2, 5, 0, 0),
        WaitingLobby("a", 2, 5, 0, 0),
        WaitingLobby("c", 3, 9, 0, 0),
        WaitingLobby("d", 2, 1, 0, 0),
    ]
    assert [w.lobby_id for w in sorted(lobbies, key=preference)] == ["c", "d", "a", "b"]


# ------------------------------------- a party counts as strong as its strongest member
_Drawn = tuple[Lobby, int, list[int], list[list[int]]]


@st.composite
def _mixed_lobbies(draw: st.DrawFn) -> _Drawn:
    """A lobby of random solo players and random parties of 2-7 members (at most 8 seats, in
    random order), rated within 450 of a random centre so that many lobbies admit somebody;
    with the centre, the solo ratings and each party's member ratings."""
    centre = draw(st.integers(0, 3000))
    rating = st.integers(centre - 450, centre + 450)
    parties: list[list[int]] = []
    free = LOBBY_SEATS
    for _ in range(draw(st.integers(0, 3))):
        if free < 2:
            break
        size = draw(st.integers(2, min(7, free)))
        parties.append(draw(st.lists(rating, min_size=size, max_size=size)))
        free -= size
    solos = draw(st.lists(rating, max_size=free))
    seats = [Seat(f"s{i}", r) for i, r in enumerate(solos)]
    for k, members in enumerate(parties):
        seats += [Seat(f"P{k}-m{i}", r, f"P{k}") for i, r in enumerate(members)]
    lobby = Lobby("L", "en", tuple(draw(st.permutations(seats))))
    return lobby, centre, solos, parties


@given(_mixed_lobbies(), st.integers(-800, 800))
def test_a_solo_is_admitted_iff_near_every_solo_and_every_partys_highest(
    drawn: _Drawn, offset: int
) -> None:
    """Ruling 8 as revised: within 200 of every solo player and of each party's highest
    rating; nothing else (a party's mean, its other members) counts."""
    lobby, centre, solos, parties = drawn
    rating = centre + offset
    near = all(abs(rating - s) <= RATING_WINDOW for s in solos) and all(
        abs(rating - max(members)) <= RATING_WINDOW for members in parties
    )
    entrant = Seat("new", rating)
    assert admits(lobby, entrant) == (near and not is_full(lobby))
    if not near and not is_full(lobby):
        with pytest.raises(RatingWindowError):
            check_admission(lobby, entrant)


@given(_mixed_lobbies())
def test_admission_range_agrees_with_check_admission_on_every_rating(drawn: _Drawn) -> None:
    """``admission_range`` (what the waiting index stores) admits exactly the ratings
    ``check_admission`` admits, for every integer rating from 1,000 below the lobby's centre
    to 1,000 above (every seat is within 450 of it)."""
    lobby, centre, _, _ = drawn
    bounds = admission_range(lobby)
    summary = waiting_lobby(lobby)
    for rating in range(centre - 1000, centre + 1001):
        admitted = admits(lobby, Seat("new", rating))
        if bounds is None:
            assert admitted
            continue
        lo, hi = bounds
        assert admitted == (not is_full(lobby) and lo <= rating <= hi)
        assert admitted == (summary is not None and summary.admits(rating))


# --- look-alike names (ruling 16) -------------------------------------------------------------
@pytest.mark.parametrize("copy", ["ТОМАЅ СОХ", "T0mas C0x", "TOMAS COX", "Tomas Cox"])
def test_a_name_that_looks_like_a_seated_players_is_not_admitted(copy: str) -> None:
    lobby = Lobby("L1", "en", (Seat("p0", 1000, nickname="Tomas Cox"),))
    entrant = Seat("p1", 1000, nickname=copy)
    with pytest.raises(LookalikeNicknameError):
        check_admission(lobby, entrant)
    assert not admits(lobby, entrant)
    assert choose_lobby([lobby], entrant, language="en") is None


def test_a_name_unlike_every_seated_players_is_admitted() -> None:
    lobby = Lobby("L1", "en", (Seat("p0", 1000, nickname="Tomas Cox"),))
    assert admits(lobby, Seat("p1", 1000, nickname="Tomas Fox"))
    assert admits(lobby, Seat("p2", 1000))  # no name given: only the ratings decide
