"""Adapters layer: ``WordListLexicon`` — the committed word lists (``wordlists``) behind the
services' ``Lexicon`` port. Lists load lazily, once per process and language."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from shared.lazy import lazy_module

if TYPE_CHECKING:
    import wordlists
    from shared.domain import languages
    from shared.domain.languages import Language
else:
    # the language table and the list loader: imported by the first word a message needs
    languages = lazy_module("shared.domain.languages")
    wordlists = lazy_module("wordlists")


class _Secrets:
    """A ``SecretSource``: the lists load on the first ``answers`` (only a decision that opens
    a round or a duel deals a word; a disconnect, a leave or a skip never needs them)."""

    def __init__(self, language: Language) -> None:
        self._language = language

    def answers(self, length: int) -> Sequence[str]:
        return wordlists.load_word_list(self._language.code).answers.get(length, ())

    def tiles(self, word: str) -> tuple[str, ...]:
        return self._language.tiles(word)


class WordListLexicon:
    def language(self, code: str) -> Language:
        return languages.get_language(code)

    def secrets(self, code: str) -> _Secrets:
        return _Secrets(languages.get_language(code))

    def allowed(self, code: str, length: int) -> frozenset[str]:
        return wordlists.load_word_list(code).allowed.get(length, frozenset())

    def display(self, code: str, word: str) -> str | None:
        return wordlists.load_word_list(code).display.get(word)
