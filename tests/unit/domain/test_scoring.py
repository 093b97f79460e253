"""Unit tests: Wordle scoring of one guess (shared/domain/scoring.py, ruling 12).

Named examples first, then hypothesis properties. Marks are written as strings of
``c`` (correct), ``p`` (present) and ``a`` (absent) to keep the examples readable.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.domain.errors import DomainError, WrongLengthError
from shared.domain.scoring import Mark, is_solved, score

_SHORT = {Mark.CORRECT: "c", Mark.PRESENT: "p", Mark.ABSENT: "a"}


def marks(guess: str | tuple[str, ...], answer: str | tuple[str, ...]) -> str:
    return "".join(_SHORT[m] for m in score(guess, answer))


# ------------------------------------------------------------------ named examples (ruling 12)
def test_mark_wire_values() -> None:
    """``Mark`` is a str Enum with the wire values correct / present / absent."""
    assert [m.value for m in Mark] == ["correct", "present", "absent"]
    assert Mark.CORRECT == "correct"
    assert isinstance(Mark.PRESENT, str)


@pytest.mark.parametrize(
    ("guess", "answer", "expected"),
    [
        ("crane", "crane", "ccccc"),
        ("xxxxx", "crane", "aaaaa"),
        ("nacre", "crane", "ppppc"),
        # ruling 12: greens first — the green "e" at index 4 uses the answer's only "e",
        # so the earlier "e"s of the guess get no yellow.
        # "speed" vs "abide": one "e" in the answer, so only the first "e" is yellow
        ("speed", "abide", "aapap"),
        # "eerie" vs "there": the last "e" is green; the answer's other "e" goes to the first
        # "e" of the guess, the second "e" gets nothing
        ("eerie", "there", "papac"),
        # both answer e's are taken by greens, so the guess's first "e" is absent
        ("geese", "there", "aacac"),
        ("llama", "hello", "ppaaa"),
        ("hello", "llama", "aappa"),
        ("abbey", "babes", "ppcca"),
    ],
)
def test_scoring_examples_with_repeated_letters(guess: str, answer: str, expected: str) -> None:
    """Ruling 12: greens first, then yellows left to right from the answer's unused letters."""
    assert marks(guess, answer) == expected


def test_green_takes_the_letter_before_an_earlier_yellow() -> None:
    """Ruling 12: "greens first" — an earlier duplicate does not steal the green's letter."""
    # answer has one "a" at index 2; the guess's "a" at 0 must be absent, the one at 2 correct
    assert marks("axa", "bba") == "aac"
    assert marks("axab", "bbaz") == "aacp"


def test_yellows_are_given_left_to_right() -> None:
    """Ruling 12: yellows left to right — with one spare copy, only the leftmost gets it."""
    assert marks("ooxx", "yyyo") == "paaa"
    assert marks("xoox", "oyyy") == "apaa"


def test_multi_character_tiles() -> None:
    """Ruling 12: words may be tuples of multi-character tiles (Uzbek oʻ, sh, ch)."""
    answer = ("oʻ", "r", "i", "k")
    assert marks(("oʻ", "r", "i", "k"), answer) == "cccc"
    # "o" alone is a different tile from "oʻ"
    assert marks(("o", "r", "i", "k"), answer) == "accc"
    assert marks(("k", "oʻ", "sh", "r"), answer) == "ppap"
    assert is_solved(score(answer, answer))


def test_multi_character_tile_counts_as_one_for_length() -> None:
    """Length is counted in tiles: a 4-tile answer rejects the 5-character string form."""
    with pytest.raises(WrongLengthError):
        score("oʻrik", ("oʻ", "r", "i", "k"))


@pytest.mark.parametrize(("guess", "answer"), [("four", "fives"), ("sixsix", "four"), ("", "a")])
def test_unequal_lengths_raise_wrong_length_error(guess: str, answer: str) -> None:
    """Unequal lengths raise a typed error (WrongLengthError, code wrong_length)."""
    with pytest.raises(WrongLengthError) as info:
        score(guess, answer)
    assert isinstance(info.value, DomainError)
    assert isinstance(info.value, ValueError)
    assert info.value.code == "wrong_length"


def test_is_solved_only_when_all_correct() -> None:
    """Rules page "Turns and the clock": the word is solved when every tile is correct."""
    assert is_solved((Mark.CORRECT,) * 5)
    assert not is_solved((Mark.CORRECT,) * 4 + (Mark.PRESENT,))
    assert not is_solved(score("nacre", "crane"))


# ------------------------------------------------------------------ properties
_ALPHABET = "abcd"  # few letters, so repeated letters are the common case


@st.composite
def guess_and_answer(draw: st.DrawFn) -> tuple[str, str]:
    n = draw(st.integers(min_value=1, max_value=7))
    word = st.text(alphabet=_ALPHABET, min_size=n, max_size=n)
    return draw(word), draw(word)


def _reference_score(guess: str, answer: str) -> list[Mark]:
    """An independent statement of ruling 12, written differently from the module."""
    result = [Mark.CORRECT if g == a else None for g, a in zip(guess, answer, strict=True)]
    spare = Counter(a for a, r in zip(answer, result, strict=True) if r is None)
    out: list[Mark] = []
    for g, r in zip(guess, result, strict=True):
        if r is not None:
            out.append(r)
        elif spare[g]:
            spare[g] -= 1
            out.append(Mark.PRESENT)
        else:
            out.append(Mark.ABSENT)
    return out


@given(guess_and_answer())
def test_property_all_correct_iff_guess_equals_answer(pair: tuple[str, str]) -> None:
    """Property: every mark is correct exactly when guess == answer."""
    guess, answer = pair
    assert is_solved(score(guess, answer)) == (guess == answer)
    assert is_solved(score(answer, answer))


@given(guess_and_answer())
def test_property_correct_marks_are_exactly_positional_matches(pair: tuple[str, str]) -> None:
    """Property (ruling 12, greens first): tile i is correct iff guess[i] == answer[i]."""
    guess, answer = pair
    result = score(guess, answer)
    assert len(result) == len(guess)
    for i, m in enumerate(result):
        assert (m is Mark.CORRECT) == (guess[i] == answer[i])


@given(guess_and_answer())
def test_property_letter_marks_never_exceed_answer_count(pair: tuple[str, str]) -> None:
    """Property: for each letter, correct + present <= its count in the answer, and in fact
    equals min(count in guess, count in answer) (every spare copy is handed out)."""
    guess, answer = pair
    result = score(guess, answer)
    used: Counter[str] = Counter(
        g for g, m in zip(guess, result, strict=True) if m is not Mark.ABSENT
    )
    for letter in set(guess) | set(answer):
        assert used[letter] <= answer.count(letter)
        assert used[letter] == min(guess.count(letter), answer.count(letter))


@given(guess_and_answer())
def test_property_yellows_left_to_right_match_reference(pair: tuple[str, str]) -> None:
    """Property (ruling 12): the marks equal an independent greens-then-yellows reference."""
    guess, answer = pair
    assert list(score(guess, answer)) == _reference_score(guess, answer)


@given(
    st.text(alphabet=_ALPHABET + "xyz", min_size=1, max_size=7).flatmap(
        lambda answer: st.tuples(st.just(answer), st.permutations(answer))
    )
)
def test_property_permutation_of_answer_is_never_absent(pair: tuple[str, list[str]]) -> None:
    """Property: every tile of a permutation of the answer is correct or present."""
    answer, perm = pair
    guess = "".join(perm)
    assert Mark.ABSENT not in score(guess, answer)


@given(
    st.lists(st.sampled_from(["oʻ", "gʻ", "sh", "ch", "a", "o"]), min_size=1, max_size=6).flatmap(
        lambda answer: st.tuples(
            st.just(tuple(answer)),
            st.lists(
                st.sampled_from(["oʻ", "gʻ", "sh", "ch", "a", "o", "s"]),
                min_size=len(answer),
                max_size=len(answer),
            ).map(tuple),
        )
    )
)
def test_property_tiles_behave_like_letters(
    pair: tuple[tuple[str, ...], tuple[str, ...]],
) -> None:
    """Property: scoring tuples of multi-character tiles equals scoring them as single letters."""
    answer, guess = pair
    code = {t: chr(ord("A") + i) for i, t in enumerate(sorted(set(answer) | set(guess)))}
    as_letters = "".join(code[t] for t in guess), "".join(code[t] for t in answer)
    assert score(guess, answer) == score(*as_letters)
