"""Unit tests: one duel as a state machine (shared/domain/duel.py).

Rules page "Turns and the clock" and "Draws", ruling 5 (duels) and ruling 3 (a leaver loses).
The random first mover is drawn by the tournament: see test_tournament.test_random_first_mover.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.domain.duel import TURNS_PER_PLAYER, Duel, DuelId, DuelResult, EndReason
from shared.domain.errors import (
    DomainError,
    DuelNotStartedError,
    DuelOverError,
    NotInDuelError,
    NotYourTurnError,
    WrongLengthError,
)
from shared.domain.scoring import Mark

TURN_MS = 30_000
START = 6_000
SECRET = "crane"


def new_duel(first: str = "a", word: str = SECRET, answer: tuple[str, ...] | None = None) -> Duel:
    return Duel(
        duel_id="t1.1.1",
        players=("a", "b"),
        first=first,
        word=word,
        answer=tuple(word) if answer is None else answer,
        starts_ms=START,
        turn_deadline_ms=START + TURN_MS,
    )


def guess(d: Duel, word: str, now_ms: int, player: str | None = None) -> Duel:
    mover = player or d.next_player
    assert mover is not None
    return d.guess(mover, word, tuple(word), now_ms, TURN_MS)


def test_players_alternate_turns_on_a_shared_board() -> None:
    """Rules page: both players guess the same secret on a shared board and take turns."""
    d = new_duel(first="b")
    assert d.next_player == "b"
    d = guess(d, "slate", START + 1)
    assert d.next_player == "a"
    d = guess(d, "pious", START + 2)
    assert d.next_player == "b"
    assert [r.player for r in d.rows] == ["b", "a"]  # one board holding both players' rows
    assert d.turn == 3


def test_first_correct_guess_wins() -> None:
    """Rules page: "The first player to solve the word wins the duel" (ruling 5)."""
    d = guess(new_duel(), "slate", START + 1)  # a misses
    d = guess(d, SECRET, START + 2)  # b solves
    assert d.over
    assert d.result is DuelResult.WIN
    assert d.winner == "b"
    assert d.loser == "a"
    assert d.reason is EndReason.SOLVED
    assert d.ended_ms == START + 2
    assert d.next_player is None
    assert d.next_deadline() is None
    assert d.rows[-1].marks == (Mark.CORRECT,) * 5


def test_first_mover_solving_at_once_wins() -> None:
    """Rules page: the first solver wins, even on row 1."""
    d = guess(new_duel(first="a"), SECRET, START)
    assert d.winner == "a"
    assert len(d.rows) == 1


def test_draw_after_twelve_rows() -> None:
    """Rules page "Draws": a draw when both used all 6 turns and nobody solved the word."""
    d = new_duel()
    for i in range(11):
        d = guess(d, "slate", START + i)
        assert not d.over
    d = guess(d, "slate", START + 11)
    assert d.over
    assert d.result is DuelResult.DRAW
    assert d.winner is None
    assert d.loser is None
    assert d.reason is EndReason.TURNS_USED
    assert len(d.rows) == 12


def test_each_player_has_up_to_six_turns() -> None:
    """Rules page: each player has up to 6 turns, so the board holds up to 12 rows."""
    assert TURNS_PER_PLAYER == 6
    d = new_duel()
    while not d.over:
        d = guess(d, "slate", START + len(d.rows))
    assert sum(r.player == "a" for r in d.rows) == 6
    assert sum(r.player == "b" for r in d.rows) == 6
    with pytest.raises(DuelOverError):
        guess(d, SECRET, START + 20, player="a")


def test_solving_on_the_twelfth_row_is_a_win_not_a_draw() -> None:
    """Ruling 5: the first correct guess wins, also on the last row."""
    d = new_duel()
    for i in range(11):
        d = guess(d, "slate", START + i)
    d = guess(d, SECRET, START + 11)
    assert d.result is DuelResult.WIN
    assert d.winner == "b"


def test_timed_out_turn_is_a_skip_and_passes() -> None:
    """Rules page: if your time runs out, the turn is skipped: it is used up and passes to your
    opponent (ruling 5). The next turn starts at the old deadline."""
    d = new_duel(first="a")
    deadline = d.turn_deadline_ms
    d = d.skip(TURN_MS)
    assert d.rows[0].skipped
    assert d.rows[0].player == "a"
    assert d.rows[0].word is None
    assert d.rows[0].marks is None
    assert d.rows[0].at_ms == deadline
    assert d.next_player == "b"
    assert d.turn_deadline_ms == deadline + TURN_MS
    assert not d.over


def test_skips_have_no_limit() -> None:
    """Rules page: "Skips have no limit" — five skips, then a solve on the sixth turn wins."""
    d = new_duel(first="a")
    for _ in range(5):
        d = d.skip(TURN_MS)  # a skips
        d = guess(d, "slate", d.turn_deadline_ms - 1)  # b misses
    d = guess(d, SECRET, d.turn_deadline_ms - 1)
    assert d.winner == "a"
    assert sum(r.skipped for r in d.rows) == 5


def test_skips_alone_do_not_lose() -> None:
    """Rules page: "skips alone do not lose the duel" — all skips, or one side skipping while
    the other misses, ends in a draw (both lose a life), never in a loss."""
    d = new_duel()
    while not d.over:
        d = d.skip(TURN_MS)
    assert d.result is DuelResult.DRAW
    assert d.reason is EndReason.TURNS_USED
    assert d.winner is None
    assert all(r.skipped for r in d.rows)
    assert d.ended_ms == START + 12 * TURN_MS

    d = new_duel(first="a")
    while not d.over:
        d = d.skip(TURN_MS) if d.next_player == "a" else guess(d, "slate", d.turn_deadline_ms - 1)
    assert d.result is DuelResult.DRAW


def test_skip_after_the_end_is_refused() -> None:
    """A late timer on a finished duel changes nothing (DuelOverError, naming the duel)."""
    d = guess(new_duel(), SECRET, START)
    with pytest.raises(DuelOverError, match=r"^duel t1\.1\.1 is over$"):
        d.skip(TURN_MS)


def test_turn_clock_starts_when_the_turn_starts() -> None:
    """Ruling 5: the 30 s clock starts when the turn starts: turn 1 at the end of the intro,
    later turns when the previous row was played."""
    d = new_duel()
    assert d.turn_deadline_ms == START + TURN_MS
    assert d.next_deadline() == START + TURN_MS
    d = guess(d, "slate", START + 12_345)
    assert d.turn_deadline_ms == START + 12_345 + TURN_MS


def test_invalid_guess_changes_nothing() -> None:
    """Rules page / ruling 5: a guess of the wrong length is refused; the turn and the clock keep
    going (the duel is unchanged). The word-list check is the caller's (it holds the language's
    word list)."""
    d = guess(new_duel(), "slate", START + 5)
    before = d
    with pytest.raises(WrongLengthError) as info:
        d.guess("b", "slat", tuple("slat"), START + 10, TURN_MS)
    assert info.value.code == "wrong_length"
    assert d == before
    assert d.next_player == "b"
    assert d.turn_deadline_ms == START + 5 + TURN_MS
    # the same player may now play a valid guess on the same turn
    d = d.guess("b", "slate", tuple("slate"), START + 11, TURN_MS)
    assert d.turn == 3


def test_guess_out_of_turn_is_refused() -> None:
    """Rules page: players take turns (NotYourTurnError, duel unchanged)."""
    d = new_duel(first="a")
    with pytest.raises(NotYourTurnError):
        d.guess("b", SECRET, tuple(SECRET), START + 1, TURN_MS)
    assert d == new_duel(first="a")


def test_guess_during_intro_is_refused() -> None:
    """Rules page "Tournament": the intro shows the pairs before the round (DuelNotStartedError)."""
    d = new_duel()
    assert not d.started(START - 1)
    with pytest.raises(DuelNotStartedError):
        d.guess("a", SECRET, tuple(SECRET), START - 1, TURN_MS)
    assert d.started(START)


def test_non_duelist_is_refused() -> None:
    """Only the two duelists play a duel (NotInDuelError)."""
    d = new_duel()
    with pytest.raises(NotInDuelError):
        d.guess("c", SECRET, tuple(SECRET), START, TURN_MS)
    with pytest.raises(NotInDuelError):
        d.opponent_of("c")
    with pytest.raises(NotInDuelError):
        d.forfeit("c", START)
    assert d.opponent_of("a") == "b"
    assert d.opponent_of("b") == "a"


def test_leaver_loses_the_duel() -> None:
    """Ruling 3: leaving loses the current duel — the opponent wins it (reason LEFT)."""
    d = guess(new_duel(), "slate", START + 1)
    d = d.forfeit("b", START + 2)
    assert d.result is DuelResult.WIN
    assert d.winner == "a"
    assert d.loser == "b"
    assert d.reason is EndReason.LEFT
    assert d.ended_ms == START + 2


def test_forfeit_of_a_finished_duel_changes_nothing() -> None:
    """Ruling 3: leaving after your duel is over does not change its result."""
    d = guess(new_duel(first="a"), SECRET, START)
    assert d.forfeit("a", START + 5) == d


def test_secret_is_not_in_error_messages() -> None:
    """Ruling 6: the secret never appears in an error before the duel is over."""
    d = new_duel()
    attempts = [
        lambda: d.guess("a", "abc", tuple("abc"), START, TURN_MS),
        lambda: d.guess("b", "slate", tuple("slate"), START, TURN_MS),
        lambda: d.guess("a", "slate", tuple("slate"), 0, TURN_MS),
        lambda: d.guess("x", "slate", tuple("slate"), START, TURN_MS),
    ]
    for attempt in attempts:
        with pytest.raises(DomainError) as info:
            attempt()
        assert SECRET not in str(info.value)
        assert SECRET not in info.value.message


def test_multi_character_tiles_duel() -> None:
    """A secret of multi-character tiles has its length in tiles (Uzbek oʻrik = 4)."""
    d = new_duel(word="oʻrik", answer=("oʻ", "r", "i", "k"))
    assert d.length == 4
    with pytest.raises(WrongLengthError):
        d.guess("a", "oʻrik", tuple("oʻrik"), START, TURN_MS)  # 5 characters, 4 tiles
    d = d.guess("a", "oʻrik", ("oʻ", "r", "i", "k"), START, TURN_MS)
    assert d.winner == "a"


# ------------------------------------------------------------------ property
_ACTIONS = st.lists(
    st.sampled_from(["win", "miss", "skip", "short", "wrong_player"]), min_size=1, max_size=30
)


@given(_ACTIONS, st.sampled_from(["a", "b"]))
def test_property_duel_invariants(actions: list[str], first: str) -> None:
    """Ruling 5 as invariants: turns alternate from the first mover; at most 12 rows, 6 each;
    over exactly when solved or 12 rows; refusals leave the duel unchanged."""
    d = new_duel(first=first)
    now = START
    for action in actions:
        before = d
        now += 1
        try:
            if action == "skip":
                d = d.skip(TURN_MS)
                now = max(now, d.rows[-1].at_ms)
            elif action == "short":
                d.guess(d.next_player or "a", "abc", tuple("abc"), now, TURN_MS)
            elif action == "wrong_player":
                other = "b" if d.next_player == "a" else "a"
                d.guess(other, "slate", tuple("slate"), now, TURN_MS)
            else:
                d = guess(d, SECRET if action == "win" else "slate", now, d.next_player or "a")
        except DomainError:
            assert d == before
        assert len(d.rows) <= 12
        for i, row in enumerate(d.rows):
            assert row.player == (first if i % 2 == 0 else d.opponent_of(first))
        solved = any(r.marks == (Mark.CORRECT,) * 5 for r in d.rows)
        assert d.over == (solved or len(d.rows) == 12)
        if solved:
            assert d.winner == d.rows[-1].player
            assert d.reason is EndReason.SOLVED


def test_the_secret_is_not_in_a_duels_repr() -> None:
    """Ruling 6: logging a duel (its ``repr``) never shows the secret, neither the word nor its
    tiles; the rest of the duel is there to read."""
    d = new_duel(word="quartz", answer=("q", "u", "a", "r", "t", "z"))
    text = repr(d)
    assert "quartz" not in text
    assert "('q', 'u', 'a', 'r', 't', 'z')" not in text
    assert "t1.1.1" in text
    assert "turn_deadline_ms=36000" in text


def test_duel_id_prints_and_parses_as_tournament_round_index() -> None:
    """A duel id is ``{tournament_id}.{round}.{index}``; ``parse`` reads back exactly what
    ``str`` prints and refuses anything else as naming no duel."""
    duel_id = DuelId("t-9", 3, 2)
    assert str(duel_id) == "t-9.3.2"
    assert DuelId.parse("t-9.3.2") == duel_id
    for forged in ("t-9.3", "t-9.3.2.1", ".3.2", "t-9.x.2", "t-9.3.-2", "t-9.٣.2", ""):
        with pytest.raises(NotInDuelError, match=r"^no such duel$"):
            DuelId.parse(forged)
