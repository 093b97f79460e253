"""Unit tests: pairing the alive players for a round (shared/domain/pairing.py, ruling 4).

Rules page "Tournament" and "Byes": pairing is random, tries to avoid your opponent from the
previous round and never gives you a bye twice in a row. Ruling 4: the bye first, to a player who
did not have the previous one and has had the fewest byes so far (uniformly among ties); then,
among the matchings of the others, uniformly among those with the fewest rematches.

The properties compare the module with an independent brute-force reference written here.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.domain.pairing import (
    Pairing,
    best_matchings,
    bye_candidates,
    candidate_pairings,
    matchings,
    pair_round,
)

Choice = tuple[frozenset[frozenset[str]], str | None]

IDS = [f"p{i}" for i in range(1, 9)]
NO_BYES: Mapping[str, int] = {}


def _reference_matchings(players: list[str]) -> list[frozenset[frozenset[str]]]:
    if not players:
        return [frozenset()]
    head, tail = players[0], players[1:]
    out = []
    for partner in tail:
        rest = [p for p in tail if p != partner]
        out += [m | {frozenset((head, partner))} for m in _reference_matchings(rest)]
    return out


def reference_byes(
    alive: Sequence[str], previous_bye: str | None, byes: Mapping[str, int]
) -> list[str | None]:
    """Ruling 4's first step by brute force: [None] for an even count; else the players who
    did not have the previous bye, kept if nobody of them has had fewer byes."""
    if len(alive) % 2 == 0:
        return [None]
    eligible = [p for p in alive if p != previous_bye]
    return [p for p in eligible if all(byes.get(p, 0) <= byes.get(q, 0) for q in eligible)]


def rematches(pairs: frozenset[frozenset[str]], previous: set[frozenset[str]]) -> int:
    return len(pairs & previous)


def reference_best(
    alive: Sequence[str], previous: set[frozenset[str]], bye: str | None
) -> set[frozenset[frozenset[str]]]:
    """Ruling 4's second step by brute force: the others' matchings with fewest rematches."""
    options = _reference_matchings([p for p in alive if p != bye])
    best = min(rematches(m, previous) for m in options)
    return {m for m in options if rematches(m, previous) == best}


def reference_odds(
    alive: Sequence[str],
    previous: set[frozenset[str]],
    previous_bye: str | None,
    byes: Mapping[str, int],
) -> dict[Choice, float]:
    """Each choice ruling 4 may make and its probability: the bye uniformly among
    ``reference_byes``, then the matching uniformly among that bye's ``reference_best``."""
    candidates = reference_byes(alive, previous_bye, byes)
    odds: dict[Choice, float] = {}
    for bye in candidates:
        best = reference_best(alive, previous, bye)
        for m in best:
            odds[(m, bye)] = 1 / (len(candidates) * len(best))
    return odds


def as_choice(p: Pairing) -> Choice:
    return frozenset(frozenset(pair) for pair in p.pairs), p.bye


# ------------------------------------------------------------------ named rules
def test_even_count_has_no_bye_and_odd_count_has_one() -> None:
    """Rules page "Byes": if an odd number of players is left, one of them gets a bye."""
    rng = random.Random(1)
    assert pair_round(IDS, set(), None, rng, byes=NO_BYES).bye is None
    odd = pair_round(IDS[:7], set(), None, rng, byes=NO_BYES)
    assert odd.bye in IDS[:7]
    assert len(odd.pairs) == 3


def test_bye_never_twice_in_a_row() -> None:
    """Rules page "Byes": a bye never goes to the same player in two rounds in a row."""
    for seed in range(200):
        assert pair_round(IDS[:3], set(), "p1", random.Random(seed), byes=NO_BYES).bye != "p1"
    # even when giving p1 the bye would avoid a rematch, it may not
    previous = {frozenset(("p2", "p3"))}
    for p in candidate_pairings(["p1", "p2", "p3"], previous, "p1", byes=NO_BYES):
        assert p.bye != "p1"
    # nor when p1 has had fewer byes than anyone else (p1's count is a stale lower bound)
    byes = {"p1": 0, "p2": 2, "p3": 2}
    assert bye_candidates(["p1", "p2", "p3"], "p1", byes) == ["p2", "p3"]


def test_the_bye_goes_to_the_fewest_byes_so_far() -> None:
    """Ruling 4: among those who did not have the previous bye, the fewest byes so far; a
    player missing from the counts has had none."""
    byes = {"p1": 1, "p2": 1, "p3": 0, "p4": 2, "p5": 1}
    assert bye_candidates(IDS[:5], "p5", byes) == ["p3"]
    assert bye_candidates(IDS[:5], "p3", byes) == ["p1", "p2", "p5"]
    assert bye_candidates(IDS[:5], None, {"p1": 1, "p2": 1, "p3": 1, "p4": 1}) == ["p5"]
    assert bye_candidates(IDS[:4], None, byes) == []  # even: no bye at all
    for seed in range(50):
        assert pair_round(IDS[:5], set(), "p5", random.Random(seed), byes=byes).bye == "p3"


def test_seven_players_for_seven_rounds_each_get_exactly_one_bye() -> None:
    """Ruling 4 (the case that let byes pile up before: one player could get 4 byes in 7
    rounds while another got none): 7 players alive for 7 rounds, each gets exactly one bye,
    and in the next 7 rounds each gets a second one; over any seed."""
    for seed in range(100):
        rng = random.Random(seed)
        byes: Counter[str] = Counter()
        previous: set[frozenset[str]] = set()
        previous_bye: str | None = None
        for rnd in range(1, 15):
            pairing = pair_round(IDS[:7], previous, previous_bye, rng, byes=byes)
            assert pairing.bye is not None
            byes[pairing.bye] += 1
            previous, previous_bye = {frozenset(p) for p in pairing.pairs}, pairing.bye
            if rnd in (7, 14):
                assert [byes[p] for p in IDS[:7]] == [rnd // 7] * 7, (seed, byes)


def test_the_bye_comes_before_the_matching() -> None:
    """Ruling 4's order: the bye first, on bye counts alone, then the fewest rematches among
    the others. p1 alone has had no bye, so p1 takes it, though that leaves p2 and p3, who
    just met, to meet again (p2's or p3's bye would have avoided the rematch)."""
    previous = {frozenset(("p1", "p4")), frozenset(("p2", "p3"))}  # p4 went out since
    byes = {"p1": 0, "p2": 1, "p3": 1}
    options = candidate_pairings(["p1", "p2", "p3"], previous, None, byes=byes)
    assert options == [Pairing((("p2", "p3"),), "p1")]
    # with even counts, the byes that avoid the rematch are not preferred either
    level = candidate_pairings(["p1", "p2", "p3"], previous, None, byes=NO_BYES)
    assert {o.bye for o in level} == {"p1", "p2", "p3"}


def test_rematches_are_minimised_for_the_chosen_bye() -> None:
    """Ruling 4: given the bye, the matching has the fewest rematches of the others; two byes
    may leave different numbers of best matchings (here 8 for p7, 10 for any other)."""
    previous = {frozenset(p) for p in [("p1", "p2"), ("p3", "p4"), ("p5", "p6"), ("p7", "p8")]}
    alive = IDS[:7]  # p8 went out
    assert len(best_matchings([p for p in alive if p != "p7"], previous)) == 8
    assert len(best_matchings([p for p in alive if p != "p1"], previous)) == 10
    for seed in range(100):
        pairing = pair_round(alive, previous, None, random.Random(seed), byes=NO_BYES)
        assert not {frozenset(p) for p in pairing.pairs} & previous


def test_pairing_avoids_the_previous_opponent() -> None:
    """Rules page: pairing tries to avoid your opponent from the previous round."""
    previous = {frozenset(p) for p in [("p1", "p2"), ("p3", "p4"), ("p5", "p6"), ("p7", "p8")]}
    for seed in range(50):
        pairing = pair_round(IDS, previous, None, random.Random(seed), byes=NO_BYES)
        assert not {frozenset(p) for p in pairing.pairs} & previous


def test_unavoidable_rematch_is_allowed() -> None:
    """Ruling 4: fewest rematches, not none — two players left who just met play again."""
    pairing = pair_round(
        ["p1", "p2"], {frozenset(("p1", "p2"))}, None, random.Random(0), byes=NO_BYES
    )
    assert pairing == Pairing((("p1", "p2"),), None)


def test_three_left_the_bye_avoids_the_rematch() -> None:
    """Ruling 4: with p1-p2 last round and p3's bye, p3 plays and p1 or p2 gets the bye."""
    options = candidate_pairings(
        ["p1", "p2", "p3"], {frozenset(("p1", "p2"))}, "p3", byes={"p3": 1}
    )
    assert {as_choice(o) for o in options} == {
        (frozenset({frozenset(("p2", "p3"))}), "p1"),
        (frozenset({frozenset(("p1", "p3"))}), "p2"),
    }


def test_all_choices_are_enumerated() -> None:
    """Ruling 4: with at most 8 players every choice is enumerated: 105 matchings of 8,
    7 x 15 of 7 (6 x 15 when the previous bye holder is excluded, fewer when some have had
    more byes)."""
    assert len(list(matchings(IDS))) == 105
    assert len(candidate_pairings(IDS, set(), None, byes=NO_BYES)) == 105
    assert len(candidate_pairings(IDS[:7], set(), None, byes=NO_BYES)) == 105
    assert len(candidate_pairings(IDS[:7], set(), "p1", byes=NO_BYES)) == 90
    assert len(candidate_pairings(IDS[:7], set(), "p1", byes={"p1": 1, "p2": 1})) == 75
    # 8 players after a 4-pair round: the rematch-free matchings of K8 minus a perfect matching
    previous = {frozenset(p) for p in [("p1", "p2"), ("p3", "p4"), ("p5", "p6"), ("p7", "p8")]}
    assert len(candidate_pairings(IDS, previous, None, byes=NO_BYES)) == 60


def test_pairing_is_canonical() -> None:
    """Pairing docs: each pair is (a, b) with a < b, and the pairs are sorted."""
    for seed in range(20):
        p = pair_round(IDS[:7], set(), None, random.Random(seed), byes=NO_BYES)
        assert all(a < b for a, b in p.pairs)
        assert list(p.pairs) == sorted(p.pairs)


def test_pairing_needs_two_players() -> None:
    """candidate_pairings documents at least two players."""
    with pytest.raises(ValueError, match="two"):
        candidate_pairings(["p1"], set(), None, byes=NO_BYES)
    with pytest.raises(ValueError, match="two"):
        pair_round([], set(), None, random.Random(0), byes=NO_BYES)


def test_the_same_rng_state_gives_the_same_pairing() -> None:
    """Deterministic given the rng (the domain's promise): same seed, same pairing."""
    previous = {frozenset(("p1", "p2")), frozenset(("p3", "p4"))}
    byes = {"p1": 1, "p5": 1}
    for seed in range(20):
        runs = {pair_round(IDS[:7], previous, "p5", random.Random(seed), byes=byes) for _ in "ab"}
        assert len(runs) == 1


@pytest.mark.parametrize(
    ("alive", "previous_pairs", "previous_bye", "byes"),
    [
        (IDS[:5], [("p1", "p2"), ("p3", "p4")], "p5", {"p5": 1}),
        (IDS[:5], [("p1", "p2"), ("p3", "p4")], "p5", {"p1": 1, "p3": 1, "p5": 1}),
        (IDS[:6], [("p1", "p2"), ("p3", "p4"), ("p5", "p6")], None, {}),
        (IDS[:4], [("p1", "p2")], None, {}),  # p3, p4 had a bye / met someone now out
        (IDS[:7], [("p1", "p2"), ("p3", "p4"), ("p5", "p6"), ("p7", "p8")], None, {}),
        (IDS, [("p1", "p2"), ("p3", "p4"), ("p5", "p6"), ("p7", "p8")], None, {}),
    ],
)
def test_every_allowed_choice_is_reachable_with_ruling_4s_odds(
    alive: list[str],
    previous_pairs: list[tuple[str, str]],
    previous_bye: str | None,
    byes: dict[str, int],
) -> None:
    """Ruling 4: the bye uniformly among the tied players, then the matching uniformly among
    that bye's best — over many draws every allowed choice appears, the set of byes drawn is
    exactly the tied set, and each choice's count is near its expectation (not uniform over
    choices when two byes leave different numbers of best matchings: the 7-player case)."""
    previous = {frozenset(p) for p in previous_pairs}
    odds = reference_odds(alive, previous, previous_bye, byes)
    assert {as_choice(p) for p in candidate_pairings(alive, previous, previous_bye, byes=byes)} == (
        set(odds)
    )
    draws = round(40 / min(odds.values()))  # the least likely choice expected 40 times
    counts: Counter[Choice] = Counter()
    for seed in range(draws):
        rng = random.Random(seed)
        counts[as_choice(pair_round(alive, previous, previous_bye, rng, byes=byes))] += 1
    assert set(counts) == set(odds)
    assert {b for _, b in counts} == set(reference_byes(alive, previous_bye, byes))
    # a loose bound (well over 3 standard deviations) that still catches a biased pick
    for choice, p in odds.items():
        assert draws * p / 2.5 <= counts[choice] <= draws * p * 2, (choice, counts[choice])


# ------------------------------------------------------------------ properties
@st.composite
def pairing_case(
    draw: st.DrawFn,
) -> tuple[list[str], set[frozenset[str]], str | None, dict[str, int]]:
    """Alive players, the previous round's pairs over a superset of them, its bye, and bye
    counts (arbitrary, not only those a tournament reaches)."""
    prev_size = draw(st.integers(min_value=2, max_value=8))
    prev_alive = draw(st.permutations(IDS[:prev_size]))
    previous = {frozenset(prev_alive[i : i + 2]) for i in range(0, prev_size - 1, 2)}
    previous_bye = prev_alive[-1] if prev_size % 2 else None
    if draw(st.booleans()):
        previous_bye = draw(st.sampled_from([None, *IDS]))  # also arbitrary histories
    alive = draw(st.lists(st.sampled_from(prev_alive), min_size=2, max_size=prev_size, unique=True))
    byes = draw(st.dictionaries(st.sampled_from(IDS), st.integers(0, 3)))
    return alive, previous, previous_bye, byes


@settings(max_examples=150, deadline=None)
@given(pairing_case(), st.integers(min_value=0, max_value=2**32))
def test_property_pairing_rules(
    case: tuple[list[str], set[frozenset[str]], str | None, dict[str, int]], seed: int
) -> None:
    """Ruling 4 as properties: exactly one bye iff odd; never the previous bye holder; the bye
    has the fewest byes among the others; pairs cover the alive players exactly once; fewest
    rematches for that bye (none whenever a rematch-free matching of the others exists); the
    result is one of the choices of an independent brute force."""
    alive, previous, previous_bye, byes = case
    pairing = pair_round(alive, previous, previous_bye, random.Random(seed), byes=byes)
    odd = len(alive) % 2 == 1
    assert (pairing.bye is not None) == odd
    if pairing.bye is not None:
        assert pairing.bye in alive
        assert pairing.bye != previous_bye
        eligible = [p for p in alive if p != previous_bye]
        assert byes.get(pairing.bye, 0) == min(byes.get(p, 0) for p in eligible)
    covered = [p for pair in pairing.pairs for p in pair]
    if pairing.bye is not None:
        covered.append(pairing.bye)
    assert sorted(covered) == sorted(alive)
    assert all(a != b for a, b in pairing.pairs)

    odds = reference_odds(alive, previous, previous_bye, byes)
    assert as_choice(pairing) in odds
    others = [p for p in alive if p != pairing.bye]
    if any(rematches(m, previous) == 0 for m in _reference_matchings(others)):
        assert rematches(as_choice(pairing)[0], previous) == 0
    options = candidate_pairings(alive, previous, previous_bye, byes=byes)
    assert {as_choice(p) for p in options} == set(odds)


@st.composite
def rounds_case(draw: st.DrawFn) -> tuple[list[str], list[frozenset[str]], int]:
    """A tournament's entrants (2 to 8), then for each round the players who went out before
    it (any of those alive, the previous bye's holder included, as long as two stay), and a
    seed. Empty sets are common: whole stretches of rounds without eliminations."""
    entrants = IDS[: draw(st.integers(min_value=2, max_value=8))]
    alive = list(entrants)
    out_before: list[frozenset[str]] = []
    for _ in range(draw(st.integers(min_value=1, max_value=24))):
        out: frozenset[str] = frozenset()
        if len(alive) > 2 and draw(st.integers(0, 3)) == 0:
            out = frozenset(
                draw(st.lists(st.sampled_from(alive), max_size=len(alive) - 2, unique=True))
            )
        alive = [p for p in alive if p not in out]
        out_before.append(out)
    return entrants, out_before, draw(st.integers(min_value=0, max_value=2**32))


@settings(max_examples=300, deadline=None)
@given(rounds_case())
def test_property_bye_counts_of_alive_players_never_differ_by_more_than_one(
    case: tuple[list[str], list[frozenset[str]], int],
) -> None:
    """Ruling 4 over any sequence of rounds, with any eliminations between them: the bye
    counts of the alive players never differ by more than one.

    What eliminations force: nothing more. Precisely, at every draw with an odd count:
    (1) the bye is not the previous bye's holder (there are always at least 3 players then);
    (2) its count before the draw is the minimum over the eligible players (ruling 4) and also
    over all alive players: the previous holder took the bye at the minimum and nobody else's
    count changed since, so they are never alone at the minimum; (3) so after every draw the
    alive players' counts span at most one, and going out only removes counts, which cannot
    widen that span. With nobody going out for n rounds of n (odd) players, each gets exactly
    one bye more (test_seven_players_for_seven_rounds_each_get_exactly_one_bye)."""
    entrants, out_before, seed = case
    rng = random.Random(seed)
    alive = list(entrants)
    byes: Counter[str] = Counter()
    previous: set[frozenset[str]] = set()
    previous_bye: str | None = None
    for out in out_before:
        alive = [p for p in alive if p not in out]
        pairing = pair_round(alive, previous, previous_bye, rng, byes=byes)
        if pairing.bye is not None:
            assert pairing.bye != previous_bye
            eligible = [byes[p] for p in alive if p != previous_bye]
            assert byes[pairing.bye] == min(eligible) == min(byes[p] for p in alive)
            byes[pairing.bye] += 1
        counts = [byes[p] for p in alive]
        assert max(counts) - min(counts) <= 1, (alive, dict(byes))
        previous, previous_bye = {frozenset(p) for p in pairing.pairs}, pairing.bye


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
