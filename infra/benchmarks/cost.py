"""Benchmark, figure 3: cost of one 8-player tournament at on-demand list prices.

A whole tournament is played through the harness on moto with the real adapters
(``calls.CountingBackend``): 8 sessions, 8 joins, every duel played with realistic pacing — a
discrete-event simulation on the manual clock, so timers fire when real time would pass them:
each turn a think time is drawn, a few turns are left to time out (skips), a few guesses are
refused words, each duel is solved after 4–8 rows. When the tournament is over, time runs on
until every pending deadline has fired (stale ones included: they are billed too), then the 8
players disconnect. Every AWS call of every handler invocation is counted (figure 1's hook).

The prices are data (``prices.json``: date and source). Lambda duration is an assumption
(``LAMBDA_MS`` at ``LAMBDA_GB``, arm64): in-process wall times on moto are reported beside it,
but they measure moto as much as the handler.

Clock designs are compared on the *same* play (the timeline of every scheduled deadline):

- Standard, one execution per deadline (today): 2 state transitions (Wait, Task) each; every
  execution invokes the clock function, stale ones included;
- Express, one execution per deadline: billed per request plus its duration (the whole wait) at
  64 MB, rounded up to 100 ms;
- one looping execution per duel: Wait -> Task -> Choice until the duel is over (the clock
  function returns the duel's current deadline; a turn deadline only ever moves later — a new
  one is set at ``t + 30 s`` after every older one was — so waking at a stale deadline and waiting
  again is correct); intros and reconnects stay one execution per deadline; a guess no longer
  starts an execution;
- one looping execution per round: the same loop over the round's duels, waking at the earliest
  current deadline (which also only moves later within a round, by the same argument); started
  by the round's start with the intro as its first wait; ends when the round's duels are over;
- each loop as Standard (3 transitions per wake + 1) or Express (billed for the loop's whole
  duration at 64 MB; a duel may last 12 turns x 30 s = 6 min > Express's 5-minute limit, so
  Express loops must hand over to a fresh execution before 5 minutes).
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.benchmarks.calls import (
    ActionCount,
    CountingBackend,
    Invocation,
    StepFunctionsManualClock,
    moto_env,
)
from infra.emulator.testing import ScriptedPlayer
from shared.services.ports import Timer, TimerKind

PRICES_PATH = Path(__file__).with_name("prices.json")
GOAL_USD = 0.004
LAMBDA_MS = 50.0
LAMBDA_GB = 0.25
CONNECTION_MINUTES_PER_PLAYER = 15.0
"""Assumption of the brief: each of the 8 players is connected ~15 min (lobby, play, results)."""
STANDARD_TRANSITIONS_PER_DEADLINE = 2
"""Wait + Task: "a state transition each time a step of your workflow is executed"."""
STANDARD_TRANSITIONS_PER_WAKE = 3
"""Per-duel loop: Wait + Task + Choice per wake, plus 1 for the final Succeed."""
CLOCK_TASK_MS = 100
"""Express duration after the wait: invoking the clock function (assumption)."""


def load_prices(path: Path = PRICES_PATH) -> dict[str, Any]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]


@dataclass(frozen=True)
class PlayStyle:
    """How the scripted players pace a tournament (seconds / probabilities)."""

    rows_per_duel: tuple[int, int] = (4, 8)
    think_s: tuple[float, float] = (3.0, 15.0)
    skip_rate: float = 0.04
    invalid_rate: float = 0.05


@dataclass
class TournamentRun:
    """What one simulated tournament did, and every invocation it caused."""

    invocations: list[Invocation]
    scheduled: list[tuple[Timer, int]]
    duel_ends: dict[str, int]
    duration_ms: int
    rounds: int
    duels: int
    rows: int
    guesses: int
    skips: int
    invalid: int
    inbound_bytes: int
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
                if at is not None and at < d.turn_deadline_ms:
                    due.append((max(at, now), d.duel_id, d.next_player))
        if not due:
            # nothing to play before the next deadline (an intro, or only skips planned)
            nxt = b.clock.next_due()
            if nxt is None:
                raise RuntimeError("the tournament is stuck: no move and no deadline")
            b.clock.advance_to(nxt)
            continue
        at, duel_id, mover = min(due)
        nxt = b.clock.next_due()
        if nxt is not None and nxt < at:
            b.clock.advance_to(nxt)  # a deadline comes first; then look again
            continue
        b.clock.advance_to(at)
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
    clock = b.clock
    assert isinstance(clock, StepFunctionsManualClock)
    invocations = b.counter.since(mark)
    skips = _count_skips(invocations)
    return TournamentRun(
        invocations=invocations,
        scheduled=list(clock.scheduled),
        duel_ends=ends,
        duration_ms=end - start,
        rounds=len(rounds),
        duels=len(duel_ids),
        rows=guesses + skips,
        guesses=guesses,
        skips=skips,
        invalid=invalid,
        inbound_bytes=b.inbound_bytes,
    )


def _count_skips(invocations: list[Invocation]) -> int:
    """Turn-clock firings that wrote something (a skip applied)."""
    return sum(
        1
        for i in invocations
        if i.route.startswith("clock:turn:")
        and any(c.op in ("PutItem", "TransactWriteItems") for c in i.calls)
    )


# ------------------------------------------------------------------------------ cost model
@dataclass
class CostLine:
    item: str
    quantity: float
    unit: str
    usd: float


@dataclass
class ClockDesign:
    name: str
    executions: int
    transitions: int
    express_gb_s: float
    clock_invocations: int
    clock_rru: float
    usd: float
    """Step Functions + the clock function's Lambda requests/duration + its reads."""
    sfn_usd: float
    correct: bool
    note: str


@dataclass
class CostReport:
    run: TournamentRun
    lines: list[CostLine]
    designs: list[ClockDesign]
    prices: dict[str, Any]
    counts: dict[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return sum(line.usd for line in self.lines)

    def total_with(self, design: ClockDesign) -> float:
        today = self.designs[0]
        return self.total - today.usd + design.usd

    @property
    def best(self) -> ClockDesign:
        return min((d for d in self.designs if d.correct), key=lambda d: d.usd)


def _lambda_usd(prices: dict[str, Any], invocations: float) -> float:
    lam = prices["lambda"]
    gb_s = invocations * LAMBDA_MS / 1000 * LAMBDA_GB
    return invocations * float(lam["request"]) + gb_s * float(lam["gb_second_arm64"])


def _loop(
    duels: dict[str, list[tuple[int, int]]], ends: dict[str, int], first_wait_from: int | None
) -> tuple[int, float]:
    """Wakes and span (s) of one looping execution over ``duels`` (duel id -> [(due, set at)]).

    At each wake the clock function applies what is due and returns the earliest current turn
    deadline of the group's running duels (a duel's current deadline is the latest one set so
    far: deadlines only move later); the loop ends when every duel is over. With
    ``first_wait_from`` the execution started then, waiting for the round's intro (one wake).
    """
    firsts = [min(timers, key=lambda x: x[1]) for timers in duels.values()]
    w = min(due for due, _ in firsts)
    start = min(at for _, at in firsts) if first_wait_from is None else first_wait_from
    wakes = 0 if first_wait_from is None else 1
    for _ in range(10_000):
        wakes += 1
        current = []
        for duel_id, timers in duels.items():
            ended = ends.get(duel_id)
            if ended is not None and ended <= w:
                continue
            known = [due for due, at in timers if at <= w]
            if known and max(known) > w:
                current.append(max(known))
        if not current:
            break
        w = min(current)
    return wakes, max(0, w - start) / 1000


def _turn_timers(run: TournamentRun) -> dict[str, list[tuple[int, int]]]:
    by_duel: dict[str, list[tuple[int, int]]] = {}
    for timer, at in run.scheduled:
        if timer.kind is TimerKind.TURN:
            by_duel.setdefault(timer.ref, []).append((timer.due_ms, at))
    return by_duel


def clock_designs(run: TournamentRun, prices: dict[str, Any]) -> list[ClockDesign]:
    sfn = prices["stepfunctions"]
    rru_price = float(prices["dynamodb"]["read_request_unit"])
    unique: dict[str, tuple[Timer, int]] = {}
    for timer, at in run.scheduled:
        unique.setdefault(timer.name, (timer, at))
    kinds = Counter(t.kind for t, _ in unique.values())
    clock_invs = [i for i in run.invocations if i.route.startswith("clock:")]
    turn_invs = [i for i in clock_invs if i.route.startswith("clock:turn:")]
    intro_invs = [i for i in clock_invs if i.route.startswith("clock:intro:")]
    clock_rru = sum(c.rru for i in clock_invs for c in i.calls)
    turn_rru = sum(c.rru for i in turn_invs for c in i.calls if c.op == "GetItem")
    get_rru_each = turn_rru / len(turn_invs) if turn_invs else 1.0
    n = len(unique)
    inc_ms = float(sfn["express_duration_increment_ms"])
    task_s = CLOCK_TASK_MS / 1000

    def express_gb_s(seconds: float) -> float:
        return math.ceil(seconds * 1000 / inc_ms) * inc_ms / 1000 * 0.0625

    def sfn_usd(transitions: int, requests: int, gb_s: float) -> float:
        return (
            transitions * float(sfn["standard_transition"])
            + requests * float(sfn["express_request"])
            + gb_s * float(sfn["express_gb_second"])
        )

    def usd(transitions: int, requests: int, gb_s: float, lambdas: int, rru: float) -> float:
        return sfn_usd(transitions, requests, gb_s) + _lambda_usd(prices, lambdas) + rru * rru_price

    designs = []
    transitions = n * STANDARD_TRANSITIONS_PER_DEADLINE
    designs.append(
        ClockDesign(
            "Standard, one execution per deadline (today)",
            n,
            transitions,
            0.0,
            len(clock_invs),
            clock_rru,
            usd(transitions, 0, 0.0, len(clock_invs), clock_rru),
            sfn_usd(transitions, 0, 0.0),
            True,
            f"{n} deadlines ({kinds[TimerKind.TURN]} turn); every stale one still runs",
        )
    )
    gb_s = sum(express_gb_s(max(0.0, (t.due_ms - at) / 1000) + task_s) for t, at in unique.values())
    designs.append(
        ClockDesign(
            "Express, one execution per deadline",
            n,
            0,
            gb_s,
            len(clock_invs),
            clock_rru,
            usd(0, n, gb_s, len(clock_invs), clock_rru),
            sfn_usd(0, n, gb_s),
            True,
            "at-least-once is fine (seq-guarded clock fn); each wait is billed at 64 MB",
        )
    )
    turns = _turn_timers(run)
    # loops over each duel / over each round's duels
    groups: dict[str, dict[str, dict[str, list[tuple[int, int]]]]] = {"duel": {}, "round": {}}
    for duel_id, timers in turns.items():
        groups["duel"][duel_id] = {duel_id: timers}
        groups["round"].setdefault(duel_id.rsplit(".", 1)[0], {})[duel_id] = timers
    intro_at: dict[int, int] = {}
    for t, at in unique.values():
        if t.kind is TimerKind.INTRO:
            intro_at[t.seq] = at
    other = n - kinds[TimerKind.TURN]
    other_invs = len(clock_invs) - len(turn_invs)
    other_rru = clock_rru - turn_rru
    other_gb_s = sum(
        express_gb_s((t.due_ms - at) / 1000 + task_s)
        for t, at in unique.values()
        if t.kind is not TimerKind.TURN
    )
    for scope, loops in groups.items():
        execs = wakes = 0
        spans: list[float] = []
        gb_s = 0.0
        per_round = scope == "round"
        for key, duels in loops.items():
            rnd = int(key.rsplit(".", 1)[1]) if per_round else -1
            w, span = _loop(duels, run.duel_ends, intro_at.get(rnd) if per_round else None)
            execs += 1
            wakes += w
            spans.append(span)
            gb_s += express_gb_s(span + task_s)
        # per round, the intro is the loop's first wait: its own executions go away
        o_execs = other - (len(intro_invs) if per_round else 0)
        o_invs = other_invs - (len(intro_invs) if per_round else 0)
        o_rru = other_rru - (sum(c.rru for i in intro_invs for c in i.calls) if per_round else 0)
        o_gb_s = other_gb_s - (
            sum(
                express_gb_s((t.due_ms - at) / 1000 + task_s)
                for t, at in unique.values()
                if t.kind is TimerKind.INTRO
            )
            if per_round
            else 0.0
        )
        lambdas = o_invs + wakes
        rru = o_rru + wakes * get_rru_each
        transitions = (
            o_execs * STANDARD_TRANSITIONS_PER_DEADLINE
            + wakes * STANDARD_TRANSITIONS_PER_WAKE
            + execs
        )
        what = f"{execs} loops, {wakes} wakes for {kinds[TimerKind.TURN]} turn deadlines"
        designs.append(
            ClockDesign(
                f"Standard, one looping execution per {scope}",
                o_execs + execs,
                transitions,
                0.0,
                lambdas,
                rru,
                usd(transitions, 0, 0.0, lambdas, rru),
                sfn_usd(transitions, 0, 0.0),
                True,
                what + "; a guess starts nothing",
            )
        )
        designs.append(
            ClockDesign(
                f"Express, one looping execution per {scope}",
                o_execs + execs,
                0,
                gb_s + o_gb_s,
                lambdas,
                rru,
                usd(0, o_execs + execs, gb_s + o_gb_s, lambdas, rru),
                sfn_usd(0, o_execs + execs, gb_s + o_gb_s),
                True,
                f"longest {max(spans, default=0):.0f} s; needs a hand-over to a fresh execution "
                "before Express's 5-min limit (a duel can last 6 min)",
            )
        )
    return designs


def cost_of(run: TournamentRun, prices: dict[str, Any]) -> CostReport:
    act = run.action
    lam = prices["lambda"]
    ddb = prices["dynamodb"]
    api = prices["apigateway_websocket"]
    inc = int(api["message_increment_bytes"])
    non_clock = [i for i in run.invocations if not i.route.startswith("clock:")]
    inbound = sum(1 for i in non_clock if not i.route.startswith("$"))
    posts = [c for c in act.calls if c.op == "PostToConnection"]
    out_units = sum(max(1, math.ceil(c.payload_bytes / inc)) for c in posts)
    conn_minutes = run.players * CONNECTION_MINUTES_PER_PLAYER
    gb_s = len(non_clock) * LAMBDA_MS / 1000 * LAMBDA_GB
    designs = clock_designs(run, prices)
    today = designs[0]
    non_clock_rru = act.rru - today.clock_rru
    wru = act.wru + act.gsi_wru
    lines = [
        CostLine(
            "Lambda requests (routes)",
            len(non_clock),
            "requests",
            len(non_clock) * float(lam["request"]),
        ),
        CostLine(
            f"Lambda duration (routes; {LAMBDA_MS:.0f} ms @ {LAMBDA_GB * 1024:.0f} MB arm64)",
            gb_s,
            "GB-s",
            gb_s * float(lam["gb_second_arm64"]),
        ),
        CostLine(
            "DynamoDB writes (table + GSI)",
            wru,
            "WRU",
            wru * float(ddb["write_request_unit"]),
        ),
        CostLine(
            "DynamoDB reads (routes)",
            non_clock_rru,
            "RRU",
            non_clock_rru * float(ddb["read_request_unit"]),
        ),
        CostLine(
            "API Gateway messages in",
            inbound,
            "messages",
            inbound * float(api["message"]),
        ),
        CostLine(
            "API Gateway messages out (PostToConnection)",
            out_units,
            "messages",
            out_units * float(api["message"]),
        ),
        CostLine(
            f"API Gateway connection minutes ({run.players} x {CONNECTION_MINUTES_PER_PLAYER:.0f})",
            conn_minutes,
            "minutes",
            conn_minutes * float(api["connection_minute"]),
        ),
        CostLine(
            "Clock: Step Functions + clock Lambda + its reads (today's design)",
            today.executions,
            "executions",
            today.usd,
        ),
    ]
    counts = {
        "invocations": len(run.invocations),
        "route_invocations": len(non_clock),
        "clock_invocations": today.clock_invocations,
        "inbound_messages": inbound,
        "posts": len(posts),
        "post_bytes": sum(c.payload_bytes for c in posts),
        "rru": act.rru,
        "wru": act.wru,
        "gsi_wru": act.gsi_wru,
        "alt_wru": sum(c.alt_wru for c in act.calls),
        "start_executions": sum(1 for c in act.calls if c.op == "StartExecution"),
        "executions": today.executions,
    }
    return CostReport(run, lines, designs, prices, counts)


def fanout(run: TournamentRun) -> tuple[int, int]:
    """(PostToConnection calls, calls if each invocation sent one frame per recipient)."""
    posts = sum(1 for i in run.invocations for c in i.calls if c.op == "PostToConnection")
    frames = sum(
        len({c.target for c in inv.calls if c.op == "PostToConnection"}) for inv in run.invocations
    )
    return posts, frames


def measure(style: PlayStyle | None = None, seed: int = 11) -> CostReport:
    with moto_env():
        b = CountingBackend(seed=seed)
        run = play_tournament(b, style or PlayStyle(), seed=seed)
    return cost_of(run, load_prices())
