"""Hardening test helpers: a started tournament, and "what did each player get" digests."""

from __future__ import annotations

from typing import Any

from shared.services.model import TournamentRecord


def started(backend: Any) -> tuple[list[Any], Any, Any, str]:
    """8 scripted players in a running tournament, past the intro. Returns (players, the
    player to move in the first duel, their opponent, the tournament id)."""
    players = backend.fill_lobby("en")
    backend.end_intro()
    mover = backend.to_move()[0]
    duel = mover.current_duel()
    opponent = next(p for p in players if p.id == duel.opponent_of(mover.id))
    return players, mover, opponent, str(mover.tournament_id())


def record(backend: Any, tournament_id: str) -> TournamentRecord:
    """The stored tournament, read through the store adapter (its codec)."""
    rec = backend.tournament(tournament_id)
    assert rec is not None
    return rec  # type: ignore[no-any-return]


def counts(players: list[Any]) -> list[int]:
    return [len(p.messages) for p in players]


def types_since(player: Any, start: int) -> list[str]:
    return [m["type"] for m in player.messages[start:]]


def wrong_word(backend: Any, player: Any) -> str:
    """A valid word of the player's duel length that is not its secret."""
    return str(player.any_valid_word())
