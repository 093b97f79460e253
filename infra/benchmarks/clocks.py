"""Benchmark, figure 3: the clock — the built one measured on the play, the others modelled.

The built clock (``shared.adapters.step_functions``: one looping Express execution per round
plus one per reconnect timer) runs in the harness on ``infra.emulator.states.ManualClock``,
metered by ``infra.benchmarks.calls.MeteredClock``: its executions, wakes, handovers and spans
are measured and billed as Express (``CLOCK_TASK_MS`` per wake, 64 MB, 100 ms rounding). The
other designs (``clock_designs``) and the SQS delay queue (``sqs_clock_usd``) are modelled on
the same play's deadlines; ``clock_floor`` is the least a Step Functions clock can cost on it.
Prices: ``infra.benchmarks.prices``. The designs: ``shared/domain/RULINGS.md``, design notes,
"The clock designs compared".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from infra.benchmarks.play import Deadline, TournamentRun
from infra.benchmarks.prices import TOURNAMENTS_PER_MONTH, express_gb_s, lambda_usd, mean_billed_ms

STANDARD_TRANSITIONS_PER_DEADLINE = 2
"""Wait + Task: "a state transition each time a step of your workflow is executed"."""
STANDARD_TRANSITIONS_PER_WAKE = 3
"""Per-duel loop: Wait + Task + Choice per wake, plus 1 for the final Succeed."""
CLOCK_TASK_MS = 100
"""Express duration after the wait: invoking the clock function (assumption)."""
SQS_DESIGN = "SQS delay queue, one message per deadline, clock function by event source mapping"
"""The clock outside Step Functions that the cost table models (not built: a design decision)."""
SQS_REQUESTS_PER_DEADLINE = 3
"""The SQS clock (a model, not built): SendMessage with ``DelaySeconds``, the event source
mapping's ReceiveMessage that returns it, its DeleteMessage after the clock function succeeds
(one message per batch: deadlines seldom fall due together)."""
SQS_IDLE_POLLERS = 5
"""The SQS clock's event source mapping keeps long-polling an empty queue (20 s polls, each a
billed request). Lambda does not document how many pollers an idle mapping keeps: this is an
assumption; at 100,000 tournaments a month even 50 would add about $0.00003 per tournament."""
SQS_LONG_POLL_S = 20
"""The longest ReceiveMessage wait (SQS long polling, the event source mapping's)."""


def sqs_clock_usd(
    deadlines: int, prices: dict[str, Any], lambda_ms: float, rru: float
) -> tuple[float, float]:
    """(SQS requests' cost, whole clock cost) of the SQS clock for ``deadlines`` deadlines in
    one tournament: ``SQS_REQUESTS_PER_DEADLINE`` requests and one clock-function invocation
    (``lambda_ms`` billed) per deadline, ``rru`` read units in all, and the idle polling spread
    over ``TOURNAMENTS_PER_MONTH``. USD. Prices: ``prices.json`` (``sqs``, ``lambda``,
    ``dynamodb``)."""
    month_s = 30 * 24 * 3600
    idle = SQS_IDLE_POLLERS * month_s / SQS_LONG_POLL_S / TOURNAMENTS_PER_MONTH
    sqs_usd = (deadlines * SQS_REQUESTS_PER_DEADLINE + idle) * float(prices["sqs"]["request"])
    rru_usd = rru * float(prices["dynamodb"]["read_request_unit"])
    return sqs_usd, sqs_usd + lambda_usd(prices, deadlines, lambda_ms) + rru_usd


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
    models_built: bool = False
    """The model of the built design (compared with the measured row, never proposed)."""
    step_functions: bool = True
    """Runs on Step Functions, so its execution logs are billed too (the built clock's
    ``sfn_log_usd``; the other Step Functions designs are taken to log as much)."""


def wake_ms(due_ms: int, grace_ms: int = 0) -> int:
    """When a clock waiting for ``due_ms`` (a turn deadline: plus the skip's grace) wakes: its
    Wait ends on the whole second at or after it (``step_functions.wait_timestamp``)."""
    return -(-(due_ms + grace_ms) // 1000) * 1000


def loop_wakes(
    duels: dict[str, list[tuple[int, int]]],
    ends: dict[str, int],
    first_wait_from: int | None,
    grace_ms: int,
) -> tuple[int, float]:
    """Wakes and span (s) of one looping execution over ``duels`` (duel id -> [(due, set at)]).

    At each wake the clock function applies what is due and returns the earliest current turn
    deadline of the group's running duels (a duel's current deadline is the latest one set so
    far: deadlines only move later); the loop wakes when that deadline's skip is due
    (``wake_ms``: ``grace_ms`` later, on the whole second) and ends at the first wake that
    finds every duel over. With ``first_wait_from`` the execution started then, waiting for
    the round's intro (one wake).
    """
    firsts = [min(timers, key=lambda x: x[1]) for timers in duels.values()]
    w = min(wake_ms(due, grace_ms) for due, _ in firsts)
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
            if known and wake_ms(max(known), grace_ms) > w:
                current.append(wake_ms(max(known), grace_ms))
        if not current:
            break
        w = min(current)
    return wakes, max(0, w - start) / 1000


def _turn_timers(run: TournamentRun) -> dict[str, list[tuple[int, int]]]:
    """Duel id -> [(turn deadline, set at)], from the play's turn deadlines."""
    by_duel: dict[str, list[tuple[int, int]]] = {}
    for d in run.deadlines:
        if d.kind == "turn":
            by_duel.setdefault(d.ref, []).append((d.due_ms, d.set_ms))
    return by_duel


def clock_designs(run: TournamentRun, prices: dict[str, Any]) -> list[ClockDesign]:
    """The built clock (measured on the play) first, then the other designs (modelled on the
    same play's deadlines). The second is the design before (Standard, one per deadline)."""
    sfn = prices["stepfunctions"]
    rru_price = float(prices["dynamodb"]["read_request_unit"])
    unique: dict[str, Deadline] = {}
    for deadline in run.deadlines:
        unique.setdefault(deadline.name, deadline)
    kinds = Counter(d.kind for d in unique.values())
    clock_invs = [i for i in run.invocations if i.route.startswith("clock:")]
    wake_invs = [i for i in clock_invs if not i.route.startswith("clock:reconnect:")]
    reconnect_invs = [i for i in clock_invs if i.route.startswith("clock:reconnect:")]
    clock_rru = sum(c.rru for i in clock_invs for c in i.calls)
    wake_rru = sum(c.rru for i in wake_invs for c in i.calls if c.op == "GetItem")
    rru_each = wake_rru / len(wake_invs) if wake_invs else 1.0
    """A tournament deadline's firing reads the tournament item once (stale or not)."""
    reconnect_rru = sum(c.rru for i in reconnect_invs for c in i.calls)
    n = len(unique)
    task_s = CLOCK_TASK_MS / 1000

    def sfn_usd(transitions: int, requests: int, gb_s: float) -> float:
        return (
            transitions * float(sfn["standard_transition"])
            + requests * float(sfn["express_request"])
            + gb_s * float(sfn["express_gb_second"])
        )

    def usd(transitions: int, requests: int, gb_s: float, lambdas: int, rru: float) -> float:
        return (
            sfn_usd(transitions, requests, gb_s)
            + lambda_usd(prices, lambdas, mean_billed_ms(clock_invs))
            + rru * rru_price
        )

    def waited_s(d: Deadline) -> float:
        grace = run.skip_grace_ms if d.kind == "turn" else 0
        return max(0.0, (wake_ms(d.due_ms, grace) - d.set_ms) / 1000)

    designs = []
    # the built clock, as the interpreter ran it
    execs = run.executions
    gb_s = sum(express_gb_s(e.seconds + e.wakes * task_s, prices) for e in execs)
    loops = [e for e in execs if e.kind == "intro" and not e.successor]
    successors = sum(1 for e in execs if e.successor)
    handovers = sum(1 for e in execs if e.handed_over)
    reconnects = sum(1 for e in execs if e.kind == "reconnect")
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
            f"{len(loops)} round loops + {successors} successors ({handovers} handovers) + "
            f"{reconnects} reconnect; {wakes} wakes ({stale} stale) for "
            f"{kinds['turn']} turn deadlines; longest execution {longest:.0f} s",
        )
    )
    # one execution per deadline (the design before, and its Express twin)
    lambdas = n
    rru = (n - kinds["reconnect"]) * rru_each + reconnect_rru
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
            f"{n} deadlines ({kinds['turn']} turn); every stale one still runs",
        )
    )
    gb_s = sum(express_gb_s(waited_s(d) + task_s, prices) for d in unique.values())
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
    for d in unique.values():
        if d.kind == "intro":
            intro_at[d.seq] = d.set_ms
            intro_gb_s += express_gb_s(waited_s(d) + task_s, prices)
    other = n - kinds["turn"]  # intros and reconnects: one execution each
    other_gb_s = sum(
        express_gb_s(waited_s(d) + task_s, prices) for d in unique.values() if d.kind != "turn"
    )
    for scope, group in groups.items():
        n_loops = n_wakes = 0
        spans: list[float] = []
        gb_s = 0.0
        per_round = scope == "round"
        for key, duels in group.items():
            rnd = int(key.rsplit(".", 1)[1]) if per_round else -1
            first_wait = intro_at.get(rnd) if per_round else None
            w, span = loop_wakes(duels, run.duel_ends, first_wait, run.skip_grace_ms)
            n_loops += 1
            n_wakes += w
            spans.append(span)
            gb_s += express_gb_s(span + w * task_s, prices)  # as the built clock: a task per wake
        # per round, the intro is the loop's first wait (counted in its wakes)
        o_execs = other - (kinds["intro"] if per_round else 0)
        o_gb_s = other_gb_s - (intro_gb_s if per_round else 0.0)
        lambdas = o_execs + n_wakes
        rru = (lambdas - kinds["reconnect"]) * rru_each + reconnect_rru
        transitions = (
            o_execs * STANDARD_TRANSITIONS_PER_DEADLINE
            + n_wakes * STANDARD_TRANSITIONS_PER_WAKE
            + n_loops
        )
        what = f"{n_loops} loops, {n_wakes} wakes for {kinds['turn']} turn deadlines"
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
                models_built=per_round,
            )
        )
    # outside Step Functions: one delayed SQS message per deadline (the same deadlines, stale
    # ones included, as the per-deadline designs)
    sqs_usd, sqs_total = sqs_clock_usd(n, prices, mean_billed_ms(clock_invs), rru)
    designs.append(
        ClockDesign(
            f"{SQS_DESIGN} (model)",
            0,
            0,
            0.0,
            n,
            rru,
            sqs_total,
            sqs_usd,
            True,
            f"{n} messages ({kinds['turn']} turn), {SQS_REQUESTS_PER_DEADLINE} requests each + "
            f"idle polling; not built: it replaces Step Functions (the design), a design "
            "decision. DelaySeconds is whole seconds (up to 900), like the Wait; a long poll "
            "returns a message as soon as it is visible; at-least-once is fine (seq-guarded "
            "clock fn); no Step Functions logs",
            step_functions=False,
        )
    )
    return designs


def round_spans_s(run: TournamentRun) -> dict[int, float]:
    """Round -> seconds from its intro timer being set to its last duel's end: while a round
    runs, some deadline of it is always pending, so a clock must be waiting that long."""
    intro_at = {d.seq: d.set_ms for d in run.deadlines if d.kind == "intro"}
    ends: dict[int, int] = {}
    for duel_id, ended in run.duel_ends.items():
        rnd = int(duel_id.rsplit(".", 2)[1])
        ends[rnd] = max(ends.get(rnd, 0), ended)
    return {
        rnd: max(0, ends[rnd] - at) / 1000 for rnd, at in sorted(intro_at.items()) if rnd in ends
    }


def clock_floor(run: TournamentRun, prices: dict[str, Any]) -> tuple[float, str]:
    """The least a Step Functions clock can cost on this play (USD) and why: one Express
    execution per round billed for the round's whole span (``round_spans_s``) at 64 MB, the
    smallest Express memory, rounded up to 100 ms; one clock invocation (and its read) per
    wake that applied something (no stale wakes); reconnect timers as built. Express bills the
    wait ("duration ... from the time it begins executing until it completes"; Step Functions
    pricing); Standard bills state transitions instead (``clock_designs``)."""
    sfn = prices["stepfunctions"]
    spans = round_spans_s(run)
    reconnects = [e for e in run.executions if e.kind == "reconnect"]
    gb_s = sum(express_gb_s(s, prices) for s in spans.values())
    gb_s += sum(express_gb_s(e.seconds + CLOCK_TASK_MS / 1000, prices) for e in reconnects)
    requests = len(spans) + len(reconnects)
    clock_invs = [i for i in run.invocations if i.route.startswith("clock:")]
    applied = sum(e.wakes - e.stale_wakes for e in run.executions)
    rru = sum(c.rru for i in clock_invs for c in i.calls) / max(1, len(clock_invs)) * applied
    usd = (
        requests * float(sfn["express_request"])
        + gb_s * float(sfn["express_gb_second"])
        + lambda_usd(prices, applied, mean_billed_ms(clock_invs))
        + rru * float(prices["dynamodb"]["read_request_unit"])
    )
    stale = sum(e.stale_wakes for e in run.executions)
    why = (
        f"Step Functions design: a round's Express loop waits from its intro to its last "
        f"duel's end ({sum(spans.values()):.0f} s over {len(spans)} rounds), billed at 64 MB, "
        f"the smallest Express memory; {applied} wakes that applied something. Built: "
        f"{stale} stale wakes more (a waiting execution cannot be told that its deadline "
        f"moved) and {CLOCK_TASK_MS} ms per wake for the task"
    )
    return usd, why
