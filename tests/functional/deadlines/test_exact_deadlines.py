"""Engine: exact deadlines on a clock that behaves like Step Functions.

The harness's clock is the local interpreter of the deployed state machine
(``infra.emulator.states``): its Wait truncates timestamps to the whole second, as Step
Functions does. A turn is judged by when API Gateway *received* the guess
(``requestContext.requestTimeEpoch``), a skip is applied no earlier than its deadline plus the
grace (``Timing.skip_grace_ms``), and a wake that comes early applies nothing.
"""

from __future__ import annotations

import json
from typing import Any

from shared.protocol.framing import unpack
from tests.functional.driver import Game, peek_raw, wrong_word

GRACE = 2_000  # the default: a cold guess function still lands first (RULINGS.md, grace)


def _running(backend: Any) -> tuple[Game, Any, Any]:
    """A started round: the game, one running duel, and the player whose turn it is."""
    game = Game.start(backend)
    game.end_intro()
    duel = game.open_duels()[0]
    return game, duel, game.by_id[duel.next_player]


def _rows(game: Game, duel_id: str) -> list[Any]:
    return list(game.t.duel(duel_id).rows)


def test_the_default_grace_is_two_seconds(backend):
    assert backend.deps.timing.skip_grace_ms == GRACE


def test_a_guess_received_1ms_before_the_deadline_counts_though_handled_500ms_late(backend):
    game, duel, mover = _running(backend)
    deadline = duel.turn_deadline_ms
    backend.clock.advance_to(deadline + 499)  # the loop's wake (deadline + grace) is later
    word = wrong_word(backend, "en", duel, 0)
    mover.send("guess", duel_id=duel.duel_id, word=word, received_ms=deadline - 1)
    assert mover.all("error") == []
    (row,) = _rows(game, duel.duel_id)
    assert (row.player, row.word, row.skipped) == (mover.id, word, False)
    # the opponent's turn starts when the row was applied: a full turn from now
    assert game.t.duel(duel.duel_id).turn_deadline_ms == deadline + 499 + 30_000
    # and the clock, waking later, skips nothing that was played
    backend.pass_deadline(deadline)
    assert not any(r.skipped for r in _rows(game, duel.duel_id))


def test_a_guess_received_1ms_after_the_deadline_is_refused_turn_over(backend):
    game, duel, mover = _running(backend)
    deadline = duel.turn_deadline_ms
    backend.clock.advance_to(deadline + 1)
    before = peek_raw(game.tid)
    others = {p.id: len(backend.notifier.sent[p.connection_id]) for p in game.players}
    word = wrong_word(backend, "en", duel, 0)
    mover.send("guess", duel_id=duel.duel_id, word=word, received_ms=deadline + 1, request_id="g")
    error = mover.last("error")
    assert error is not None
    assert (error["code"], error["request_id"]) == ("turn_over", "g")
    assert peek_raw(game.tid) == before  # nothing changed: the skip is the clock's to apply
    for p in game.players:
        expected = others[p.id] + (1 if p is mover else 0)
        assert len(backend.notifier.sent[p.connection_id]) == expected


def test_a_guess_received_exactly_at_the_deadline_is_refused_turn_over(backend):
    _, duel, mover = _running(backend)
    deadline = duel.turn_deadline_ms
    backend.clock.advance_to(deadline)
    word = wrong_word(backend, "en", duel, 0)
    mover.send("guess", duel_id=duel.duel_id, word=word, received_ms=deadline)
    assert mover.last("error")["code"] == "turn_over"


def test_a_guess_after_the_skip_was_applied_is_refused_turn_over(backend):
    game, duel, mover = _running(backend)
    mover.time_out()
    (row,) = _rows(game, duel.duel_id)
    assert row.skipped
    mover.send("guess", duel_id=duel.duel_id, word=wrong_word(backend, "en", duel, 0))
    assert mover.last("error")["code"] == "turn_over"
    # while the opponent, whose turn it is not, still learns `not_your_turn` after a guess
    opponent = game.by_id[game.t.duel(duel.duel_id).next_player]
    word = wrong_word(backend, "en", duel, 1)
    opponent.send("guess", duel_id=duel.duel_id, word=word)
    assert opponent.all("error") == []
    opponent.send("guess", duel_id=duel.duel_id, word=wrong_word(backend, "en", duel, 2))
    assert opponent.last("error")["code"] == "not_your_turn"


def test_a_wake_before_the_deadline_applies_nothing_and_waits_again(backend):
    """A state whose Wait timestamp still has milliseconds (what the adapter never sends)
    wakes up to 999 ms early on Step Functions: the clock function applies nothing then,
    and the loop waits again until the skip is due."""
    game, duel, _ = _running(backend)
    deadline = duel.turn_deadline_ms
    backend.clock.service.abandon()  # only the hand-made loop below runs
    due = deadline + GRACE  # when the skip is due
    stamp = due - 1  # a timestamp with milliseconds: Step Functions truncates it
    state = {
        "kind": "intro",
        "ref": game.tid,
        "seq": game.t.round_no,
        "due_ms": due,
        "due": _iso_with_ms(stamp),
        "loop_started_ms": backend.clock.now,
    }
    service = backend.clock.service
    service.start_execution(backend.clock.state_machine_arn, "early", json.dumps(state))
    early_wake = stamp // 1000 * 1000
    assert backend.clock.next_due() == early_wake < due
    fired_before = len(backend.clock.fired)
    backend.clock.advance_to(early_wake)
    assert len(backend.clock.fired) == fired_before + 1  # it woke, read ...
    assert _rows(game, duel.duel_id) == []  # ... and applied nothing
    assert backend.clock.next_due() == -(-due // 1000) * 1000  # then waits again, rounded up
    backend.clock.advance_to(backend.clock.next_due())
    (row,) = _rows(game, duel.duel_id)
    assert row.skipped
    assert row.at_ms == deadline  # the skip's row is at the deadline: the grace shifts nothing


def test_no_skip_of_a_whole_tournament_is_applied_before_its_deadline_plus_grace(backend):
    """Every skip of a tournament where every turn times out: the turn message that carries
    it is sent no earlier than the deadline plus the grace (and within the next second)."""
    sent_at: list[tuple[int, dict[str, Any]]] = []
    send = backend.notifier.send

    def recording(messages: list[tuple[str, str]]) -> list[str]:
        sent_at.extend((backend.clock.now, m) for _, text in messages for m in unpack(text))
        return send(messages)

    backend.notifier.send = recording  # type: ignore[method-assign]
    game = Game.start(backend)
    deadlines: dict[tuple[str, int], int] = {}
    for _ in range(400):
        if game.t.over:
            break
        for d in game.open_duels():
            deadlines[(d.duel_id, len(d.rows) + 1)] = d.turn_deadline_ms
        due = backend.clock.next_due()
        assert due is not None, "the tournament stalled"
        backend.clock.advance_to(due)
    assert game.t.over
    skips = [(at, m) for at, m in sent_at if m["type"] == "turn" and m["row"]["skipped"] is True]
    assert skips
    for at, m in skips:
        deadline = deadlines[(m["duel_id"], m["turn"])]
        assert deadline + GRACE <= at < deadline + GRACE + 1_000, (m, at - deadline)


def _iso_with_ms(ms: int) -> str:
    import time

    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"
