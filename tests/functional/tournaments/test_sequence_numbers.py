"""Flows: per-player event sequence numbers (protocol 1.2; RULINGS.md, "Event sequence
numbers") — every event about the tournament a player receives carries ``seq`` 1, 2, 3...
without gaps or repeats, across batches and through a drop and a resume; a lost post shows as
a jump, and a resync on the same connection says where to continue from."""

from __future__ import annotations

import itertools
from typing import Any

from infra.emulator.testing import Backend, ScriptedPlayer
from shared.protocol.framing import unpack


def _numbered(backend: Backend, connection_id: str) -> list[int]:
    """The ``seq`` of each numbered event the connection received, in order."""
    return [m["seq"] for m in backend.notifier.sent[connection_id] if m.get("seq") is not None]


def _step(backend: Backend, tid: str, skip: ScriptedPlayer | None = None) -> bool:
    """One move of the tournament (a guess, a solve every third row of a duel, or the clock's
    next wake), ``skip`` not moving; False once the tournament is over."""
    rec = backend.tournament(tid)
    if rec.tournament.over:
        return False
    movers = [p for p in backend.to_move() if p is not skip]
    if movers and backend.clock.now >= rec.tournament.intro_deadline_ms:
        p = movers[0]
        if len(p.current_duel().rows) % 3 == 2:
            p.solve()
        else:
            p.guess()
    else:
        backend.end_intro()
    return True


def _play_to_the_end(backend: Backend, tid: str) -> None:
    for _ in range(2000):
        if not _step(backend, tid):
            return
    raise AssertionError("the tournament did not end")


def test_every_player_gets_1_to_n_through_batches_a_drop_and_a_resume(backend):
    players = backend.fill_lobby("en")
    tid = players[0].last("round")["tournament_id"]
    away = players[3]
    for _ in range(6):
        _step(backend, tid)
    lost_connection = away.connection_id
    # the connection dies: the next posts to it fail (410), which starts its disconnect
    backend.notifier.gone.add(lost_connection)
    numbered_before = backend.tournament(tid).seqs[away.id]
    for _ in range(200):
        if backend.tournament(tid).seqs[away.id] > numbered_before:
            break
        assert _step(backend, tid, skip=away)
    received = _numbered(backend, lost_connection)
    assert received == list(range(1, len(received) + 1))
    sent = backend.tournament(tid).seqs[away.id]
    assert sent > received[-1]  # numbered, posted, lost with the connection

    away.resume()
    snapshot = away.last("session")["snapshot"]
    assert away.last("session")["seq"] is None
    # where the player stands: the last seq received before the drop plus what was missed
    assert snapshot["seq"] == sent

    _play_to_the_end(backend, tid)
    rec = backend.tournament(tid)
    after = _numbered(backend, away.connection_id)
    assert after, "nothing numbered after the resume"
    assert after == list(range(sent + 1, sent + 1 + len(after)))
    assert rec.seqs[away.id] == after[-1]
    for p in players:
        if p is away:
            continue
        got = _numbered(backend, p.connection_id)
        assert got == list(range(1, len(got) + 1)), p.name
        assert rec.seqs[p.id] == len(got), p.name
        assert p.last("tournament_end")["seq"] == got[-1]
    # numbered events came inside batches too, each with its own seq, the batch's null
    batches = [text for _, text in backend.notifier.raw if text.startswith('{"type":"batch"')]
    assert batches
    assert all('"type":"batch","request_id":null,"seq":null' in text for text in batches)
    assert any(sum(e["seq"] is not None for e in unpack(text)) >= 2 for text in batches)
    # nothing outside the tournament is numbered
    for p in players:
        for m in backend.notifier.sent[p.connection_id]:
            if m["type"] in {"session", "lobby", "party", "player", "error", "pong"}:
                assert m["seq"] is None, m


def test_a_lost_post_shows_as_a_jump_and_a_resync_says_where_to_continue(backend):
    players = backend.fill_lobby("en")
    tid = players[0].last("round")["tournament_id"]
    victim = players[0]
    lost: list[dict[str, Any]] = []
    send = backend.notifier.send

    def lose_one(messages: list[tuple[str, str]]) -> list[str]:
        kept = []
        for cid, text in messages:
            numbered = [e for e in unpack(text) if e.get("seq") is not None]
            if cid == victim.connection_id and not lost and numbered:
                lost.extend(numbered)  # the post never arrives; the sender is not told
                continue
            kept.append((cid, text))
        return send(kept)

    backend.notifier.send = lose_one  # type: ignore[method-assign]
    for _ in range(200):
        got = _numbered(backend, victim.connection_id)
        if lost and got[-1] > lost[-1]["seq"]:
            break
        assert _step(backend, tid)
    backend.notifier.send = send  # type: ignore[method-assign]

    got = _numbered(backend, victim.connection_id)
    jumps = [(a, b) for a, b in itertools.pairwise(got) if b != a + 1]
    assert jumps == [(lost[0]["seq"] - 1, lost[-1]["seq"] + 1)]
    assert [e["seq"] for e in lost] == list(range(lost[0]["seq"], lost[-1]["seq"] + 1))

    # the resync: session with the token on the same connection, no reconnect
    victim.send("session", token=victim.token)
    reply = victim.last("session")
    victim.token = reply["token"]
    assert reply["resumed"] is True
    assert reply["snapshot"]["seq"] == got[-1] == backend.tournament(tid).seqs[victim.id]
    _play_to_the_end(backend, tid)
    tail = _numbered(backend, victim.connection_id)[len(got) :]
    assert tail == list(range(got[-1] + 1, got[-1] + 1 + len(tail)))
    assert tail, "nothing numbered after the resync"
