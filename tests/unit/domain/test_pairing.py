"""Unit tests: pairing the alive players for a round (shared/domain/pairing.py, ruling 4).

Rules page "Tournament" and "Byes": pairing is random, tries to avoid your opponent from the
previous round and never gives you a bye twice in a row. Ruling 4: among all allowed (bye,
matching) choices, pick uniformly among those with the fewest rematches.

The properties compare the module with an independent brute-force reference written here.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.domain.pairing import Pairing, candidate_pairings, matchings, pair_round

Choice = tuple[frozenset[frozenset[str]], str | None]

IDS = [f"p{i}" for i in range(1, 9)]


def _reference_matchings(players: list[str]) -> list[frozenset[frozenset[str]]]:
    if not players:
        return [frozenset()]
    head, tail = players[0], players[1:]
    out = []
    for partner in tail:
        rest = [p for p in tail if p != partner]
        out += [m | {frozenset((head, partner))} for m in _reference_matchings(rest)]
    return out


def reference_choices(alive: Sequence[str], previous_bye: str | None) -> list[Choice]:
    """Every allowed (matching, bye) of ruling 4, by brute force."""
    players = list(alive)
    if len(players) % 2 == 0:
        return [(m, None) for m in _reference_matchings(players)]
    choices: list[Choice] = []
    for bye in players:
        if bye == previous_bye:
            continue  # never the same player's bye twice in a row
        choices += [(m, bye) for m in _reference_matchings([p for p in players if p != bye])]
    return choices


def rematches(pairs: frozenset[frozenset[str]], previous: set[frozenset[str]]) -> int:
    return len(pairs & previous)


def reference_optimal(
    alive: Sequence[str], previous: set[frozenset[str]], previous_bye: str | None
) -> set[Choice]:
    choices = reference_choices(alive, previous_bye)
    best = min(rematches(m, previous) for m, _ in choices)
    return {(m, b) for m, b in choices if rematches(m, previous) == best}


def as_choice(p: Pairing) -> Choice:
    return frozenset(frozenset(pair) for pair in p.pairs), p.bye


# ------------------------------------------------------------------ named rules
def test_even_count_has_no_bye_and_odd_count_has_one() -> None:
    """Rules page "Byes": if an odd number of players is left, one of them gets a bye."""
    rng = random.Random(1)
    assert pair_round(IDS, set(), None, rng).bye is None
    odd = pair_round(IDS[:7], set(), None, rng)
    assert odd.bye in IDS[:7]
    assert len(odd.pairs) == 3


def test_bye_never_twice_in_a_row() -> None:
    """Rules page "Byes": a bye never goes to the same player in two rounds in a row."""
    for seed in range(200):
        assert pair_round(IDS[:3], set(), "p1", random.Random(seed)).bye != "p1"
    # even when giving p1 the bye would avoid a rematch, it may not
    previous = {frozenset(("p2", "p3"))}
    for p in candidate_pairings(["p1", "p2", "p3"], previous, "p1"):
        assert p.bye != "p1"


def test_pairing_avoids_the_previous_opponent() -> None:
    """Rules page: pairing tries to avoid your opponent from the previous round."""
    previous = {frozenset(p) for p in [("p1", "p2"), ("p3", "p4"), ("p5", "p6"), ("p7", "p8")]}
    for seed in range(50):
        pairing = pair_round(IDS, previous, None, random.Random(seed))
        assert not {frozenset(p) for p in pairing.pairs} & previous


def test_unavoidable_rematch_is_allowed() -> None:
    """Ruling 4: fewest rematches, not none — two players left who just met play again."""
    pairing = pair_round(["p1", "p2"], {frozenset(("p1", "p2"))}, None, random.Random(0))
    assert pairing == Pairing((("p1", "p2"),), None)


def test_three_left_the_bye_avoids_the_rematch() -> None:
    """Ruling 4: with p1-p2 last round and p3's bye, p3 plays and p1 or p2 gets the bye."""
    options = candidate_pairings(["p1", "p2", "p3"], {frozenset(("p1", "p2"))}, "p3")
    assert {as_choice(o) for o in options} == {
        (frozenset({frozenset(("p2", "p3"))}), "p1"),
        (frozenset({frozenset(("p1", "p3"))}), "p2"),
    }


def test_all_choices_are_enumerated() -> None:
    """Ruling 4: with at most 8 players every choice is enumerated: 105 matchings of 8,
    7 x 15 of 7 (6 x 15 when the previous bye holder is excluded)."""
    assert len(list(matchings(IDS))) == 105
    assert len(candidate_pairings(IDS, set(), None)) == 105
    assert len(candidate_pairings(IDS[:7], set(), None)) == 105
    assert len(candidate_pairings(IDS[:7], set(), "p1")) == 90
    # 8 players after a 4-pair round: the rematch-free matchings of K8 minus a perfect matching
    previous = {frozenset(p) for p in [("p1", "p2"), ("p3", "p4"), ("p5", "p6"), ("p7", "p8")]}
    assert len(candidate_pairings(IDS, previous, None)) == 60


def test_pairing_is_canonical() -> None:
    """Pairing docs: each pair is (a, b) with a < b, and the pairs are sorted."""
    for seed in range(20):
        p = pair_round(IDS[:7], set(), None, random.Random(seed))
        assert all(a < b for a, b in p.pairs)
        assert list(p.pairs) == sorted(p.pairs)


def test_pairing_needs_two_players() -> None:
    """candidate_pairings documents at least two players."""
    with pytest.raises(ValueError, match="two"):
        candidate_pairings(["p1"], set(), None)


@pytest.mark.parametrize(
    ("alive", "previous_pairs", "previous_bye"),
    [
        (IDS[:5], [("p1", "p2"), ("p3", "p4")], "p5"),
        (IDS[:6], [("p1", "p2"), ("p3", "p4"), ("p5", "p6")], None),
        (IDS[:4], [("p1", "p2")], None),  # p3, p4 had a bye / were in a duel with someone now out
        (IDS, [("p1", "p2"), ("p3", "p4"), ("p5", "p6"), ("p7", "p8")], None),
    ],
)
def test_every_optimal_choice_is_reachable_and_uniform(
    alive: list[str], previous_pairs: list[tuple[str, str]], previous_bye: str | None
) -> None:
    """Ruling 4: "pick uniformly at random among those with the fewest rematches" — over many
    draws every optimal choice appears, with a count near the uniform expectation."""
    previous = {frozenset(p) for p in previous_pairs}
    optimal = {as_choice(p) for p in candidate_pairings(alive, previous, previous_bye)}
    assert optimal == reference_optimal(alive, previous, previous_bye)
    per_choice = 25 if len(alive) == 8 else 60  # 8 players: 60 choices at ~0.5 ms per draw
    counts: Counter[Choice] = Counter()
    for seed in range(per_choice * len(optimal)):
        counts[as_choice(pair_round(alive, previous, previous_bye, random.Random(seed)))] += 1
    assert set(counts) == optimal
    # a loose bound (well over 3 standard deviations) that still catches a biased pick
    assert min(counts.values()) >= per_choice // 3
    assert max(counts.values()) <= per_choice * 2


# ------------------------------------------------------------------ properties
@st.composite
def pairing_case(draw: st.DrawFn) -> tuple[list[str], set[frozenset[str]], str | None]:
    """Alive players, the previous round's pairs over a superset of them, and its bye."""
    prev_size = draw(st.integers(min_value=2, max_value=8))
    prev_alive = draw(st.permutations(IDS[:prev_size]))
    previous = {frozenset(prev_alive[i : i + 2]) for i in range(0, prev_size - 1, 2)}
    previous_bye = prev_alive[-1] if prev_size % 2 else None
    if draw(st.booleans()):
        previous_bye = draw(st.sampled_from([None, *IDS]))  # also arbitrary histories
    alive = draw(st.lists(st.sampled_from(prev_alive), min_size=2, max_size=prev_size, unique=True))
    return alive, previous, previous_bye


@settings(max_examples=150, deadline=None)
@given(pairing_case(), st.integers(min_value=0, max_value=2**32))
def test_property_pairing_rules(
    case: tuple[list[str], set[frozenset[str]], str | None], seed: int
) -> None:
    """Ruling 4 as properties: exactly one bye iff odd; never the previous bye holder; pairs
    cover the alive players exactly once; fewest rematches (none whenever a rematch-free choice
    exists); the result is one of the optimal choices of an independent brute force."""
    alive, previous, previous_bye = case
    pairing = pair_round(alive, previous, previous_bye, random.Random(seed))
    odd = len(alive) % 2 == 1
    assert (pairing.bye is not None) == odd
    if pairing.bye is not None:
        assert pairing.bye in alive
        assert pairing.bye != previous_bye
    covered = [p for pair in pairing.pairs for p in pair]
    if pairing.bye is not None:
        covered.append(pairing.bye)
    assert sorted(covered) == sorted(alive)
    assert all(a != b for a, b in pairing.pairs)

    optimal = reference_optimal(alive, previous, previous_bye)
    assert as_choice(pairing) in optimal
    chosen_rematches = rematches(as_choice(pairing)[0], previous)
    if any(rematches(m, previous) == 0 for m, _ in reference_choices(alive, previous_bye)):
        assert chosen_rematches == 0
    assert {as_choice(p) for p in candidate_pairings(alive, previous, previous_bye)} == optimal


def test_matchings_sort_each_pair_and_the_pairs_whatever_the_input_order() -> None:
    """``matchings``: every pair written (smaller id, larger id), the pairs sorted."""
    assert list(matchings(["a", "b"])) == [(("a", "b"),)]
    assert list(matchings(["b", "a"])) == [(("a", "b"),)]
    assert sorted(matchings(["d", "b", "c", "a"])) == [
        (("a", "b"), ("c", "d")),
        (("a", "c"), ("b", "d")),
        (("a", "d"), ("b", "c")),
    ]
    assert list(matchings([])) == [()]
