"""Domain layer: one 1v1 duel as an immutable state machine.

Rules page ("Turns and the clock", "Draws") and ruling 5: both duelists guess the same secret on a
shared board and alternate turns, a random player (drawn by the caller) moves first, each has up
to 6 turns (12 rows), a turn lasts ``turn_ms``; a timed-out turn is used up (a *skip*); an invalid
guess changes nothing (the turn and its clock keep running); the first correct guess wins; a draw
when both have used 6 turns. A duelist who leaves loses the duel (ruling 3).

Times are absolute UTC integer milliseconds. Every transition returns a new ``Duel``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from shared.domain.errors import (
    DomainError,
    DuelNotStartedError,
    DuelOverError,
    NotInDuelError,
    NotYourTurnError,
    TurnOverError,
    WrongLengthError,
)
from shared.domain.scoring import Mark, is_solved, score

if TYPE_CHECKING:  # a value handed in; its module (and the language table) load with the guess
    from shared.domain.words import AllowedWords


@dataclass(frozen=True, slots=True, order=True)
class DuelId:
    """A duel's id, ``{tournament_id}.{round}.{index}`` (round and index from 1, the index in
    board order): what players send with a guess, and how a guess finds its tournament item."""

    tournament_id: str
    round_no: int
    index: int

    def __str__(self) -> str:
        return f"{self.tournament_id}.{self.round_no}.{self.index}"

    @classmethod
    def parse(cls, text: str) -> DuelId:
        """The id printed by ``str``. Raises NotInDuelError for anything else (a forged or
        malformed id names no duel)."""
        parts = text.split(".")
        if (
            len(parts) != 3
            or not parts[0]
            or not all(p.isascii() and p.isdecimal() for p in parts[1:])
        ):
            raise NotInDuelError("no such duel")
        return cls(parts[0], int(parts[1]), int(parts[2]))


TURNS_PER_PLAYER = 6
"""Each duelist has up to 6 turns (rules page), so a board holds up to 12 rows."""


class DuelResult(StrEnum):
    """How a finished duel came out."""

    WIN = "win"
    DRAW = "draw"


class EndReason(StrEnum):
    """Why a duel ended."""

    SOLVED = "solved"  # a duelist guessed the secret
    TURNS_USED = "turns_used"  # both used all 6 turns: a draw
    LEFT = "left"  # a duelist left (``leave``): the other wins (ruling 3)
    TIMEOUT = "timeout"  # a duelist missed the reconnect deadline: the other wins (rulings 3, 9)


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the shared board: a scored guess or a skip."""

    player: str
    """The duelist whose turn it was."""
    word: str | None = None
    """The guess in play form (normalised), or None for a skip."""
    tiles: tuple[str, ...] | None = None
    """The guess split into tiles, or None for a skip."""
    marks: tuple[Mark, ...] | None = None
    """One mark per tile, or None for a skip."""
    at_ms: int = 0
    """When the row was played (ms)."""
    request_id: str | None = field(default=None, compare=False)
    """The ``request_id`` of the guess that played it (ruling 18: a repeat finds this row and
    gets its ``turn`` again), None for a skip or a guess sent without one."""

    @property
    def skipped(self) -> bool:
        """True for a timed-out turn."""
        return self.word is None


@dataclass(frozen=True, slots=True)
class Duel:
    """A duel between ``players[0]`` and ``players[1]`` on the secret ``word``.

    The duel is *pending* until ``starts_ms`` (the round intro), *active* while ``winner`` and
    ``result`` are unset, then *over*.
    """

    duel_id: str
    """Stable id, ``{tournament_id}.{round}.{index}``."""
    players: tuple[str, str]
    """The two duelists' player ids."""
    first: str
    """Who moves first (drawn at random by the caller, ruling 5)."""
    word: str = field(repr=False)
    """The secret in play form. Never sent before the duel is over (ruling 6); kept out of
    ``repr`` so that logging a duel cannot leak it."""
    answer: tuple[str, ...] = field(repr=False)
    """The secret's tiles."""
    starts_ms: int
    """When turn 1 starts (the end of the round intro), ms."""
    turn_deadline_ms: int
    """When the current turn times out, ms (turn 1: ``starts_ms + turn_ms``)."""
    rows: tuple[Row, ...] = ()
    """The board so far, in play order (guesses and skips)."""
    result: DuelResult | None = None
    """Set when the duel is over."""
    winner: str | None = None
    """The winner's id when ``result`` is WIN."""
    reason: EndReason | None = None
    """Why the duel ended."""
    ended_ms: int | None = None
    """When the duel ended, ms."""

    @property
    def length(self) -> int:
        """The secret's length in tiles (4, 5 or 6)."""
        return len(self.answer)

    @property
    def over(self) -> bool:
        """True once the duel has a result."""
        return self.result is not None

    @property
    def turn(self) -> int:
        """The number of the turn being played, 1..12 (the next row's number)."""
        return len(self.rows) + 1

    @property
    def next_player(self) -> str | None:
        """Whose turn it is, or None when the duel is over."""
        if self.over:
            return None
        other = self.opponent_of(self.first)
        return self.first if len(self.rows) % 2 == 0 else other

    @property
    def loser(self) -> str | None:
        """The loser's id when ``result`` is WIN."""
        if self.result is not DuelResult.WIN or self.winner is None:
            return None
        return self.opponent_of(self.winner)

    def opponent_of(self, player: str) -> str:
        """The other duelist. Raises NotInDuelError for a non-duelist."""
        if player == self.players[0]:
            return self.players[1]
        if player == self.players[1]:
            return self.players[0]
        raise NotInDuelError(f"player is not in duel {self.duel_id}")

    def started(self, now_ms: int) -> bool:
        """True once the intro is over (``now_ms >= starts_ms``)."""
        return now_ms >= self.starts_ms

    def refusal(self, player: str, received_ms: int) -> DomainError | None:
        """Why ``player`` may not guess now, most telling first, or None (rules page "Turns
        and the clock"; ruling 5): not a duelist (NotInDuelError), the duel is over
        (DuelOverError), the intro still runs (DuelNotStartedError), the player's turn ran out
        — received at or after its deadline, or already skipped — (TurnOverError), it is the
        opponent's turn (NotYourTurnError). ``received_ms``: when the guess was received."""
        if player not in self.players:
            return NotInDuelError("this is not your duel")
        if self.over:
            return DuelOverError("the duel is over")
        if not self.started(received_ms):
            return DuelNotStartedError("the round intro is still running")
        if self.next_player == player and received_ms >= self.turn_deadline_ms:
            return TurnOverError("your time for this turn ran out")
        if self.next_player != player:
            if self.rows and self.rows[-1].player == player and self.rows[-1].skipped:
                return TurnOverError("your turn was skipped: the time ran out")
            return NotYourTurnError("it is your opponent's turn")
        return None

    def play(
        self,
        player: str,
        raw: str,
        words: AllowedWords,
        *,
        received_ms: int,
        now_ms: int,
        turn_ms: int,
        request_id: str | None = None,
    ) -> Duel:
        """Play the typed guess ``raw`` received at ``received_ms`` and applied at ``now_ms``
        (the new row keeps ``request_id``: ruling 18).

        The checks run once, in order: the duel's ``refusal``, then the word
        (``words.check``: its letters, its length, the word list), so an out-of-turn player
        learns that rather than "not a word". Call ``expire`` first so that a guess after the
        deadline meets the skip.

        Returns:
            the duel with the new row; over (SOLVED) if the guess is the secret, over
            (TURNS_USED, a draw) if it was the 12th row, else the turn passes with the deadline
            ``now_ms + turn_ms`` (the opponent's 30 s start when they can see the row).

        Raises:
            the ``refusal`` and the word check's errors (InvalidLettersError,
            WrongLengthError, NotInWordListError; ruling 5: all leave the duel as it is).
        """
        err = self.refusal(player, received_ms)
        if err is not None:
            raise err
        word, tiles = words.check(raw, self.length)
        return self._row(player, word, tiles, now_ms, turn_ms, request_id)

    def guess(
        self, player: str, word: str, tiles: tuple[str, ...], now_ms: int, turn_ms: int
    ) -> Duel:
        """Play a guess already normalised and checked against the word list, received and
        applied at ``now_ms`` (``play`` without the word check: only the length is compared).

        Raises:
            NotInDuelError, DuelOverError, DuelNotStartedError, TurnOverError,
            NotYourTurnError, WrongLengthError (ruling 5: all leave the duel unchanged).
        """
        err = self.refusal(player, now_ms)
        if err is not None:
            raise err
        return self._row(player, word, tiles, now_ms, turn_ms)

    def _row(
        self,
        player: str,
        word: str,
        tiles: tuple[str, ...],
        now_ms: int,
        turn_ms: int,
        request_id: str | None = None,
    ) -> Duel:
        """The checked guess ``word`` (``tiles``) played as the next row (see ``play``)."""
        if len(tiles) != self.length:
            raise WrongLengthError(f"the word has {self.length} letters")
        marks = score(tiles, self.answer)
        row = Row(player, word, tiles, marks, now_ms, request_id)
        duel = replace(self, rows=(*self.rows, row))
        if is_solved(marks):
            return duel._end(DuelResult.WIN, player, EndReason.SOLVED, now_ms)
        if len(duel.rows) >= 2 * TURNS_PER_PLAYER:
            return duel._end(DuelResult.DRAW, None, EndReason.TURNS_USED, now_ms)
        return replace(duel, turn_deadline_ms=now_ms + turn_ms)

    def played(self, player: str, request_id: str) -> int | None:
        """The turn number (1-based row index) of ``player``'s row played by a guess with
        ``request_id`` (ruling 18: a repeat), or None."""
        for i, row in enumerate(self.rows):
            if row.request_id == request_id and row.player == player:
                return i + 1
        return None

    def skip(self, turn_ms: int) -> Duel:
        """Apply the current turn's deadline: the turn is used up (a skip) and passes on.

        The next turn starts at the old deadline, so late timers do not shift the clock.
        Raises DuelOverError when the duel is over.
        """
        if self.over:
            raise DuelOverError(f"duel {self.duel_id} is over")
        at = self.turn_deadline_ms
        player = self.next_player
        assert player is not None
        duel = replace(self, rows=(*self.rows, Row(player=player, at_ms=at)))
        if len(duel.rows) >= 2 * TURNS_PER_PLAYER:
            return duel._end(DuelResult.DRAW, None, EndReason.TURNS_USED, at)
        return replace(duel, turn_deadline_ms=at + turn_ms)

    def next_deadline(self) -> int | None:
        """The next time at which ``expire`` would change this duel, or None when over."""
        return None if self.over else self.turn_deadline_ms

    def forfeit(self, leaver: str, now_ms: int, reason: EndReason = EndReason.LEFT) -> Duel:
        """The duelist ``leaver`` left (``reason`` LEFT) or missed the reconnect deadline
        (TIMEOUT): the opponent wins (ruling 3). Over duels are unchanged."""
        winner = self.opponent_of(leaver)
        if self.over:
            return self
        return self._end(DuelResult.WIN, winner, reason, now_ms)

    def _end(self, result: DuelResult, winner: str | None, reason: EndReason, at: int) -> Duel:
        return replace(self, result=result, winner=winner, reason=reason, ended_ms=at)
