"""Domain layer: pairing the players still alive for a round (ruling 4).

The bye is chosen first, on bye counts alone (``bye_candidates``); then the matching, among the
matchings of the players left after that bye with the fewest rematches (``best_matchings``).
With at most 8 players every matching is enumerated (105 perfect matchings of 8, 15 of 6). Why
bye counts never differ by more than one: ``shared/domain/RULINGS.md``, "Tournament rules".
"""

from __future__ import annotations

import functools
import random
from collections.abc import Collection, Iterator, Mapping, Sequence
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


def _alive(alive: Sequence[str]) -> list[str]:
    players = sorted(alive)
    if len(players) < 2:
        raise ValueError("pairing needs at least two players")
    return players


def bye_candidates(
    alive: Sequence[str], previous_bye: str | None, byes: Mapping[str, int]
) -> list[str]:
    """Who may get this round's bye (ruling 4, first step), sorted and non-empty: of ``alive`` (ids,
    at least 2), those who did not have ``previous_bye`` and, among them, those with the fewest
    ``byes`` (absent: none); [] when the alive count is even (no bye). Raises ValueError for fewer
    than two players.
    """
    players = _alive(alive)
    if len(players) % 2 == 0:
        return []
    eligible = [p for p in players if p != previous_bye] or players
    fewest = min(byes.get(p, 0) for p in eligible)
    return [p for p in eligible if byes.get(p, 0) == fewest]


def best_matchings(
    players: Sequence[str], previous_pairs: Collection[frozenset[str]]
) -> list[tuple[Pair, ...]]:
    """The matchings of ``players`` (an even count, the bye already left out) with the fewest
    rematches of ``previous_pairs`` (ruling 4, second step), in a deterministic order."""
    options = _matchings_of(sorted(players))
    counts = [_rematches(m, previous_pairs) for m in options]
    best = min(counts)
    return [m for m, c in zip(options, counts, strict=True) if c == best]


def candidate_pairings(
    alive: Sequence[str],
    previous_pairs: Collection[frozenset[str]],
    previous_bye: str | None,
    *,
    byes: Mapping[str, int],
) -> list[Pairing]:
    """Every pairing ruling 4 may pick (non-empty, in a deterministic order): for each allowed bye
    (``bye_candidates``) of ``alive`` (ids, at least 2), the matchings of the others with the fewest
    rematches of ``previous_pairs`` *for that bye* (``best_matchings``); ``byes``: each player's
    byes so far (absent: none). Not a uniform draw: ``pair_round`` picks the bye, then a matching.
    Raises ValueError for fewer than two players.
    """
    players = _alive(alive)
    if len(players) % 2 == 0:
        return [Pairing(m, None) for m in best_matchings(players, previous_pairs)]
    options: list[Pairing] = []
    for bye in bye_candidates(players, previous_bye, byes):
        rest = [p for p in players if p != bye]
        options.extend(Pairing(m, bye) for m in best_matchings(rest, previous_pairs))
    return options


def pair_round(
    alive: Sequence[str],
    previous_pairs: Collection[frozenset[str]],
    previous_bye: str | None,
    rng: random.Random,
    *,
    byes: Mapping[str, int],
) -> Pairing:
    """Pair one round (ruling 4): the bye uniformly among ``bye_candidates``, then the matching
    uniformly among the others' ``best_matchings``. Deterministic given ``rng``'s state (one
    draw for the bye when the count is odd, one for the matching). Arguments as
    ``candidate_pairings``; raises ValueError for fewer than two players."""
    players = _alive(alive)
    bye: str | None = None
    if len(players) % 2 == 1:
        bye = rng.choice(bye_candidates(players, previous_bye, byes))
    rest = [p for p in players if p != bye]
    return Pairing(rng.choice(best_matchings(rest, previous_pairs)), bye)
