"""Simulation: the metrics AWS would publish about a run, written into a metric stream
(``infra.emulator.metrics.MetricStream``) so the stack's alarms can be evaluated over it.

What is modelled from what the run does, at simulated time:

- Lambda (AWS, "Types of metrics for Lambda functions",
  https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html): per invocation
  ``Invocations``, ``Duration`` and, when it raised, ``Errors``; ``Throttles`` when the function's
  reserved concurrency is in use (the invocation does not run); ``ConcurrentExecutions`` as
  the peak in-flight executions of each minute, per function and for the account;
- the functions' own metrics: the Powertools metric set, serialized as the EMF document
  Lambda would print at the end of the invocation (``Entrypoint``: ``log_metrics``);
- API Gateway: ``MessageCount``/``ConnectCount`` per message, ``IntegrationError`` when the
  route's function raised or was throttled, and one access-log record per message run through
  the template's metric filters (``status``: 200, or 500 for an integration error);
- Step Functions: ``ExecutionsStarted`` per execution, ``ExecutionsFailed`` when the apply
  Task's retries ran out;
- DynamoDB: ``ThrottledRequests`` per operation, each throttled attempt (botocore's retries
  included), from the fake client;
- the table's stream (``functions.streams.STREAMS``; the run writes no stream, so this is a
  model): each minute the history function's ``IteratorAge`` (AWS/Lambda, Maximum) at its
  batching window — a mapping that keeps up reads each record within it — and its failure
  queue's ``ApproximateNumberOfMessagesVisible`` (AWS/SQS) at 0; faults ``stream_lag`` and
  ``stream_failures`` replace them.

Faults and noise are injected through ``Fault`` (``Options.faults``).
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from infra.emulator.metrics import MetricFilter, MetricStream

TABLE = "wordle-tournament"
API = "wordle-tournament-api"
STAGE = "sim"
MACHINE = "deadlines"
SERVICE = "wordle-tournament"
"""The twin's names for the stack's table, API, stage, state machine and metrics service."""
ACCOUNT_OTHERS = "other-workloads"
"""A pseudo-function: the account's other Lambda workloads (fault ``account_load``)."""

QUEUE = "history-failures"
"""The twin's name for the history mapping's failure queue (``infra.cdk.constructs.streams``)."""

CONNECT = "functions.connect.handler"
CLOCK = "functions.apply_deadlines.handler"
WATCHDOG = "functions.watchdog.handler"
HISTORY = "functions.history.handler"


def route_function(route: str) -> str:
    """A message route's function, named by its handler (``functions.messages.<route>``)."""
    return f"functions.messages.{route}"


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """The functions' logs off meanwhile (a long run's log lines cost more CPU than its
    metrics; the metrics are what the alarms read), their level restored after."""
    from shared.runtime.observability import logger

    level = logger.log_level
    logger.setLevel("CRITICAL")
    try:
        yield
    finally:
        logger.setLevel(level)


def twin_names(template: Mapping[str, Any]) -> Callable[[Any], str]:
    """A resolver for ``infra.emulator.metrics.Alarms.from_template``: the names a synthesized
    template gives its resources (a Lambda function's ``Ref``, the table's, the API's, the
    state machine's, the stage, the metrics service) -> the names this twin publishes under."""
    names: dict[str, str] = {}
    for logical_id, res in template["Resources"].items():
        props = res.get("Properties", {})
        kind = res["Type"]
        if kind == "AWS::Lambda::Function" and "Handler" in props:
            names[logical_id] = props["Handler"]
            env = props.get("Environment", {}).get("Variables", {})
            if isinstance(env.get("POWERTOOLS_SERVICE_NAME"), str):
                names[env["POWERTOOLS_SERVICE_NAME"]] = SERVICE
        elif kind == "AWS::DynamoDB::Table" or kind == "AWS::DynamoDB::GlobalTable":
            names[logical_id] = TABLE
        elif kind == "AWS::ApiGatewayV2::Api":
            names[logical_id] = API
        elif kind == "AWS::ApiGatewayV2::Stage":
            names[str(props["StageName"])] = STAGE
        elif kind == "AWS::StepFunctions::StateMachine":
            names[logical_id] = MACHINE
        elif kind == "AWS::SQS::Queue":
            names[logical_id] = QUEUE

    def resolve(value: Any) -> str:
        key = value["Ref"] if isinstance(value, dict) and "Ref" in value else value
        if isinstance(value, dict) and "Fn::GetAtt" in value:  # a queue's QueueName
            key = value["Fn::GetAtt"][0]
        return names.get(str(key), str(key))

    return resolve


def timeouts_of(template: Mapping[str, Any]) -> dict[str, int]:
    """Function handler -> its timeout (seconds), from a synthesized template."""
    return {
        res["Properties"]["Handler"]: int(res["Properties"]["Timeout"])
        for res in template["Resources"].values()
        if res["Type"] == "AWS::Lambda::Function" and "Timeout" in res.get("Properties", {})
    }


def reserved_of(template: Mapping[str, Any]) -> dict[str, int]:
    """Function handler -> its reserved concurrency, from a synthesized template."""
    return {
        res["Properties"]["Handler"]: int(res["Properties"]["ReservedConcurrentExecutions"])
        for res in template["Resources"].values()
        if res["Type"] == "AWS::Lambda::Function"
        and "ReservedConcurrentExecutions" in res.get("Properties", {})
    }


@dataclass(frozen=True)
class Fault:
    """``kind`` on ``target`` (a function's handler, or empty) during [start_s, end_s) of
    simulated time. Kinds: ``raise`` (the function raises: Errors), ``throttle`` (every
    invocation throttled), ``hold`` (``count`` executions of the function kept running),
    ``account_load`` (``count`` executions of other workloads), ``clock_delay`` (each wake
    ``count`` seconds late), ``clock_busy`` (the clock function's store is busy: every
    ``count``-th wake raises ``TryAgainError``), ``clock_kill`` (round loops die at their next
    wake), ``watchdog_stop``, ``start_throttled`` (StartExecution throttled past botocore's
    retries), ``state_throttled`` (``count`` throttled state transitions a minute),
    ``timed_out`` (``count`` executions time out a minute), ``table_throttles`` (``count``
    forced throttles a minute), ``table_errors`` (``count`` system errors a minute),
    ``api_execution_errors``/``api_client_errors`` (``count`` a minute), ``post_failed``
    (every post fails), ``duplicate_wakes`` (every ``count``-th wake runs twice),
    ``stale_index`` (every ``count``-th wake leaves a stale due-time index entry),
    ``stream_lag`` (the history function's iterator age is ``count`` ms), ``stream_failures``
    (``count`` failed batches wait in its failure queue), ``bug`` (a
    message route's store raises an unexpected error: ``internal_error``), ``busy`` (a message
    route's store is busy past its retries: ``try_again``), ``traffic`` (``count`` invocations a
    minute of ``target`` that do nothing: Lambda-level faults on functions players seldom
    call)."""

    kind: str
    start_s: float = 0.0
    end_s: float = float("inf")
    target: str = ""
    count: int = 1


class CloudSide:
    """The run's AWS metrics (module docstring). ``now_ms``: simulated UTC ms; ``reserved``:
    function handler -> reserved concurrency; ``filters``: the access log's metric filters."""

    def __init__(
        self,
        now: Callable[[], float],
        now_ms: Callable[[], int],
        faults: tuple[Fault, ...] = (),
        reserved: Mapping[str, int] | None = None,
        filters: tuple[MetricFilter, ...] = (),
        timeouts: Mapping[str, int] | None = None,
        ctx: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self.stream = MetricStream()
        self._now = now
        self.now_ms = now_ms
        self.faults = faults
        self.reserved = dict(reserved or {})
        self.filters = filters
        self.timeouts = dict(timeouts or {})
        self._ctx = ctx or dict
        self.inflight: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.account_peak = 0
        self.counts: Counter[str] = Counter()
        self._ticks: Counter[str] = Counter()

    # -- faults ------------------------------------------------------------------------------
    def fault(self, kind: str, target: str = "") -> Fault | None:
        t = self._now()
        for f in self.faults:
            if f.kind == kind and f.start_s <= t < f.end_s and (not f.target or f.target == target):
                return f
        return None

    def every(self, kind: str, target: str = "") -> bool:
        """True on every ``count``-th call while fault ``kind`` is active (noise at a rate)."""
        f = self.fault(kind, target)
        if f is None:
            return False
        self._ticks[kind] += 1
        return self._ticks[kind] % max(1, f.count) == 0

    # -- publishing --------------------------------------------------------------------------
    def put(self, namespace: str, name: str, value: float = 1, **dims: str) -> None:
        self.counts[f"{namespace}:{name}"] += int(value)
        self.stream.put(namespace, name, value, self.now_ms(), **dims)

    def flush_emf(self) -> None:
        """The Powertools metric set as the EMF document Lambda prints, then cleared."""
        from shared.runtime.observability import metrics

        if metrics.metric_set:
            doc = metrics.serialize_metric_set()
            metrics.clear_metrics()
            self.stream.put_emf(json.loads(json.dumps(doc)), self.now_ms())

    # -- Lambda ------------------------------------------------------------------------------
    def lambda_throttled(self, function: str) -> bool:
        """Whether an invocation of ``function`` now is throttled (counted when it is)."""
        full = self.inflight[function] >= self.reserved.get(function, 1 << 30)
        if full or self.fault("throttle", function) is not None:
            self.put("AWS/Lambda", "Throttles", FunctionName=function)
            return True
        return False

    def begin(self, function: str) -> float:
        self.inflight[function] += 1
        self.peak[function] = max(self.peak[function], self.inflight[function])
        self.account_peak = max(self.account_peak, sum(self.inflight.values()))
        self.put("AWS/Lambda", "Invocations", FunctionName=function)
        return self._now()

    def end(self, function: str, started: float, error: bool) -> None:
        self.inflight[function] -= 1
        self.put("AWS/Lambda", "Duration", (self._now() - started) * 1000, FunctionName=function)
        if error:
            self.put("AWS/Lambda", "Errors", FunctionName=function)
        self.flush_emf()

    def invoke(self, function: str, fn: Callable[[], Any]) -> tuple[bool, Any]:
        """Run one invocation of ``function`` (``fn``): ``(ok, result)``; not ok when it was
        throttled or raised (fault ``raise``: it raises after running)."""
        if self.lambda_throttled(function):
            return False, None
        started = self.begin(function)
        ctx = self._ctx()
        timeout = self.timeouts.get(function)
        if timeout is not None:
            ctx["deadline"] = started + timeout
        try:
            result = fn()
            if self.fault("raise", function) is not None:
                raise RuntimeError("injected: the function failed")
        except Exception:
            self.end(function, started, error=True)
            return False, None
        finally:
            ctx.pop("deadline", None)
        self.end(function, started, error=False)
        return True, result

    def sample_concurrency(self) -> None:
        """Once a minute: each function's peak in-flight executions, and the account's."""
        held = {
            f.target: f.count
            for f in self.faults
            if f.kind == "hold" and self.fault("hold", f.target)
        }
        others = self.fault("account_load")
        account = self.account_peak + (others.count if others else 0)
        for function in set(self.peak) | set(held):
            peak = self.peak[function] + held.get(function, 0)
            if peak:
                self.put("AWS/Lambda", "ConcurrentExecutions", peak, FunctionName=function)
        if account:
            self.put("AWS/Lambda", "ConcurrentExecutions", account)
        self.peak = Counter({k: v for k, v in self.inflight.items() if v})
        self.account_peak = sum(self.inflight.values())

    # -- the table's stream ------------------------------------------------------------------
    def stream_minute(self) -> None:
        """The history mapping's iterator age and failure queue depth this minute (module
        docstring): its batching window and 0, unless ``stream_lag`` / ``stream_failures``."""
        from functions.streams import HISTORY as SOURCE

        lag = self.fault("stream_lag", HISTORY)
        age_ms = lag.count if lag is not None else SOURCE.batching_window_s * 1000
        self.put("AWS/Lambda", "IteratorAge", age_ms, FunctionName=HISTORY)
        failed = self.fault("stream_failures")
        visible = failed.count if failed is not None else 0
        self.put("AWS/SQS", "ApproximateNumberOfMessagesVisible", visible, QueueName=QUEUE)

    # -- API Gateway -------------------------------------------------------------------------
    def message(self, route: str, ok: bool) -> None:
        name = "ConnectCount" if route == "$connect" else "MessageCount"
        self.put("AWS/ApiGateway", name, ApiId=API, Stage=STAGE)
        if not ok:
            self.put("AWS/ApiGateway", "IntegrationError", ApiId=API, Stage=STAGE)
        self.access_log({"status": 200 if ok else 500, "stage": STAGE, "routeKey": route})

    def access_log(self, record: Mapping[str, Any]) -> None:
        for f in self.filters:
            f.apply(self.stream, record, self.now_ms())

    # -- Step Functions ----------------------------------------------------------------------
    def execution_started(self) -> None:
        self.put("AWS/States", "ExecutionsStarted", StateMachineArn=MACHINE)

    def execution_failed(self) -> None:
        self.put("AWS/States", "ExecutionsFailed", StateMachineArn=MACHINE)

    # -- DynamoDB ----------------------------------------------------------------------------
    def table_throttled(self, operation: str) -> None:
        self.put("AWS/DynamoDB", "ThrottledRequests", Operation=operation, TableName=TABLE)

    def minute(self) -> None:
        """Per-minute injected service-side faults (module docstring of ``Fault``)."""
        for f in self.faults:
            if f.kind == "traffic" and self.fault("traffic", f.target) is not None:
                for _ in range(f.count):
                    self.invoke(f.target, lambda: None)
        self.sample_concurrency()
        self.stream_minute()
        for kind, ns, name, dims in (
            ("state_throttled", "AWS/States", "ExecutionThrottled", {"StateMachineArn": MACHINE}),
            ("timed_out", "AWS/States", "ExecutionsTimedOut", {"StateMachineArn": MACHINE}),
            (
                "api_execution_errors",
                "AWS/ApiGateway",
                "ExecutionError",
                {"ApiId": API, "Stage": STAGE},
            ),
            ("api_client_errors", "AWS/ApiGateway", "ClientError", {"ApiId": API, "Stage": STAGE}),
            (
                "table_errors",
                "AWS/DynamoDB",
                "SystemErrors",
                {"Operation": "UpdateItem", "TableName": TABLE},
            ),
        ):
            active = self.fault(kind)
            if active is not None:
                self.put(ns, name, active.count, **dims)
