"""Adapters layer: ``InMemoryProgression``, the ``Progression`` port (issue 38's read side)
over a dict of items shaped exactly as on the table (``put`` takes a DynamoDB item as plain
Python values, keys from ``shared.adapters.dynamo.schema``). Every answer is computed by brute
force over all items, so it is also the reference the contract tests hold
``DynamoProgression``'s sharded, histogram-based reads to. No boto3."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from shared.adapters.dynamo import schema
from shared.services.ports import BoardLine

__all__ = ["InMemoryProgression"]


def _order(line: BoardLine) -> tuple[int, str]:
    return (-line.score, line.player_id)


def _line(item: dict[str, Any]) -> BoardLine:
    return BoardLine(str(item["player_id"]), str(item["nickname"]), int(item["board_score"]))


class InMemoryProgression:
    """The ``Progression`` port in memory: ``items`` maps ``(pk, sk)`` to an item."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], dict[str, Any]] = {}

    def put(self, item: dict[str, Any]) -> None:
        """Store ``item`` (its ``pk`` and ``sk`` included), replacing any with its key."""
        self.items[(item[schema.PK], item[schema.SK])] = copy.deepcopy(item)

    def _get(self, key: dict[str, str]) -> dict[str, Any] | None:
        item = self.items.get((key[schema.PK], key[schema.SK]))
        return copy.deepcopy(item) if item is not None else None

    def stats(self, player_id: str) -> dict[str, Any] | None:
        return self._get(schema.stats_key(player_id))

    def history(
        self, player_id: str, limit: int, before: str | None = None
    ) -> tuple[list[dict[str, Any]], bool]:
        pk = schema.player_key(player_id)[schema.PK]
        keys = sorted(
            (
                sk
                for (p, sk) in self.items
                if p == pk and sk.startswith(schema.PLAYER_HISTORY_PREFIX)
            ),
            reverse=True,
        )
        if before is not None:
            keys = [sk for sk in keys if sk < before]
        return [copy.deepcopy(self.items[(pk, sk)]) for sk in keys[:limit]], len(keys) > limit

    def _board(self, prefix: str) -> list[BoardLine]:
        lines = [
            _line(i) for i in self.items.values() if str(i.get("board_pk", "")).startswith(prefix)
        ]
        return sorted(lines, key=_order)

    def rating_top(self, limit: int) -> list[BoardLine]:
        return self._board("RATING#")[:limit]

    def weekly_top(self, language: str, week: str, limit: int) -> list[BoardLine]:
        return self._board(f"WEEK#{language}#{week}#")[:limit]

    def rating_entry(self, player_id: str) -> BoardLine | None:
        item = self._get(schema.rating_entry_key(player_id))
        return _line(item) if item else None

    def weekly_entry(self, language: str, week: str, player_id: str) -> BoardLine | None:
        item = self._get(schema.weekly_entry_key(language, week, player_id))
        return _line(item) if item else None

    def rating_ranks(self, scores: Iterable[int]) -> dict[int, int]:
        board = self._board("RATING#")
        return {s: 1 + sum(1 for line in board if line.score > s) for s in set(scores)}

    def rating_around(self, line: BoardLine, n: int) -> tuple[list[BoardLine], list[BoardLine]]:
        board = [other for other in self._board("RATING#") if other.player_id != line.player_id]
        above = [other for other in board if _order(other) < _order(line)]
        below = [other for other in board if _order(other) > _order(line)]
        return above[-n:] if n else [], below[:n]

    def tournament_record(
        self, tournament_id: str
    ) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        summary = self._get(schema.record_key(tournament_id))
        if summary is None:
            return None
        pk = summary[schema.PK]
        rounds = sorted(
            (sk for (p, sk) in self.items if p == pk and sk.startswith(schema.ROUND_RECORD_PREFIX)),
        )
        return summary, [copy.deepcopy(self.items[(pk, sk)]) for sk in rounds]
