"""Test helpers for the core domain tests: a cheap fake word source and tournament drivers.

A plain module (not conftest.py, see STYLE.md: fakes do not live in conftest). Everything here
drives ``shared/domain`` directly with a seeded ``random.Random``; no clocks, no I/O.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import cache

from shared.domain.duel import Duel
from shared.domain.events import Event
from shared.domain.tournament import Dealer, Entrant, Tournament

LETTERS = "abcdefghijklmnopqrstuvwxy"
"""Secrets use a..y only, so a run of ``z`` is a guess that can never be the secret."""

WORDS_PER_LENGTH = 300


@cache
def _fake_answers(length: int, count: int) -> tuple[str, ...]:
    rng = random.Random(f"fake-words-{length}")
    words: set[str] = set()
    while len(words) < count:
        words.add("".join(rng.choice(LETTERS) for _ in range(length)))
    return tuple(sorted(words))


class FakeWords:
    """A ``SecretSource`` with ``count`` generated words per length; one character is one tile."""

    def __init__(self, count: int = WORDS_PER_LENGTH) -> None:
        self.count = count

    def answers(self, length: int) -> Sequence[str]:
        return _fake_answers(length, self.count)

    def tiles(self, word: str) -> tuple[str, ...]:
        return tuple(word)


class TinyWords:
    """A ``SecretSource`` with an explicit list of words per length (for exhaustion tests)."""

    def __init__(self, by_length: dict[int, list[str]]) -> None:
        self.by_length = {k: sorted(v) for k, v in by_length.items()}

    def answers(self, length: int) -> Sequence[str]:
        return self.by_length.get(length, [])

    def tiles(self, word: str) -> tuple[str, ...]:
        return tuple(word)


FAKE_WORDS = FakeWords()


def make_dealer(
    seed: int | str = 0, *, turn_ms: int = 30_000, intro_ms: int = 6_000, words: object = None
) -> Dealer:
    """A dealer with a seeded rng and the shared fake word source (defaults: the real clocks)."""
    return Dealer(
        rng=random.Random(seed),
        words=FAKE_WORDS if words is None else words,  # type: ignore[arg-type]
        turn_ms=turn_ms,
        intro_ms=intro_ms,
    )


def player_ids(n: int = 8) -> list[str]:
    return [f"p{i}" for i in range(1, n + 1)]


def entrants(n: int = 8, ratings: Sequence[int] | None = None) -> list[Entrant]:
    ratings = list(ratings) if ratings is not None else [1000] * n
    return [
        Entrant(player_id=pid, nickname=f"nick{pid}", rating=r)
        for pid, r in zip(player_ids(n), ratings, strict=True)
    ]


def start(
    n: int = 8, seed: int | str = 0, *, ratings: Sequence[int] | None = None, now_ms: int = 0
) -> tuple[Tournament, Dealer, list[Event]]:
    """A tournament with ``n`` entrants started at ``now_ms``, in round 1's intro."""
    dealer = make_dealer(seed)
    t, events = Tournament.start("t1", "en", entrants(n, ratings), now_ms, dealer)
    return t, dealer, events


def wrong_word(duel: Duel) -> str:
    """A guess of the right length that is never the secret."""
    return "z" * duel.length


def begin_round(t: Tournament, dealer: Dealer) -> tuple[Tournament, list[Event], int]:
    """End the intro: expire at the intro deadline. Returns (t, events, now_ms)."""
    now = t.intro_deadline_ms
    t, events = t.expire(now, dealer)
    return t, events, now


def play(
    t: Tournament, dealer: Dealer, player: str, word: str, now_ms: int
) -> tuple[Tournament, list[Event]]:
    """The player guesses ``word`` in their current duel (expire(now_ms) first, as services do)."""
    t, events = t.expire(now_ms, dealer)
    duel = t.duel_of(player)
    assert duel is not None, f"{player} has no duel"
    t, more = t.guess(player, duel.duel_id, word, tuple(word), now_ms, dealer)
    return t, events + more


def decide(
    t: Tournament,
    dealer: Dealer,
    duel_id: str,
    winner: str | None,
    now_ms: int,
) -> tuple[Tournament, list[Event], int]:
    """Finish one duel of the current (started) round: ``winner`` solves it, or None = a draw.

    Every row is a guess 1 ms apart (no skips). Returns (t, events, now_ms after the last row).
    """
    events: list[Event] = []
    duel = t.duel(duel_id)
    while not duel.over:
        mover = duel.next_player
        assert mover is not None
        word = duel.word if mover == winner else wrong_word(duel)
        now_ms += 1
        t, more = t.guess(mover, duel_id, word, tuple(word), now_ms, dealer)
        events += more
        if t.round_no != int(duel_id.rsplit(".", 2)[1]) or t.over:
            # the round closed with this duel; the finished duel is in the events
            break
        duel = t.duel(duel_id)
    return t, events, now_ms


def play_round(
    t: Tournament, dealer: Dealer, outcomes: dict[frozenset[str], str | None]
) -> tuple[Tournament, list[Event]]:
    """Play the current round from its intro: each pair's outcome is its winner or None (draw).

    Pairs not in ``outcomes`` are won by the alphabetically first player.
    """
    t, events, now = begin_round(t, dealer)
    for duel in list(t.duels):
        key = frozenset(duel.players)
        winner = outcomes.get(key, min(duel.players))
        t, more, now = decide(t, dealer, duel.duel_id, winner, now)
        events += more
    return t, events


def events_of(events: Sequence[Event], kind: type) -> list:  # type: ignore[type-arg]
    return [e for e in events if isinstance(e, kind)]


Policy = Callable[[Tournament, Duel], "str | None"]
"""Decides a started duel: the winner's id, or None for a draw."""


def lower_id_wins(t: Tournament, duel: Duel) -> str | None:
    return min(duel.players)


def run(
    t: Tournament, dealer: Dealer, policy: Policy = lower_id_wins, max_rounds: int = 50
) -> tuple[Tournament, list[Event]]:
    """Play whole rounds with ``policy`` until the tournament is over."""
    events: list[Event] = []
    for _ in range(max_rounds):
        if t.over:
            return t, events
        t, more, now = begin_round(t, dealer)
        events += more
        for duel in list(t.duels):
            if t.over or duel.duel_id not in {d.duel_id for d in t.duels}:
                break
            current = t.duel(duel.duel_id)
            if current.over:
                continue
            t, more, now = decide(t, dealer, duel.duel_id, policy(t, current), now)
            events += more
    raise AssertionError("tournament did not end")
