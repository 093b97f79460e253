"""Adapters layer: ``WordListLexicon`` — the committed word lists (``wordlists``) behind the
services' ``Lexicon`` port. Lists load lazily, once per process and language."""

from __future__ import annotations

from collections.abc import Sequence

from shared.domain.languages import Language, get_language
from wordlists import load_word_list


class _Secrets:
    def __init__(self, language: Language) -> None:
        self._language = language
        self._lists = load_word_list(language.code)

    def answers(self, length: int) -> Sequence[str]:
        return self._lists.answers.get(length, ())

    def tiles(self, word: str) -> tuple[str, ...]:
        return self._language.tiles(word)


class WordListLexicon:
    def language(self, code: str) -> Language:
        return get_language(code)

    def secrets(self, code: str) -> _Secrets:
        return _Secrets(get_language(code))

    def allowed(self, code: str, length: int) -> frozenset[str]:
        return load_word_list(code).allowed.get(length, frozenset())

    def display(self, code: str, word: str) -> str | None:
        return load_word_list(code).display.get(word)
