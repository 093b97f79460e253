"""Domain layer: Wordle scoring of one guess against the secret.

Ruling 12 (RULINGS.md): greens first, then yellows left to right from the answer's letters not
already used by a green or an earlier yellow. Words are sequences of *tiles*: a ``str`` (one tile
per character) or a tuple of tiles for languages with multi-character tiles (Uzbek ``oʻ``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from enum import StrEnum

from shared.domain.errors import WrongLengthError


class Mark(StrEnum):
    """The mark of one tile of a guess (wire values are the enum values)."""

    CORRECT = "correct"  # right letter, right place (green)
    PRESENT = "present"  # letter in the answer elsewhere, not used up (yellow)
    ABSENT = "absent"  # not in the answer, or all its copies used up (grey)


def score(guess: Sequence[str], answer: Sequence[str]) -> tuple[Mark, ...]:
    """Mark each tile of ``guess`` against ``answer``.

    Args:
        guess: the guessed tiles (already normalised for the language).
        answer: the secret's tiles, same length.

    Returns:
        one ``Mark`` per tile of ``guess``, in order.

    Raises:
        WrongLengthError: ``guess`` and ``answer`` differ in length (in tiles).

    Source: ruling 12 — greens first, then yellows left to right from the unused letters.
    """
    if len(guess) != len(answer):
        raise WrongLengthError(f"guess has {len(guess)} tiles, the answer has {len(answer)}")
    marks = [Mark.ABSENT] * len(guess)
    unused: Counter[str] = Counter()
    for i, (g, a) in enumerate(zip(guess, answer, strict=True)):
        if g == a:
            marks[i] = Mark.CORRECT
        else:
            unused[a] += 1
    for i, g in enumerate(guess):
        if marks[i] is Mark.ABSENT and unused[g] > 0:
            marks[i] = Mark.PRESENT
            unused[g] -= 1
    return tuple(marks)


def is_solved(marks: Sequence[Mark]) -> bool:
    """True when every tile is ``correct`` (the guess equals the answer)."""
    return all(m is Mark.CORRECT for m in marks)
