"""Benchmark, figure 3: cost of one 8-player tournament at on-demand list prices, all-in, composed
from the play (``infra.benchmarks.play``), the clock (``infra.benchmarks.clocks``) and the prices
(``infra.benchmarks.prices``). Each item has a floor (``CostLine.floor_usd``, the clock's
``clock_floor``); their sum (``CostReport.floor``) says whether this design could meet the goal
at all. What is billed: ``shared/domain/RULINGS.md``, Design notes, "Benchmarks".
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from infra.benchmarks.calls import WRITES, CountingBackend, moto_env
from infra.benchmarks.clocks import ClockDesign, clock_designs, clock_floor
from infra.benchmarks.play import PlayStyle, TournamentRun, play_tournament
from infra.benchmarks.prices import (
    CALL_LATENCY_MS,
    TOURNAMENTS_PER_MONTH,
    gb_seconds,
    load_prices,
    mean_billed_ms,
    memory_mb_of,
)
from infra.benchmarks.storage import Storage, StoredItem, stored_items
from infra.cdk.constructs.log_formats import ACCESS_LOG_FORMAT
from shared.adapters.step_functions import state_machine_definition

GOAL_USD = 0.0025
"""The cost goal, USD: all-in, per 8-player tournament."""
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
CONNECTION_MINUTES_PER_PLAYER = 15.0
"""Assumption of the brief: each of the 8 players is connected ~15 min (lobby, play, results)."""


@dataclass
class CostLine:
    """One item of the bill for one tournament, with its floor: the least the item can cost
    for the same play under this design and its rulings, keeping what the alarms read
    (``floor_usd``, USD), and why it cannot go lower (``floor_why``)."""

    item: str
    quantity: float
    unit: str
    usd: float
    floor_usd: float
    floor_why: str


@dataclass
class CostReport:
    run: TournamentRun
    lines: list[CostLine]
    designs: list[ClockDesign]
    prices: dict[str, Any]
    counts: dict[str, float] = field(default_factory=dict)
    storage: Storage | None = None

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


def sfn_log_events(run: TournamentRun) -> int:
    """History events the built clock's executions log at level ALL: two per execution
    (started, ended) plus ``SFN_EVENTS_PER_STATE`` for each state each one entered (the
    interpreter's ``history``, the deployed definition's state types)."""
    types = {name: st["Type"] for name, st in state_machine_definition("arn")["States"].items()}
    return sum(
        2 + sum(SFN_EVENTS_PER_STATE[types[state]] for _, state in e.execution.history)
        for e in run.executions
    )


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


@dataclass(frozen=True)
class Fixed:
    """A stage's fixed monthly items, read from its synthesized template
    (``infra.benchmarks.figures``)."""

    alarm_metrics: int
    composite_alarms: int
    dashboards: int
    custom_metrics: int
    usd: float


def fixed_of(template: dict[str, Any], prices: dict[str, Any]) -> Fixed:
    from infra.benchmarks import figures

    return Fixed(
        figures.alarm_metrics(template),
        len(figures._of_type(template, "AWS::CloudWatch::CompositeAlarm")),
        len(figures._of_type(template, "AWS::CloudWatch::Dashboard")),
        figures.custom_metrics(template),
        figures.fixed_month_usd(template, prices),
    )


def cost_of(
    run: TournamentRun,
    prices: dict[str, Any],
    *,
    fixed: Fixed | None = None,
    stored: list[StoredItem] | None = None,
) -> CostReport:
    """The bill of ``run`` at ``prices``: ``fixed``, the prod stage's monthly items (none
    given: none billed), ``stored``, the table as the play left it (none given: no storage
    line)."""
    fixed = fixed or Fixed(0, 0, 0, 0, 0.0)
    storage = Storage(stored or [], run.players, run.duration_ms / 1000)
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
    gb_s = gb_seconds(non_clock)
    route_mb = sorted({memory_mb_of(i) for i in non_clock})
    cw = prices["cloudwatch"]
    refusals = sum(
        1 for i in non_clock for c in i.calls if c.op == "PostToConnection" and c.refusal
    )
    log_bytes = (
        len(run.invocations) * (PLATFORM_LOG_BYTES + EMF_LOG_BYTES) + refusals * REFUSAL_LOG_BYTES
    )
    fixed_month = fixed.usd
    storage_usd = storage.gb_months * storage.usd_per_month_gb(prices)
    designs = clock_designs(run, prices)
    today = designs[0]
    non_clock_rru = act.rru - today.clock_rru
    wru = act.wru + act.gsi_wru
    floor_gb_s = gb_seconds(non_clock, own_cpu=False)
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
            f"Lambda duration (routes; measured CPU + AWS waits, mean {route_ms:.1f} ms at each "
            f"function's configured memory, {route_mb[0]}-{route_mb[-1]} MB arm64)",
            gb_s,
            "GB-s",
            gb_s * float(lam["gb_second_arm64"]),
            floor_gb_s * float(lam["gb_second_arm64"]),
            f"the AWS waits and clients alone: our own CPU ({own_ms:.1f} ms of "
            f"{route_ms:.1f} ms per invocation, stretched by the memory's CPU share) is all "
            "that code can remove; the memory itself: figure 3b",
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
            f"Alarms ({fixed.alarm_metrics} alarm metrics, {fixed.composite_alarms} composite), "
            f"{fixed.dashboards} dashboard, {fixed.custom_metrics} custom metrics (prod "
            f"template): ${fixed_month:.2f}/month over {TOURNAMENTS_PER_MONTH:,} tournaments",
            1 / TOURNAMENTS_PER_MONTH,
            "months",
            fixed_month / TOURNAMENTS_PER_MONTH,
            fixed_month / TOURNAMENTS_PER_MONTH,
            same + "fixed per month: falls with volume",
        ),
        CostLine(
            f"DynamoDB storage + PITR ({storage.per_tournament_bytes:,.0f} B of items, held "
            "until their TTL; kept items for a year)",
            storage.gb_months,
            "GB-months",
            storage_usd,
            storage_usd,
            same + "tournament and lobby a week after the end, connections 3 h, each resume's "
            "token 30 days, ratings kept (infra/CAPACITY.md, Storage)",
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
        "route_rru": non_clock_rru,
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
        "storage_usd": storage_usd,
    }
    counts.update(liveness_cost(run, prices))
    return CostReport(run, lines, designs, prices, counts, storage)


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
    reads = [
        (memory_mb_of(i), c) for i in run.invocations for c in i.calls if c.op == "GetConnection"
    ]
    wait = CALL_LATENCY_MS["apigatewaymanagementapi"] / 1000
    reads_usd = sum(wait * mb / 1024 for mb, _ in reads) * float(lam["gb_second_arm64"])
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


def measure(
    style: PlayStyle | None = None,
    seed: int = 11,
    template: dict[str, Any] | None = None,
) -> CostReport:
    """Play one tournament on moto and bill it; ``template``: the prod stage's synthesized
    template (default: synthesized now, ``infra.benchmarks.figures.synth_templates``)."""
    prices = load_prices()
    if template is None:
        from infra.benchmarks.figures import synth_templates

        template = synth_templates()["prod"]
    with moto_env():
        b = CountingBackend(seed=seed)
        run = play_tournament(b, style or PlayStyle(), seed=seed)
        stored = stored_items(b.client, b.table_name, b.clock.now)
    return cost_of(run, prices, fixed=fixed_of(template, prices), stored=stored)
