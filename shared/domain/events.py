"""Domain layer: past-tense events returned by the tournament's transitions.

Services turn them into outbound messages (who receives what is decided there, ruling 7) and
into timers (a ``deadline_ms`` on an event means a deadline to schedule). Times are ms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from shared.domain.duel import DuelResult, EndReason, Row


@dataclass(frozen=True, slots=True)
class RoundStarted:
    """A round was paired; its intro runs until ``intro_deadline_ms`` (rules page: 6 s)."""

    round_no: int
    pairs: tuple[tuple[str, str, str], ...]
    """(duel_id, player_a, player_b) per duel."""
    bye: str | None
    intro_deadline_ms: int


@dataclass(frozen=True, slots=True)
class DuelStarted:
    """A duel's first turn started (at the end of the intro)."""

    duel_id: str
    players: tuple[str, str]
    first: str
    length: int
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class TurnPlayed:
    """A row was added to a duel's board (a guess or a skip). ``turn`` is the row number."""

    duel_id: str
    turn: int
    row: Row
    next_player: str | None
    deadline_ms: int | None
    """The next turn's deadline, or None when the duel ended with this row."""


@dataclass(frozen=True, slots=True)
class DuelEnded:
    """A duel is over; its secret may now be revealed (ruling 6)."""

    duel_id: str
    players: tuple[str, str]
    result: DuelResult
    winner: str | None
    reason: EndReason
    word: str


@dataclass(frozen=True, slots=True)
class PlayerEliminated:
    """A player's last life went, or they left (ruling 2: told at once)."""

    player_id: str
    round_no: int
    reason: Literal["lives", "left", "timeout"]


@dataclass(frozen=True, slots=True)
class Placed:
    """A player's place was fixed and their rating change applied (ruling 2)."""

    player_id: str
    place: int
    change: int
    rating: int
    """The new rating (snapshot + change)."""


@dataclass(frozen=True, slots=True)
class RoundEnded:
    """The round's last duel is over; places were fixed for those out this round."""

    round_no: int
    placed: tuple[Placed, ...]


@dataclass(frozen=True, slots=True)
class TournamentEnded:
    """The tournament is over: every place is fixed."""

    placed: tuple[Placed, ...]
    """Everyone, best place first."""
    winners: tuple[str, ...]
    """Everyone on place 1 (one player, or all who went out together in the last round)."""


@dataclass(frozen=True, slots=True)
class ConnectionChanged:
    """A player's connection dropped or came back (for ``player_status``)."""

    player_id: str
    connected: bool
    reconnect_deadline_ms: int | None


Event = (
    RoundStarted
    | DuelStarted
    | TurnPlayed
    | DuelEnded
    | PlayerEliminated
    | RoundEnded
    | TournamentEnded
    | ConnectionChanged
)
