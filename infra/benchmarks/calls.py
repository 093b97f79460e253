"""Benchmark, figure 1: AWS calls per action, counted with the real adapters on moto. A botocore
hook on each client records every call made while a handler runs, with the capacity units it
consumes (``infra.benchmarks.units``); the clock is the harness's ``ManualClock``, counted by
``MeteredClock``. Method: ``infra/benchmarks/RESULTS.md``, figure 1; what a clock call counts as:
``shared/domain/RULINGS.md``, Design notes, "Benchmarks".
"""

from __future__ import annotations

import contextlib
import os
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from functions.routes import MOCK_ROUTES
from infra.benchmarks import units
from infra.emulator.states import Execution, ManualClock
from infra.emulator.testing import Backend, RecordingNotifier, ScriptedPlayer
from shared.protocol.framing import unpack
from shared.services.ports import Timer

REGION = "us-east-1"
FAKE_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "POWERTOOLS_METRICS_NAMESPACE": "Bench",
    "POWERTOOLS_SERVICE_NAME": "wordle-tournament",
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_LOG_LEVEL": "ERROR",
}

OPS = {
    "GetItem": "Get",
    "BatchGetItem": "BatchGet",
    "Query": "Query",
    "PutItem": "Put",
    "UpdateItem": "Update",
    "DeleteItem": "Delete",
    "TransactWriteItems": "TransactWrite",
    "PostToConnection": "Post",
    "DeleteConnection": "DelConn",
    "StartExecution": "StartExec",
}


# ------------------------------------------------------------------------------ counting
@dataclass
class Call:
    service: str
    op: str
    rru: float = 0.0
    wru: float = 0.0
    gsi_wru: float = 0.0
    failed: bool = False
    """The call answered with an error (a failed condition still consumes its write units)."""
    payload_bytes: int = 0
    """PostToConnection: the message's bytes (API Gateway bills per 32 KB)."""
    target: str = ""
    """PostToConnection: the connection id."""
    items: int = 0
    """Items written in a transaction / read in a batch."""
    alt_wru: float = 0.0
    """The write units had the tournament document been stored zlib-compressed (a proposal)."""
    refusal: bool = False
    """PostToConnection: the message is (or carries) an ``error`` event."""


@dataclass
class Invocation:
    """One Lambda invocation (a route or the clock function) and the calls it made."""

    route: str
    calls: list[Call] = field(default_factory=list)
    ms: float = 0.0
    """Wall time in-process on moto (an upper bound of the handler's own time)."""
    cpu_ms: float = 0.0
    """Process CPU time of the invocation, AWS calls included (moto answers in-process)."""
    calls_cpu_ms: float = 0.0
    """Process CPU time spent inside the AWS calls (botocore and moto, from the
    ``provide-client-params`` hook to ``after-call``)."""
    log_records: int = 0
    log_bytes: int = 0
    """Log records the invocation wrote and the bytes of their messages (``LogMeter``)."""

    @property
    def own_cpu_ms(self) -> float:
        """The handler's own CPU time: the invocation's minus what its AWS calls took."""
        return max(0.0, self.cpu_ms - self.calls_cpu_ms)


class CallCounter:
    """Counts AWS calls of the clients it is attached to, per handler invocation.

    ``raw`` is a DynamoDB client *without* the hook: it reads the item before and after each
    write, to size the write (DynamoDB bills the larger of the old and new item).
    """

    def __init__(self, raw_dynamodb: Any) -> None:
        self.raw = raw_dynamodb
        self.invocations: list[Invocation] = []
        self.current: Invocation | None = None

    def attach(self, client: Any) -> Any:
        client.meta.events.register("provide-client-params", self._before)
        client.meta.events.register("after-call", self._after)
        return client

    @contextlib.contextmanager
    def invocation(self, route: str) -> Iterator[Invocation]:
        outer = self.current
        inv = Invocation(route)
        self.invocations.append(inv)
        self.current = inv
        start = time.perf_counter()
        cpu = time.process_time()
        try:
            yield inv
        finally:
            inv.ms = (time.perf_counter() - start) * 1000
            inv.cpu_ms = (time.process_time() - cpu) * 1000
            self.current = outer

    def mark(self) -> int:
        return len(self.invocations)

    def since(self, mark: int) -> list[Invocation]:
        return self.invocations[mark:]

    # -- hooks -------------------------------------------------------------------------------
    def _before(self, params: dict[str, Any], model: Any, context: Any, **_: Any) -> None:
        if self.current is None:
            return
        op = model.name
        context["bench_cpu"] = time.process_time()
        context["bench_params"] = params
        if model.service_model.service_name == "dynamodb":
            context["bench_before"] = self._images(op, params)

    def _after(self, http_response: Any, parsed: Any, model: Any, context: Any, **_: Any) -> None:
        if self.current is None:
            return
        service, op = model.service_model.service_name, model.name
        status = getattr(http_response, "status_code", 200)
        call = Call(service, op, failed=status >= 300)
        params = context.get("bench_params", {})
        if service == "dynamodb":
            self._dynamo_units(call, context.get("bench_before"), parsed)
            if op == "GetItem":  # the item read, by partition key (e.g. CONN#...)
                call.target = str(params.get("Key", {}).get("pk", {}).get("S", ""))
        elif op == "PostToConnection":
            call.payload_bytes = len(params.get("Data", b""))
            call.target = str(params.get("ConnectionId", ""))
            call.refusal = b'"type":"error"' in params.get("Data", b"")
        self.current.calls.append(call)
        if "bench_cpu" in context:
            self.current.calls_cpu_ms += (time.process_time() - context["bench_cpu"]) * 1000

    # -- DynamoDB sizing --------------------------------------------------------------------
    def _get(self, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
        item: dict[str, Any] | None = self.raw.get_item(
            TableName=table, Key=key, ConsistentRead=True
        ).get("Item")
        return item

    @staticmethod
    def _key(item: dict[str, Any]) -> dict[str, Any]:
        return {k: item[k] for k in (units._TABLE_KEYS) if k in item}

    def _images(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        """What the write will change: [(table, key, old item, new item or None, factor)]."""
        ops: list[tuple[str, dict[str, Any], str, Any]] = []
        if op == "PutItem":
            ops.append(("Put", params, params["TableName"], self._key(params["Item"])))
        elif op in ("UpdateItem", "DeleteItem"):
            ops.append((op[:-4], params, params["TableName"], params["Key"]))
        elif op == "TransactWriteItems":
            for entry in params["TransactItems"]:
                (kind, body), *_ = entry.items()
                key = self._key(body["Item"]) if kind == "Put" else body["Key"]
                ops.append((kind, body, body["TableName"], key))
        return {
            "op": op,
            "params": params,
            "writes": [
                (kind, body, table, key, self._get(table, key)) for kind, body, table, key in ops
            ],
        }

    def _dynamo_units(self, call: Call, before: dict[str, Any] | None, parsed: Any) -> None:
        op = call.op
        if op == "GetItem":
            params_item = parsed.get("Item")
            call.rru = units.read_units(units.item_size(params_item), consistent=True)
            return
        if op == "BatchGetItem":
            for table_items in (parsed.get("Responses") or {}).values():
                for item in table_items:
                    call.items += 1
                    call.rru += units.read_units(units.item_size(item), consistent=True)
            return
        if op in ("Query", "Scan"):
            size = sum(units.item_size(i) for i in parsed.get("Items", []))
            call.rru = units.read_units(size, consistent=False)
            return
        if not before:
            return
        factor = 2 if op == "TransactWriteItems" else 1
        for kind, body, table, key, old in before["writes"]:
            call.items += 1
            if kind == "Put":
                new = body["Item"]
            elif kind == "Delete":
                new = None
            else:  # Update / ConditionCheck: read the item as it is now
                new = self._get(table, key) if kind == "Update" else old
            if call.failed:
                new = old if kind != "Put" else body["Item"]
            size = max(units.item_size(old), units.item_size(new))
            call.wru += factor * units.write_units(size)
            alt = max(units.item_size(_compressed(old)), units.item_size(_compressed(new)))
            call.alt_wru += factor * units.write_units(alt)
            if not call.failed:
                call.gsi_wru += units.index_write_units(old, new)


def _compressed(item: dict[str, Any] | None) -> dict[str, Any] | None:
    """The item with its ``state`` JSON (the tournament document) stored zlib-compressed."""
    if not item or "S" not in item.get("state", {}):
        return item
    return {**item, "state": {"B": zlib.compress(item["state"]["S"].encode("utf-8"), 9)}}


# ------------------------------------------------------------------------------ the clock
@dataclass
class ClockExecution:
    """One execution of the deadline machine as the interpreter ran it, with the clock
    function's answers to its wakes (``MeteredClock``)."""

    execution: Execution
    """The interpreter's execution (``started_ms``, ``history``, ``status``)."""
    kind: str
    """``intro`` (a round's loop, or its successor after a handover) or ``reconnect``."""
    successor: bool = False
    """Started by another execution's ``StartSuccessor`` Task (a handover)."""
    answers: list[dict[str, Any]] = field(default_factory=list)
    """What the clock function answered at each wake, in order."""
    last_wake: Invocation | None = None

    @property
    def wakes(self) -> int:
        return len(self.answers)

    @property
    def stale_wakes(self) -> int:
        """Wakes that applied nothing (``applied`` False: early, stale or duplicate)."""
        return sum(1 for a in self.answers if a.get("applied") is False)

    @property
    def started_ms(self) -> int:
        return self.execution.started_ms

    @property
    def ended_ms(self) -> int | None:
        """When the execution ended (its last state's entry), None while it runs."""
        if self.execution.status == "RUNNING" or not self.execution.history:
            return None
        return self.execution.history[-1][0]

    @property
    def handed_over(self) -> bool:
        """It ended by starting its successor (``StartSuccessor``)."""
        return self.execution.status == "SUCCEEDED" and any(
            state == "StartSuccessor" for _, state in self.execution.history
        )

    @property
    def seconds(self) -> float:
        """Billed span: start to end, as the interpreter recorded it (``history``); the clock
        function takes no manual time, so its own time is added apart."""
        end = self.ended_ms
        if end is None:  # still running: so far
            history = self.execution.history
            end = history[-1][0] if history else self.started_ms
        return max(0, end - self.started_ms) / 1000


class MeteredClock(ManualClock):
    """``infra.emulator.states.ManualClock`` — the deployed definition run by the local
    interpreter on manual time, scheduled through the real ``StepFunctionsClock`` — metered:

    - every ``start_execution`` of the interpreter (the adapter's, with boto3's signature, and
      the ``StartSuccessor`` Task's) is a ``StartExecution`` call of the invocation that made
      it: a handler's, or for a successor the wake that answered ``handover``;
    - every clock-function invocation (``fire``) is an invocation of ``counter``: the first
      wake of an execution ``clock:<kind>:<ref>``, later wakes (and a successor's)
      ``clock:wake:<ref>``; its answer is kept on the execution (``ClockExecution``);
    - every ``schedule`` request is recorded with the time it was made (``scheduled``).

    ``function(state) -> next state`` is the clock function.
    """

    def __init__(self, counter: CallCounter, function: Callable[[dict[str, Any]], Any]) -> None:
        super().__init__()
        self.counter = counter
        self.function = function
        self.scheduled: list[tuple[Timer, int]] = []
        """Every schedule request: (timer, manual time it was made at)."""
        self.executions: list[ClockExecution] = []
        """Every execution that ran, in the order each first ran."""
        self._by_id: dict[int, ClockExecution] = {}
        self._running: ClockExecution | None = None
        self._successor_arns: set[str] = set()
        self._start = self.service.start_execution
        self._run = self.service.run
        self.service.start_execution = self._metered_start  # type: ignore[method-assign]
        self.service.run = self._metered_run  # type: ignore[method-assign]
        self.fire = self._metered_fire

    def schedule(self, timer: Timer) -> None:
        self.scheduled.append((timer, self.now))
        super().schedule(timer)

    def _metered_start(
        self,
        stateMachineArn: str,  # noqa: N803 (boto3's keyword)
        name: str | None = None,
        input: str = "{}",
    ) -> dict[str, Any]:
        running = self._running
        invocation = self.counter.current
        if invocation is None and running is not None:
            invocation = running.last_wake  # the StartSuccessor Task of a handover
        call = Call("stepfunctions", "StartExecution", target=name or "")
        if invocation is not None:
            invocation.calls.append(call)
        try:
            started = self._start(stateMachineArn, name, input)
        except Exception:
            call.failed = True
            raise
        if running is not None:
            self._successor_arns.add(str(started["executionArn"]))
        return started

    def _metered_run(self, execution: Execution) -> Execution:
        record = self._by_id.get(id(execution))
        if record is None:  # its first run: ``data`` is still its input
            data = execution.data if isinstance(execution.data, dict) else {}
            record = ClockExecution(
                execution,
                str(data.get("kind", "")),
                successor=execution.arn in self._successor_arns,
            )
            self._by_id[id(execution)] = record  # the record keeps it alive: ids stay unique
            self.executions.append(record)
        outer, self._running = self._running, record
        try:
            return self._run(execution)
        finally:
            self._running = outer

    def _metered_fire(self, state: dict[str, Any]) -> Any:
        record = self._running
        first = record is not None and not record.successor and record.last_wake is None
        route = f"clock:{state['kind']}:{state['ref']}" if first else f"clock:wake:{state['ref']}"
        with self.counter.invocation(route) as invocation:
            if record is not None:
                record.last_wake = invocation
            answer = self.function(state)
        if record is not None and isinstance(answer, dict):
            record.answers.append(dict(answer))
        return answer


class ApiGatewayRecordingNotifier(RecordingNotifier):
    """The real ``ApiGatewayNotifier`` (every message is a ``PostToConnection`` on moto), also
    recording what each connection received so the scripted players can read it, and when
    (``log``: the manual time of each message, for figure 3's deadline timeline)."""

    def __init__(self, client: Any, now_ms: Callable[[], int]) -> None:
        from shared.adapters.notifier import ApiGatewayNotifier

        super().__init__()
        self.adapter = ApiGatewayNotifier(client)
        self.now_ms = now_ms
        self.log: list[tuple[int, str, dict[str, Any]]] = []
        """(time sent, connection id, message) of every message posted."""

    def send(self, messages: list[tuple[str, str]]) -> list[str]:
        now = self.now_ms()
        self.log += [(now, cid, m) for cid, text in messages for m in unpack(text)]
        gone_real = self.adapter.send(messages)
        gone = super().send(messages)
        return list(dict.fromkeys(gone + gone_real))

    def close(self, connection_id: str) -> None:
        self.adapter.close(connection_id)
        super().close(connection_id)

    def last_active_ms(self, connection_id: str) -> int | None:
        """A real GetConnection on moto (counted, as each read costs a Management API call),
        answered with the harness's ``LastActiveAt`` (moto's is not the client's activity)."""
        self.adapter.last_active_ms(connection_id)
        return super().last_active_ms(connection_id)

    def route_response(self, connection_id: str, text: str) -> None:
        """A mock route's answer (``pong``): recorded for the players, never posted."""
        super().send([(connection_id, text)])


class CountingBackend(Backend):
    """``infra.emulator.testing.Backend`` rewired to the real adapters with counted clients:
    ``DynamoStore`` and ``ApiGatewayNotifier`` on moto, ``StepFunctionsClock`` on the local
    interpreter (``MeteredClock``).

    Call inside ``moto.mock_aws()``.
    """

    def __init__(self, *, seed: int = 7) -> None:
        import itertools
        import random

        import boto3

        from shared.adapters.dynamo.store import DynamoStore
        from shared.runtime.bootstrap import build
        from shared.runtime.settings import Settings

        super().__init__(seed=seed)  # the moto table, handlers, scripted-player plumbing
        self.counter = CallCounter(boto3.client("dynamodb", region_name=REGION))
        self.counter.attach(self.client)
        apigw = self.counter.attach(
            boto3.client(
                "apigatewaymanagementapi",
                region_name=REGION,
                endpoint_url="https://local.execute-api.us-east-1.amazonaws.com/bench",
            )
        )
        self.clock = MeteredClock(self.counter, lambda state: self.call("clock", state))
        self.notifier = ApiGatewayRecordingNotifier(apigw, self.clock.now_ms)
        self.store = DynamoStore(self.client, self.table_name, self.clock.now_ms)
        rng = random.Random(seed)
        counter = itertools.count(1)
        self.deps = build(
            Settings(
                turn_seconds=30,
                intro_seconds=6,
                reconnect_seconds=60,
                heartbeat_timeout_seconds=60,  # ruling 14, as deployed
            ),
            store=self.store,
            notifier=self.notifier,
            clock=self.clock,
            rng=lambda: random.Random(rng.random()),
            ids=lambda: f"id{next(counter):04d}",
        )
        self.inbound_bytes = 0
        self.sent_ms: dict[str, int] = {}
        """Connection id -> when its client last sent a message (manual UTC ms)."""
        self.gateway_answered = 0
        """Messages answered by the gateway itself (mock routes: ``ping``): one message in and
        one route response out each, no function, no table access."""
        self._sources = itertools.count(1)

    def player(
        self, name: str | None = None, *, session: bool = True, source_ip: str | None = None
    ) -> ScriptedPlayer:
        """A new player, each from its own address unless ``source_ip`` is given: the deployed
        new-player limit per source (ruling 17) is on, and its counter write is counted."""
        if source_ip is None:
            n = next(self._sources)
            source_ip = f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"
        return super().player(name, session=session, source_ip=source_ip)

    def route_response(self, connection_id: str, text: str) -> None:
        assert isinstance(self.notifier, ApiGatewayRecordingNotifier)
        self.notifier.route_response(connection_id, text)

    def invoke(
        self,
        route: str,
        connection_id: str,
        body: str | None = None,
        *,
        received_ms: int | None = None,
        source_ip: str = "127.0.0.1",
    ) -> Any:
        if body is not None:
            self.inbound_bytes += len(body.encode("utf-8"))
        if not route.startswith("$") or route == "$default":
            self.sent_ms[connection_id] = self.clock.now_ms()
        kwargs: dict[str, Any] = {"received_ms": received_ms, "source_ip": source_ip}
        if route in MOCK_ROUTES:  # the gateway answers: no invocation to count
            self.gateway_answered += 1
            return super().invoke(route, connection_id, body, **kwargs)
        with self.counter.invocation(route):
            return super().invoke(route, connection_id, body, **kwargs)


@contextlib.contextmanager
def moto_env() -> Iterator[None]:
    """Fake credentials, quiet Powertools, and moto's ``mock_aws`` for the block."""
    from moto import mock_aws

    saved = {k: os.environ.get(k) for k in FAKE_ENV}
    os.environ.update(FAKE_ENV)
    try:
        with mock_aws():
            yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# ------------------------------------------------------------------------------ summaries
@dataclass
class ActionCount:
    """The calls of one measured action (one or more invocations)."""

    action: str
    invocations: list[Invocation]
    note: str = ""
    goal: str = ""

    @property
    def calls(self) -> list[Call]:
        return [c for inv in self.invocations for c in inv.calls]

    def ops(self) -> Counter[str]:
        return Counter(OPS.get(c.op, c.op) for c in self.calls)

    @property
    def rru(self) -> float:
        return sum(c.rru for c in self.calls)

    @property
    def wru(self) -> float:
        return sum(c.wru for c in self.calls)

    @property
    def gsi_wru(self) -> float:
        return sum(c.gsi_wru for c in self.calls)

    @property
    def posts(self) -> int:
        return sum(1 for c in self.calls if c.op == "PostToConnection")

    def ops_text(self) -> str:
        order = list(OPS.values())
        ops = self.ops()
        parts = sorted(ops.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
        return " ".join(f"{n}x{op}" for op, n in parts) or "none"


def _measure(
    b: CountingBackend, action: str, fn: Any, note: str = "", goal: str = ""
) -> ActionCount:
    mark = b.counter.mark()
    fn()
    return ActionCount(action, b.counter.since(mark), note, goal)


def _mover_in_duel(b: Backend, duel_id: str) -> ScriptedPlayer:
    for p in b.to_move():
        d = p.current_duel()
        if d is not None and d.duel_id == duel_id:
            return p
    raise AssertionError(f"nobody to move in {duel_id}")


def _duel_ids(b: Backend, tid: str) -> list[str]:
    rec = b.tournament(tid)
    return [d.duel_id for d in rec.tournament.duels if not d.over]


WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"})
GUESS_GOAL = "1 Get + 1 Put + 1 Post/recipient (+<=1 StartExec)"


def measure_actions() -> list[ActionCount]:
    """Figure 1: every action of the brief, on a fresh moto backend."""
    rows: list[ActionCount] = []
    with moto_env():
        b = CountingBackend()
        # sessions
        rows.append(_measure(b, "connect ($connect)", lambda: b.invoke("$connect", "c-x=")))
        holder: list[ScriptedPlayer] = []
        rows.append(
            _measure(
                b,
                "session (new player)",
                lambda: holder.append(b.player("first")),
                note="$connect + session",
            )
        )
        first = holder[0]
        rows.append(
            _measure(
                b,
                "session (resume, old socket open)",
                first.resume,
                note="$connect + session; old socket closed",
            )
        )
        # joins: the first creates the lobby, the next six wait, the 8th starts the tournament
        others = [b.player(f"p{i}") for i in range(1, 8)]
        rows.append(_measure(b, "join (new lobby)", lambda: first.join("en")))
        for p in others[:-2]:
            p.join("en")
        rows.append(_measure(b, "join (waiting lobby, 7th seat)", lambda: others[-2].join("en")))
        rows.append(
            _measure(
                b,
                "join (8th seat: tournament starts)",
                lambda: others[-1].join("en"),
                note="8 players seated, round 1 drawn",
            )
        )
        players = [first, *others]
        tid = first.last("round")["tournament_id"]
        rows.append(
            _measure(b, "intro deadline (round starts)", b.end_intro, note="clock function")
        )
        duels = _duel_ids(b, tid)
        # guesses in duel 0
        p = _mover_in_duel(b, duels[0])
        rows.append(
            _measure(
                b,
                "guess (invalid word)",
                lambda: p.guess("zzzzzz"[: p.current_duel().length]),
                note="refused; reply to the guesser only",
            )
        )
        b.clock.advance(5_000)
        rows.append(
            _measure(
                b,
                "guess (valid, turn passes)",
                p.guess,
                note="2 duelists, no spectator yet",
                goal=GUESS_GOAL,
            )
        )
        q = _mover_in_duel(b, duels[0])
        passing = _measure(b, "deadlines", q.time_out)
        wakes = [i for i in passing.invocations if i.route.startswith("clock:wake:")]
        skips = [i for i in wakes if any(c.op in WRITES for c in i.calls)]
        stale_row = ActionCount(
            "loop wake, stale (a guess came first)",
            [],
            note="clock function; nothing due, nothing written (the first in this run)",
        )
        rows.append(stale_row)
        rows.append(
            ActionCount(
                "loop wake (skip)",
                skips[-1:],
                note="clock function, applies the skips due; waits again",
            )
        )
        p = _mover_in_duel(b, duels[0])
        rows.append(
            _measure(
                b,
                "guess (winning, round goes on)",
                p.solve,
                note="duel ends; other duels still running",
                goal=GUESS_GOAL,
            )
        )
        p = _mover_in_duel(b, duels[1])
        rows.append(
            _measure(
                b,
                "guess (valid, with spectators)",
                p.guess,
                note="2 duelists + spectators of the finished duel",
                goal=GUESS_GOAL,
            )
        )
        for did in duels[1:-1]:
            _mover_in_duel(b, did).solve()
        last = _mover_in_duel(b, duels[-1])
        rows.append(
            _measure(
                b,
                "guess (round-closing, nobody out)",
                last.solve,
                note="next pairing, intro deadline",
                goal=GUESS_GOAL + " + next intro",
            )
        )
        # play rounds (first mover solves) until a round closes with eliminations
        closing: ActionCount | None = None
        for _ in range(12):
            b.end_intro()
            open_duels = _duel_ids(b, tid)
            if not open_duels:
                break
            for did in open_duels[:-1]:
                _mover_in_duel(b, did).solve()
            m = _measure(b, "", _mover_in_duel(b, open_duels[-1]).solve)
            if any(c.op == "TransactWriteItems" for c in m.calls):
                closing = m
                break
        if closing is not None:
            closing.action = "guess (round-closing, players placed)"
            closing.note = "BatchGet placed players; ratings in a transaction"
            closing.goal = GUESS_GOAL + " + ratings"
            rows.append(closing)
        b.end_intro()
        tid_players = [x for x in players if x.tournament_id() == tid]
        gone = next(x for x in tid_players if not x.my_turn())
        rows.append(
            _measure(b, "disconnect (in a tournament)", gone.disconnect, note="$disconnect")
        )
        # the reconnect deadline's Wait ends on the whole second after it (60 s on)
        reconnect_wake = -(-(b.clock.now + 60_000) // 1000) * 1000
        passing = _measure(b, "reconnect deadline", lambda: b.clock.advance_to(reconnect_wake))
        rows.append(
            ActionCount(
                "reconnect deadline (player out)",
                [i for i in passing.invocations if i.route.startswith("clock:reconnect")],
                note="clock function; eliminates, loses the duel",
            )
        )
        lobby_player = b.player("lobbyist")
        lobby_player.join("en")
        rows.append(
            _measure(b, "disconnect (in a lobby)", lobby_player.disconnect, note="$disconnect")
        )
        idle = b.player("idle")
        rows.append(_measure(b, "disconnect (idle)", idle.disconnect, note="$disconnect"))
        pinger = b.player("pinger")
        rows.append(_measure(b, "ping", lambda: pinger.send("ping")))
        every_wake = [i for i in b.counter.since(0) if i.route.startswith("clock:wake:")]
        stale_row.invocations = [
            next(i for i in every_wake if not any(c.op in WRITES for c in i.calls))
        ]
    return rows
