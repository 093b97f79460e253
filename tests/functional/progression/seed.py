"""Progression test data: the items the history function writes (issue 38's spec, "Write
side"), put directly — the write side is built separately, so these tests hold the read side
to the agreed item shapes. ``Put`` is any callable storing one item given as plain Python
values: ``dynamo_put(backend)`` (moto) or ``InMemoryProgression.put``."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared.adapters.dynamo import schema
from shared.adapters.dynamo.history import BLOCK_PREFIX, VALUE_PREFIX

Put = Callable[[dict[str, Any]], None]


def dynamo_put(client: Any, table_name: str) -> Put:
    """A ``Put`` into the table (PutItem)."""
    from shared.adapters.dynamo.store import to_av

    def put(item: dict[str, Any]) -> None:
        client.put_item(TableName=table_name, Item=to_av(item))

    return put


@dataclass
class Seat:
    """One player's result in a seeded tournament."""

    player_id: str
    nickname: str
    place: int
    rating_before: int
    rating_change: int

    @property
    def rating_after(self) -> int:
        return self.rating_before + self.rating_change


@dataclass
class Seeded:
    """A seeded finished tournament: its record's rounds as written."""

    tournament_id: str
    language: str
    started_ms: int
    ended_ms: int
    seats: list[Seat]
    rounds: list[dict[str, Any]] = field(default_factory=list)


def row(player_id: str, word: str | None, tiles: list[str] | None, at_ms: int) -> dict[str, Any]:
    """A record row: a guess (all ``absent`` but a solve, all ``correct``) or a skip."""
    if word is None:
        return {
            "player_id": player_id,
            "word": None,
            "tiles": None,
            "marks": None,
            "skipped": True,
            "at_ms": at_ms,
        }
    assert tiles is not None
    return {
        "player_id": player_id,
        "word": word,
        "tiles": tiles,
        "marks": ["absent"] * len(tiles),
        "skipped": False,
        "at_ms": at_ms,
    }


def duel(
    duel_id: str, a: str, b: str, secret_tiles: list[str], rows: int, at_ms: int
) -> dict[str, Any]:
    """A duel of ``rows`` guesses, ``a`` first, the last one solving (its player wins)."""
    played = []
    for n in range(rows):
        who = a if n % 2 == 0 else b
        played.append(row(who, "".join(secret_tiles), list(secret_tiles), at_ms + 1000 * n))
    played[-1]["marks"] = ["correct"] * len(secret_tiles)
    winner = a if (rows - 1) % 2 == 0 else b
    return {
        "duel_id": duel_id,
        "players": [a, b],
        "first": a,
        "word": "".join(secret_tiles),
        "length": len(secret_tiles),
        "result": "win",
        "winner": winner,
        "reason": "solved",
        "rows": played,
    }


def put_tournament(put: Put, t: Seeded) -> None:
    """The summary (``record_key``), each round (``round_record_key``) and each player's
    history entry (``player_history_key``), opponents from the rounds in round order."""
    ttl = schema.record_ttl(t.ended_ms)
    by_id = {s.player_id: s for s in t.seats}
    for r in t.rounds:
        put(
            {
                **schema.round_record_key(t.tournament_id, r["round_no"]),
                "kind": "round",
                "tournament_id": t.tournament_id,
                **r,
                "ttl": ttl,
            }
        )
    ordered = sorted(t.seats, key=lambda s: (s.place, s.player_id))
    put(
        {
            **schema.record_key(t.tournament_id),
            "kind": "record",
            "tournament_id": t.tournament_id,
            "language": t.language,
            "started_ms": t.started_ms,
            "ended_ms": t.ended_ms,
            "rounds": len(t.rounds),
            "players": [
                {
                    "player_id": s.player_id,
                    "nickname": s.nickname,
                    "place": s.place,
                    "rating_before": s.rating_before,
                    "rating_change": s.rating_change,
                    "rating_after": s.rating_after,
                }
                for s in ordered
            ],
            "ttl": ttl,
        }
    )
    for s in t.seats:
        met = [
            next(p for p in d["players"] if p != s.player_id)
            for r in t.rounds
            for d in r["duels"]
            if s.player_id in d["players"]
        ]
        put_history(
            put,
            s.player_id,
            t.tournament_id,
            t.ended_ms,
            t.language,
            s.place,
            len(t.seats),
            s.rating_before,
            s.rating_after,
            [(o, by_id[o].nickname) for o in met],
        )


def put_history(
    put: Put,
    player_id: str,
    tournament_id: str,
    ended_ms: int,
    language: str,
    place: int,
    players: int,
    rating_before: int,
    rating_after: int,
    opponents: Sequence[tuple[str, str]] = (),
) -> None:
    """One ``player_history_key`` entry."""
    put(
        {
            **schema.player_history_key(player_id, ended_ms, tournament_id),
            "tournament_id": tournament_id,
            "ended_ms": ended_ms,
            "language": language,
            "place": place,
            "players": players,
            "rating_before": rating_before,
            "rating_after": rating_after,
            "opponents": [{"player_id": p, "nickname": n} for p, n in opponents],
            "ttl": schema.record_ttl(ended_ms),
        }
    )


def put_stats(put: Put, player_id: str, places: Iterable[tuple[str, int]], best: int) -> None:
    """The ``stats_key`` item after tournaments finished on ``places`` ((language, place))."""
    item: dict[str, Any] = {
        **schema.stats_key(player_id),
        "tournaments": 0,
        "wins": 0,
        "podiums": 0,
        "place_sum": 0,
        "best_rating": best,
    }
    for language, place in places:
        item["tournaments"] += 1
        item["wins"] += place == 1
        item["podiums"] += place <= 3
        item["place_sum"] += place
        item[f"lang_{language}_n"] = item.get(f"lang_{language}_n", 0) + 1
        item[f"lang_{language}_places"] = item.get(f"lang_{language}_places", 0) + place
    put(item)


def put_rating_board(put: Put, lines: Iterable[tuple[str, str, int]]) -> None:
    """Rating board entries (``rating_entry_key``) for ``(player_id, nickname, rating)`` and
    the histogram (``rank_blocks_key`` / ``rank_values_key``, each player counted in its
    ``histogram_shard``) holding exactly them."""
    blocks: dict[int, dict[str, int]] = {}
    values: dict[tuple[int, int], dict[str, int]] = {}
    for pid, nickname, rating in lines:
        put(
            {
                **schema.rating_entry_key(pid),
                "board_pk": schema.rating_board_pk(pid),
                "board_score": rating,
                "player_id": pid,
                "nickname": nickname,
                "version": 1,
            }
        )
        shard, block = schema.histogram_shard(pid), rating // schema.HISTOGRAM_BLOCK
        counts = blocks.setdefault(shard, {})
        name = f"{BLOCK_PREFIX}{block}"
        counts[name] = counts.get(name, 0) + 1
        exact = values.setdefault((block, shard), {})
        name = f"{VALUE_PREFIX}{rating}"
        exact[name] = exact.get(name, 0) + 1
    # the history adapter's layout: one top-level counter attribute per block or rating
    for shard, counts in blocks.items():
        put({**schema.rank_blocks_key(shard), **counts})
    for (block, shard), exact in values.items():
        put({**schema.rank_values_key(block, shard), **exact})


def put_weekly(
    put: Put, language: str, week: str, lines: Iterable[tuple[str, str, int]], week_ms: int
) -> None:
    """Weekly entries (``weekly_entry_key``) for ``(player_id, nickname, points)``."""
    for pid, nickname, points in lines:
        put(
            {
                **schema.weekly_entry_key(language, week, pid),
                "board_pk": schema.weekly_board_pk(language, week, pid),
                "board_score": points,
                "player_id": pid,
                "nickname": nickname,
                "language": language,
                "week": week,
                "ttl": week_ms // 1000 + schema.WEEKLY_TTL_SECONDS,
            }
        )


def eight_player_tournament(
    tournament_id: str,
    seats: list[Seat],
    *,
    started_ms: int,
    language: str = "en",
    tiles: list[str] | None = None,
    rows: int = 3,
    rng: random.Random | None = None,
) -> Seeded:
    """A finished tournament of ``seats`` in which every duel is won on its ``rows``-th row
    (each costs one life: 3 lives x (n - 1) + 2 = the most duels a tournament can have) until
    one player is left; each round pairs the alive players in order (the odd one out has the
    bye) and the loser is the one with more lives (the longest tournament)."""
    rng = rng or random.Random(0)
    secret = tiles or list("crane")
    lives = {s.player_id: 3 for s in seats}
    at = started_ms
    rounds: list[dict[str, Any]] = []
    while sum(1 for v in lives.values() if v > 0) > 1:
        alive = [p for p in lives if lives[p] > 0]
        rng.shuffle(alive)
        bye = alive.pop() if len(alive) % 2 else None
        duels = []
        for i in range(0, len(alive) - 1, 2):
            a, b = alive[i], alive[i + 1]
            # the one with more lives loses: the longest tournament
            winner, loser = (b, a) if lives[a] > lives[b] else (a, b)
            first, second = (winner, loser) if rows % 2 else (loser, winner)
            n = len(rounds) + 1
            d = duel(f"{tournament_id}.{n}.{i // 2}", first, second, secret, rows, at)
            assert d["winner"] == winner
            lives[loser] -= 1
            duels.append(d)
        rounds.append({"round_no": len(rounds) + 1, "bye": bye, "duels": duels})
        at += 400_000
    return Seeded(tournament_id, language, started_ms, at, seats, rounds)
