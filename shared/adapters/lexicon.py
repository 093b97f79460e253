"""Adapters layer: ``WordListLexicon`` — the committed word lists (``wordlists/``) behind the
services' ``Lexicon`` port, and their loader (``load_word_list``: pure file reading, no I/O at
import). The lists are generated offline by ``python -m wordlists.build`` and committed; this
module only reads them, lazily, once per process and language (``functools.cache``)."""

from __future__ import annotations

import functools
import gc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from shared.lazy import lazy_module

if TYPE_CHECKING:
    import wordlists
    from shared.domain import languages, words
    from shared.domain.languages import Language
else:
    # the language table, the guess rules and the lists' folder: imported by the first word a
    # message needs
    languages = lazy_module("shared.domain.languages")
    words = lazy_module("shared.domain.words")
    wordlists = lazy_module("wordlists")

__all__ = ["LENGTHS", "WordList", "WordListLexicon", "load_word_list"]

LENGTHS: tuple[int, ...] = (4, 5, 6)


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
    languages.get_language(language)  # raises UnknownLanguageError
    # Building ~100k small strings would trigger several full GC passes; none are needed.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(language)
    finally:
        if enabled:
            gc.enable()


def _load(language: str) -> WordList:
    folder = wordlists.FOLDER / language
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


class _Secrets:
    """A ``SecretSource``: the lists load on the first ``answers`` (only a decision that opens
    a round or a duel deals a word; a disconnect, a leave or a skip never needs them)."""

    def __init__(self, language: Language) -> None:
        self._language = language

    def answers(self, length: int) -> Sequence[str]:
        return load_word_list(self._language.code).answers.get(length, ())

    def tiles(self, word: str) -> tuple[str, ...]:
        return self._language.tiles(word)


class WordListLexicon:
    def language(self, code: str) -> Language:
        return languages.get_language(code)

    def secrets(self, code: str) -> _Secrets:
        return _Secrets(languages.get_language(code))

    def allowed_words(self, code: str) -> words.AllowedWords:
        return words.AllowedWords(languages.get_language(code), load_word_list(code).allowed)

    def allowed(self, code: str, length: int) -> frozenset[str]:
        return load_word_list(code).allowed.get(length, frozenset())

    def display(self, code: str, word: str) -> str | None:
        return load_word_list(code).display.get(word)
