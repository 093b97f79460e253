"""Benchmark, figure 3: the play, one 8-player tournament played to its end through the harness on
moto with the real adapters (``calls.CountingBackend``), paced as a discrete-event simulation on
the manual clock; every AWS call of every invocation is counted. The run (``TournamentRun``)
keeps every deadline the play had (``Deadline``), from which the clock models
(``infra.benchmarks.clocks``) and the bill (``infra.benchmarks.cost``) are computed. The pacing
and where turn deadlines come from: ``shared/domain/RULINGS.md``, Design notes, "Benchmarks".
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from infra.benchmarks.calls import (
    ActionCount,
    ApiGatewayRecordingNotifier,
    ClockExecution,
    CountingBackend,
    Invocation,
    MeteredClock,
)
from infra.emulator.testing import ScriptedPlayer
from shared.services.ports import Timer

PING_EVERY_MS = 20_000
"""A player pings after 20 s without sending any message, as the web client and the bots do
(ruling 14: a message at least every 20 s, ``shared.protocol.limits.PING_INTERVAL_SECONDS``).
API Gateway answers each ping itself (a MOCK route: a message in and a route response out, no
function, no write)."""


@dataclass(frozen=True)
class PlayStyle:
    """How the scripted players pace a tournament (seconds / probabilities)."""

    rows_per_duel: tuple[int, int] = (4, 8)
    think_s: tuple[float, float] = (3.0, 15.0)
    skip_rate: float = 0.04
    invalid_rate: float = 0.05


@dataclass(frozen=True)
class Deadline:
    """One deadline of the play, as a per-deadline clock would have scheduled it: ``kind``
    (``intro``, ``reconnect`` or ``turn``), ``ref``/``seq`` (a turn: the duel and the turn
    number), ``due_ms``, and ``set_ms`` — when it was set (scheduled, or its message sent)."""

    kind: str
    ref: str
    seq: int
    due_ms: int
    set_ms: int

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.ref}-{self.seq}"


def timer_deadlines(scheduled: list[tuple[Timer, int]]) -> list[Deadline]:
    """The timers the services scheduled (intros and reconnects), once per name."""
    found: dict[str, Deadline] = {}
    for timer, at in scheduled:
        found.setdefault(
            timer.name, Deadline(timer.kind.value, timer.ref, timer.seq, timer.due_ms, at)
        )
    return list(found.values())


def turn_deadlines(log: list[tuple[int, str, dict[str, Any]]]) -> list[Deadline]:
    """Turn deadlines read from the messages sent (``(time, connection, message)``): a
    ``duel_start`` sets turn 1's, a ``turn`` with a ``deadline_ms`` the next turn's; each
    is one deadline however many players received it (set when first sent)."""
    found: dict[tuple[str, int], Deadline] = {}
    for at, _, m in log:
        if m.get("type") == "duel_start":
            key = (str(m["duel_id"]), 1)
        elif m.get("type") == "turn" and m.get("deadline_ms") is not None:
            key = (str(m["duel_id"]), int(m["turn"]) + 1)
        else:
            continue
        if key not in found:
            found[key] = Deadline("turn", key[0], key[1], int(m["deadline_ms"]), at)
    return list(found.values())


def duel_ends(log: list[tuple[int, str, dict[str, Any]]]) -> dict[str, int]:
    """Duel id -> when its ``duel_end`` message was first sent."""
    found: dict[str, int] = {}
    for at, _, m in log:
        if m.get("type") == "duel_end":
            found.setdefault(str(m["duel_id"]), at)
    return found


@dataclass
class TournamentRun:
    """What one simulated tournament did, and every invocation it caused."""

    invocations: list[Invocation]
    deadlines: list[Deadline]
    """Every deadline of the play (``Deadline``): timers scheduled, and turn deadlines."""
    duel_ends: dict[str, int]
    duration_ms: int
    rounds: int
    duels: int
    rows: int
    guesses: int
    skips: int
    invalid: int
    inbound_bytes: int
    gateway_answered: int = 0
    """Pings answered by API Gateway itself (``functions.routes.MOCK_ROUTES``): each a message
    in and a ``pong`` route response out; no invocation."""
    skip_grace_ms: int = 0
    """A turn deadline's skip is due this long after it (``Timing.skip_grace_ms``)."""
    executions: list[ClockExecution] = field(default_factory=list)
    """The built clock's executions, as the interpreter ran them."""
    players: int = 8

    @property
    def action(self) -> ActionCount:
        return ActionCount("tournament", self.invocations)


def _words(b: CountingBackend, language: str, length: int) -> list[str]:
    return sorted(b.deps.lexicon.allowed(language, length))


def play_tournament(b: CountingBackend, style: PlayStyle, seed: int = 11) -> TournamentRun:
    """Play one tournament to its end on ``b`` (see the module docstring)."""
    rng = random.Random(seed)
    mark = b.counter.mark()
    start = b.clock.now
    players = [b.player(f"p{i}") for i in range(8)]
    for p in players:
        p.join("en")
    by_id: dict[str, ScriptedPlayer] = {p.id: p for p in players}
    tid = players[0].last("round")["tournament_id"]
    plans: dict[tuple[str, int], int | None] = {}
    targets: dict[str, int] = {}
    ends: dict[str, int] = {}
    duel_ids: set[str] = set()
    rounds: set[int] = set()
    guesses = invalid = 0

    def advance_to(t_ms: int) -> None:
        """Let time pass to ``t_ms``; on the way, each player pings when it has sent nothing
        for ``PING_EVERY_MS`` (conformant clients; API Gateway answers, its messages are
        billed; ``CountingBackend.sent_ms``: when each connection last sent a message)."""
        while True:
            due = min(b.sent_ms.get(p.connection_id, start) + PING_EVERY_MS for p in players)
            if due > t_ms:
                break
            b.clock.advance_to(due)
            for p in players:
                if b.sent_ms.get(p.connection_id, start) + PING_EVERY_MS <= due:
                    p.ping()
        b.clock.advance_to(t_ms)

    for _ in range(5000):
        t = b.tournament(tid).tournament
        rounds.add(t.round_no)
        for d in t.duels:
            duel_ids.add(d.duel_id)
            if d.over and d.duel_id not in ends:
                ends[d.duel_id] = d.ended_ms if d.ended_ms is not None else b.clock.now
        if t.over:
            break
        now = b.clock.now
        due: list[tuple[int, str, str]] = []
        if t.phase.value == "playing":
            for d in t.duels:
                if d.over or d.next_player is None or not d.started(now):
                    continue
                key = (d.duel_id, len(d.rows))
                if key not in plans:
                    turn_start = d.turn_deadline_ms - b.deps.timing.turn_ms
                    if rng.random() < style.skip_rate:
                        plans[key] = None  # this turn times out
                    else:
                        plans[key] = turn_start + round(rng.uniform(*style.think_s) * 1000)
                    targets.setdefault(d.duel_id, rng.randint(*style.rows_per_duel))
                at = plans[key]
                # a guess received at or after the deadline is refused (turn_over): none is
                # sent then, the skip applies
                if at is not None and max(at, now) < d.turn_deadline_ms:
                    due.append((max(at, now), d.duel_id, d.next_player))
        if not due:
            # nothing to play before the next deadline (an intro, or only skips planned)
            nxt = b.clock.next_due()
            if nxt is None:
                raise RuntimeError("the tournament is stuck: no move and no deadline")
            advance_to(nxt)
            continue
        at, duel_id, mover = min(due)
        nxt = b.clock.next_due()
        if nxt is not None and nxt < at:
            advance_to(nxt)  # a deadline comes first; then look again
            continue
        advance_to(at)
        p = by_id[mover]
        d = next(x for x in t.duels if x.duel_id == duel_id)
        if rng.random() < style.invalid_rate:
            p.send("guess", duel_id=duel_id, word="q" * d.length)
            invalid += 1
        if len(d.rows) + 1 >= targets[duel_id]:
            word = d.word
        else:
            word = rng.choice([w for w in _words(b, t.language, d.length) if w != d.word])
        p.send("guess", duel_id=duel_id, word=word)
        guesses += 1
    else:
        raise RuntimeError("the tournament did not end")
    end = b.clock.now
    # pending deadlines still fire (and are billed) after the end
    while b.clock.next_due() is not None:
        b.clock.advance_to(b.clock.next_due() or 0)
    for p in players:
        p.disconnect()
    clock, notifier = b.clock, b.notifier
    assert isinstance(clock, MeteredClock)
    assert isinstance(notifier, ApiGatewayRecordingNotifier)
    invocations = b.counter.since(mark)
    skips = _count_skips(players)
    return TournamentRun(
        invocations=invocations,
        deadlines=timer_deadlines(clock.scheduled) + turn_deadlines(notifier.log),
        # a round's last duel ends with the round: the next read already shows the next
        # round, so its end is taken from its ``duel_end`` message
        duel_ends={**duel_ends(notifier.log), **ends},
        duration_ms=end - start,
        rounds=len(rounds),
        duels=len(duel_ids),
        rows=guesses + skips,
        guesses=guesses,
        skips=skips,
        invalid=invalid,
        inbound_bytes=b.inbound_bytes,
        gateway_answered=b.gateway_answered,
        skip_grace_ms=b.deps.timing.skip_grace_ms,
        executions=list(clock.executions),
    )


def _count_skips(players: list[ScriptedPlayer]) -> int:
    """Turns that timed out (skips applied by the clock): distinct skipped rows the players
    were sent (``turn`` events), whichever clock design applied them."""
    seen: set[tuple[str, int]] = set()
    for p in players:
        for m in p.all("turn"):
            if (m.get("row") or {}).get("skipped"):
                seen.add((str(m["duel_id"]), int(m["turn"])))
    return len(seen)
