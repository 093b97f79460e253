"""The README's harness example, kept running so the docs match the code."""

from __future__ import annotations


def test_a_skip_passes_the_turn(backend):
    """Rules page: "If your time runs out, the turn is skipped: it is used up and passes"."""
    players = backend.fill_lobby("en")
    backend.end_intro()
    p = backend.to_move()[0]
    d = p.current_duel()
    p.time_out()
    turn = p.last("turn")
    assert turn["row"]["skipped"] is True
    assert turn["row"]["player"] == p.id
    assert turn["next_player"] == d.opponent_of(p.id)
    assert len(players) == 8
