"""Benchmark, figure 3: cost of one 8-player tournament at on-demand list prices.

A whole tournament is played through the harness on moto with the real adapters
(``calls.CountingBackend``): 8 sessions, 8 joins, every duel played with realistic pacing — a
discrete-event simulation on the manual clock, so timers fire when real time would pass them:
each turn a think time is drawn, a few turns are left to time out (skips), a few guesses are
refused words, each duel is solved after 4–8 rows. When the tournament is over, time runs on
until every pending deadline has fired (stale ones included: they are billed too), then the 8
players disconnect. Every AWS call of every handler invocation is counted (figure 1's hook).

The prices are data (``prices.json``: date and source). Lambda duration is measured: each
invocation's own CPU time in-process (its process time minus the time inside its AWS calls,
where moto answers) plus a stated wait per AWS call (``CALL_LATENCY_MS``), rounded up to the
whole millisecond as Lambda bills (``billed_ms``). All-in: CloudWatch Logs ingestion — the
functions' (platform lines, one EMF metrics line per invocation, a line per refusal), the
stage's access logs (a line per connect, disconnect and message, pings included:
``ACCESS_LOG_BYTES``) and the Express machine's execution logs at level ALL (each state's
history events, counted from the interpreter's history: ``sfn_log_events``) — X-Ray under
the deployed policy (prod: off), and the fixed monthly alarms, dashboard and custom metrics
spread over ``TOURNAMENTS_PER_MONTH``.

Each item also has a floor (``CostLine.floor_usd``): the least it can cost on the same play
under the design (a Step Functions clock) and the rulings, keeping what the alarms read, with
the reason it cannot go lower; the clock's is ``clock_floor`` (an Express loop billed for each
round's whole span). The floors' sum (``CostReport.floor``) stands beside the total: when the
total misses the goal, it says whether this design could meet it at all.

The clock is the one built (``shared.adapters.step_functions``): one looping Express execution
per round — the intro timer starts it, each wake applies what is due and waits for the round's
next due time, a handover starts a successor before Express's 5 minutes — plus one execution per
reconnect timer; a turn schedules nothing. The harness's clock is the local interpreter of the
deployed definition (``infra.emulator.states.ManualClock``, metered by ``calls.MeteredClock``),
so its executions, wakes (clock-function invocations; stale ones — answered ``applied: false``
— included), handovers and their spans (start to end, from each execution's ``history``) are
*measured* on the play, and billed as Express: per request plus duration (start to end, plus
``CLOCK_TASK_MS`` per wake) at 64 MB, rounded up to 100 ms.

Other clock designs are *modelled* on the same play, from the timeline of every deadline it had
(``Deadline``): the intro and reconnect timers the services scheduled, and the turn deadlines.
Turns no longer schedule a timer, so their deadlines are read from the game itself: each
``duel_start`` message (the first turn's ``deadline_ms``) and each ``turn`` message with a
``deadline_ms`` (the next turn's) the players were sent is one turn deadline — exactly the
turn timers the per-deadline clock scheduled, set when that message was sent (the messages and
their times: ``calls.ApiGatewayRecordingNotifier.log``; a duel's end: its ``duel_end``):

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
  duration plus ``CLOCK_TASK_MS`` per wake at 64 MB, as the built clock; no handover
  modelled).

Every modelled wait ends when the built clock's would (``wake_ms``): a turn deadline's skip is
due ``skip_grace_ms`` after it, and a Wait ends on the whole second.
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
    WRITES,
    ActionCount,
    ApiGatewayRecordingNotifier,
    ClockExecution,
    CountingBackend,
    Invocation,
    MeteredClock,
    moto_env,
)
from infra.cdk.constructs.log_formats import ACCESS_LOG_FORMAT
from infra.emulator.testing import ScriptedPlayer
from shared.adapters.step_functions import state_machine_definition
from shared.services.ports import Timer

PRICES_PATH = Path(__file__).with_name("prices.json")
GOAL_USD = 0.0025
"""Issue 16: all-in, per 8-player tournament."""
LAMBDA_MS = 50.0
"""The assumption the model used before handler times were measured (kept for the
sensitivity note)."""
LAMBDA_GB = 0.25
CALL_LATENCY_MS = {"dynamodb": 6.0, "apigatewaymanagementapi": 12.0, "stepfunctions": 20.0}
"""Wall time a handler waits on one AWS call in the same region, by service (assumptions: the
network round trip plus the service's own time; DynamoDB documents "single-digit millisecond"
latency, https://aws.amazon.com/dynamodb/; the Management API and Step Functions publish no
figure). A Lambda's billed duration is its own CPU (measured) plus these waits."""
PLATFORM_LOG_BYTES = 300
"""Lambda's START, END and REPORT lines per invocation (about 70 + 50 + 180 bytes)."""
EMF_LOG_BYTES = 450
"""One Powertools Metrics EMF line per invocation that counted something (the namespace,
dimensions and metric names in JSON)."""
REFUSAL_LOG_BYTES = 400
"""One INFO JSON line (Powertools Logger with the Lambda context and correlation keys) per
refused request."""
_ACCESS_LOG_SAMPLE = {
    "$context.requestId": "Bx1Z2FabcdEFgHw=",
    "$context.requestTimeEpoch": "1764748800123",
    "$context.stage": "prod",
    "$context.connectionId": "Bx1YxcdEIAMCJhQ=",
    "$context.identity.sourceIp": "203.0.113.42",
    "$context.eventType": "MESSAGE",
    "$context.routeKey": "guess",
    "$context.status": "200",
    "$context.integration.status": "200",
    "$context.integration.latency": "27",
    "$context.error.message": "-",
    "$context.integration.error": "-",
}
"""Typical values of the access log's variables (ids of API Gateway's length, a guess)."""


def access_log_line() -> str:
    """One access log line of the deployed format (``infra.cdk.constructs.log_formats``) with
    typical values, newline included: API Gateway writes one per ``$connect``, ``$disconnect``
    and message, pings included; the stage's status alarms read them (metric filters), so they
    stay on."""
    return json.dumps({k: _ACCESS_LOG_SAMPLE[v] for k, v in ACCESS_LOG_FORMAT.items()}) + "\n"


ACCESS_LOG_BYTES = len(access_log_line())
"""Bytes of ``access_log_line``."""
SFN_LOG_EVENT_BYTES = len(
    json.dumps(
        {
            "id": "12",
            "type": "TaskStateEntered",
            "details": {"name": "ApplyDeadline", "inputDetails": {"truncated": False}},
            "previous_event_id": "11",
            "event_timestamp": "1764748800123",
            "execution_arn": "arn:aws:states:us-east-1:123456789012:express:"
            "WordleTournament-prod-DeadlinesA1B2C3D4-Xy9AbCdEfGhI:"
            "r-01JC5W6T2P7QY9ZKX3M4N8B5V1-3:6f1c2a4e-3b5d-4e7f-9a8b-0c1d2e3f4a5b",
            "redrive_count": "0",
        }
    )
    + "\n"
)
"""One Step Functions history event as the Express machine logs it to CloudWatch Logs at level
ALL without execution data (``infra.cdk.constructs.deadline_clock``): the fields of "Using
CloudWatch Logs to log execution history in Step Functions"
(https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html), billed at the vended logs
rate."""
SFN_EVENTS_PER_STATE = {"Wait": 2, "Choice": 2, "Succeed": 2, "Pass": 2, "Fail": 1, "Task": 5}
"""History events a state logs: ``<Type>StateEntered`` and ``<Type>StateExited``; a Task also
``TaskScheduled``, ``TaskStarted`` and ``TaskSucceeded``; a Fail state only enters. Each
execution adds ``ExecutionStarted`` and its end (``ExecutionSucceeded``/``Failed``)."""
TOURNAMENTS_PER_MONTH = 100_000
"""The volume the fixed monthly costs (alarms, dashboard, custom metrics) are spread over."""
ALARM_METRICS = 64
"""Alarm metrics per stage (``infra.cdk.constructs.monitoring``: 52 alarms, 64 metrics)."""
CUSTOM_METRICS = 12
"""Application metrics published per stage (Powertools, one namespace, one dimension)."""
PING_EVERY_MS = 20_000
"""A player pings after 20 s without sending any message, as the web client and the bots do
(ruling 14: a message at least every 20 s, ``shared.protocol.limits.PING_INTERVAL_SECONDS``).
API Gateway answers each ping itself (a MOCK route: a message in and a route response out, no
function, no write)."""
CONNECTION_MINUTES_PER_PLAYER = 15.0
"""Assumption of the brief: each of the 8 players is connected ~15 min (lobby, play, results)."""
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
    return sqs_usd, sqs_usd + _lambda_usd(prices, deadlines, lambda_ms) + rru_usd


def load_prices(path: Path = PRICES_PATH) -> dict[str, Any]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]


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


# ------------------------------------------------------------------------------ cost model
@dataclass
class CostLine:
    """One item of the bill for one tournament, with its floor: the least the item can cost
    for the same play under DESIGN.md's design and rulings, keeping what the alarms read
    (``floor_usd``, USD), and why it cannot go lower (``floor_why``)."""

    item: str
    quantity: float
    unit: str
    usd: float
    floor_usd: float
    floor_why: str


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

    @property
    def floor(self) -> float:
        """The sum of the items' floors (``CostLine.floor_usd``): the least this design can
        cost for the same play."""
        return sum(line.floor_usd for line in self.lines)

    def total_with(self, design: ClockDesign) -> float:
        """The tournament's total with ``design`` as its clock: the built clock's cost, and
        its Step Functions logs when ``design`` runs without Step Functions, replaced."""
        today = self.designs[0]
        logs = 0.0 if design.step_functions else self.counts.get("sfn_log_usd", 0.0)
        return self.total - today.usd - logs + design.usd

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
        """The cheapest correct design: the built one unless another design is cheaper (the
        model of the built design is not another design)."""
        others = [d for d in self.designs if d.correct and not d.models_built]
        return min(others, key=lambda d: d.usd)


def billed_ms(inv: Invocation, *, own_cpu: bool = True) -> int:
    """One invocation's billed Lambda duration (ms, rounded up to the whole ms as Lambda
    bills): its own CPU as measured in-process (unless ``own_cpu`` is False: the floor) plus
    ``CALL_LATENCY_MS`` per AWS call."""
    waits = sum(CALL_LATENCY_MS.get(c.service, 10.0) for c in inv.calls)
    return max(1, math.ceil((inv.own_cpu_ms if own_cpu else 0.0) + waits))


def express_gb_s(seconds: float, prices: dict[str, Any]) -> float:
    """Billed Express GB-seconds of an execution lasting ``seconds``: rounded up to the
    duration increment (100 ms), at the smallest memory (64 MB)."""
    sfn = prices["stepfunctions"]
    inc_ms = float(sfn["express_duration_increment_ms"])
    return math.ceil(seconds * 1000 / inc_ms) * inc_ms / 1000 * float(sfn["express_min_memory_gb"])


def mean_billed_ms(invocations: list[Invocation]) -> float:
    """The mean ``billed_ms`` of ``invocations`` (``LAMBDA_MS`` when there are none)."""
    if not invocations:
        return LAMBDA_MS
    return sum(billed_ms(i) for i in invocations) / len(invocations)


def _lambda_usd(prices: dict[str, Any], invocations: float, ms: float = LAMBDA_MS) -> float:
    lam = prices["lambda"]
    gb_s = invocations * ms / 1000 * LAMBDA_GB
    return invocations * float(lam["request"]) + gb_s * float(lam["gb_second_arm64"])


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
            + _lambda_usd(prices, lambdas, mean_billed_ms(clock_invs))
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
            f"idle polling; not built: it replaces Step Functions (DESIGN.md), a design "
            "decision. DelaySeconds is whole seconds (up to 900), like the Wait; a long poll "
            "returns a message as soon as it is visible; at-least-once is fine (seq-guarded "
            "clock fn); no Step Functions logs",
            step_functions=False,
        )
    )
    return designs


def sfn_log_events(run: TournamentRun) -> int:
    """History events the built clock's executions log at level ALL: two per execution
    (started, ended) plus ``SFN_EVENTS_PER_STATE`` for each state each one entered (the
    interpreter's ``history``, the deployed definition's state types)."""
    types = {name: st["Type"] for name, st in state_machine_definition("arn")["States"].items()}
    return sum(
        2 + sum(SFN_EVENTS_PER_STATE[types[state]] for _, state in e.execution.history)
        for e in run.executions
    )


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
        + _lambda_usd(prices, applied, mean_billed_ms(clock_invs))
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


def write_floor_wru(run: TournamentRun) -> float:
    """Write units if every item written were at most 1 KB: 1 WRU per item (2 in a
    transaction), index writes as counted."""
    act = run.action
    base = sum(
        (2 if c.op == "TransactWriteItems" else 1) * c.items
        for c in act.calls
        if c.service == "dynamodb" and c.op in WRITES
    )
    return base + act.gsi_wru


def cost_of(run: TournamentRun, prices: dict[str, Any]) -> CostReport:
    act = run.action
    lam = prices["lambda"]
    ddb = prices["dynamodb"]
    api = prices["apigateway_websocket"]
    inc = int(api["message_increment_bytes"])
    non_clock = [i for i in run.invocations if not i.route.startswith("clock:")]
    routed_in = sum(1 for i in non_clock if not i.route.startswith("$"))
    inbound = routed_in + run.gateway_answered
    posts = [c for c in act.calls if c.op == "PostToConnection"]
    out_units = sum(max(1, math.ceil(c.payload_bytes / inc)) for c in posts)
    pongs = run.gateway_answered  # route responses: one message each (about 60 bytes)
    conn_minutes = run.players * CONNECTION_MINUTES_PER_PLAYER
    route_ms = mean_billed_ms(non_clock)
    gb_s = sum(billed_ms(i) for i in non_clock) / 1000 * LAMBDA_GB
    cw = prices["cloudwatch"]
    refusals = sum(
        1 for i in non_clock for c in i.calls if c.op == "PostToConnection" and c.refusal
    )
    log_bytes = (
        len(run.invocations) * (PLATFORM_LOG_BYTES + EMF_LOG_BYTES) + refusals * REFUSAL_LOG_BYTES
    )
    fixed_month = (
        ALARM_METRICS * float(cw["alarm_metric_month"])
        + float(cw["dashboard_month"])
        + CUSTOM_METRICS * float(cw["custom_metric_month"])
    )
    designs = clock_designs(run, prices)
    today = designs[0]
    non_clock_rru = act.rru - today.clock_rru
    wru = act.wru + act.gsi_wru
    floor_gb_s = sum(billed_ms(i, own_cpu=False) for i in non_clock) / 1000 * LAMBDA_GB
    own_ms = sum(i.own_cpu_ms for i in non_clock) / max(1, len(non_clock))
    floor_wru = write_floor_wru(run)
    _, frames = fanout(run)
    frame_units = frames + (out_units - len(posts))  # a frame over 32 KB bills more units
    access_lines = len(non_clock) + run.gateway_answered
    access_bytes = access_lines * ACCESS_LOG_BYTES
    sfn_events = sfn_log_events(run)
    sfn_bytes = sfn_events * SFN_LOG_EVENT_BYTES
    lambda_floor_bytes = log_bytes - len(run.invocations) * PLATFORM_LOG_BYTES
    clock_floor_usd, clock_why = clock_floor(run, prices)
    per_gb = float(cw["log_ingestion_gb"])
    vended_gb = float(cw["vended_log_ingestion_gb"])
    msg = float(api["message"])
    same = "as built: "
    lines = [
        CostLine(
            "Lambda requests (routes)",
            len(non_clock),
            "requests",
            len(non_clock) * float(lam["request"]),
            len(non_clock) * float(lam["request"]),
            same + "one per $connect, $disconnect and action message; pings never reach a function",
        ),
        CostLine(
            f"Lambda duration (routes; measured CPU + AWS waits, mean {route_ms:.1f} ms @ "
            f"{LAMBDA_GB * 1024:.0f} MB arm64)",
            gb_s,
            "GB-s",
            gb_s * float(lam["gb_second_arm64"]),
            floor_gb_s * float(lam["gb_second_arm64"]),
            f"the AWS waits alone: our own CPU ({own_ms:.1f} ms of {route_ms:.1f} ms per "
            "invocation) is all that code can remove",
        ),
        CostLine(
            "DynamoDB writes (table + GSI)",
            wru,
            "WRU",
            wru * float(ddb["write_request_unit"]),
            floor_wru * float(ddb["write_request_unit"]),
            (same if floor_wru >= wru else "")
            + f"every item at most 1 KB ({floor_wru:.0f} WRU: 1 per item written, 2 in a "
            "transaction, and the index entries)"
            + ("" if floor_wru >= wru else "; the rest is the tournament item over 1 KB"),
        ),
        CostLine(
            "DynamoDB reads (routes)",
            non_clock_rru,
            "RRU",
            non_clock_rru * float(ddb["read_request_unit"]),
            non_clock_rru * float(ddb["read_request_unit"]),
            same + "one strongly consistent read per change, every item under 4 KB (1 RRU)",
        ),
        CostLine(
            f"API Gateway messages in ({routed_in} to functions, {run.gateway_answered} pings "
            "answered by the gateway)",
            inbound,
            "messages",
            inbound * msg,
            inbound * msg,
            same + "the players' actions, and a ping after 20 s of silence (ruling 14)",
        ),
        CostLine(
            "API Gateway messages out (PostToConnection)",
            out_units,
            "messages",
            out_units * msg,
            frame_units * msg,
            f"one frame per recipient per change ({frames} frames; figure 1)",
        ),
        CostLine(
            "API Gateway messages out (pong route responses of the ping mock route)",
            pongs,
            "messages",
            pongs * msg,
            pongs * msg,
            same + "the MOCK route answers each ping with pong (ruling 14)",
        ),
        CostLine(
            f"API Gateway connection minutes ({run.players} x {CONNECTION_MINUTES_PER_PLAYER:.0f})",
            conn_minutes,
            "minutes",
            conn_minutes * float(api["connection_minute"]),
            conn_minutes * float(api["connection_minute"]),
            same + "the players' time connected (the brief's assumption)",
        ),
        CostLine(
            "Clock: Step Functions + clock Lambda + its reads (built: Express loop per round)",
            today.executions,
            "executions",
            today.usd,
            min(clock_floor_usd, today.usd),
            clock_why,
        ),
        CostLine(
            "CloudWatch Logs: Lambda (platform lines, EMF metrics, refusals)",
            log_bytes / 1e9,
            "GB",
            log_bytes / 1e9 * per_gb,
            lambda_floor_bytes / 1e9 * per_gb,
            "without Lambda's START/END/REPORT lines (JSON log format, system log level WARN); "
            "the EMF lines are the alarms' metrics",
        ),
        CostLine(
            f"CloudWatch Logs: API Gateway access logs ({access_lines} lines of "
            f"{ACCESS_LOG_BYTES} B)",
            access_bytes / 1e9,
            "GB",
            access_bytes / 1e9 * per_gb,
            access_bytes / 1e9 * per_gb,
            same + "one line per connect, disconnect and message; the stage's status alarms "
            "read them",
        ),
        CostLine(
            f"CloudWatch Logs: Step Functions, level ALL ({sfn_events} history events of "
            f"{SFN_LOG_EVENT_BYTES} B, vended logs)",
            sfn_bytes / 1e9,
            "GB",
            sfn_bytes / 1e9 * vended_gb,
            0.0,
            "level ERROR logs only failures (none on this play); ALL is kept because Express "
            "keeps no execution history: the logs are the only record of a loop's wakes",
        ),
        CostLine(
            "X-Ray traces (prod policy: tracing off; dev: one trace per invocation, below)",
            0,
            "traces",
            0.0,
            0.0,
            same + "tracing is off in prod",
        ),
        CostLine(
            f"Alarms ({ALARM_METRICS} metrics), dashboard, {CUSTOM_METRICS} custom metrics: "
            f"${fixed_month:.2f}/month over {TOURNAMENTS_PER_MONTH:,} tournaments",
            1 / TOURNAMENTS_PER_MONTH,
            "months",
            fixed_month / TOURNAMENTS_PER_MONTH,
            fixed_month / TOURNAMENTS_PER_MONTH,
            same + "fixed per month: falls with volume",
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
        "deadlines": len({d.name for d in run.deadlines}),
        "route_ms": route_ms,
        "route_own_cpu_ms": sum(i.own_cpu_ms for i in non_clock) / max(1, len(non_clock)),
        "clock_ms": mean_billed_ms([i for i in run.invocations if i.route.startswith("clock:")]),
        "log_bytes": log_bytes,
        "access_log_bytes": access_bytes,
        "sfn_log_events": sfn_events,
        "sfn_log_usd": sfn_bytes / 1e9 * vended_gb,
        "xray_dev_usd": (len(run.invocations) + today.executions)
        * float(prices["xray"]["trace_recorded"]),
        "fixed_month_usd": fixed_month,
    }
    counts.update(liveness_cost(run, prices))
    return CostReport(run, lines, designs, prices, counts)


def liveness_cost(run: TournamentRun, prices: dict[str, Any]) -> dict[str, float]:
    """What ruling 14's liveness adds to one tournament: the pings (a message in each) and
    their ``pong`` route responses (a message out each) — API Gateway answers them, no
    function runs, nothing is written — and the GetConnection reads of ``LastActiveAt`` when
    a turn runs out or the 8th seat fills, whose only cost is the caller's wait (billed in its
    Lambda duration, ``CALL_LATENCY_MS``): API Gateway bills WebSocket messages and connection
    minutes, and a GetConnection is neither ("you pay only for messages sent and received and
    for the time a user or device is connected", Amazon API Gateway FAQs and pricing,
    https://aws.amazon.com/api-gateway/pricing/). Keys: ``pings``, ``ping_wru`` (0: no
    stamp), ``liveness_reads``, ``liveness_usd`` (all of it), ``stamp_usd`` (what liveness
    adds beyond the ping and pong messages: the reads' waits)."""
    lam = prices["lambda"]
    api = prices["apigateway_websocket"]
    reads = [c for i in run.invocations for c in i.calls if c.op == "GetConnection"]
    wait_ms = len(reads) * CALL_LATENCY_MS["apigatewaymanagementapi"]
    reads_usd = wait_ms / 1000 * LAMBDA_GB * float(lam["gb_second_arm64"])
    messages_usd = 2 * run.gateway_answered * float(api["message"])
    return {
        "pings": run.gateway_answered,
        "ping_wru": 0,
        "liveness_reads": len(reads),
        "liveness_rru": 0,
        "liveness_usd": messages_usd + reads_usd,
        "stamp_usd": reads_usd,
    }


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
