"""Domain layer: pairing the players still alive for a round (ruling 4).

If the alive count is odd, the bye goes to a player who did not have the previous bye. Among all
(bye, matching) choices, one is picked uniformly at random among those with the fewest rematches
of the previous round's pairs. With at most 8 players every choice is enumerated (at most 105
perfect matchings of 8, or 7 byes x 15 matchings of 6).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

Pair = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Pairing:
    """One round's pairing: the duels' pairs (in a canonical order) and the bye."""

    pairs: tuple[Pair, ...]
    """Each pair is (a, b) with a < b; pairs are sorted."""
    bye: str | None
    """The player with the bye, when the alive count is odd."""


def matchings(players: Sequence[str]) -> Iterator[tuple[Pair, ...]]:
    """Every perfect matching of an even-sized list, each pair sorted, pairs sorted."""
    if not players:
        yield ()
        return
    first, rest = players[0], players[1:]
    for k, partner in enumerate(rest):
        remaining = [*rest[:k], *rest[k + 1 :]]
        for sub in matchings(remaining):
            pair = (first, partner) if first < partner else (partner, first)
            yield tuple(sorted((pair, *sub)))


@functools.cache
def _index_matchings(n: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Every perfect matching of ``range(n)`` (n even), computed once per n (105 for 8)."""
    return tuple(
        tuple((int(a), int(b)) for a, b in m) for m in matchings([str(i) for i in range(n)])
    )


def _matchings_of(players: Sequence[str]) -> list[tuple[Pair, ...]]:
    """``matchings`` of a sorted list, via the cached index matchings (same order)."""
    out = []
    for m in _index_matchings(len(players)):
        out.append(tuple(sorted((players[a], players[b]) for a, b in m)))
    return out


def _rematches(pairs: Sequence[Pair], previous: Collection[frozenset[str]]) -> int:
    if not previous:
        return 0
    return sum(1 for p in pairs if frozenset(p) in previous)


def candidate_pairings(
    alive: Sequence[str], previous_pairs: Collection[frozenset[str]], previous_bye: str | None
) -> list[Pairing]:
    """All optimal choices of ruling 4: the allowed (bye, matching) pairs with fewest rematches.

    Args:
        alive: ids of the players still alive (at least 2).
        previous_pairs: the previous round's pairs, as frozensets of two ids.
        previous_bye: who had the previous round's bye, if anyone.

    Returns:
        every optimal ``Pairing`` (non-empty), in a deterministic order.
    """
    players = sorted(alive)
    if len(players) < 2:
        raise ValueError("pairing needs at least two players")
    options: list[Pairing] = []
    if len(players) % 2 == 0:
        options = [Pairing(m, None) for m in _matchings_of(players)]
    else:
        byes = [p for p in players if p != previous_bye] or players
        for bye in byes:
            rest = [p for p in players if p != bye]
            options.extend(Pairing(m, bye) for m in _matchings_of(rest))
    counts = [_rematches(o.pairs, previous_pairs) for o in options]
    best = min(counts)
    return [o for o, c in zip(options, counts, strict=True) if c == best]


def pair_round(
    alive: Sequence[str],
    previous_pairs: Collection[frozenset[str]],
    previous_bye: str | None,
    rng: random.Random,
) -> Pairing:
    """Pick one optimal pairing uniformly at random (ruling 4); see ``candidate_pairings``."""
    return rng.choice(candidate_pairings(alive, previous_pairs, previous_bye))
