"""Unit tests: the multiplayer Elo rating change (shared/domain/rating.py, ruling 1).

Rules page "Rating": the final place counts like a duel against each of the other 7 players
(above = win, same place = draw, below = loss); beating higher-rated players gives more, losing
to lower-rated ones costs more; in an equal lobby the change by place is +25 +18 +11 +4 -4 -11
-18 -25.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.domain.rating import (
    INITIAL_RATING,
    K_FACTOR,
    expected_score,
    rating_change,
    rating_changes,
    round_half_away_from_zero,
)

RULES_PAGE_TABLE = [25, 18, 11, 4, -4, -11, -18, -25]


def test_rating_table_equal_lobby() -> None:
    """Rules page table: 8 equal ratings, places 1..8 give +25 +18 +11 +4 -4 -11 -18 -25."""
    assert rating_changes([1000] * 8, [1, 2, 3, 4, 5, 6, 7, 8]) == RULES_PAGE_TABLE


@pytest.mark.parametrize("rating", [600, 1000, 1234, 2400])
def test_rating_table_holds_for_any_common_rating(rating: int) -> None:
    """Ruling 1: only rating differences matter, so every equal lobby gives the table."""
    assert rating_changes([rating] * 8, [8, 7, 6, 5, 4, 3, 2, 1]) == RULES_PAGE_TABLE[::-1]


def test_rating_table_by_players_below() -> None:
    """Rules page table, column "Players below you": 7 below -> +25 ... 0 below -> -25."""
    for place, change in enumerate(RULES_PAGE_TABLE, start=1):
        players_below = 8 - place
        assert rating_change(0, [1000] * 8, [place, *[p for p in range(1, 9) if p != place]]) == (
            change
        ), players_below


def test_rating_starts_at_1000() -> None:
    """Rules page "Rating" / ruling 1: everyone starts with a rating of 1000."""
    assert INITIAL_RATING == 1000


def test_place_counts_like_a_duel_against_each_other_player() -> None:
    """Rules page / ruling 1: above = win (1), same place = draw (0.5), below = loss (0),
    each against the other N-1 players with K = 50 spread over them, Elo expectation."""
    ratings = [1000, 1100, 900, 1300, 1000, 800, 1210, 1050]
    places = [3, 1, 3, 2, 5, 8, 6, 7]
    n = len(ratings)
    for i in range(n):
        total = 0.0
        for j in range(n):
            if i == j:
                continue
            s = 1.0 if places[i] < places[j] else 0.5 if places[i] == places[j] else 0.0
            e = 1 / (1 + 10 ** ((ratings[j] - ratings[i]) / 400))
            total += s - e
        unrounded = 50 / (n - 1) * total
        got = rating_changes(ratings, places)[i]
        assert abs(got - unrounded) <= 0.5
        assert isinstance(got, int)
    assert K_FACTOR == 50


def test_same_place_counts_as_a_draw() -> None:
    """Rules page "Rating": in the same place it counts as a draw (equal lobby: zero change)."""
    assert rating_changes([1000] * 8, [1] * 8) == [0] * 8
    # two players sharing 7th of 8: six losses and one draw each: 50/7 * -3 = -21.4 -> -21
    assert rating_changes([1000] * 8, [1, 2, 3, 4, 5, 6, 7, 7])[6:] == [-21, -21]


def test_beating_higher_rated_players_gives_more() -> None:
    """Rules page "Rating": beating players with higher ratings gives more points."""
    winner_vs_stronger = rating_changes([1000, *[1200] * 7], [1, 2, 3, 4, 5, 6, 7, 8])[0]
    winner_vs_weaker = rating_changes([1000, *[800] * 7], [1, 2, 3, 4, 5, 6, 7, 8])[0]
    assert winner_vs_stronger > 25 > winner_vs_weaker > 0
    # two-player form, same outcome, different opponent strength
    assert rating_changes([1000, 1400], [1, 2])[0] > rating_changes([1000, 1000], [1, 2])[0]


def test_losing_to_lower_rated_players_costs_more() -> None:
    """Rules page "Rating": losing to players with lower ratings costs more."""
    last_vs_weaker = rating_changes([1200, *[1000] * 7], [8, 1, 2, 3, 4, 5, 6, 7])[0]
    last_vs_equal = rating_changes([1000] * 8, [8, 1, 2, 3, 4, 5, 6, 7])[0]
    last_vs_stronger = rating_changes([800, *[1000] * 7], [8, 1, 2, 3, 4, 5, 6, 7])[0]
    assert last_vs_weaker < last_vs_equal == -25 < last_vs_stronger < 0


def test_expected_score_is_elo() -> None:
    """Ruling 1: E_ij = 1 / (1 + 10**((R_j - R_i)/400))."""
    assert expected_score(1000, 1000) == 0.5
    assert expected_score(1000, 1400) == pytest.approx(1 / 11)
    assert expected_score(1400, 1000) == pytest.approx(10 / 11)
    assert expected_score(1234, 987) + expected_score(987, 1234) == pytest.approx(1.0)


def test_only_the_order_of_places_matters() -> None:
    """Ruling 2 relies on it: a player placed at round end may see the still-alive players as
    any better place number; the change depends only on the order."""
    ratings = [1000, 1100, 900, 1300, 1000, 800, 1210, 1050]
    final = [1, 2, 4, 4, 6, 6, 6, 8]
    stand_in = [1, 1, 4, 4, 6, 6, 6, 8]  # players 0 and 1 still alive: both "1"
    for i in range(2, 8):
        assert rating_change(i, ratings, stand_in) == rating_changes(ratings, final)[i]


def test_rating_mismatched_lengths_raise() -> None:
    """rating_changes documents ValueError when the sequences differ in length."""
    with pytest.raises(ValueError, match="same length"):
        rating_changes([1000, 1000], [1])
    with pytest.raises(ValueError, match="same length"):
        rating_change(0, [1000, 1000], [1])


def test_rating_of_a_lone_player_is_zero() -> None:
    """Degenerate lobby: nobody to compare with, no change (and no division by zero)."""
    assert rating_changes([1000], [1]) == [0]
    assert rating_changes([], []) == []


# ------------------------------------------------------------------ rounding
@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (0.0, 0),
        (-0.0, 0),
        (0.4, 0),
        (-0.4, 0),
        (0.5, 1),
        (-0.5, -1),
        (1.5, 2),
        (-1.5, -2),
        (2.5, 3),
        (-2.5, -3),
        (3.4999, 3),
        (-3.4999, -3),
        (24.999999999999996, 25),
        (25.000000000000004, 25),
        (-25.000000000000004, -25),
        (7.0, 7),
        (-7.0, -7),
    ],
)
def test_round_half_away_from_zero_edge_cases(x: float, expected: int) -> None:
    """Ruling 1: halves go away from zero (2.5 -> 3, -2.5 -> -3), never to even."""
    got = round_half_away_from_zero(x)
    assert got == expected
    assert type(got) is int


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        # the largest double below 0.5: adding 0.5 rounds up to 1.0 in binary floating point
        (0.49999999999999994, 0),
        (-0.49999999999999994, 0),
        # odd integers above 2**52: x + 0.5 is not representable and rounds to x + 1
        (4503599627370497.0, 4503599627370497),
        (-4503599627370497.0, -4503599627370497),
    ],
)
def test_round_half_away_from_zero_is_exact_near_half(x: float, expected: int) -> None:
    """Ruling 1: a value below one half rounds toward zero, an integer rounds to itself.

    ``floor(abs(x) + 0.5)`` is the textbook trap (Java's old Math.round): the addition itself
    rounds. BUG in shared/domain/rating.py round_half_away_from_zero.
    """
    assert round_half_away_from_zero(x) == expected


# ------------------------------------------------------------------ properties
@st.composite
def lobby(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    n = draw(st.integers(min_value=2, max_value=8))
    ratings = draw(st.lists(st.integers(400, 2600), min_size=n, max_size=n))
    places = draw(st.lists(st.integers(1, n), min_size=n, max_size=n))
    return ratings, places


@given(lobby())
def test_property_changes_sum_to_zero_within_rounding(case: tuple[list[int], list[int]]) -> None:
    """Ruling 1: pairwise Elo is zero-sum before rounding, so |sum| <= N/2 after."""
    ratings, places = case
    changes = rating_changes(ratings, places)
    assert abs(sum(changes)) <= len(ratings) / 2


@given(lobby())
def test_property_better_place_never_gains_less_at_equal_rating(
    case: tuple[list[int], list[int]],
) -> None:
    """Ruling 1: at equal ratings, a better (smaller) place never gives a smaller change."""
    _, places = case
    ratings = [1000] * len(places)
    changes = rating_changes(ratings, places)
    for i in range(len(places)):
        for j in range(len(places)):
            if places[i] < places[j]:
                assert changes[i] >= changes[j]
            if places[i] == places[j]:
                assert changes[i] == changes[j]


@given(lobby())
def test_property_change_is_bounded_by_k(case: tuple[list[int], list[int]]) -> None:
    """Ruling 1: |delta| <= K = 50 (each of the N-1 terms is within [-1, 1], scaled by K/(N-1))."""
    ratings, places = case
    assert all(abs(c) <= 50 for c in rating_changes(ratings, places))
