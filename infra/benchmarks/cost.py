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

The clock is the one built (``shared.adapters.step_functions``): one looping Express execution
per round
— the intro timer starts it, each wake applies what is due and waits for the round's next
deadline, a handover starts a successor before Express's 5 minutes — plus one execution per
reconnect timer; a turn timer starts nothing. The harness's manual clock plays the state
machine (``calls.StepFunctionsManualClock``), so its executions, wakes (stale ones included),
handovers and their spans are *measured* on the play, and billed as Express: per request plus
duration (start to last wake, plus ``CLOCK_TASK_MS`` per wake) at 64 MB, rounded up to 100 ms.

Other clock designs are *modelled* on the same play (the timeline of every deadline the services
scheduled, turn timers included):

- Standard, one execution per deadline (the design before): 2 state transitions (Wait, Task)
  each; every execution invokes the clock function, stale ones included;
- Express, one execution per deadline: billed per request plus its duration (the whole wait) at
  64 MB, rounded up to 100 ms;
- one looping execution per duel: Wait -> Task -> Choice until the duel is over (the clock
  function returns the duel's current deadline; a turn deadline only ever moves later — a new
  one is set at ``t + 30 s`` after every older one was — so waking at a stale deadline and waiting
  again is correct); intros and reconnects stay one execution per deadline;
- one looping execution per round: the same loop over the round's duels, waking at the earliest
  current deadline, started with the intro as its first wait (the model of what was built);
- each loop as Standard (3 transitions per wake + 1) or Express (billed for the loop's whole
  duration at 64 MB; no handover modelled).
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
    Execution,
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
    executions: list[Execution] = field(default_factory=list)
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
    skips = _count_skips(players)
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
    def built(self) -> ClockDesign:
        """The clock in the code (measured on the play)."""
        return self.designs[0]

    @property
    def before(self) -> ClockDesign:
        """The clock it replaced: Standard, one execution per deadline (modelled)."""
        return self.designs[1]

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
    """The built clock (measured on the play) first, then the other designs (modelled on the
    same play's deadlines). The second is the design before (Standard, one per deadline)."""
    sfn = prices["stepfunctions"]
    rru_price = float(prices["dynamodb"]["read_request_unit"])
    unique: dict[str, tuple[Timer, int]] = {}
    for timer, at in run.scheduled:
        unique.setdefault(timer.name, (timer, at))
    kinds = Counter(t.kind for t, _ in unique.values())
    clock_invs = [i for i in run.invocations if i.route.startswith("clock:")]
    wake_invs = [i for i in clock_invs if not i.route.startswith("clock:reconnect:")]
    reconnect_invs = [i for i in clock_invs if i.route.startswith("clock:reconnect:")]
    clock_rru = sum(c.rru for i in clock_invs for c in i.calls)
    wake_rru = sum(c.rru for i in wake_invs for c in i.calls if c.op == "GetItem")
    rru_each = wake_rru / len(wake_invs) if wake_invs else 1.0
    """A tournament deadline's firing reads the tournament item once (stale or not)."""
    reconnect_rru = sum(c.rru for i in reconnect_invs for c in i.calls)
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
    # the built clock, as played
    execs = run.executions
    gb_s = sum(express_gb_s(e.seconds + e.wakes * task_s) for e in execs)
    loops = [e for e in execs if e.kind == "intro" and not e.successor]
    handovers = sum(1 for e in execs if e.handed_over)
    wakes = sum(e.wakes for e in execs if e.kind == "intro")
    stale = sum(e.stale_wakes for e in execs if e.kind == "intro")
    longest = max((e.seconds for e in execs), default=0.0)
    designs.append(
        ClockDesign(
            "Express, one looping execution per round (built; measured)",
            len(execs),
            0,
            gb_s,
            len(clock_invs),
            clock_rru,
            usd(0, len(execs), gb_s, len(clock_invs), clock_rru),
            sfn_usd(0, len(execs), gb_s),
            True,
            f"{len(loops)} round loops + {handovers} handovers + "
            f"{len(execs) - len(loops) - handovers} reconnect; {wakes} wakes ({stale} stale) for "
            f"{kinds[TimerKind.TURN]} turn deadlines; longest execution {longest:.0f} s",
        )
    )
    # one execution per deadline (the design before, and its Express twin)
    lambdas = n
    rru = (n - kinds[TimerKind.RECONNECT]) * rru_each + reconnect_rru
    transitions = n * STANDARD_TRANSITIONS_PER_DEADLINE
    designs.append(
        ClockDesign(
            "Standard, one execution per deadline (before)",
            n,
            transitions,
            0.0,
            lambdas,
            rru,
            usd(transitions, 0, 0.0, lambdas, rru),
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
            lambdas,
            rru,
            usd(0, n, gb_s, lambdas, rru),
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
    intro_gb_s = 0.0
    for t, at in unique.values():
        if t.kind is TimerKind.INTRO:
            intro_at[t.seq] = at
            intro_gb_s += express_gb_s((t.due_ms - at) / 1000 + task_s)
    other = n - kinds[TimerKind.TURN]  # intros and reconnects: one execution each
    other_gb_s = sum(
        express_gb_s((t.due_ms - at) / 1000 + task_s)
        for t, at in unique.values()
        if t.kind is not TimerKind.TURN
    )
    for scope, group in groups.items():
        n_loops = n_wakes = 0
        spans: list[float] = []
        gb_s = 0.0
        per_round = scope == "round"
        for key, duels in group.items():
            rnd = int(key.rsplit(".", 1)[1]) if per_round else -1
            w, span = _loop(duels, run.duel_ends, intro_at.get(rnd) if per_round else None)
            n_loops += 1
            n_wakes += w
            spans.append(span)
            gb_s += express_gb_s(span + task_s)
        # per round, the intro is the loop's first wait (counted in its wakes)
        o_execs = other - (kinds[TimerKind.INTRO] if per_round else 0)
        o_gb_s = other_gb_s - (intro_gb_s if per_round else 0.0)
        lambdas = o_execs + n_wakes
        rru = (lambdas - kinds[TimerKind.RECONNECT]) * rru_each + reconnect_rru
        transitions = (
            o_execs * STANDARD_TRANSITIONS_PER_DEADLINE
            + n_wakes * STANDARD_TRANSITIONS_PER_WAKE
            + n_loops
        )
        what = f"{n_loops} loops, {n_wakes} wakes for {kinds[TimerKind.TURN]} turn deadlines"
        designs.append(
            ClockDesign(
                f"Standard, one looping execution per {scope} (model)",
                o_execs + n_loops,
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
                f"Express, one looping execution per {scope} (model)",
                o_execs + n_loops,
                0,
                gb_s + o_gb_s,
                lambdas,
                rru,
                usd(0, o_execs + n_loops, gb_s + o_gb_s, lambdas, rru),
                sfn_usd(0, o_execs + n_loops, gb_s + o_gb_s),
                True,
                f"{what}; longest {max(spans, default=0):.0f} s, no handover modelled",
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
            "Clock: Step Functions + clock Lambda + its reads (built: Express loop per round)",
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
        "deadlines": len({t.name for t, _ in run.scheduled}),
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
