"""Simulation: one run (``Options`` in, ``Figures`` out): players arriving at a rate in one
language, joining, and a sample of the tournaments played to the end, on the real handlers
(``functions``) and the real ``DynamoStore`` over ``dynamo.FakeDynamoClient``, with the AWS side
in simulated time (``infra.simulation.aws``) and scripted players (``infra.simulation.player``);
returning players' ratings are set in the table directly (a fixture, no units)."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from infra.emulator.metrics import MetricFilter
from infra.simulation.aws import INVOKE_S, NET_S, FailingStore, SimClock, SimNotifier
from infra.simulation.cloud import CONNECT, WATCHDOG, CloudSide, Fault, route_function
from infra.simulation.dynamo import FakeDynamoClient, Latency, Limits
from infra.simulation.engine import Sim
from infra.simulation.player import DRAIN_S, SimPlayer
from shared.services.errors import TryAgainError

NEW_PLAYER_SHARE = 0.7
"""Share of arrivals that are new players (rating 1000, ruling 1)."""
RATING_MEAN, RATING_SD = 1100.0, 200.0
"""The others' rating: normal, rounded, clipped to [RATING_MIN, RATING_MAX]."""
RATING_MIN, RATING_MAX = 400, 2400
JOIN_DELAY_S = 0.25
"""About how long after arriving a player's ``join`` is handled (``$connect``, ``session``)."""


@dataclass
class Options:
    rate: float
    """Arrivals (joins) per second."""
    window_s: float
    """Arrivals happen during [0, window_s)."""
    seed: int = 1
    play: int = 4
    """Tournaments played to the end (the first ones to start); the others stop at the start."""
    new_share: float = NEW_PLAYER_SHARE
    """Share of arrivals at rating 1000; the others are drawn from the normal above."""
    arrivals: int | None = None
    """Exactly this many arrivals, evenly spread over the window (None: Poisson at ``rate``)."""
    limits: Limits = field(default_factory=Limits)
    latency: Latency = field(default_factory=Latency)
    horizon_s: float | None = None
    """Run until this simulated time (None: the arrival window, the drain, then an hour)."""
    watchdog: bool = False
    """Run the watchdog once a minute (the EventBridge schedule); every tournament must then
    be played (``play``), or the unplayed ones' deadlines look overdue."""
    faults: tuple[Fault, ...] = ()
    """Faults and noise injected (``infra.simulation.cloud.Fault``)."""
    reserved: dict[str, int] = field(default_factory=dict)
    """Function handler -> reserved concurrency (invocations beyond it are throttled)."""
    filters: tuple[MetricFilter, ...] = ()
    """The access log's metric filters (from the synthesized template)."""
    timeouts: dict[str, int] = field(default_factory=dict)
    """Function handler -> timeout (s): an invocation still running then raises at its next
    wait (``Sim.sleep``) and counts in ``Errors``."""
    watchdog_width: int = 1
    """The watchdog's parallel recoveries (``Deps.fan_out``: 1 runs them in turn)."""
    watchdog_budget_ms: int | None = None
    """``Deps.watchdog_budget_ms`` (None: the default)."""
    kill_at_s: float | None = None
    """Every running round loop is terminated at this simulated time (``SimClock.kill_all``)."""


@functools.cache
def _lexicon() -> Any:
    from shared.adapters.lexicon import WordListLexicon

    return WordListLexicon()


class Run:
    """One simulation run (``Options``); ``execute()`` returns the figures (``Figures``)."""

    def __init__(self, opts: Options) -> None:
        from functions.messages import route
        from functions.routes import MESSAGE_FUNCTIONS
        from shared.adapters.dynamo.store import DynamoStore
        from shared.runtime.bootstrap import build
        from shared.runtime.settings import Settings

        self.opts = opts
        self.rng = random.Random(opts.seed)
        random.seed(opts.seed)  # the services' and the store's backoff jitter
        self.sim = Sim()
        self.client = FakeDynamoClient(
            self.sim, random.Random(self.rng.random()), limits=opts.limits, latency=opts.latency
        )
        self.store = DynamoStore(self.client, "wordle-tournament", self.sim.now_ms, self.sim.sleep)
        self.metrics: Counter[str] = Counter()
        self.cloud = CloudSide(
            lambda: self.sim.now,
            self.sim.now_ms,
            opts.faults,
            opts.reserved,
            opts.filters,
            opts.timeouts,
            lambda: self.sim.ctx,
        )
        self.client.on_throttled = self.cloud.table_throttled
        from shared.runtime.bootstrap import powertools_metric

        def count(name: str, value: float) -> None:
            self.metrics.update({name: int(value)})
            powertools_metric(name, value)

        ids = itertools.count(1)
        secrets_rng = random.Random(self.rng.random())
        rng = random.Random(self.rng.random())
        self.clock = SimClock(self)
        self.deps = build(
            Settings(),
            store=self.store,
            notifier=SimNotifier(self),
            clock=self.clock,
            lexicon=_lexicon(),
            rng=lambda: random.Random(rng.random()),
            ids=lambda: f"i{next(ids):07d}",
            secrets=lambda: f"{secrets_rng.getrandbits(256):064x}"[:43],
            sleep=self.sim.sleep,
            metrics=count,
        )
        self.deps = dataclasses.replace(
            self.deps,
            fan_out=self.fan_out,
            watchdog_budget_ms=opts.watchdog_budget_ms or self.deps.watchdog_budget_ms,
        )
        self.handlers = {name: route(acts) for name, acts in MESSAGE_FUNCTIONS.items()}
        self.players: list[SimPlayer] = []
        self.by_connection: dict[str, SimPlayer] = {}
        self.by_player: dict[str, SimPlayer] = {}
        self.sample: list[str] = []
        self.started: dict[str, float] = {}
        self.ended: set[str] = set()
        self.lobby_players: dict[str, set[str]] = {}
        self.invocations: Counter[str] = Counter()
        self.join_codes: Counter[str] = Counter()
        self.try_again = 0
        self.error_codes: Counter[str] = Counter()
        self.posts = 0
        self.gateway_answered = 0
        """Messages API Gateway answered itself (``MOCK_ROUTES``: ``ping``; no invocation)."""
        self.connection_reads = 0
        """GetConnection calls (liveness checks, ruling 14)."""
        self.last_active: dict[str, int] = {}
        """Connection id -> ``LastActiveAt`` (UTC ms), as API Gateway keeps it."""
        self.executions = 0
        self.closed: list[str] = []
        self.running_at_kill: set[str] = set()

    def lat(self, median: float, sigma: float = 0.3) -> float:
        return median * math.exp(sigma * self.rng.gauss(0, 1))

    def played(self, tournament_id: str | None) -> bool:
        if tournament_id is None:
            return False
        if tournament_id in self.sample:
            return True
        if len(self.sample) < self.opts.play and tournament_id not in self.started:
            self.sample.append(tournament_id)
            return True
        return False

    # ------------------------------------------------------------ invocations
    def connect(self, p: SimPlayer, opened: Callable[[], None] | None = None) -> None:
        """``$connect`` for ``p``; ``opened`` runs when the client hears the socket open (the
        handler answered 200): API Gateway routes no message of a connection before that."""
        from functions import connect
        from infra.emulator.events import ws_event

        self.by_connection[p.cid] = p

        def task() -> None:
            self.invocations["$connect"] += 1
            self.last_active[p.cid] = self.sim.now_ms()
            self.sim.defer(self.lat(INVOKE_S))
            event = ws_event("$connect", p.cid, None, self.sim.now_ms(), source_ip=p.source_ip)
            ok, _ = self.cloud.invoke(CONNECT, lambda: connect.handle(event, self.deps))
            self.cloud.message("$connect", ok)
            if ok and opened is not None:
                self.sim.call_at(self.sim.now + self.lat(NET_S), opened)

        self.sim.spawn_at(self.sim.now + self.lat(NET_S), task, route="$connect")

    def send(self, p: SimPlayer, action: str, body: str) -> None:
        from functions.routes import MOCK_ROUTES, function_of
        from infra.emulator.events import ws_event

        name = function_of(action)
        received = self.sim.now + self.lat(NET_S)

        def heard() -> None:
            self.last_active[p.cid] = self.start_ms_of(received)

        self.sim.call_at(received, heard)
        if action in MOCK_ROUTES:  # answered by API Gateway: no function, no table access
            self.gateway_answered += 1
            return

        def task() -> None:
            self.invocations[name] += 1
            codes: Counter[str] = self.sim.ctx["codes"]
            self.sim.defer(self.lat(INVOKE_S))
            event = ws_event(action, p.cid, body, self.start_ms_of(received))
            deps = self.deps
            if self.cloud.fault("bug", route_function(name)) is not None:
                deps = dataclasses.replace(deps, store=FailingStore(RuntimeError))
            elif self.cloud.fault("busy", route_function(name)) is not None:
                deps = dataclasses.replace(deps, store=FailingStore(TryAgainError))
            ok, _ = self.cloud.invoke(
                route_function(name), lambda: self.handlers[name](event, deps)
            )
            self.cloud.message(action, ok)
            if name == "join":
                self.join_codes.update(codes)

        self.sim.spawn_at(received, task, route=name, codes=Counter())

    def start_ms_of(self, t: float) -> int:
        return self.sim.start_ms + int(t * 1000)

    def set_rating(self, player_id: str, rating: int) -> None:
        self.client.set_attribute((f"PLAYER#{player_id}", "PROFILE"), "rating", {"N": str(rating)})

    def seated(self, p: SimPlayer, m: dict[str, Any]) -> None:
        tid = m["tournament_id"]
        self.started.setdefault(tid, self.sim.now)
        assert p.player_id is not None
        self.lobby_players.setdefault(m["lobby_id"], set()).add(p.player_id)

    # ------------------------------------------------------------ the run
    def rating(self) -> int:
        if self.rng.random() < self.opts.new_share:
            return 1000
        r = round(self.rng.gauss(RATING_MEAN, RATING_SD))
        return max(RATING_MIN, min(RATING_MAX, r))

    def execute(self) -> Figures:
        opts = self.opts
        t = 0.0
        n = 0
        while True:
            if opts.arrivals is None:
                t += self.rng.expovariate(opts.rate)
            else:
                t = n * opts.window_s / opts.arrivals
            if t >= opts.window_s or (opts.arrivals is not None and n >= opts.arrivals):
                break
            p = SimPlayer(self, n, self.rating())
            n += 1
            self.players.append(p)
            self.sim.call_at(t, p.arrive)
        # the partitions' load is measured over the arrival window shifted by the time from an
        # arrival to its join (connect, session, join: ~0.25 s), when joins arrive at the rate
        self.client.window_from = JOIN_DELAY_S
        self.client.window_s = opts.window_s + JOIN_DELAY_S
        horizon = opts.horizon_s or opts.window_s + DRAIN_S + 3600
        self.sim.call_at(60.0, lambda: self._minute(horizon))
        if opts.kill_at_s is not None:
            self.sim.call_at(opts.kill_at_s, self._kill_all)
        cpu0 = time.process_time()
        self.sim.run(until=min(horizon, opts.window_s + DRAIN_S))
        cpu_joins = time.process_time() - cpu0
        cpu1 = time.process_time()
        self.sim.run(until=horizon)
        cpu_play = time.process_time() - cpu1
        figures = Figures.of(self, cpu_joins, cpu_play)
        self.sim.close()
        return figures

    def _minute(self, horizon: float) -> None:
        """Once a minute: the watchdog's schedule, the cloud's per-minute samples and faults."""
        cloud = self.cloud
        cloud.minute()
        forced = cloud.fault("table_throttles")
        if forced is not None:
            self.client.forced_throttles += forced.count
        if self.opts.watchdog and cloud.fault("watchdog_stop") is None:
            self.sim.spawn_at(self.sim.now, self.run_watchdog, route="watchdog")
        if self.sim.now + 60 <= horizon:
            self.sim.call_at(self.sim.now + 60.0, lambda: self._minute(horizon))

    def _kill_all(self) -> None:
        """Every running round loop dies; which tournaments were then running is kept."""
        self.clock.kill_all()
        self.running_at_kill = set(self.started) - self.ended

    def fan_out(self, jobs: Any) -> list[int]:
        """``Deps.fan_out`` in simulated time: ``opts.watchdog_width`` tasks take the jobs in
        turn (each in its own task, as threads would); the caller waits for the last one."""
        results = [0] * len(jobs)
        queue = list(enumerate(jobs))
        errors: list[BaseException] = []
        done = [0]
        deadline = self.sim.ctx.get("deadline")

        def worker() -> None:
            while queue:
                i, job = queue.pop(0)
                try:
                    results[i] = job()
                except Exception as err:  # raised once every job ran
                    errors.append(err)
                done[0] += 1

        for _ in range(min(max(1, self.opts.watchdog_width), len(jobs))):
            self.sim.spawn_at(self.sim.now, worker, route="watchdog", deadline=deadline)
        while done[0] < len(jobs):
            self.sim.sleep(0.02)
        if errors:
            raise errors[0]
        return results

    def run_watchdog(self) -> None:
        """One scheduled watchdog invocation (``functions.watchdog``)."""
        from functions import watchdog

        self.invocations["watchdog"] += 1
        self.sim.defer(self.lat(INVOKE_S))
        self.cloud.invoke(WATCHDOG, lambda: watchdog.handle({}, self.deps))


def _pct(data: list[float], q: float) -> float:
    if not data:
        return float("nan")
    s = sorted(data)
    return s[min(len(s) - 1, max(0, math.ceil(q / 100 * len(s)) - 1))]


@dataclass
class Figures:
    """What one run measured (see ``report``)."""

    rate: float
    window_s: float
    arrivals: int
    joined: int
    seated: int
    waiting_at_end: int
    fill_p50_s: float
    fill_p99_s: float
    try_again_per_1000: float
    conflicts_per_join: float
    throttles_per_join: float
    started: int
    started_per_s: float
    hottest_table: tuple[str, float, float]
    """(partition, WCU/s, RCU/s) averaged over the arrival window shifted by ``JOIN_DELAY_S``:
    the table partition with the highest load against its limit."""
    hottest_gsi: tuple[str, float, float]
    throttled: int
    played: int
    played_to_end: int
    cpu_joins_s: float
    cpu_play_s: float
    errors: dict[str, int]
    invariants: dict[str, bool]
    units: dict[str, float]
    partition_units: dict[str, float]
    invocations: dict[str, int]
    posts: int
    executions: int
    route_units: dict[str, list[float]]
    kind_units: dict[str, list[float]]
    route_calls: dict[str, dict[str, int]]

    @classmethod
    def of(cls, run: Run, cpu_joins: float, cpu_play: float) -> Figures:
        players = run.players
        joined = [p for p in players if p.joined_at is not None]
        seated = [p for p in joined if p.seated_at is not None]
        fills = [p.seated_at - p.joined_at for p in seated]  # type: ignore[operator]
        codes = run.join_codes
        conflicts = sum(
            v
            for k, v in codes.items()
            if k.startswith(("ConditionalCheckFailed", "TransactionCanceled:Conditional"))
            or "TransactionConflict" in k
        )
        throttles = sum(
            v
            for k, v in codes.items()
            if "Throttl" in k or "ProvisionedThroughput" in k or k == "UnprocessedKeys"
        )
        parts = run.client.partitions.values()

        w = run.opts.window_s
        lim = run.opts.limits

        def hottest(prefix: bool) -> tuple[str, float, float]:
            cand = [p for p in parts if p.name.startswith("table:") == prefix]
            if not cand:
                return ("-", 0.0, 0.0)
            top = max(
                cand, key=lambda p: max(p.wcu_window / lim.wcu_per_s, p.rcu_window / lim.rcu_per_s)
            )
            return (top.name, top.wcu_window / w, top.rcu_window / w)

        errors = dict(run.error_codes)
        for route_, err in run.sim.errors:
            errors[f"crash:{route_}:{err[:60]}"] = errors.get(f"crash:{route_}:{err[:60]}", 0) + 1
        if run.metrics.get("InternalError"):
            errors["internal_error"] = run.metrics["InternalError"]
        return cls(
            rate=run.opts.rate,
            window_s=run.opts.window_s,
            arrivals=len(players),
            joined=len(joined),
            seated=len(seated),
            waiting_at_end=len(joined) - len(seated),
            fill_p50_s=_pct(fills, 50),
            fill_p99_s=_pct(fills, 99),
            try_again_per_1000=1000 * run.try_again / max(1, len(joined)),
            conflicts_per_join=conflicts / max(1, len(joined)),
            throttles_per_join=throttles / max(1, len(joined)),
            started=len(run.started),
            started_per_s=len(run.started) / run.opts.window_s,
            hottest_table=hottest(True),
            hottest_gsi=hottest(False),
            throttled=sum(p.throttled for p in parts),
            played=len(run.sample),
            played_to_end=len(run.ended & set(run.sample)),
            cpu_joins_s=cpu_joins,
            cpu_play_s=cpu_play,
            errors=errors,
            invariants=invariants(run),
            units=dict(run.client.units),
            partition_units={
                "rcu": sum(p.rcu_total for p in parts),
                "wcu": sum(p.wcu_total for p in parts),
            },
            invocations=dict(run.invocations),
            posts=run.posts,
            executions=run.executions,
            route_units={k: list(v) for k, v in run.client.route_units.items()},
            kind_units={k: list(v) for k, v in run.client.kind_units.items()},
            route_calls={k: dict(v) for k, v in run.client.by_route.items()},
        )


def invariants(run: Run) -> dict[str, bool]:
    """The behavioural invariants the smoke test asserts, checked on the stored items."""
    from shared.adapters.dynamo import records
    from shared.adapters.dynamo.store import from_av

    lobbies = [
        records.lobby_from_item(from_av(item))
        for (pk, _), item in run.client.items.items()
        if pk.startswith("LOBBY#")
    ]
    seat_count: Counter[str] = Counter()
    for rec in lobbies:
        if rec.lobby.status.value != "empty":
            for s in rec.lobby.seats:
                seat_count[s.player_id] += 1
    started = [rec for rec in lobbies if rec.lobby.status.value == "started"]
    joined = [p for p in run.players if p.joined_at is not None]
    return {
        "every joiner seated once or refused try_again": all(
            seat_count[p.player_id or ""] == 1
            or (p.try_again and seat_count[p.player_id or ""] == 0)
            for p in joined
        ),
        "no player in two lobbies": all(v <= 1 for v in seat_count.values()),
        "every started lobby has 8 distinct players": all(
            len({s.player_id for s in rec.lobby.seats}) == 8 for rec in started
        ),
        "players told of the start match the lobby": all(
            run.lobby_players.get(rec.lobby.lobby_id, set())
            <= {s.player_id for s in rec.lobby.seats}
            for rec in started
        ),
        "partition units sum to the requests' units": (
            abs(sum(p.rcu_total for p in run.client.partitions.values()) - run.client.units["rcu"])
            < 1e-6
            and abs(
                sum(p.wcu_total for p in run.client.partitions.values()) - run.client.units["wcu"]
            )
            < 1e-6
        ),
        "no crash, no internal error": not run.sim.errors and not run.metrics.get("InternalError"),
    }
