"""Benchmark, figure 1c: the CPU of one action split by layer, against the botocore floor. One
valid guess recorded on moto (``infra.benchmarks.calls.CountingBackend``) is replayed in this
process on the deployed path, each AWS call answered with its recorded response; process CPU is
charged to the innermost layer running through timing proxies (the code under test unchanged).
Method: ``infra/benchmarks/RESULTS.md``, figure 1c; the layers: ``shared/domain/RULINGS.md``,
Design notes, "Benchmarks".
"""

from __future__ import annotations

import contextlib
import dataclasses
import pickle
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

LAYERS = (
    "entrypoint",
    "protocol",
    "services + domain",
    "store",
    "codec",
    "botocore",
    "notifier",
)
CALLBACK_URL = "https://local.execute-api.us-east-1.amazonaws.com/bench"


@dataclass(frozen=True)
class Recorded:
    """One AWS call of the recorded action: what was asked and moto's raw answer."""

    service: str
    operation: str
    params: dict[str, Any]
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class Recording:
    """The recorded action: its event, the time it ran at, and its AWS calls in order."""

    route: str
    event: dict[str, Any]
    now_ms: int
    calls: list[Recorded] = field(default_factory=list)

    def operations(self) -> list[str]:
        return [c.operation for c in self.calls]


@dataclass
class LayerResult:
    """CPU per invocation by layer (median of ``repeat`` replays, ms) and the floor."""

    action: str
    repeat: int
    operations: list[str]
    layers: dict[str, float]
    """Layer -> median exclusive CPU ms per invocation."""
    total_ms: float
    """Median CPU ms of a whole invocation (the layers' medians need not add up to it)."""
    floor_ms: float
    """Median CPU ms of the same AWS calls made directly with canned answers."""
    replayed_operations: list[str] = field(default_factory=list)
    """The calls one replay made (equal to ``operations``: the replay is the recorded work)."""

    @property
    def ratio(self) -> float:
        return self.total_ms / self.floor_ms if self.floor_ms else float("nan")

    @property
    def own_ms(self) -> float:
        """Our code: the invocation minus botocore."""
        return self.total_ms - self.layers.get("botocore", 0.0)


# ------------------------------------------------------------------------------ recording
def record_guess() -> Recording:
    """Play to round 1's first turn on moto and record one valid guess (the turn passes)."""
    from infra.benchmarks.calls import CountingBackend, _duel_ids, _mover_in_duel, moto_env

    with moto_env():
        b = CountingBackend()
        first = b.player("first")
        others = [b.player(f"p{i}") for i in range(1, 8)]
        for p in (first, *others):
            p.join("en")
        tid = first.last("round")["tournament_id"]
        b.end_intro()
        b.clock.advance(5_000)
        mover = _mover_in_duel(b, _duel_ids(b, tid)[0])
        recording: list[Recording] = []
        invoke = b.invoke

        def recorded_invoke(
            route: str, connection_id: str, body: str | None = None, **kw: Any
        ) -> Any:
            from infra.emulator.events import ws_event

            event = ws_event(route, connection_id, body, b.clock.now)
            recording.append(Recording(route, event, b.clock.now))
            depth.clear()
            try:
                return invoke(route, connection_id, body, **kw)
            finally:
                depth.append(-1)  # the harness's own reads after the handler: not recorded

        calls: list[Recorded] = []
        notifier: Any = b.notifier  # ApiGatewayRecordingNotifier: the real adapter inside
        clients = (b.client, notifier.adapter._client)
        # The counter's own reads (sizing a write) run inside its hooks of the handler's calls
        # and share their event hooks: record only the outermost calls (first hook in, last
        # hook out).
        depth: list[int] = [-1]  # the harness's own reads before the handler: not recorded

        def before(**kwargs: Any) -> None:
            if not depth:
                kwargs["context"]["bench_recorded"] = kwargs["params"]
            depth.append(1)

        def after(http_response: Any, model: Any, context: dict[str, Any], **_: Any) -> None:
            depth.pop()
            if not depth and "bench_recorded" in context:
                calls.append(
                    Recorded(
                        model.service_model.service_name,
                        model.name,
                        context["bench_recorded"],
                        http_response.status_code,
                        dict(http_response.headers),
                        http_response.content,
                    )
                )

        for client in clients:
            client.meta.events.register_first("provide-client-params", before)
            client.meta.events.register_last("after-call", after)
        b.invoke = recorded_invoke  # type: ignore[method-assign]
        try:
            mover.guess()
        finally:
            b.invoke = invoke  # type: ignore[method-assign]
            for client in clients:
                client.meta.events.unregister("provide-client-params", before)
                client.meta.events.unregister("after-call", after)
    (rec,) = recording
    rec.calls = calls
    return rec


# ------------------------------------------------------------------------------ replaying
class _Raw:
    """What ``botocore.awsrequest.AWSResponse`` reads a body from."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


def canned_clients(rec: Recording, session: Any = None) -> dict[str, Any]:
    """A DynamoDB and a Management API client of ``session`` (default: one with fixed
    credentials and region) answering each operation with its recorded answer
    (``answer_with``)."""
    import boto3

    if session is None:
        session = boto3.session.Session(
            aws_access_key_id="bench", aws_secret_access_key="bench", region_name="us-east-1"
        )
    clients = {
        "dynamodb": session.client("dynamodb"),
        "apigatewaymanagementapi": session.client(
            "apigatewaymanagementapi", endpoint_url=CALLBACK_URL
        ),
    }
    answer_with(clients, rec)
    return clients


def answer_with(clients: dict[str, Any], rec: Recording) -> None:
    """Make ``clients`` (service name -> boto3 client) answer each operation of ``rec`` with
    its recorded answer (a ``before-send`` hook: botocore validates, serialises, signs and
    parses as usual; nothing is sent)."""
    from botocore.awsrequest import AWSResponse

    answers = {(c.service, c.operation): c for c in rec.calls}
    for service, client in clients.items():
        for (svc, op), call in answers.items():
            if svc != service:
                continue

            def answer(request: Any, _call: Recorded = call, **_: Any) -> AWSResponse:
                headers: Any = _call.headers  # AWSResponse makes its own case-insensitive copy
                return AWSResponse(request.url, _call.status, headers, _Raw(_call.body))

            hook: Any = answer  # a before-send hook returns the response
            client.meta.events.register(f"before-send.{service}.{op}", hook)


class _Meter:
    """Exclusive CPU per layer: time goes to the innermost layer running."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = dict.fromkeys(LAYERS, 0.0)
        self._stack: list[str] = []
        self._since = 0.0

    def enter(self, layer: str) -> None:
        now = time.process_time()
        if self._stack:
            self.totals[self._stack[-1]] += now - self._since
        self._stack.append(layer)
        self._since = now

    def leave(self) -> None:
        now = time.process_time()
        self.totals[self._stack.pop()] += now - self._since
        self._since = now

    def reset(self) -> None:
        self.totals = dict.fromkeys(LAYERS, 0.0)

    def wrap(self, layer: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.enter(layer)
            try:
                return fn(*args, **kwargs)
            finally:
                self.leave()

        return timed


class _Timed:
    """A port whose every method call is charged to ``layer``."""

    def __init__(self, target: Any, layer: str, meter: _Meter) -> None:
        self._target, self._layer, self._meter = target, layer, meter

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        return self._meter.wrap(self._layer, value) if callable(value) else value


class _FixedClock:
    """The recorded instant; a timer the action schedules is kept, never run."""

    def __init__(self, now_ms: int) -> None:
        self._now = now_ms
        self.scheduled: list[Any] = []

    def now_ms(self) -> int:
        return self._now

    def schedule(self, timer: Any) -> None:
        self.scheduled.append(timer)


@contextlib.contextmanager
def _patched(meter: _Meter) -> Iterator[None]:
    """Charge the protocol, the codec and the use case to their layers (module attributes the
    code under test looks up at call time), restored on exit."""
    import shared.adapters.dynamo.records as records
    import shared.adapters.dynamo.store as store
    import shared.adapters.dynamo.tournament_document as tournament_document
    import shared.protocol.inbound as inbound
    import shared.services.duels as duels
    import shared.services.outbox as outbox

    targets: list[tuple[Any, str, str]] = [
        (inbound, "parse_inbound", "protocol"),
        (outbox, "dump_event", "protocol"),
        (duels, "guess", "services + domain"),
        (store, "to_av", "codec"),
        (store, "from_av", "codec"),
    ]
    targets += [
        (module, name, "codec")
        for module in (records, tournament_document)
        for name in dir(module)
        if name.endswith(("_to_item", "_from_item")) and callable(getattr(module, name))
    ]
    saved = [(module, name, getattr(module, name)) for module, name, _ in targets]
    try:
        for module, name, layer in targets:
            setattr(module, name, meter.wrap(layer, getattr(module, name)))
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def measure_guess(repeat: int = 300, rec: Recording | None = None) -> LayerResult:
    """Record a valid guess on moto, then replay it ``repeat`` times by layer and as a floor."""
    from shared.adapters.dynamo.store import DynamoStore
    from shared.adapters.notifier import ApiGatewayNotifier
    from shared.runtime.bootstrap import build
    from shared.runtime.settings import Settings

    rec = rec if rec is not None else record_guess()
    clients = canned_clients(rec)
    meter = _Meter()
    botocore_hooks(clients.values(), meter)
    clock = _FixedClock(rec.now_ms)
    store = DynamoStore(clients["dynamodb"], "wordle-tournament", clock.now_ms)
    notifier = ApiGatewayNotifier(clients["apigatewaymanagementapi"])
    deps = build(
        Settings(heartbeat_timeout_seconds=60, rate_limit_per_second=1e9, rate_limit_burst=10**9),
        store=_Timed(store, "store", meter),
        notifier=_Timed(notifier, "notifier", meter),
        clock=clock,
        metrics=lambda name, value: None,
    )
    import functions.messages as messages

    handle = messages.route(("guess",))
    made: list[str] = []
    replayed = _count_calls(clients.values(), made)
    per_layer: dict[str, list[float]] = {layer: [] for layer in LAYERS}
    totals: list[float] = []
    with _patched(meter), _quiet_logs():
        for i in range(repeat + 5):  # 5 warm-ups: the first builds validators, loads lists
            made.clear()
            meter.reset()
            start = time.process_time()
            meter.enter("entrypoint")
            handle(rec.event, deps)
            meter.leave()
            elapsed = time.process_time() - start
            if i < 5:
                continue
            totals.append(elapsed * 1000)
            for layer in LAYERS:
                per_layer[layer].append(meter.totals[layer] * 1000)
    replayed()
    import statistics

    return LayerResult(
        action="guess (valid, turn passes)",
        repeat=repeat,
        operations=rec.operations(),
        layers={layer: statistics.median(v) for layer, v in per_layer.items()},
        total_ms=statistics.median(totals),
        floor_ms=floor_ms(rec, clients, repeat),
        replayed_operations=list(made),
    )


def botocore_hooks(clients: Any, meter: _Meter) -> None:
    """Charge each AWS call, from ``provide-client-params`` to ``after-call``, to botocore."""
    for client in clients:
        client.meta.events.register("provide-client-params", lambda **_: meter.enter("botocore"))
        client.meta.events.register("after-call", lambda **_: meter.leave())


def _count_calls(clients: Any, made: list[str]) -> Callable[[], None]:
    """Record each call's operation name into ``made``; returns the unregister function."""

    def seen(model: Any, **_: Any) -> None:
        made.append(model.name)

    registered = list(clients)
    for client in registered:
        client.meta.events.register("after-call", seen)

    def done() -> None:
        for client in registered:
            client.meta.events.unregister("after-call", seen)

    return done


def floor_ms(rec: Recording, clients: dict[str, Any], repeat: int) -> float:
    """Median CPU ms of the recorded calls made directly, with the recorded answers."""
    import botocore

    def method(call: Recorded) -> Callable[..., Any]:
        fn: Callable[..., Any] = getattr(clients[call.service], botocore.xform_name(call.operation))
        return fn

    import statistics

    calls = [(method(c), c.params) for c in rec.calls]
    samples = []
    for i in range(repeat + 5):
        start = time.process_time()
        for fn, params in calls:
            fn(**params)
        if i >= 5:
            samples.append((time.process_time() - start) * 1000)
    return statistics.median(samples)


@contextlib.contextmanager
def _quiet_logs() -> Iterator[None]:
    import logging

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


# ------------------------------------------------------------------------------ first message
class _LambdaContext:
    """The Lambda context attributes Powertools' ``inject_lambda_context`` reads."""

    function_name = "guess"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:guess"
    memory_limit_in_mb = 256
    aws_request_id = "cold"
    log_group_name = "/aws/lambda/guess"
    log_stream_name = "cold"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def save(rec: Recording, path: str) -> None:
    with open(path, "wb") as f:
        pickle.dump(rec, f)


def first_message(path: str) -> list[str]:
    """A cold container's first message (``infra.benchmarks.cold``): after
    ``container_deps()`` built the deployed clients, make them answer with the recording at
    ``path`` (``save``) and run the recorded event through the function's Lambda handler
    (Powertools wrapper included) at the recorded instant. Returns the AWS operations it made."""
    import functions.messages as messages
    from functions._entry import container_deps
    from functions.routes import function_of

    with open(path, "rb") as f:
        rec: Recording = pickle.load(f)  # our own file, written by ``save``
    deps: Any = container_deps()
    clients = {"dynamodb": deps.store.client, "apigatewaymanagementapi": deps.notifier.client}
    answer_with(clients, rec)
    made: list[str] = []
    _count_calls(clients.values(), made)
    # the recorded instant (the duel's turn is open then), the container's clients and all
    deps = dataclasses.replace(deps, clock=_FixedClock(rec.now_ms))
    messages.ENTRYPOINTS[function_of(rec.route)].invoke(rec.event, _LambdaContext(), deps)
    return made


def first_calls(path: str) -> list[str]:
    """The floor of ``first_message``: a cold process that builds the two clients and makes the
    recorded action's AWS calls once, with the recorded answers (botocore's first-call work:
    endpoint rules, signer, parsers). Returns the operations made."""
    import boto3
    import botocore

    with open(path, "rb") as f:
        rec: Recording = pickle.load(f)  # our own file, written by ``save``
    # Credentials and region from the environment, as the floor and the container find them
    # (fixed ones would skip botocore's credential chain, which both of those pay).
    clients = canned_clients(rec, boto3.session.Session())
    for call in rec.calls:
        getattr(clients[call.service], botocore.xform_name(call.operation))(**call.params)
    return rec.operations()
