"""Domain layer: the multiplayer Elo rating change by final place.

Ruling 1 (RULINGS.md): ratings are integers starting at 1000, snapshotted at tournament start.
For player i among N: ``delta_i = round_half_away_from_zero(K/(N-1) * sum_j (S_ij - E_ij))`` with
K = 50, ``E_ij = 1 / (1 + 10**((R_j - R_i)/400))`` and S_ij = 1 if i placed above j (smaller place
number), 0.5 for the same place, 0 below. With 8 equal ratings this gives the rules page table
+25 +18 +11 +4 -4 -11 -18 -25.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal

INITIAL_RATING = 1000
"""Every player's first rating (rules page, "Rating")."""

K_FACTOR = 50.0
"""The total stake per player, spread over the N-1 pairwise comparisons (ruling 1)."""


def round_half_away_from_zero(x: float) -> int:
    """Round to the nearest integer, halves away from zero (2.5 -> 3, -2.5 -> -3)."""
    # Decimal(float) is exact, and ROUND_HALF_UP rounds halves away from zero; the float
    # trick floor(|x| + 0.5) is wrong near .5 (0.49999999999999994 + 0.5 rounds up to 1).
    return int(Decimal(x).to_integral_value(rounding=ROUND_HALF_UP))


def expected_score(rating: int, other: int) -> float:
    """Elo expectation E_ij of a player rated ``rating`` against one rated ``other`` (0..1)."""
    return float(1.0 / (1.0 + 10.0 ** ((other - rating) / 400.0)))


def rating_change(index: int, ratings: Sequence[int], places: Sequence[int]) -> int:
    """The rating change of player ``index`` alone (ruling 1); see ``rating_changes``.

    Only the *order* of places matters to player i, so a caller may pass any place below i's for
    players not yet placed but certain to finish above i (the round-end rule of ruling 2).
    """
    n = len(ratings)
    if n != len(places):
        raise ValueError("ratings and places must have the same length")
    if n < 2:
        return 0
    total = 0.0
    for j in range(n):
        if j == index:
            continue
        if places[index] < places[j]:
            s = 1.0
        elif places[index] == places[j]:
            s = 0.5
        else:
            s = 0.0
        total += s - expected_score(ratings[index], ratings[j])
    return round_half_away_from_zero(K_FACTOR / (n - 1) * total)


def rating_changes(ratings: Sequence[int], places: Sequence[int]) -> list[int]:
    """Rating change of every player from the snapshot ratings and the final places.

    Args:
        ratings: snapshot rating of each player (integers).
        places: final place of each player (1 = best; equal numbers share a place).

    Returns:
        ``result[i]`` is player i's change (integer points).

    Raises:
        ValueError: the two sequences differ in length.

    Source: ruling 1; e.g. ``rating_changes([1000]*8, [1,2,3,4,5,6,7,8])`` is
    ``[25, 18, 11, 4, -4, -11, -18, -25]`` (rules page table).
    """
    if len(ratings) != len(places):
        raise ValueError("ratings and places must have the same length")
    return [rating_change(i, ratings, places) for i in range(len(ratings))]
