"""Domain: the kill switch on a tournament (``Tournament.pause`` / ``resume``; RULINGS.md,
design notes, "Kill switch") — while paused nothing is due and no move is taken; a resume
moves every pending deadline later by exactly the pause's length, so a player keeps the time
they had."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.domain.errors import PausedError
from shared.domain.tournament import Phase
from tests.unit.domain.helpers import begin_round, start, wrong_word

NO_WORDS = cast(Any, None)
"""A paused tournament refuses before it reads the word list."""


def test_a_paused_tournament_applies_no_deadline_and_takes_no_move() -> None:
    t, dealer, _ = start(8, now_ms=1_000)
    t, _, now = begin_round(t, dealer)
    paused = t.pause(now)
    assert paused.next_due(dealer.skip_grace_ms) is None  # the round's loop ends
    assert paused.next_deadline() == t.next_deadline()  # still in the due-time index
    later = now + 10 * 60_000
    assert paused.expire(later, dealer) == (paused, [])
    duel = paused.duels[0]
    mover = duel.next_player
    assert mover is not None
    outcome = paused.play(
        mover,
        duel.duel_id,
        wrong_word(duel),
        NO_WORDS,
        received_ms=now,
        now_ms=now,
        dealer=dealer,
    )
    assert isinstance(outcome.refusal, PausedError)
    assert outcome.tournament is paused
    assert outcome.events == ()
    with pytest.raises(PausedError):
        paused.leave(mover, now, dealer)
    assert paused.pause(later) is paused  # pausing again keeps the first time


@given(
    in_intro=st.booleans(),
    into_ms=st.integers(0, 5_000),
    pause_ms=st.integers(0, 3_600_000),
    away=st.booleans(),
)
def test_resume_moves_every_pending_deadline_by_the_pause(
    in_intro: bool, into_ms: int, pause_ms: int, away: bool
) -> None:
    t, dealer, _ = start(8, now_ms=1_000)
    if not in_intro:
        t, _, _ = begin_round(t, dealer)
    if away:
        p = t.players[0]
        t, _ = t.set_connected(p.player_id, False, reconnect_deadline_ms=70_000)
    at = (1_000 if in_intro else t.duels[0].starts_ms) + into_ms
    before = t
    resumed = t.pause(at).resume(at + pause_ms)
    assert resumed.paused_ms is None
    assert resumed.next_deadline() == (before.next_deadline() or 0) + pause_ms
    assert resumed.phase is before.phase
    for old, new in zip(before.duels, resumed.duels, strict=True):
        assert new.turn_deadline_ms == old.turn_deadline_ms + pause_ms
        assert new.starts_ms == old.starts_ms + (pause_ms if in_intro else 0)
    for old_p, new_p in zip(before.players, resumed.players, strict=True):
        if old_p.reconnect_deadline_ms is None:
            assert new_p.reconnect_deadline_ms is None
        else:
            assert new_p.reconnect_deadline_ms == old_p.reconnect_deadline_ms + pause_ms
    # what was not due before the pause is not due after it: the turn keeps its time left
    assert resumed.expire(at + pause_ms, dealer)[1] == before.expire(at, dealer)[1]
    unpaused = dataclasses.replace(resumed, paused_ms=None)
    assert unpaused.resume(at) is unpaused  # not paused: nothing moves


def test_an_over_tournament_is_not_paused() -> None:
    t, _dealer, _ = start(8, now_ms=1_000)
    over = dataclasses.replace(t, phase=Phase.OVER)
    assert over.pause(5_000) is over
