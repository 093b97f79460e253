"""Domain layer: lobby admission and lobby choice for matchmaking (ruling 8).

Pure values and functions, stdlib only. ``Lobby`` (language, status, seats with rating snapshot
and party) and its transitions ``with_seat``, ``without_player``, ``started``; ``check_admission``
(the 200-point window, which never widens: nothing here reads the time); ``party_lobby`` (filled
by solo players only); ``admission_range`` (the ratings a waiting lobby admits, one interval
``(lo, hi)`` with ``hi - lo <= 2 * RATING_WINDOW``). A party counts as strong as its strongest
member: its highest rating, never its mean (a mean let one boosted player seat weak accounts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

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
from shared.domain.glyphs import lookalike_keys

__all__ = [
    "LOBBY_SEATS",
    "RATING_WINDOW",
    "Lobby",
    "LobbyStatus",
    "Seat",
    "WaitingLobby",
    "admission_range",
    "admits",
    "check_admission",
    "choose_lobby",
    "is_full",
    "party_lobby",
    "preference",
    "started",
    "waiting_lobby",
    "with_seat",
    "without_player",
]

LOBBY_SEATS = 8
"""Seats in a lobby; the tournament starts when the last one fills (rules page, ruling 8)."""

RATING_WINDOW = 200
"""Largest admitted rating distance, inclusive, in rating points (ruling 8). Never widens."""


@dataclass(frozen=True)
class Seat:
    """One player sitting in (or asking for) a lobby seat."""

    player_id: str
    """The player's id."""
    rating: int
    """The player's rating when they asked for the seat (integer rating points, ruling 1)."""
    party_id: str | None = None
    """The party the player came with, or ``None`` for a solo player."""
    nickname: str = ""
    """The name the lobby shows for the seat (ruling 11)."""


class LobbyStatus(StrEnum):
    """A lobby waits for players until its 8th seat starts the tournament; a waiting lobby
    whose last player leaves is empty (and never used again)."""

    WAITING = "waiting"
    STARTED = "started"
    EMPTY = "empty"


@dataclass(frozen=True)
class Lobby:
    """A lobby of up to 8 seats in one game language (ruling 8).

    Invariants (checked on construction): at most ``LOBBY_SEATS`` seats (else
    ``LobbyFullError``) and no player seated twice (else ``AlreadyQueuedError``).
    """

    lobby_id: str
    """The lobby's id; the last tie-breaker of ``choose_lobby``."""
    language: str
    """The game language code the lobby plays (e.g. ``"en"``)."""
    seats: tuple[Seat, ...] = ()
    """Seats taken, in the order they were taken."""
    party_id: str | None = None
    """Set when a party opened the lobby (``party_lobby``); ``None`` for a solo lobby."""
    created_ms: int = 0
    """When the lobby was opened, UTC milliseconds; older lobbies are preferred."""
    status: LobbyStatus = LobbyStatus.WAITING
    tournament_id: str | None = None
    """The tournament its 8th seat started (``started``)."""

    def __post_init__(self) -> None:
        if len(self.seats) > LOBBY_SEATS:
            raise LobbyFullError(f"a lobby has at most {LOBBY_SEATS} seats, got {len(self.seats)}")
        if len({seat.player_id for seat in self.seats}) != len(self.seats):
            raise AlreadyQueuedError("a player cannot hold two seats in one lobby")


def is_full(lobby: Lobby) -> bool:
    """Whether every one of the ``LOBBY_SEATS`` seats is taken, i.e. the lobby starts (ruling 8)."""
    return len(lobby.seats) >= LOBBY_SEATS


def _party_highs(lobby: Lobby) -> dict[str, int]:
    """The highest rating of each party seated in ``lobby``, by party id: the rating a party
    is measured by (ruling 8), in the order the parties first took a seat."""
    highs: dict[str, int] = {}
    for seat in lobby.seats:
        if seat.party_id is not None:
            highs[seat.party_id] = max(seat.rating, highs.get(seat.party_id, seat.rating))
    return highs


def _within_window(rating: int, other: int) -> bool:
    """Whether ``rating`` is within ``RATING_WINDOW`` of ``other``, the edge included."""
    return abs(rating - other) <= RATING_WINDOW


def check_admission(lobby: Lobby, entrant: Seat) -> None:
    """Refuse a solo ``entrant`` who may not take a seat in the waiting ``lobby`` (ruling 8).

    The entrant must be solo (``entrant.party_id is None``): party members only ever sit in
    their own party's lobby, opened by ``party_lobby``. Checks, in this order:

    - ``AlreadyInPartyError`` if the entrant carries a ``party_id`` (not a solo entrant);
    - ``AlreadyQueuedError`` if the entrant already holds a seat in this lobby;
    - ``LobbyFullError`` if all ``LOBBY_SEATS`` seats are taken;
    - ``RatingWindowError`` unless the entrant's rating is within ``RATING_WINDOW`` (inclusive)
      of every solo seat's rating and of the highest rating of each party seated in the lobby;
    - ``LookalikeNicknameError`` if the entrant's nickname looks like a seated player's
      (ruling 16: ``shared.domain.glyphs.lookalike_keys``), so a look-alike sits elsewhere.

    The language is not checked here (``Seat`` has none); ``choose_lobby`` matches it. The
    error messages name no other player and no other player's rating.
    """
    if entrant.party_id is not None:
        raise AlreadyInPartyError(
            "a party member cannot take a seat alone; the party leader starts the party"
        )
    if any(seat.player_id == entrant.player_id for seat in lobby.seats):
        raise AlreadyQueuedError("the player already holds a seat in this lobby")
    if is_full(lobby):
        raise LobbyFullError()
    for seat in lobby.seats:
        if seat.party_id is None and not _within_window(entrant.rating, seat.rating):
            raise RatingWindowError(
                f"rating {entrant.rating} is more than {RATING_WINDOW} points "
                "from a solo player's rating in this lobby"
            )
    for high in _party_highs(lobby).values():
        if not _within_window(entrant.rating, high):
            raise RatingWindowError(
                f"rating {entrant.rating} is more than {RATING_WINDOW} points "
                "from the highest rating of a party in this lobby"
            )
    if entrant.nickname:
        mine = lookalike_keys(entrant.nickname)
        if any(seat.nickname and mine & lookalike_keys(seat.nickname) for seat in lobby.seats):
            raise LookalikeNicknameError("the nickname looks like a player's in this lobby")


def admits(lobby: Lobby, entrant: Seat) -> bool:
    """Whether ``check_admission(lobby, entrant)`` would pass (ruling 8). Never raises."""
    try:
        check_admission(lobby, entrant)
    except (
        AlreadyInPartyError,
        AlreadyQueuedError,
        LobbyFullError,
        LookalikeNicknameError,
        RatingWindowError,
    ):
        return False
    return True


def admission_range(lobby: Lobby) -> tuple[int, int] | None:
    """The integer ratings ``(lo, hi)``, inclusive, that ``lobby``'s window admits (ruling 8):
    a solo entrant rated ``r`` who holds no seat passes ``check_admission`` exactly when the
    lobby is not full and ``lo <= r <= hi``. ``None`` for a lobby with no seat (any rating).

    The centres are every solo seat's rating and each party's highest rating: ``lo`` is the
    largest centre minus ``RATING_WINDOW``, ``hi`` the smallest plus ``RATING_WINDOW``, so
    ``hi - lo <= 2 * RATING_WINDOW`` (``lo > hi`` means it admits nobody). Raises nothing.
    """
    centres = [seat.rating for seat in lobby.seats if seat.party_id is None]
    centres += _party_highs(lobby).values()
    if not centres:
        return None
    return max(centres) - RATING_WINDOW, min(centres) + RATING_WINDOW


@dataclass(frozen=True)
class WaitingLobby:
    """What choosing a waiting lobby needs to know of it (the store's index entry): its id,
    seats taken, opening time (UTC ms) and ``admission_range`` ``(lo, hi)``."""

    lobby_id: str
    seats: int
    created_ms: int
    lo: int
    hi: int

    def admits(self, rating: int) -> bool:
        """Whether a solo entrant rated ``rating`` (holding no seat in it) may sit (ruling 8)."""
        return self.seats < LOBBY_SEATS and self.lo <= rating <= self.hi


def waiting_lobby(lobby: Lobby) -> WaitingLobby | None:
    """The summary of a waiting ``lobby`` that admits somebody, else ``None`` (a lobby that is
    not waiting, is full, has no seat, or whose range is empty is no candidate)."""
    bounds = admission_range(lobby)
    if lobby.status is not LobbyStatus.WAITING or is_full(lobby) or bounds is None:
        return None
    lo, hi = bounds
    if lo > hi:
        return None
    return WaitingLobby(lobby.lobby_id, len(lobby.seats), lobby.created_ms, lo, hi)


def preference(lobby: WaitingLobby) -> tuple[int, int, str]:
    """Sort key of the preferred lobby (smallest first): the fullest, then the oldest, then the
    smallest id — the order ``choose_lobby`` uses, so that at low load lobbies fill one at a
    time."""
    return (-lobby.seats, lobby.created_ms, lobby.lobby_id)


def choose_lobby(lobbies: Sequence[Lobby], entrant: Seat, *, language: str) -> Lobby | None:
    """The waiting lobby a solo ``entrant`` of ``language`` should join, or ``None`` (ruling 8).

    Deterministic: among the lobbies of ``language`` that admit the entrant, prefer the fullest,
    then the oldest (smallest ``created_ms``), then the smallest ``lobby_id``. ``None`` means no
    lobby admits the entrant and the caller opens a new one. Party lobbies are candidates too
    (they are filled by solo players). Raises nothing.
    """
    candidates = [
        lobby for lobby in lobbies if lobby.language == language and admits(lobby, entrant)
    ]
    if not candidates:
        return None
    return min(candidates, key=lambda lobby: (-len(lobby.seats), lobby.created_ms, lobby.lobby_id))


def party_lobby(
    lobby_id: str,
    language: str,
    members: Sequence[Seat],
    party_id: str,
    created_ms: int,
) -> Lobby:
    """Open the lobby of a party that starts: all its members seated, solo players fill the rest.

    Ruling 8 (a party's members are exempt from the window among themselves; a party lobby is
    filled by solo players only) and ruling 10 (the whole party lands in one lobby). ``members``
    are the party's seats in joining order, each with ``party_id``. ``created_ms`` is UTC
    milliseconds. Raises ``ValueError`` if ``members`` is empty (a programming error: a party
    always has a member), ``PartyFullError`` if more than ``LOBBY_SEATS`` members,
    ``NotInPartyError`` if a seat carries another (or no) ``party_id``, ``AlreadyQueuedError`` if
    a member is listed twice.
    """
    if not members:
        raise ValueError("a party lobby needs at least one member")
    if len(members) > LOBBY_SEATS:
        raise PartyFullError(f"a party has at most {LOBBY_SEATS} members, got {len(members)}")
    if any(member.party_id != party_id for member in members):
        raise NotInPartyError("every seat of a party lobby must belong to the party opening it")
    return Lobby(
        lobby_id=lobby_id,
        language=language,
        seats=tuple(members),
        party_id=party_id,
        created_ms=created_ms,
    )


def with_seat(lobby: Lobby, seat: Seat) -> Lobby:
    """``lobby`` with the solo ``seat`` added last, after ``check_admission`` (ruling 8).

    Raises whatever ``check_admission`` raises; the lobby never exceeds ``LOBBY_SEATS``.
    """
    check_admission(lobby, seat)
    return replace(lobby, seats=(*lobby.seats, seat))


def without_player(lobby: Lobby, player_id: str) -> Lobby:
    """``lobby`` without ``player_id``'s seat; leaving a waiting lobby is free (ruling 9).

    The other seats keep their order, and the lobby keeps its ``party_id``; a lobby whose last
    seat leaves is ``EMPTY``. Raises ``NotQueuedError`` if the player holds no seat in it.
    """
    remaining = tuple(seat for seat in lobby.seats if seat.player_id != player_id)
    if len(remaining) == len(lobby.seats):
        raise NotQueuedError("the player holds no seat in this lobby")
    status = lobby.status if remaining else LobbyStatus.EMPTY
    return replace(lobby, seats=remaining, status=status)


def started(lobby: Lobby, tournament_id: str) -> Lobby:
    """The full ``lobby`` once its tournament ``tournament_id`` started (ruling 8). Raises
    ``ValueError`` for a lobby that is not full (a programming error: only the 8th seat
    starts a tournament)."""
    if not is_full(lobby):
        raise ValueError("only a full lobby starts a tournament")
    return replace(lobby, status=LobbyStatus.STARTED, tournament_id=tournament_id)
