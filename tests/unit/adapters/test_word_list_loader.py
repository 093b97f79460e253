"""The lexicon adapter's word-list loader: frozensets, sorted tuples, display forms, caching,
unknown languages."""

from __future__ import annotations

import pytest

from shared.adapters.lexicon import WordList, load_word_list
from shared.domain.errors import UnknownLanguageError
from shared.domain.languages import LANGUAGE_CODES


@pytest.mark.parametrize("code", LANGUAGE_CODES)
def test_loader_returns_frozensets_and_sorted_answers(code: str) -> None:
    words = load_word_list(code)
    assert isinstance(words, WordList)
    assert words.language == code
    assert set(words.answers) == set(words.allowed) == {4, 5, 6}
    for n in (4, 5, 6):
        assert isinstance(words.allowed[n], frozenset)
        assert isinstance(words.answers[n], tuple)
        assert list(words.answers[n]) == sorted(words.answers[n])
        assert set(words.answers[n]) <= words.allowed[n]
    answers = {play for n in (4, 5, 6) for play in words.answers[n]}
    assert set(words.display) <= answers


def test_loader_is_cached_once_per_language() -> None:
    assert load_word_list("en") is load_word_list("en")
    assert load_word_list("ru") is not load_word_list("uk")


def test_loader_result_is_read_only() -> None:
    words = load_word_list("de")
    with pytest.raises(TypeError):
        words.allowed[4] = frozenset()  # type: ignore[index]


def test_display_forms_are_kept_where_they_differ() -> None:
    fr = load_word_list("fr")
    accented = {play: shown for play, shown in fr.display.items() if shown != play}
    assert accented, "French answers should carry accented display forms"
    assert all(play.isascii() for play in accented)
    de = load_word_list("de")
    assert any(shown[:1].isupper() for shown in de.display.values()), "German nouns capitalised"


def test_everyday_words_are_answers() -> None:
    samples = {
        "en": "house",
        "de": "haus",
        "es": "perro",
        "fr": "table",
        "it": "amico",
        "nl": "water",
        "pl": "woda",
        "pt": "porta",
        "ru": "книга",
        "uk": "книга",
    }
    for code, word in samples.items():
        words = load_word_list(code)
        n = len(word)
        assert word in words.answers[n], (code, word)


def test_unknown_language_is_refused() -> None:
    with pytest.raises(UnknownLanguageError):
        load_word_list("xx")


def test_the_lexicons_secret_source_loads_the_lists_on_the_first_word_dealt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every tournament decision gets a ``Dealer``; only one that opens a round or a duel deals
    a word. A disconnect, a leave or a skip must not load the language's ~100k words."""
    from shared.adapters import lexicon
    from shared.adapters.lexicon import WordListLexicon

    loads: list[str] = []

    def counted(code: str) -> WordList:
        loads.append(code)
        return load_word_list(code)

    monkeypatch.setattr(lexicon, "load_word_list", counted)
    source = WordListLexicon().secrets("en")
    assert source.tiles("crane") == ("c", "r", "a", "n", "e")
    assert loads == []
    assert source.answers(5) == load_word_list("en").answers[5]
    assert loads == ["en"]
    with pytest.raises(UnknownLanguageError):
        WordListLexicon().secrets("xx")  # an unknown language still fails at once
