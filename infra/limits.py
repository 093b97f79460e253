"""Infrastructure: the limits the stack sets — stage and route throttles, reserved concurrency
and function timeouts — in one place that CDK (``infra.cdk.stack``, ``infra.cdk.constructs``)
deploys and the local twin (``infra.emulator.throttles``) enforces. Plain data: no CDK import,
so the twin reads it without starting jsii.

Sizing: ``infra/CAPACITY.md``, "Limits the stack sets" (each limit, the concurrent players at
which it binds, the account quotas to raise); :func:`binds_at` computes the figures from
:data:`PER_PLAYER` and a test fails when one binds below :data:`TARGET_PLAYERS` x
:data:`HEADROOM`. AWS: "Throttle requests to your WebSocket APIs",
https://docs.aws.amazon.com/apigateway/latest/developerguide/websocket-api-protect.html;
"Configuring reserved concurrency",
https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Final

from shared.adapters.step_functions import CLOCK_FUNCTION_TIMEOUT_S


@dataclass(frozen=True)
class Throttle:
    """An API Gateway token bucket: ``rate`` tokens (messages) per second, ``burst`` tokens at
    most (the bucket's size)."""

    rate: float
    burst: int

    def scaled(self, factor: float) -> Throttle:
        """Rate and burst times ``factor`` (burst at least 1)."""
        return Throttle(self.rate * factor, max(1, round(self.burst * factor)))


@dataclass(frozen=True)
class StageLimits:
    """What one stage sets: the stage's default route throttle (``DefaultRouteSettings``: every
    route without its own gets a bucket of these values, its own: API Gateway applies stage
    limits "at the API method level"), per-route throttles (route key -> :class:`Throttle`),
    and reserved concurrency (function module -> concurrent executions; the function can never
    run more at once, and Lambda keeps that many for it)."""

    name: str
    stage: Throttle
    routes: dict[str, Throttle] = field(default_factory=dict)
    reserved: dict[str, int] = field(default_factory=dict)
    target_players: int = 0
    """The concurrent players this stage is sized for (``binds_at`` must reach it x
    :data:`HEADROOM`)."""

    def throttle_for(self, route_key: str) -> Throttle:
        """The bucket that counts ``route_key``'s messages (its own, else the stage's)."""
        return self.routes.get(route_key, self.stage)

    def scaled(self, factor: float) -> StageLimits:
        """Every throttle's rate and burst times ``factor`` (reservations unchanged)."""
        return replace(
            self,
            stage=self.stage.scaled(factor),
            routes={key: t.scaled(factor) for key, t in self.routes.items()},
        )


TARGET_PLAYERS: Final = 100_000
"""prod is sized for this many concurrent players (``infra/CAPACITY.md``)."""
HEADROOM: Final = 1.5
"""Steady rates are sized for the target times this (peaks above the plan, client retries)."""
STORM_SECONDS: Final = 30.0
"""A reconnect storm (every player dropped at once: a client release, an ISP blip) must fit
``$connect`` + ``session`` within this: half the 60 s reconnect window, the other half left for a
throttled client's backoff and its session round trip."""
CONCURRENCY_FACTOR: Final = 3.0
"""Reserved concurrency = invocations/s x mean duration x this (p99 durations, cold starts:
``infra/CAPACITY.md``, "Lambda", 3x headroom)."""

TOURNAMENT_PLAYER_SECONDS: Final = 8 * 732
"""One 8-player tournament of 732 s ([B] in ``infra/CAPACITY.md``): per-tournament counts over
this are per-player rates."""

PER_PLAYER: Final[dict[str, float]] = {
    "ping": 221 / TOURNAMENT_PLAYER_SECONDS,
    "guess": 136 / TOURNAMENT_PLAYER_SECONDS,
    "session": 8 / TOURNAMENT_PLAYER_SECONDS,
    "$connect": 8 / TOURNAMENT_PLAYER_SECONDS,
    "$disconnect": 8 / TOURNAMENT_PLAYER_SECONDS,
    "join": 8 / TOURNAMENT_PLAYER_SECONDS,
    "clock": 42 / TOURNAMENT_PLAYER_SECONDS,
    "profile": 1 / TOURNAMENT_PLAYER_SECONDS,
    "leaderboard": 2 / TOURNAMENT_PLAYER_SECONDS,
    "history": 1 / TOURNAMENT_PLAYER_SECONDS,
    "replay": 1 / TOURNAMENT_PLAYER_SECONDS,
    "progression": 5 / TOURNAMENT_PLAYER_SECONDS,
}
"""Messages or invocations per second per concurrent player ([B]: 221 pings, the busiest
route on the stage's default throttle; 136 guess invocations, refused words included; one
``$connect``, ``session``, ``join`` and ``$disconnect`` per tournament: the upper bound; 42
clock wakes). ``leave``,
``nickname``, ``party`` and ``$default`` are rare in [B]: counted as one per player per
tournament (an assumption). The read-only progression actions (issue 38) are not in [B]:
assumed one ``profile``, two ``leaderboard`` (rating and weekly), one ``history`` and one
``replay`` per player per tournament, five ``progression`` invocations in all."""

MEAN_DURATION_S: Final[dict[str, float]] = {"clock": 0.0398, "progression": 0.15}
"""Mean billed duration per invocation ([B]); every route function: 0.0705 s. ``progression``
is an estimate, not a measurement: a rating ``leaderboard`` makes about 50 small reads, the
shards' on 16 threads (``shared.adapters.dynamo.boards.DynamoProgression``), about six round
trips in a row; twice a route's mean leaves room for a cold pool."""
ROUTE_DURATION_S: Final = 0.0705

FUNCTION_RATE: Final[dict[str, str]] = {
    "guess": "guess",
    "connect": "$connect",
    "disconnect": "$disconnect",
    "session": "session",
    "join": "join",
    "leave": "session",
    "nickname": "session",
    "party": "session",
    "default": "session",
    "progression": "progression",
    "apply_deadlines": "clock",
}
"""Function module -> the :data:`PER_PLAYER` rate that invokes it."""
NOT_PER_PLAYER: Final = frozenset({"watchdog", "history"})
"""Functions no per-player rate invokes: the watchdog (one run a minute, one at a time) and the
history function (``functions.streams.HISTORY``: one invocation per stream shard at a time, so
its reservation caps the shards read at once; a lower one grows the iterator age, which
alarms)."""
STORM_FUNCTIONS: Final = frozenset({"connect", "session", "disconnect"})
"""Functions a reconnect storm invokes once per player within :data:`STORM_SECONDS`."""
STORM_ROUTES: Final = frozenset({"$connect", "session"})

FUNCTION_TIMEOUT_S: Final[dict[str, int]] = {
    "connect": 10,
    "disconnect": 15,
    "default": 10,
    "session": 10,
    "join": 20,
    "leave": 15,
    "guess": 10,
    "nickname": 10,
    "party": 20,
    "progression": 10,
    "apply_deadlines": CLOCK_FUNCTION_TIMEOUT_S,
    "watchdog": 60,
    "history": 60,
}
"""Function module -> its Lambda timeout in seconds (``infra.cdk.constructs.functions.SPECS``
deploys it; the twin enforces it). Each leaves the worst case of one AWS call
(``shared.runtime.bootstrap.worst_call_seconds``) :func:`call_margin_seconds` to spare."""


def call_margin_seconds(timeout_s: float) -> float:
    """What a function's timeout must leave beyond one AWS call's worst case: 2 s or a fifth
    of the timeout, whichever is more (the handler's own work, a push after the call)."""
    return max(2.0, timeout_s / 5)


STAGE_LIMITS: Final[dict[str, StageLimits]] = {
    "dev": StageLimits(
        "dev",
        stage=Throttle(50, 100),
        routes={
            "$connect": Throttle(20, 40),
            "session": Throttle(20, 40),
            "guess": Throttle(50, 100),
        },
        reserved={
            "apply_deadlines": 10,
            "watchdog": 1,
            "history": 2,
            "connect": 5,
            "disconnect": 5,
            "default": 2,
            "session": 5,
            "join": 5,
            "leave": 3,
            "guess": 10,
            "nickname": 2,
            "party": 3,
            "progression": 2,
        },
        target_players=500,
    ),
    "prod": StageLimits(
        "prod",
        stage=Throttle(6_000, 5_000),
        routes={
            "$connect": Throttle(3_500, 5_000),
            "session": Throttle(3_500, 5_000),
            "guess": Throttle(4_000, 8_000),
            # the read-only progression routes (issue 38): a few per player per tournament;
            # capped so that a flood of reads cannot take the stage's default bucket
            "profile": Throttle(100, 200),
            "leaderboard": Throttle(200, 400),
            "history": Throttle(100, 200),
            "replay": Throttle(100, 200),
        },
        reserved={
            "apply_deadlines": 150,
            "watchdog": 1,
            "history": 40,
            "connect": 750,
            "disconnect": 750,
            "default": 50,
            "session": 750,
            "join": 100,
            "leave": 50,
            "guess": 800,
            "nickname": 50,
            "party": 50,
            "progression": 100,
        },
        target_players=TARGET_PLAYERS,
    ),
}
"""Stage name -> its limits (``infra.cdk.stack.STAGES`` deploys them)."""

UNRESERVED_MINIMUM: Final = 100
"""Lambda keeps at least this much of the account's concurrency unreserved."""


def account_concurrency_needed(limits: StageLimits) -> int:
    """The account concurrency quota the stage's reservations need (their sum + Lambda's
    unreserved minimum; default quota 1,000)."""
    return sum(limits.reserved.values()) + UNRESERVED_MINIMUM


@dataclass(frozen=True)
class Binding:
    """One limit of a stage: ``players`` — the concurrent players at which it binds;
    ``needed`` — what the stage's target asks of it (steady load: target x :data:`HEADROOM`;
    a reconnect storm: the whole target within :data:`STORM_SECONDS`)."""

    name: str
    limit: str
    players: int
    needed: int
    why: str


def bindings(limits: StageLimits) -> list[Binding]:
    """Every limit ``limits`` sets, with the players at which it binds (from
    :data:`PER_PLAYER`; :data:`NOT_PER_PLAYER` left out). A throttle binds
    at rate / per-player rate (the stage's default: of ``ping``, the busiest route without its
    own), and for ``$connect``/``session`` also when a storm of N players exceeds a full bucket plus
    :data:`STORM_SECONDS` of refill: N = rate x :data:`STORM_SECONDS` + burst. A reservation
    binds at reserved / (rate x duration x :data:`CONCURRENCY_FACTOR`), for ``connect``,
    ``session`` and ``disconnect`` also at the storm's rate of N / :data:`STORM_SECONDS`."""
    steady_need = int(limits.target_players * HEADROOM)
    storm_need = limits.target_players
    out: list[Binding] = []

    def throttle(name: str, t: Throttle, per_player: float, storm: bool) -> None:
        text = f"{t.rate:g}/s, burst {t.burst}"
        out.append(Binding(name, text, int(t.rate / per_player), steady_need, "steady"))
        if storm:
            players = int(t.rate * STORM_SECONDS + t.burst)
            out.append(Binding(name, text, players, storm_need, "storm"))

    throttle("stage default route", limits.stage, PER_PLAYER["ping"], False)
    for key, t in sorted(limits.routes.items()):
        throttle(f"route {key}", t, PER_PLAYER[key], key in STORM_ROUTES)
    for module, reserved in sorted(limits.reserved.items()):
        if module in NOT_PER_PLAYER:
            continue
        rate_key = FUNCTION_RATE[module]
        held = MEAN_DURATION_S.get(rate_key, ROUTE_DURATION_S) * CONCURRENCY_FACTOR
        name, text = f"reserved {module}", str(reserved)
        out.append(
            Binding(
                name, text, int(reserved / (PER_PLAYER[rate_key] * held)), steady_need, "steady"
            )
        )
        if module in STORM_FUNCTIONS:
            players = int(reserved * STORM_SECONDS / held)
            out.append(Binding(name, text, players, storm_need, "storm"))
    return out


def account_quotas(limits: StageLimits) -> dict[str, int]:
    """Account quota -> the value the stage needs at its target (``infra/CAPACITY.md``):
    Lambda concurrency (the reservations + Lambda's unreserved minimum; default 1,000), API
    Gateway's account throttle (requests/s across the Region: messages in, posts and
    GetConnection at target x :data:`HEADROOM`, plus the storm's ``$connect`` + ``session``;
    default 10,000) and WebSocket new connections/s (the ``$connect`` route's rate; default
    500)."""
    players = limits.target_players * HEADROOM
    requests = players * (373 + 814 + 12) / TOURNAMENT_PLAYER_SECONDS
    storm = 2 * limits.target_players / STORM_SECONDS
    connect = limits.routes.get("$connect", limits.stage).rate
    return {
        "Lambda concurrent executions": account_concurrency_needed(limits),
        "API Gateway account throttle (requests/s)": int(requests + storm),
        "API Gateway WebSocket new connections/s": int(connect),
    }


def report() -> str:
    """The "Limits the stack sets" tables of ``infra/CAPACITY.md``, computed (Markdown)."""
    from shared.runtime.bootstrap import worst_call_seconds

    worst = worst_call_seconds()
    lines: list[str] = [
        f"Function timeouts (every stage; one AWS call at its worst: {worst:g} s):",
        "",
        "| function | timeout s | left after the worst call s | margin required s |",
        "|---|---|---|---|",
    ]
    for module, timeout in sorted(FUNCTION_TIMEOUT_S.items()):
        left, margin = timeout - worst, call_margin_seconds(timeout)
        lines.append(f"| `{module}` | {timeout} | {left:g} | {margin:g} |")
    lines.append("")
    for name, limits in STAGE_LIMITS.items():
        lines += [
            f"{name} (target {limits.target_players:,} concurrent players):",
            "",
            "| limit | value | binds at (players) | needed | load |",
            "|---|---|---|---|---|",
        ]
        for b in bindings(limits):
            lines.append(f"| {b.name} | {b.limit} | {b.players:,} | {b.needed:,} | {b.why} |")
        lines += ["", "| account quota | needed |", "|---|---|"]
        lines += [f"| {q} | {v:,} |" for q, v in account_quotas(limits).items()]
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
