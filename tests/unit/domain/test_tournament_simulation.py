"""Unit tests: a seeded simulation of many random tournaments.

Each tournament is driven directly through the aggregate (``Tournament.start / expire / guess /
leave / set_connected``) with random outcomes: winning and losing guesses, invalid guesses,
skips (time passing ``expire``), draws, leavers at random moments (during the intro, holding the
bye, after their own duel), disconnects, reconnects and reconnect timeouts. Every tournament is
checked against the rules page and rulings 1-5 with an independent oracle (see ``check``).

Size. At least 10,000 tournaments, for confidence in rare paths; one costs about 5 ms of CPU in the
aggregate, so the 10,000 are split into chunks run in parallel processes (one per core), about
half a minute on two cores. ``WT_SIM_TOURNAMENTS`` changes the count (e.g. 100,000 nightly),
``WT_SIM_SEED`` the first seed.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import random
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from shared.domain.duel import DuelResult, EndReason
from shared.domain.errors import WrongLengthError
from shared.domain.events import (
    DuelEnded,
    DuelStarted,
    Event,
    PlayerEliminated,
    RoundEnded,
    RoundStarted,
    TournamentEnded,
    TurnPlayed,
)
from shared.domain.rating import rating_changes
from shared.domain.tournament import LIVES, Dealer, Entrant, Phase, Tournament
from tests.unit.domain.helpers import FAKE_WORDS

DEFAULT_TOURNAMENTS = 10_000
TOURNAMENTS = int(os.environ.get("WT_SIM_TOURNAMENTS", DEFAULT_TOURNAMENTS))
SEED = int(os.environ.get("WT_SIM_SEED", 0))

TURN_MS = 30_000
INTRO_MS = 6_000
RECONNECT_MS = 60_000
MAX_ROUNDS = LIVES * 8  # every round costs at least one life (a loss, a draw or a leaver)
MAX_STEPS = 5_000
TABLE = [25, 18, 11, 4, -4, -11, -18, -25]


@dataclass
class Coverage:
    """How often the simulation hit each situation (asserted non-zero at the end)."""

    counts: Counter[str] = field(default_factory=Counter)

    def hit(self, what: str) -> None:
        self.counts[what] += 1


def simulate(seed: int, cov: Coverage) -> tuple[Tournament, list[Event], list[int]]:
    """Play one random tournament to its end; returns it, all its events and the ratings."""
    rng = random.Random(seed)
    dealer = Dealer(
        rng=random.Random(seed * 7919 + 1), words=FAKE_WORDS, turn_ms=TURN_MS, intro_ms=INTRO_MS
    )
    n = 8 if rng.random() < 0.9 else rng.randint(2, 7)
    ratings = [1000] * n if rng.random() < 0.7 else [rng.randint(700, 1300) for _ in range(n)]
    ids = [f"p{i}" for i in range(n)]
    entrants = [Entrant(pid, pid, r) for pid, r in zip(ids, ratings, strict=True)]
    now = rng.randint(0, 10**12)
    t, events = Tournament.start(f"s{seed}", "en", entrants, now, dealer)
    reconnect: dict[str, int] = {}  # disconnected player -> reconnect deadline
    p_leave = rng.choice((0.0, 0.003, 0.01, 0.03))
    p_win = rng.choice((0.15, 0.3, 0.5))

    steps = 0
    while not t.over:
        steps += 1
        assert steps <= MAX_STEPS, "tournament did not end"
        roll = rng.random()
        alive = [p.player_id for p in t.alive]

        if roll < p_leave or (t.phase is Phase.INTRO and roll < 2 * p_leave + 0.01):
            # a leaver at a random moment: intro, holding the bye, mid-duel or after their duel
            who = rng.choice(alive)
            if t.phase is Phase.INTRO:
                cov.hit("leave_intro")
            if who == t.bye:
                cov.hit("leave_bye")
            t, ev = t.leave(who, now, dealer)
            events += ev
            reconnect.pop(who, None)
        elif roll < p_leave + 0.02:
            who = rng.choice(sorted(reconnect) if reconnect and rng.random() < 0.5 else alive)
            if who in reconnect:
                t, ev = t.set_connected(who, True)
                del reconnect[who]
                cov.hit("reconnect")
            else:
                reconnect[who] = now + RECONNECT_MS
                t, ev = t.set_connected(who, False, reconnect[who])
                cov.hit("disconnect")
            events += ev
        else:
            kind = rng.random()
            if kind < 0.7:
                later = now + rng.randint(1, 3_000)
            elif kind < 0.97:
                later = now + rng.randint(TURN_MS, TURN_MS + 2_000)
            else:
                later = now + rng.randint(2 * TURN_MS, 14 * TURN_MS)
            # reconnect deadlines due before `later` fire in time order, as the clock would
            for who, deadline in sorted(reconnect.items(), key=lambda kv: kv[1]):
                if deadline <= later and not t.over:
                    t, ev = t.expire(deadline, dealer)
                    events += ev
                    t, ev = t.leave(who, deadline, dealer, reason="timeout")
                    events += ev
                    cov.hit("timeout")
                    del reconnect[who]
            if t.over:
                break
            now = later
            t, ev = t.expire(now, dealer)
            events += ev
            if not t.over and t.phase is Phase.PLAYING:
                duels = [d for d in t.duels if not d.over]
                if duels:
                    t, ev = _play_a_guess(t, dealer, rng, rng.choice(duels).duel_id, now, p_win)
                    events += ev
        for p in t.players:
            assert p.lives >= 0
    cov.hit("tournaments")
    return t, events, ratings


def _play_a_guess(
    t: Tournament, dealer: Dealer, rng: random.Random, duel_id: str, now: int, p_win: float
) -> tuple[Tournament, list[Event]]:
    duel = t.duel(duel_id)
    mover = duel.next_player
    assert mover is not None
    roll = rng.random()
    if roll < 0.05:
        bad = "z" * (duel.length + rng.choice((-1, 1)))
        try:
            t.guess(mover, duel_id, bad, tuple(bad), now, dealer)
        except WrongLengthError:
            return t, []
        raise AssertionError("a wrong-length guess was accepted")
    word = duel.word if roll < 0.05 + p_win else rng.choice(FAKE_WORDS.answers(duel.length))
    return t.guess(mover, duel_id, word, tuple(word), now, dealer)


def check(t: Tournament, events: list[Event], ratings: list[int], cov: Coverage) -> None:
    """The invariants of the rules page and rulings 1-5, against an independent oracle."""
    ids = [p.player_id for p in t.players]
    n = len(ids)
    by_id = {p.player_id: p for p in t.players}

    # the tournament ended, once, with its last event; in a bounded number of rounds
    assert t.over
    ended = [e for e in events if isinstance(e, TournamentEnded)]
    assert len(ended) == 1
    assert events[-1] is ended[0]
    rounds = [e for e in events if isinstance(e, RoundStarted)]
    assert [r.round_no for r in rounds] == list(range(1, len(rounds) + 1))
    assert len(rounds) <= MAX_ROUNDS

    # who went out when and how (ruling 2: told at once, exactly once)
    out_round: dict[str, int] = {}
    left: set[str] = set()
    for e in events:
        if isinstance(e, PlayerEliminated):
            assert e.player_id not in out_round, "eliminated twice"
            out_round[e.player_id] = e.round_no
            assert e.reason in ("lives", "left", "timeout")
            if e.reason != "lives":
                left.add(e.player_id)
    survivors = [pid for pid in ids if pid not in out_round]
    assert len(survivors) <= 1
    for pid in ids:
        p = by_id[pid]
        assert p.left == (pid in left)
        assert p.out_round == out_round.get(pid)
        assert p.lives >= 0
    for pid in survivors:
        assert by_id[pid].lives > 0

    # rulings 2 and 3, as an oracle: place = 1 + number of players certainly better
    def later(r: int) -> int:
        return sum(1 for q in ids if q not in out_round or out_round[q] > r)

    for pid in ids:
        if pid not in out_round:
            expected = 1
        else:
            r = out_round[pid]
            expected = 1 + later(r)
            if pid in left:
                expected += sum(1 for q in ids if out_round.get(q) == r and q not in left)
        assert by_id[pid].place == expected, (pid, by_id[pid].place, expected)
    places = [by_id[pid].place or 0 for pid in ids]
    # a valid standard competition ranking ("1224"): ties share, the next place skips
    for pl in places:
        assert pl == 1 + sum(1 for other in places if other < pl)
    # leavers below the non-leavers of their round
    for a in left:
        for b in ids:
            if b not in left and out_round.get(b) == out_round[a]:
                assert by_id[a].place > by_id[b].place  # type: ignore[operator]

    # every player placed exactly once: at their round's end, the survivor at the very end
    placed_at_round_end = [
        x.player_id for e in events if isinstance(e, RoundEnded) for x in e.placed
    ]
    assert len(placed_at_round_end) == len(set(placed_at_round_end))
    assert sorted(placed_at_round_end + survivors) == sorted(ids)
    assert sorted(x.player_id for x in ended[0].placed) == sorted(ids)

    # ruling 1: the changes are those of the final places, zero-sum within rounding
    changes = [by_id[pid].rating_change for pid in ids]
    assert changes == rating_changes(ratings, places)
    assert abs(sum(changes)) <= n  # type: ignore[arg-type]
    if n == 8 and len(set(ratings)) == 1 and sorted(places) == list(range(1, 9)):
        assert [TABLE[pl - 1] for pl in places] == changes
        cov.hit("table_checked")
    for x in ended[0].placed:
        assert x.rating == ratings[ids.index(x.player_id)] + x.change

    # duels: each paired duel ends once, every secret different (ruling 5)
    paired = [d for r in rounds for d, _, _ in r.pairs]
    duel_ends = [e for e in events if isinstance(e, DuelEnded)]
    assert sorted(e.duel_id for e in duel_ends) == sorted(paired)
    words = [e.word for e in duel_ends]
    assert len(set(words)) == len(words)
    assert all(len(w) in (4, 5, 6) for w in words)

    # byes: never twice in a row, never in a duel (rules page "Byes")
    for prev, cur in itertools.pairwise(rounds):
        if prev.bye is not None:
            assert cur.bye != prev.bye
    for r in rounds:
        in_duels = [p for _, a, b in r.pairs for p in (a, b)]
        assert len(in_duels) == len(set(in_duels))
        assert r.bye not in in_duels
    # byes are fair (ruling 4): each goes to an eligible player with the fewest so far, so the
    # alive players' counts never differ by more than one, whoever goes out between rounds
    byes: Counter[str] = Counter()
    previous_bye: str | None = None
    for started in rounds:
        alive_then = [p for _, a, b in started.pairs for p in (a, b)] + (
            [started.bye] if started.bye else []
        )
        if started.bye is not None:
            assert byes[started.bye] == min(byes[p] for p in alive_then if p != previous_bye)
            byes[started.bye] += 1
            cov.hit("bye")
        spread = [byes[p] for p in alive_then]
        assert max(spread) - min(spread) <= 1
        previous_bye = started.bye
    assert {p.player_id: p.byes for p in t.players} == {pid: byes[pid] for pid in ids}

    # lives: a loss costs 1, a draw costs both 1, a win and a bye nothing (rules page)
    lost: Counter[str] = Counter()
    for e in duel_ends:
        if e.result is DuelResult.DRAW:
            lost.update(e.players)
            cov.hit("draw")
        else:
            assert e.winner in e.players
            loser = e.players[1] if e.winner == e.players[0] else e.players[0]
            if e.reason is EndReason.LEFT:
                assert loser in left
            else:
                lost[loser] += 1
    for pid in ids:
        if pid not in left:
            assert by_id[pid].lives == LIVES - lost[pid], pid
        else:
            assert by_id[pid].lives == 0
    if any(isinstance(e, TurnPlayed) and e.row.skipped for e in events):
        cov.hit("skip")
    if len(survivors) == 0:
        cov.hit("everyone_out_together")
    assert sum(isinstance(e, DuelStarted) for e in events) <= len(paired)


def run_simulation(first_seed: int, count: int) -> Coverage:
    cov = Coverage()
    for seed in range(first_seed, first_seed + count):
        t, events, ratings = simulate(seed, cov)
        check(t, events, ratings, cov)
    assert cov.counts["tournaments"] == count
    return cov


SITUATIONS = (
    "leave_intro",
    "leave_bye",
    "bye",
    "timeout",
    "reconnect",
    "draw",
    "skip",
    "everyone_out_together",
    "table_checked",
)


def _chunk(bounds: tuple[int, int]) -> Counter[str]:
    return run_simulation(bounds[0], bounds[1]).counts


def test_random_tournaments_keep_every_invariant() -> None:
    """10,000 seeded random tournaments (wins, draws, skips, leavers, disconnects); on
    every one: lives never negative, the tournament ends within bounded steps, places form a
    valid competition ranking with leavers below their round (rulings 2, 3), each player placed
    once, rating changes equal ruling 1 of the final places (the rules page table for an equal
    lobby with distinct places) and sum to zero within rounding, no secret repeats (ruling 5),
    every bye to an eligible player with the fewest byes so far (ruling 4).
    Chunks run in parallel processes; any failing invariant fails the test."""
    workers = max(1, min(os.cpu_count() or 1, 4))
    size = -(-TOURNAMENTS // (workers * 4))
    chunks = [(k, min(size, SEED + TOURNAMENTS - k)) for k in range(SEED, SEED + TOURNAMENTS, size)]
    total: Counter[str] = Counter()
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        for counts in pool.map(_chunk, chunks):
            total.update(counts)
    assert total["tournaments"] == TOURNAMENTS
    if TOURNAMENTS >= 300:
        # the run really exercised every situation it claims to
        for situation in SITUATIONS:
            assert total[situation] > 0, (situation, total)
