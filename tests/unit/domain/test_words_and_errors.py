"""Unit tests: checking a typed guess (shared/domain/words.py) and the domain's errors
(shared/domain/errors.py): what a player is told, and in which order (ruling 5, ruling 12)."""

from __future__ import annotations

import pytest

from shared.domain import errors
from shared.domain.errors import (
    DomainError,
    DuelOverError,
    InvalidLettersError,
    NotInWordListError,
    WrongLengthError,
)
from shared.domain.languages import get_language
from shared.domain.words import AllowedWords, check_guess

ALLOWED = {"crane", "straße", "niño", "oʻzbek"}


def test_a_guess_is_played_in_its_normalised_form_and_tiles() -> None:
    assert check_guess(get_language("en"), ALLOWED, "  CRANE ", 5) == ("crane", tuple("crane"))
    assert check_guess(get_language("de"), ALLOWED, "STRASSE".replace("SS", "ẞ"), 6) == (
        "straße",
        tuple("straße"),
    )
    assert check_guess(get_language("uz"), ALLOWED, "O'zbek", 5) == (
        "oʻzbek",
        ("oʻ", "z", "b", "e", "k"),
    )


@pytest.mark.parametrize("raw", ["", "   ", "cr4ne", "crané!", "кран"])
def test_letters_outside_the_alphabet_are_refused_first(raw: str) -> None:
    """Invalid letters are named before a wrong length: "cr4ne" is not "a 5-letter word"."""
    with pytest.raises(
        InvalidLettersError, match=r"^use only the letters of the English alphabet$"
    ):
        check_guess(get_language("en"), ALLOWED, raw, 4)


def test_a_wrong_length_is_refused_before_the_word_list() -> None:
    with pytest.raises(WrongLengthError, match=r"^the word has 4 letters$"):
        check_guess(get_language("en"), ALLOWED, "crane", 4)
    # Uzbek counts tiles: oʻzbek is 5 tiles, not 6 characters
    with pytest.raises(WrongLengthError, match=r"^the word has 6 letters$"):
        check_guess(get_language("uz"), ALLOWED, "oʻzbek", 6)


def test_a_word_not_in_the_list_is_refused() -> None:
    with pytest.raises(NotInWordListError, match=r"^not in the word list$"):
        check_guess(get_language("en"), ALLOWED, "zzzzz", 5)


def test_allowed_words_judge_a_guess_against_the_words_of_its_length() -> None:
    """The value the services hand the domain: a language and its words by length; a length
    it has no words for allows none."""
    words = AllowedWords(get_language("en"), {5: frozenset({"crane"}), 4: frozenset({"cran"})})
    assert words.check(" Crane", 5) == ("crane", tuple("crane"))
    with pytest.raises(NotInWordListError, match=r"^not in the word list$"):
        words.check("cranf", 5)
    with pytest.raises(WrongLengthError, match=r"^the word has 4 letters$"):
        words.check("crane", 4)
    with pytest.raises(InvalidLettersError):
        words.check("cr4ne", 5)
    with pytest.raises(NotInWordListError):
        AllowedWords(get_language("en"), {}).check("crane", 5)


def test_an_error_without_a_message_says_its_docstrings_first_line() -> None:
    """A refusal raised bare tells its own description (the class docstring's first line);
    one raised with a message tells that message. The code is the class's stable code."""
    bare = DuelOverError()
    assert bare.message == "The duel is already over."
    assert str(bare) == "The duel is already over."
    assert bare.code == "duel_over"
    told = DuelOverError("duel t1.1.1 is over")
    assert (told.message, str(told)) == ("duel t1.1.1 is over", "duel t1.1.1 is over")
    multi = errors.TurnOverError()
    assert multi.message == (
        "The guess reached the server (API Gateway's receive time) at or after the player's turn"
    )
    plain = DomainError()
    assert plain.code == "rule_violation"
    assert (
        plain.message
        == "Base of every rule refusal. ``code`` is the stable wire code (see shared/protocol)."
    )


def test_an_error_without_a_docstring_says_its_code() -> None:
    class UndocumentedError(DomainError):
        code = "undocumented"

    assert UndocumentedError.__doc__ is None
    assert (UndocumentedError().message, str(UndocumentedError())) == ("undocumented",) * 2
