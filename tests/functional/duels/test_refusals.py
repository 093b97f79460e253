"""Engine: guesses the rules refuse (ruling 5, ruling 12, ruling 7), through the real handler.

Each refusal has a stable code, is sent to the guesser only, and changes nothing: the
tournament item keeps its version, no other message goes out, no timer is scheduled, and the
turn and its clock run on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.functional.driver import Game, peek_raw, valid_words, wrong_word


@dataclass
class World:
    """Three tournaments in one backend, each frozen at a moment worth refusing guesses in:
    ``late`` (someone eliminated, one duel of the round over), ``playing`` (turn 1 of round 1),
    ``intro`` (round 1's intro). Refusals change nothing, so the tests share them."""

    backend: Any
    late: Game
    playing: Game
    intro: Game


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """Like the harness's ``backend`` fixture, once per module (three tournaments cost three
    lobby fills; every test below only reads them or is refused)."""
    from moto import mock_aws

    from infra.emulator.testing import Backend

    with pytest.MonkeyPatch.context() as mp, mock_aws():
        for key, value in {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "POWERTOOLS_METRICS_NAMESPACE": "Test",
            "POWERTOOLS_SERVICE_NAME": "wordle-tournament",
        }.items():
            mp.setenv(key, value)
        backend = Backend()
        late = Game.start(backend)
        late.end_intro()
        while not any(not p.alive for p in late.t.players):
            late.play_round(lambda g, d, m: "solve")
            late.end_intro()
        t = late.t  # end one duel whose loser stays alive: a spectator, not an eliminated one
        late.act(
            next(d for d in t.duels if t.player(d.opponent_of(d.next_player)).lives > 1), "solve"
        )
        playing = Game.start(backend)
        playing.end_intro()
        intro = Game.start(backend)
        yield World(backend, late, playing, intro)


@pytest.fixture
def game(world: World) -> Game:
    return world.playing


def refused(game: Game, player, duel_id: str, word: str) -> str:
    """Send the guess; assert nothing changed but one error to the guesser; return its code."""
    backend = game.backend
    before = peek_raw(game.tid)
    raw_before = len(backend.notifier.raw)
    timers_before = backend.clock.pending()
    player.send("guess", duel_id=duel_id, word=word)
    after = peek_raw(game.tid)
    assert after == before  # same version, same state (board, deadlines, lives)
    new = backend.notifier.raw[raw_before:]
    assert [cid for cid, _ in new] == [player.connection_id]
    assert backend.clock.pending() == timers_before
    return player.messages[-1]["code"]


def test_guess_out_of_turn_is_refused(game):
    duel = game.t.duels[0]
    waiting = game.by_id[duel.opponent_of(duel.next_player)]
    assert refused(game, waiting, duel.duel_id, wrong_word(game.backend, "en", duel)) == (
        "not_your_turn"
    )


def test_guess_in_another_duel_is_refused(game):
    mine, theirs = game.t.duels[0], game.t.duels[1]
    mover = game.by_id[mine.next_player]
    word = wrong_word(game.backend, "en", theirs)
    assert refused(game, mover, theirs.duel_id, word) == "not_in_duel"


def test_guess_during_the_intro_is_refused(world):
    game = world.intro
    duel = game.t.duels[0]
    mover = game.by_id[duel.next_player]
    word = wrong_word(world.backend, "en", duel)
    assert refused(game, mover, duel.duel_id, word) == "duel_not_started"


def test_guess_by_a_spectator_and_after_the_duel_ended_is_refused(world):
    game = world.late
    duel = next(d for d in game.t.duels if d.over)
    other = next(d for d in game.t.duels if not d.over)
    winner = game.by_id[duel.winner]
    loser = game.by_id[duel.opponent_of(winner.id)]
    assert game.t.is_spectator(loser.id)
    assert refused(game, loser, duel.duel_id, wrong_word(game.backend, "en", duel)) == ("duel_over")
    assert refused(game, winner, duel.duel_id, duel.word) == "duel_over"
    other_word = wrong_word(game.backend, "en", other)
    assert refused(game, loser, other.duel_id, other_word) == "not_in_duel"


def test_guess_by_an_eliminated_player_is_refused(world):
    game = world.late
    t = game.t
    out = next(p for p in t.players if not p.alive)
    duel = next(d for d in t.duels if not d.over)
    word = wrong_word(game.backend, "en", duel)
    assert refused(game, game.by_id[out.player_id], duel.duel_id, word) == "eliminated"


def test_guess_by_a_connection_outside_the_tournament_is_refused(game, world):
    backend = world.backend
    stranger = backend.player("stranger")
    duel = game.t.duels[0]
    word = wrong_word(backend, "en", duel)
    assert refused(game, stranger, duel.duel_id, word) == "not_in_tournament"


@pytest.mark.parametrize(
    ("make_word", "code"),
    [
        (lambda words, other, n: other[0], "wrong_length"),
        (lambda words, other, n: "q" * n, "not_in_word_list"),
        (lambda words, other, n: "cr4ne5"[:n], "invalid_letters"),
        (lambda words, other, n: "слово!"[:n], "invalid_letters"),
        (lambda words, other, n: "", "invalid_letters"),
    ],
    ids=["wrong_length", "not_a_word", "digits", "cyrillic_in_english", "empty"],
)
def test_invalid_words_are_refused_and_the_turn_runs_on(game, make_word, code):
    duel = game.t.duels[0]
    mover = game.by_id[duel.next_player]
    n = duel.length
    other_length = 4 if n != 4 else 5
    word = make_word(
        valid_words(game.backend, "en", n), valid_words(game.backend, "en", other_length), n
    )
    assert refused(game, mover, duel.duel_id, word) == code
    # still the same player's turn, with the same deadline (the item is unchanged)
    d = game.t.duel(duel.duel_id)
    assert d.turn_deadline_ms == duel.turn_deadline_ms
    assert d.next_player == mover.id


@pytest.mark.parametrize(
    "forge",
    [
        lambda tid: "nonsense",
        lambda tid: "zzz.1.1",
        lambda tid: f"{tid}.9.1",
        lambda tid: f"{tid}.1.9",
        lambda tid: f"{tid}.1.1.1",
        lambda tid: f".{tid}.1",
    ],
    ids=["no_dots", "unknown_tournament", "future_round", "no_such_index", "extra_part", "empty"],
)
def test_forged_duel_ids_are_refused(game, forge):
    duel = game.t.duels[0]
    mover = game.by_id[duel.next_player]
    word = wrong_word(game.backend, "en", duel)
    assert refused(game, mover, forge(game.tid), word) == "not_in_duel"
