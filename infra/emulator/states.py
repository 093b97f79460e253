"""Local runtime: a small interpreter of the deadline state machine, the twin of Step Functions
for the clock. ``LocalStepFunctions`` has boto3's ``start_execution(stateMachineArn, name,
input)`` and runs the very definition CDK deploys (``shared.adapters.step_functions
.state_machine_definition``); a state or field it does not support raises
``UnsupportedStateError`` at start. Drivers: ``LocalClock`` (wall clock) and ``ManualClock``
(tests). What it implements: ``shared/domain/RULINGS.md``, Design notes, "Local runtime".
"""

from __future__ import annotations

import copy
import heapq
import itertools
import json
import logging
import threading
import time
from calendar import timegm
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from infra.emulator.lambda_context import ACCOUNT_ID, DEFAULT_REGION, make_context
from shared.adapters.step_functions import (
    EXPRESS_LIMIT_MS,
    StepFunctionsClock,
    state_machine_definition,
)
from shared.services.ports import Timer

log = logging.getLogger(__name__)

Invoke = Callable[[str, dict[str, Any]], Any]
"""``invoke(function_name, payload) -> result``: one synchronous Lambda invocation."""
ClockHandler = Callable[[dict[str, Any], Any], Any]
"""The clock function: ``handler(state, context) -> next state``."""

CLOCK_FUNCTION_NAME = "wordle-tournament-clock"
STATE_MACHINE_NAME = "wordle-tournament-deadlines"


class UnsupportedStateError(ValueError):
    """The definition uses something this interpreter does not implement."""


class TaskError(Exception):
    """A Task state failed with Step Functions error name ``error``."""

    def __init__(self, error: str, cause: str = "") -> None:
        super().__init__(f"{error}: {cause}")
        self.error = error
        self.cause = cause


def parse_timestamp_ms(text: str) -> int:
    """An ISO-8601 UTC timestamp -> epoch ms, milliseconds truncated as Step Functions does."""
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1]
    elif value.endswith("+00:00"):
        value = value[:-6]
    else:
        raise UnsupportedStateError(f"timestamp {text!r} is not UTC")
    whole = value.split(".")[0]
    return timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) * 1000


def _get(data: Any, path: str, context: dict[str, Any]) -> Any:
    """A reference path (``$``, ``$.a.b``, ``$$.StateMachine.Id``): plain field access."""
    if path.startswith("$$"):
        data, path = context, path[1:]
    if path == "$":
        return data
    if not path.startswith("$."):
        raise UnsupportedStateError(f"path {path!r}")
    for part in path[2:].split("."):
        if not isinstance(data, dict) or part not in data:
            raise TaskError("States.Runtime", f"path {path!r} not found")
        data = data[part]
    return data


def _parameters(template: Any, data: Any, context: dict[str, Any]) -> Any:
    """``Parameters``: keys ending ``.$`` take a path's value; nested objects recurse."""
    if isinstance(template, dict):
        out: dict[str, Any] = {}
        for key, value in template.items():
            if key.endswith(".$"):
                out[key[:-2]] = _get(data, value, context)
            else:
                out[key] = _parameters(value, data, context)
        return out
    return copy.deepcopy(template)


def _loop_state(payload: dict[str, Any]) -> dict[str, Any]:
    """The loop's state in the clock function's payload (``{"state", "machine"}``)."""
    state = payload.get("state")
    return state if isinstance(state, dict) else payload


def _choice_matches(rule: dict[str, Any], data: Any, context: dict[str, Any]) -> bool:
    if "And" in rule:
        return all(_choice_matches(r, data, context) for r in rule["And"])
    if "Or" in rule:
        return any(_choice_matches(r, data, context) for r in rule["Or"])
    if "Not" in rule:
        return not _choice_matches(rule["Not"], data, context)
    try:
        value = _get(data, rule["Variable"], context)
    except TaskError:
        return False  # a missing variable matches nothing (Step Functions raises; we never rely)
    for op in ("BooleanEquals", "NumericEquals", "StringEquals"):
        if op in rule:
            return bool(value == rule[op] and type(value) is type(rule[op]))
    raise UnsupportedStateError(f"choice rule {sorted(rule)}")


_SUPPORTED = {
    "Wait": {"Type", "Next", "End", "Seconds", "SecondsPath", "Timestamp", "TimestampPath",
             "Comment"},
    "Task": {"Type", "Next", "End", "Resource", "Parameters", "OutputPath", "ResultPath",
             "InputPath", "TimeoutSeconds", "Retry", "Comment"},
    "Choice": {"Type", "Choices", "Default", "Comment"},
    "Succeed": {"Type", "Comment"},
    "Fail": {"Type", "Error", "Cause", "Comment"},
    "Pass": {"Type", "Next", "End", "Result", "ResultPath", "Comment"},
}  # fmt: skip
_LAMBDA = "arn:aws:states:::lambda:invoke"
_START = "arn:aws:states:::states:startExecution"


def check_definition(definition: dict[str, Any]) -> None:
    """Raise UnsupportedStateError for any state or field the interpreter does not run."""
    for name, state in definition["States"].items():
        kind = state.get("Type")
        if kind not in _SUPPORTED:
            raise UnsupportedStateError(f"state {name}: type {kind}")
        extra = set(state) - _SUPPORTED[kind]
        if extra:
            raise UnsupportedStateError(f"state {name}: {sorted(extra)}")
        if kind == "Task" and state["Resource"] not in (_LAMBDA, _START):
            raise UnsupportedStateError(f"state {name}: resource {state['Resource']}")


@dataclass
class Execution:
    """One execution: where it is, its data, and when it next runs (``wake_ms``)."""

    arn: str
    name: str
    machine_arn: str
    data: Any
    started_ms: int
    state: str
    wake_ms: int
    attempts: int = 0
    status: str = "RUNNING"  # RUNNING | SUCCEEDED | FAILED
    error: str | None = None
    waited: bool = False  # the current Wait state's time has been computed and passed
    history: list[tuple[int, str]] = field(default_factory=list)


class LocalStepFunctions:
    """The ``stepfunctions`` client of the local runtime (see the module docstring).

    ``invoke(function_name, payload)`` runs the Lambda the Task names. ``now_ms`` is the time
    source. Thread-safe: executions wait in a heap under a lock; a driver takes one due
    execution (``take_due``), runs it (``run``: outside the lock, invocations included) and
    hands it back (``put_back``).
    """

    def __init__(
        self,
        invoke: Invoke,
        now_ms: Callable[[], int],
        *,
        region: str = DEFAULT_REGION,
        duplicate_starts: bool = False,
    ) -> None:
        self._invoke = invoke
        self._now = now_ms
        self._region = region
        self.duplicate_starts = duplicate_starts
        self._machines: dict[str, dict[str, Any]] = {}
        self._lock = threading.Condition()
        self._heap: list[tuple[int, int, Execution]] = []
        self._order = itertools.count()
        self.finished: list[Execution] = []
        """Every execution that ended (succeeded or failed), in order."""
        self.on_change: Callable[[], None] | None = None

    # -- the boto3-shaped API ------------------------------------------------------------

    def create_state_machine(self, name: str, definition: dict[str, Any]) -> str:
        """Register a definition (checked: ``check_definition``); returns its ARN."""
        check_definition(definition)
        arn = f"arn:aws:states:{self._region}:{ACCOUNT_ID}:stateMachine:{name}"
        self._machines[arn] = definition
        return arn

    def start_execution(
        self,
        stateMachineArn: str,  # noqa: N803 (boto3's keyword)
        name: str | None = None,
        input: str = "{}",
    ) -> dict[str, Any]:
        """Start an execution now (boto3 ``start_execution``). Express: a name is not
        unique, so a second start with the same name runs a second execution."""
        if stateMachineArn not in self._machines:
            raise ValueError(f"StateMachineDoesNotExist: {stateMachineArn}")
        definition = self._machines[stateMachineArn]
        now = self._now()
        count = 2 if self.duplicate_starts else 1
        arn = ""
        for _ in range(count):
            exec_name = name or f"x{next(self._order)}"
            arn = f"{stateMachineArn.replace(':stateMachine:', ':express:')}:{exec_name}:{now}"
            execution = Execution(
                arn=arn,
                name=exec_name,
                machine_arn=stateMachineArn,
                data=json.loads(input),
                started_ms=now,
                state=definition["StartAt"],
                wake_ms=now,
            )
            self.put_back(execution)
        return {"executionArn": arn, "startDate": now / 1000}

    # -- the driver's side ---------------------------------------------------------------

    def next_wake(self) -> int | None:
        """When the earliest waiting execution runs next (UTC ms), or None."""
        with self._lock:
            return self._heap[0][0] if self._heap else None

    def waiting(self) -> list[Execution]:
        """Executions not finished, soonest first."""
        with self._lock:
            return [e for _, _, e in sorted(self._heap, key=lambda x: (x[0], x[1]))]

    def abandon(self) -> list[Execution]:
        """Drop every waiting execution, as if each had died (tests: a loop that crashed or
        never started; the watchdog's case). Returns them."""
        with self._lock:
            dropped = [e for _, _, e in self._heap]
            self._heap.clear()
        return dropped

    def take_due(self, now_ms: int) -> Execution | None:
        """Remove and return the earliest execution due at ``now_ms``, or None."""
        with self._lock:
            if self._heap and self._heap[0][0] <= now_ms:
                return heapq.heappop(self._heap)[2]
            return None

    def put_back(self, execution: Execution) -> None:
        """Queue a running execution at its ``wake_ms``; record a finished one."""
        with self._lock:
            if execution.status == "RUNNING":
                heapq.heappush(self._heap, (execution.wake_ms, next(self._order), execution))
            else:
                self.finished.append(execution)
            self._lock.notify_all()
        if self.on_change is not None:
            self.on_change()

    def run(self, execution: Execution) -> Execution:
        """Run ``execution`` from its current state until it waits (``wake_ms`` in the
        future) or ends; returns it (hand it back with ``put_back``)."""
        definition = self._machines[execution.machine_arn]
        context = {
            "StateMachine": {"Id": execution.machine_arn},
            "Execution": {"Id": execution.arn, "Name": execution.name},
        }
        while execution.status == "RUNNING":
            now = self._now()
            if now - execution.started_ms >= EXPRESS_LIMIT_MS:
                self._fail(execution, "States.Timeout", "Express execution ran 5 minutes")
                break
            state = definition["States"][execution.state]
            kind = state["Type"]
            execution.history.append((now, execution.state))
            if kind == "Wait":
                if not execution.waited:
                    until = self._wait_until(state, execution.data, context, now)
                    limit = execution.started_ms + EXPRESS_LIMIT_MS
                    execution.waited = True
                    if until > now:
                        execution.wake_ms = min(until, limit)
                        break
                self._next(execution, state)
            elif kind == "Task":
                if not self._task(execution, state, context):
                    break  # waiting for a retry
            elif kind == "Choice":
                for rule in state["Choices"]:
                    if _choice_matches(rule, execution.data, context):
                        execution.state = rule["Next"]
                        break
                else:
                    if "Default" not in state:
                        self._fail(execution, "States.NoChoiceMatched", execution.state)
                        break
                    execution.state = state["Default"]
                execution.waited = False
            elif kind == "Pass":
                if "Result" in state:
                    execution.data = self._result(execution.data, state, state["Result"])
                self._next(execution, state)
            elif kind == "Succeed":
                execution.status = "SUCCEEDED"
            else:  # Fail
                self._fail(execution, state.get("Error", "States.Fail"), state.get("Cause", ""))
        return execution

    # -- states ------------------------------------------------------------------------

    def _wait_until(
        self, state: dict[str, Any], data: Any, context: dict[str, Any], now: int
    ) -> int:
        if "Seconds" in state:
            return now + int(state["Seconds"]) * 1000
        if "SecondsPath" in state:
            return now + int(_get(data, state["SecondsPath"], context)) * 1000
        stamp = state.get("Timestamp") or _get(data, state["TimestampPath"], context)
        return parse_timestamp_ms(str(stamp))

    def _task(self, execution: Execution, state: dict[str, Any], context: dict[str, Any]) -> bool:
        """Run a Task; False when it failed and waits for a retry (or the execution failed)."""
        data = execution.data
        if "InputPath" in state:
            data = _get(data, state["InputPath"], context)
        params = _parameters(state.get("Parameters", data), data, context)
        began = self._now()
        try:
            if state["Resource"] == _LAMBDA:
                try:
                    payload = self._invoke(params["FunctionName"], params.get("Payload", {}))
                except Exception as err:  # Lambda's errorType is the exception's class name
                    raise TaskError(type(err).__name__, str(err)) from err
                result: Any = {"Payload": json.loads(json.dumps(payload)), "StatusCode": 200}
            else:
                result = self.start_execution(
                    params["StateMachineArn"],
                    params.get("Name"),
                    json.dumps(params.get("Input", {})),
                )
            timeout = state.get("TimeoutSeconds")
            if timeout is not None and self._now() - began > int(timeout) * 1000:
                raise TaskError("States.Timeout", f"{execution.state} ran past {timeout} s")
        except TaskError as err:
            return self._retry_or_fail(execution, state, err)
        execution.attempts = 0
        execution.data = self._result(execution.data, state, result)
        if "OutputPath" in state:
            execution.data = _get(execution.data, state["OutputPath"], context)
        self._next(execution, state)
        return True

    def _retry_or_fail(self, execution: Execution, state: dict[str, Any], err: TaskError) -> bool:
        for retrier in state.get("Retry", []):
            names = retrier["ErrorEquals"]
            task_failed = "States.TaskFailed" in names and err.error != "States.Timeout"
            if err.error in names or "States.ALL" in names or task_failed:
                if execution.attempts < int(retrier.get("MaxAttempts", 3)):
                    interval = float(retrier.get("IntervalSeconds", 1))
                    rate = float(retrier.get("BackoffRate", 2.0))
                    delay_ms = round(interval * rate**execution.attempts * 1000)
                    execution.attempts += 1
                    execution.wake_ms = self._now() + delay_ms
                    log.warning(
                        "%s: %s failed (%s); retry %d in %d ms",
                        execution.name,
                        execution.state,
                        err.error,
                        execution.attempts,
                        delay_ms,
                    )
                    return False
                break
        self._fail(execution, err.error, err.cause)
        return False

    @staticmethod
    def _result(data: Any, state: dict[str, Any], result: Any) -> Any:
        path = state.get("ResultPath", "$")
        if path is None:
            return data
        if path == "$":
            return result
        if not path.startswith("$.") or "." in path[2:]:
            raise UnsupportedStateError(f"ResultPath {path!r}")
        return {**data, path[2:]: result}

    @staticmethod
    def _next(execution: Execution, state: dict[str, Any]) -> None:
        execution.waited = False
        if state.get("End"):
            execution.status = "SUCCEEDED"
        else:
            execution.state = state["Next"]

    @staticmethod
    def _fail(execution: Execution, error: str, cause: str) -> None:
        execution.status = "FAILED"
        execution.error = f"{error}: {cause}"
        log.error("execution %s failed: %s", execution.name, execution.error)


def _timer_of(execution: Execution) -> Timer | None:
    try:
        return Timer.from_event(execution.data)
    except (KeyError, TypeError, ValueError):
        return None


class _Driven:
    """What both drivers share: the local service running the deployed definition, and the
    same adapter the functions use on AWS (``StepFunctionsClock``) as the Clock port."""

    def __init__(self, now_ms: Callable[[], int], region: str, duplicate_starts: bool) -> None:
        self.service = LocalStepFunctions(
            self._invoke, now_ms, region=region, duplicate_starts=duplicate_starts
        )
        self.function_arn = f"arn:aws:lambda:{region}:{ACCOUNT_ID}:function:{CLOCK_FUNCTION_NAME}"
        self.state_machine_arn = self.service.create_state_machine(
            STATE_MACHINE_NAME, state_machine_definition(self.function_arn)
        )
        self._port = StepFunctionsClock(self.service, self.state_machine_arn, now_ms)
        self.fired: list[Timer] = []
        """Every state the clock function was invoked with, as a Timer, in order."""

    def schedule(self, timer: Timer) -> None:
        """The Clock port: exactly what ``StepFunctionsClock.schedule`` does on AWS."""
        self._port.schedule(timer)

    def pending(self) -> list[Timer]:
        """The timers of executions still running, soonest wake first."""
        return [t for e in self.service.waiting() if (t := _timer_of(e)) is not None]

    def _invoke(self, function_name: str, payload: dict[str, Any]) -> Any:
        # The definition's Task hands the function {"state": ..., "machine": ...}.
        timer = Timer.from_event(_loop_state(payload))
        self.fired.append(timer)
        return self._call(payload)

    def _call(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError


class ManualClock(_Driven):
    """Time that moves only when told (the test harness): ``advance``/``advance_to`` run
    every execution that comes due on the way, in time order, through ``fire(state) -> next
    state`` (the clock function; set by the harness). ``now`` is the Lambda clock too."""

    def __init__(
        self,
        start_ms: int = 1_800_000_000_000,
        *,
        region: str = DEFAULT_REGION,
        duplicate_starts: bool = False,
    ) -> None:
        self.now = start_ms
        self.fire: Callable[[dict[str, Any]], Any] | None = None
        super().__init__(self.now_ms, region, duplicate_starts)

    def now_ms(self) -> int:
        return self.now

    def _call(self, payload: dict[str, Any]) -> Any:
        if self.fire is None:
            raise RuntimeError("no clock function set (ManualClock.fire)")
        return self.fire(_loop_state(payload))

    def next_due(self) -> int | None:
        """When the next execution wakes (UTC ms), or None. Executions started at ``now``
        first run to their Wait (as they do at once on AWS), so this is a real wake."""
        self.settle()
        return self.service.next_wake()

    def pending(self) -> list[Timer]:
        """The timers of executions still running, soonest wake first (after ``settle``)."""
        self.settle()
        return super().pending()

    def advance(self, ms: int) -> None:
        """Move time forward by ``ms``, running every wake due on the way (in order)."""
        self.advance_to(self.now + ms)

    def advance_to(self, t_ms: int) -> None:
        """Move time to ``t_ms`` (never back), running every wake due on the way."""
        while True:
            wake = self.service.next_wake()
            if wake is None or wake > t_ms:
                break
            self.now = max(self.now, wake)
            execution = self.service.take_due(self.now)
            if execution is not None:
                self.service.put_back(self.service.run(execution))
        self.now = max(self.now, t_ms)

    def settle(self) -> None:
        """Run what is due now (e.g. executions just started) without moving time."""
        self.advance_to(self.now)


class LocalClock(_Driven):
    """Wall-clock time (the local runtime): a thread waits for the next wake and runs each
    due execution in ``executor`` (invocations may overlap, as on AWS). The clock function is
    ``clock_handler(state, context)`` (``set_handler``); nothing runs before :meth:`start`;
    :meth:`stop` waits for invocations in flight."""

    def __init__(
        self,
        clock_handler: ClockHandler | None = None,
        *,
        executor: Executor | None = None,
        function_name: str = CLOCK_FUNCTION_NAME,
        region: str = DEFAULT_REGION,
        duplicate_starts: bool = False,
    ) -> None:
        self._handler = clock_handler
        self._own_executor = executor is None
        self._executor: Executor = executor or ThreadPoolExecutor(
            max_workers=8, thread_name_prefix="states"
        )
        self._function_name = function_name
        self._region = region
        self._cond = threading.Condition()
        self._in_flight: set[Future[Any]] = set()
        self._running = False
        self._thread: threading.Thread | None = None
        super().__init__(self.now_ms, region, duplicate_starts)
        self.service.on_change = self._wake_up

    def now_ms(self) -> int:
        """Absolute UTC wall-clock time in milliseconds."""
        return time.time_ns() // 1_000_000

    def set_handler(self, clock_handler: ClockHandler | None) -> None:
        """Set (or clear) the clock function."""
        self._handler = clock_handler

    def _call(self, payload: dict[str, Any]) -> Any:
        handler = self._handler
        if handler is None:
            raise RuntimeError("no clock function set (LocalClock.set_handler)")
        return handler(payload, make_context(self._function_name, region=self._region))

    def _wake_up(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def start(self) -> LocalClock:
        """Start running due executions (overdue ones at once, in wake order)."""
        with self._cond:
            if self._running:
                return self
            self._running = True
        self._thread = threading.Thread(target=self._loop, name="local-states", daemon=True)
        self._thread.start()
        return self

    def stop(self, *, timeout: float | None = 10.0) -> None:
        """Stop; wait up to ``timeout`` s for executions in flight. Waiting ones stay."""
        with self._cond:
            self._running = False
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        with self._cond:
            in_flight = list(self._in_flight)
        deadline = None if timeout is None else time.monotonic() + timeout
        for future in in_flight:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                future.exception(timeout=remaining)
            except TimeoutError:
                log.warning("clock execution still running at shutdown")
        if self._own_executor:
            self._executor.shutdown(wait=False)

    def __enter__(self) -> LocalClock:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._running:
                    wake = self.service.next_wake()
                    if wake is None:
                        self._cond.wait()
                        continue
                    delay_ms = wake - self.now_ms()
                    if delay_ms <= 0:
                        break
                    self._cond.wait(delay_ms / 1000)
                if not self._running:
                    return
            execution = self.service.take_due(self.now_ms())
            if execution is None:
                continue
            future = self._executor.submit(self._run, execution)
            with self._cond:
                self._in_flight.add(future)
            future.add_done_callback(self._done)

    def _run(self, execution: Execution) -> None:
        try:
            self.service.put_back(self.service.run(execution))
        except Exception:  # an interpreter bug must not kill the clock thread
            log.exception("clock execution %s crashed", execution.name)

    def _done(self, future: Future[Any]) -> None:
        with self._cond:
            self._in_flight.discard(future)
