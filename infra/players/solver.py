"""Local runtime: the bots' Wordle solver (pure, no I/O beyond reading the committed word lists).

Words are tuples of *tiles* (``Language.tiles``: Uzbek ``oʻ gʻ sh ch`` are one tile each), so the
same code plays every game language. The solver keeps the words of one length that are consistent
with every row on the shared board — both duelists' rows, skips ignored — and picks:

* with probability ``strength``: the best candidate (an answer-list word when there is one, chosen
  by minimum expected remaining candidates when few are left, else by letter frequency);
* otherwise, half the time a random consistent word, half the time a random valid word.

Scoring here is ruling 12 (greens first, then yellows left to right from the unused letters) and
is checked against ``shared.domain.scoring.score`` by the tests.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from shared.domain.languages import get_language

Tiles = tuple[str, ...]
Marks = tuple[str, ...]

CORRECT = "correct"
PRESENT = "present"
ABSENT = "absent"

_EXACT_LIMIT = 50
"""Candidates at or below this count are ranked by expected remaining candidates (O(n²): 50
answer words take about 9 ms, 120 about 37 ms, time the bots' shared event loop waits through);
more are ranked by letter frequency."""


def pattern(guess: Sequence[str], answer: Sequence[str]) -> Marks:
    """Marks of ``guess`` against ``answer`` (ruling 12); both are tile sequences of one length."""
    n = len(guess)
    marks = [ABSENT] * n
    unused: dict[str, int] = {}
    for i in range(n):
        a = answer[i]
        if guess[i] == a:
            marks[i] = CORRECT
        else:
            unused[a] = unused.get(a, 0) + 1
    for i in range(n):
        if marks[i] is ABSENT:
            g = guess[i]
            left = unused.get(g, 0)
            if left:
                marks[i] = PRESENT
                unused[g] = left - 1
    return tuple(marks)


def is_consistent(word: Tiles, rows: Iterable[tuple[Tiles, Marks]]) -> bool:
    """Whether ``word`` could be the secret given these (tiles, marks) rows."""
    return all(pattern(tiles, word) == marks for tiles, marks in rows)


@dataclass(frozen=True)
class Vocabulary:
    """One language's words of one length, as tiles."""

    language: str
    length: int
    allowed: tuple[Tiles, ...]
    """Every valid guess, sorted."""
    answers: frozenset[Tiles]
    """Words a secret may be drawn from (a subset of ``allowed`` in practice)."""

    @functools.cached_property
    def allowed_set(self) -> frozenset[Tiles]:
        return frozenset(self.allowed)


@functools.cache
def vocabulary(language: str, length: int) -> Vocabulary:
    """The committed word list of ``language`` for ``length`` tiles (cached per process)."""
    from shared.adapters.lexicon import load_word_list  # deferred: reading the lists costs ~50 ms

    lang = get_language(language)
    words = load_word_list(language)
    answers = frozenset(lang.tiles(w) for w in words.answers.get(length, ()))
    allowed = {lang.tiles(w) for w in words.allowed.get(length, ())}
    allowed |= answers
    return Vocabulary(language, length, tuple(sorted(allowed)), answers)


def _frequency_rank(words: Sequence[Tiles], pool: Sequence[Tiles]) -> Tiles:
    """The word of ``words`` whose distinct tiles are most frequent in ``pool`` (ties: first)."""
    positional: Counter[tuple[int, str]] = Counter()
    presence: Counter[str] = Counter()
    for w in pool:
        positional.update(enumerate(w))
        presence.update(set(w))

    def value(w: Tiles) -> float:
        seen: set[str] = set()
        total = 0.0
        for i, t in enumerate(w):
            total += positional[(i, t)] * 0.5
            if t not in seen:
                total += presence[t]
                seen.add(t)
        return total

    return max(words, key=value)


def _expected_remaining(guess: Tiles, pool: Sequence[Tiles]) -> float:
    buckets = Counter(pattern(guess, secret) for secret in pool)
    # Solving now (the all-correct bucket) leaves nothing to find: it counts as 0 remaining.
    buckets.pop(tuple([CORRECT] * len(guess)), None)
    return sum(c * c for c in buckets.values()) / len(pool)


def best_guess(candidates: Sequence[Tiles], answers: frozenset[Tiles]) -> Tiles:
    """The strongest consistent guess: answer-list words first, then the best split."""
    pool = [w for w in candidates if w in answers] or list(candidates)
    if len(pool) <= 2:
        return pool[0]
    if len(pool) <= _EXACT_LIMIT:
        return min(pool, key=lambda g: (_expected_remaining(g, pool), g))
    return _frequency_rank(pool, pool)


@functools.cache
def opening(language: str, length: int) -> Tiles:
    """The best first guess for an empty board (cached: it only depends on the list)."""
    vocab = vocabulary(language, length)
    pool = sorted(vocab.answers) or list(vocab.allowed)
    return _frequency_rank(pool, pool)


@functools.cache
def _tile_index(
    language: str, length: int
) -> tuple[dict[tuple[int, str], frozenset[int]], dict[str, frozenset[int]]]:
    """Positions of the whole list's words (indexes into ``allowed``) by (position, tile) and
    by tile anywhere: the sets a row's marks narrow the list with before it is scored."""
    at: dict[tuple[int, str], set[int]] = {}
    has: dict[str, set[int]] = {}
    for k, word in enumerate(vocabulary(language, length).allowed):
        for i, tile in enumerate(word):
            at.setdefault((i, tile), set()).add(k)
            has.setdefault(tile, set()).add(k)
    return (
        {key: frozenset(v) for key, v in at.items()},
        {key: frozenset(v) for key, v in has.items()},
    )


@functools.lru_cache(maxsize=1024)
def _first_row(language: str, length: int, row: tuple[Tiles, Marks]) -> tuple[Tiles, ...]:
    """The words of the whole list consistent with one row, in list order (cached: the first
    row filters the whole list, and both duelists — and every duel opening with the same word
    against a secret giving the same marks — ask for the same one).

    The row's marks first narrow the list through :func:`_tile_index` (a ``correct`` tile is
    at its position, a ``present`` one elsewhere in the word, an ``absent`` one that is not
    also marked in the row is nowhere): a superset of the answer, which :func:`pattern` then
    checks word by word. The whole list is scored only for a row that narrows nothing."""
    tiles, marks = row
    allowed = vocabulary(language, length).allowed
    at, has = _tile_index(language, length)
    empty: frozenset[int] = frozenset()
    narrowing: list[frozenset[int]] = []
    marked = {t for t, m in zip(tiles, marks, strict=True) if m != ABSENT}
    excluded: set[int] = set()
    for i, (tile, mark) in enumerate(zip(tiles, marks, strict=True)):
        if mark == CORRECT:
            narrowing.append(at.get((i, tile), empty))
        elif mark == PRESENT:
            narrowing.append(has.get(tile, empty) - at.get((i, tile), empty))
        elif tile not in marked:
            excluded |= has.get(tile, empty)
    if narrowing:
        narrowing.sort(key=len)
        pool = set(narrowing[0]).intersection(*narrowing[1:])
    else:
        pool = set(range(len(allowed)))
    pool -= excluded
    return tuple(allowed[k] for k in sorted(pool) if pattern(tiles, allowed[k]) == marks)


@dataclass
class DuelSolver:
    """Candidate tracking for one duel; feed it every row of the shared board, then ``choose``."""

    language: str
    length: int
    rejected: set[Tiles] = field(default_factory=set)
    """Words the server refused (``not_in_word_list``): never offered again."""

    def __post_init__(self) -> None:
        self.vocab = vocabulary(self.language, self.length)
        self.rows: list[tuple[Tiles, Marks]] = []
        self.candidates: list[Tiles] = list(self.vocab.allowed)
        self.guessed: set[Tiles] = set()

    def add_row(self, tiles: Sequence[str], marks: Sequence[str]) -> None:
        """Record one scored row (either duelist's); narrows the candidates."""
        row = (tuple(tiles), tuple(str(m) for m in marks))
        if len(row[0]) != self.length or len(row[1]) != self.length:
            return  # not this duel's shape: ignore rather than empty the candidates
        first = not self.rows
        self.rows.append(row)
        self.guessed.add(row[0])
        if first and len(self.candidates) == len(self.vocab.allowed):
            narrowed = list(_first_row(self.language, self.length, row))
        else:
            narrowed = [w for w in self.candidates if pattern(row[0], w) == row[1]]
        if narrowed:
            self.candidates = narrowed
        else:
            # The secret is outside our list (a deployment with another list): no word fits, so
            # keep the previous pool, minus this word, rather than have nothing to play.
            self.candidates = [w for w in self.candidates if w != row[0]] or self.candidates

    def consistent(self) -> list[Tiles]:
        """Candidates still possible, minus words already played or refused."""
        out = [w for w in self.candidates if w not in self.guessed and w not in self.rejected]
        return out or [w for w in self.candidates if w not in self.rejected] or self.candidates

    def choose(self, strength: float, rng: random.Random) -> Tiles:
        """A guess: the best candidate with probability ``strength``, else a weaker one."""
        candidates = self.consistent()
        if rng.random() < strength:
            if not self.rows and not self.rejected:
                first = opening(self.language, self.length)
                if first in candidates:
                    return first
            return best_guess(candidates, self.vocab.answers)
        if rng.random() < 0.5:
            return rng.choice(candidates)
        valid = [w for w in self.vocab.allowed if w not in self.rejected and w not in self.guessed]
        return rng.choice(valid or candidates)

    def invalid_word(self, rng: random.Random) -> Tiles:
        """A word of the right length that is not in the allowed list (for ``--invalid-rate``)."""
        alphabet = get_language(self.language).alphabet
        for _ in range(100):
            word = tuple(rng.choice(alphabet) for _ in range(self.length))
            if word not in self.vocab.allowed_set:
                return word
        return tuple(alphabet[0] for _ in range(self.length))
