"""Word lists for the 13 game languages: the runtime loader (pure file reading, no I/O at import).

The lists are generated offline by ``python -m wordlists.build`` and committed; this module only
reads them, lazily, once per process and language (``functools.cache``).
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from shared.domain.errors import UnknownLanguageError
from shared.domain.languages import LANGUAGES

__all__ = ["LENGTHS", "WordList", "load_word_list"]

LENGTHS: tuple[int, ...] = (4, 5, 6)
_HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class WordList:
    """One language's answers and allowed guesses, by length in tiles."""

    language: str
    answers: Mapping[int, tuple[str, ...]]
    """Length in tiles -> sorted play forms a secret may be drawn from."""
    allowed: Mapping[int, frozenset[str]]
    """Length in tiles -> every play form accepted as a guess (answers included)."""
    display: Mapping[str, str]
    """Play form -> display form (accents, ё, capitalised German nouns), only where they differ."""


def _read(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@functools.cache
def load_word_list(language: str) -> WordList:
    """The committed word list of ``language``; raises ``UnknownLanguageError`` for others."""
    if language not in LANGUAGES:
        raise UnknownLanguageError(f"unknown language {language!r}")
    # Building ~100k small strings would trigger several full GC passes; none are needed.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(language)
    finally:
        if enabled:
            gc.enable()


def _load(language: str) -> WordList:
    folder = _HERE / language
    answers: dict[int, tuple[str, ...]] = {}
    allowed: dict[int, frozenset[str]] = {}
    display: dict[str, str] = {}
    for n in LENGTHS:
        plays = []
        for line in _read(folder / f"answers-{n}.txt"):
            play, tab, shown = line.partition("\t")
            plays.append(play)
            if tab:
                display[play] = shown
        answers[n] = tuple(plays)
        allowed[n] = frozenset(_read(folder / f"allowed-{n}.txt"))
    return WordList(
        language=language,
        answers=MappingProxyType(answers),
        allowed=MappingProxyType(allowed),
        display=MappingProxyType(display),
    )
