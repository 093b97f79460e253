"""Bots: the solver keeps only words consistent with the whole shared board, and solves."""

from __future__ import annotations

import random

import pytest

from infra.players.solver import DuelSolver, is_consistent, opening, pattern, vocabulary
from shared.domain.languages import get_language
from shared.domain.scoring import score


@pytest.mark.parametrize("language", ["en", "uz", "de", "ru"])
def test_pattern_agrees_with_the_domain_scoring(language):
    rng = random.Random(7)
    for length in (4, 5, 6):
        words = vocabulary(language, length).allowed
        for _ in range(300):
            guess, answer = rng.choice(words), rng.choice(words)
            assert pattern(guess, answer) == tuple(m.value for m in score(guess, answer))


def test_pattern_marks_repeated_letters_greens_first_then_left_to_right():
    assert pattern(tuple("speed"), tuple("abide")) == (
        "absent",
        "absent",
        "present",
        "absent",
        "present",
    )
    assert pattern(tuple("eerie"), tuple("there")) == (
        "present",
        "absent",
        "present",
        "absent",
        "correct",
    )


@pytest.mark.parametrize("seed", range(5))
def test_every_candidate_is_consistent_with_both_duelists_rows(seed):
    rng = random.Random(seed)
    vocab = vocabulary("en", 5)
    secret = rng.choice(sorted(vocab.answers))
    solver = DuelSolver("en", 5)
    rows = []
    for _ in range(3):  # "me" and "the opponent" alternate: random words stand for the opponent
        for guess in (solver.choose(1.0, rng), rng.choice(vocab.allowed)):
            marks = pattern(guess, secret)
            solver.add_row(guess, marks)
            rows.append((guess, marks))
    assert secret in solver.candidates
    assert all(is_consistent(w, rows) for w in solver.candidates)
    assert solver.candidates == [w for w in vocab.allowed if is_consistent(w, rows)]


@pytest.mark.parametrize("length", [4, 5, 6])
def test_solves_most_english_words_within_six_guesses(length):
    rng = random.Random(length)
    secrets = rng.sample(sorted(vocabulary("en", length).answers), 40)
    solved = 0
    for secret in secrets:
        solver = DuelSolver("en", length)
        for _ in range(6):
            guess = solver.choose(1.0, rng)
            if guess == secret:
                solved += 1
                break
            solver.add_row(guess, pattern(guess, secret))
    assert solved >= 34  # 85 %: 4-letter English has many near neighbours ("bats", "cats"...)


def test_a_weak_solver_still_plays_valid_words():
    rng = random.Random(3)
    solver = DuelSolver("en", 5)
    for _ in range(30):
        assert solver.choose(0.0, rng) in solver.vocab.allowed_set


def test_invalid_word_has_the_length_but_is_not_in_the_list():
    rng = random.Random(4)
    solver = DuelSolver("uz", 5)
    word = solver.invalid_word(rng)
    assert len(word) == 5
    assert word not in solver.vocab.allowed_set


def test_uzbek_words_are_tiles_and_digraphs_count_as_one():
    uz = get_language("uz")
    vocab = vocabulary("uz", 5)
    with_digraph = [w for w in vocab.allowed if {"sh", "ch", "oʻ", "gʻ"} & set(w)]
    assert with_digraph, "the Uzbek list has words with digraph tiles"
    word = with_digraph[0]
    assert uz.tiles("".join(word)) == word
    assert len("".join(word)) > len(word)


def test_uzbek_solver_narrows_on_digraph_tiles():
    rng = random.Random(11)
    vocab = vocabulary("uz", 5)
    secret = next(w for w in sorted(vocab.answers) if "sh" in w)
    solver = DuelSolver("uz", 5)
    for _ in range(8):
        guess = solver.choose(1.0, rng)
        assert len(guess) == 5
        assert all(t in get_language("uz").alphabet for t in guess)
        if guess == secret:
            break
        solver.add_row(guess, pattern(guess, secret))
        assert secret in solver.candidates
    assert guess == secret


def test_rows_of_another_length_are_ignored():
    solver = DuelSolver("en", 5)
    before = len(solver.candidates)
    solver.add_row(tuple("tale"), ("absent",) * 4)
    assert len(solver.candidates) == before


def test_opening_is_a_real_answer_word():
    for length in (4, 5, 6):
        assert opening("en", length) in vocabulary("en", length).answers


@pytest.mark.parametrize("language", ["en", "ru", "uz", "de"])
@pytest.mark.parametrize("seed", range(3))
def test_the_first_row_filter_keeps_exactly_the_words_the_row_allows(language, seed):
    """The indexed first-row filter (``_first_row``: tile sets, then scoring) returns the same
    words, in list order, as scoring the whole list against the row, repeated tiles included."""
    from infra.players.solver import _first_row

    vocab = vocabulary(language, 5)
    rng = random.Random(seed)
    for _ in range(25):
        guess, secret = rng.choice(vocab.allowed), rng.choice(vocab.allowed)
        row = (guess, pattern(guess, secret))
        scored = tuple(w for w in vocab.allowed if pattern(guess, w) == row[1])
        assert _first_row.__wrapped__(language, 5, row) == scored
        assert secret in scored
