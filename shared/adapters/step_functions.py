"""Adapters layer: ``StepFunctionsClock`` — one looping Express execution per round.

``state_machine_definition`` (loaded by CDK, ``infra.emulator.states`` and the tests):
WaitUntilDue -> ApplyDeadline (the clock function) -> Next: loop, hand over to a successor before
``EXPRESS_LIMIT_MS``, or Done. Wait timestamps are rounded up to whole seconds (ruling 13).
INTRO timers start a round's loop; RECONNECT timers one wait-and-apply execution. Why nothing is
missed, duplicates and the handover budget: ``shared/domain/RULINGS.md``, "Clocks".
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from shared.adapters.lazy_client import LazyClient
from shared.services.ports import Timer

logger = logging.getLogger(__name__)

EXPRESS_LIMIT_MS = 300_000
"""An Express execution's maximum duration (5 minutes)."""
CLOCK_FUNCTION_TIMEOUT_S = 10
"""The clock function's Lambda timeout (CDK ``FunctionSpec``): one read and one write."""
APPLY_TIMEOUT_S = CLOCK_FUNCTION_TIMEOUT_S + 2
"""The apply Task's own timeout (``TimeoutSeconds``): the function's, plus the invocation."""
START_TIMEOUT_S = 10
START_FAILED_METRIC = "ClockStartFailed"
"""Counted per deadline execution ``StepFunctionsClock.schedule`` failed to start."""
"""The successor's start Task's timeout (one StartExecution request)."""

_LAMBDA_RETRY = {
    "ErrorEquals": [
        "Lambda.ServiceException",
        "Lambda.AWSLambdaException",
        "Lambda.SdkClientException",
        "Lambda.TooManyRequestsException",
        "States.TaskFailed",
        "States.Timeout",
    ],
    "IntervalSeconds": 1,
    "MaxAttempts": 3,
    "BackoffRate": 2.0,
}
_START_RETRY = {
    "ErrorEquals": ["States.ALL"],
    "IntervalSeconds": 1,
    "MaxAttempts": 3,
    "BackoffRate": 2.0,
}
WAIT_ROUNDING_MS = 1_000
"""A Wait timestamp is rounded up to the whole second: at most this much later."""
SAFETY_MS = 10_000
"""Room left for what the sum does not count (scheduling delays of the service)."""


def task_worst_case_ms(task: dict[str, Any]) -> int:
    """A Task state's worst duration (ms): every attempt runs to ``TimeoutSeconds``, with the
    Retry's backoff between attempts (``IntervalSeconds * BackoffRate**n``)."""
    timeout_ms = int(task["TimeoutSeconds"]) * 1000
    retry = task.get("Retry", [{}])[0]
    attempts = int(retry.get("MaxAttempts", 0))
    interval = float(retry.get("IntervalSeconds", 1))
    rate = float(retry.get("BackoffRate", 2.0))
    waits_ms = sum(interval * rate**n for n in range(attempts)) * 1000
    return int((attempts + 1) * timeout_ms + waits_ms)


def worst_case_tail_ms(definition: dict[str, Any]) -> int:
    """What may still run after a loop's last wake: the rounding of that Wait, the apply and
    the successor's start at their worst (``task_worst_case_ms``)."""
    states = definition["States"]
    return (
        WAIT_ROUNDING_MS
        + task_worst_case_ms(states["ApplyDeadline"])
        + task_worst_case_ms(states["StartSuccessor"])
    )


STATE_FIELDS = ("kind", "ref", "seq", "due_ms", "due", "loop_started_ms")
"""What one wake hands to the next (and a loop to its successor)."""


def state_machine_definition(clock_function_arn: str) -> dict[str, Any]:
    """ASL of the deadline loop (the module docstring; RULINGS.md, "Clocks").

    Input (and the state between wakes): ``{"kind", "ref", "seq", "due_ms", "due":
    "<ISO-8601 UTC>", "loop_started_ms"}``. The clock function receives ``{"state": <the
    whole state>, "machine": <this machine's ARN>}`` and returns the next state
    (``loop_state``), with ``loop`` and ``handover``.
    """
    return {
        "Comment": (
            "Wordle Tournament deadlines: one looping Express execution per round (wait until "
            "the round's earliest deadline, apply what is due, repeat) or one wait+apply per "
            "reconnect deadline (RULINGS.md, Clocks)"
        ),
        "StartAt": "WaitUntilDue",
        "States": {
            "WaitUntilDue": {"Type": "Wait", "TimestampPath": "$.due", "Next": "ApplyDeadline"},
            "ApplyDeadline": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                # The machine's own ARN rides along from the execution context: the clock
                # function cannot name it in its environment (the machine invokes the
                # function's alias, so the function naming the machine would be a cycle).
                "Parameters": {
                    "FunctionName": clock_function_arn,
                    "Payload": {"state.$": "$", "machine.$": "$$.StateMachine.Id"},
                },
                "OutputPath": "$.Payload",
                "TimeoutSeconds": APPLY_TIMEOUT_S,
                "Retry": [_LAMBDA_RETRY],
                "Next": "Next",
            },
            "Next": {
                "Type": "Choice",
                "Choices": [
                    {
                        "And": [
                            {"Variable": "$.loop", "BooleanEquals": True},
                            {"Variable": "$.handover", "BooleanEquals": True},
                        ],
                        "Next": "StartSuccessor",
                    },
                    {"Variable": "$.loop", "BooleanEquals": True, "Next": "WaitUntilDue"},
                ],
                "Default": "Done",
            },
            "StartSuccessor": {
                "Type": "Task",
                "Resource": "arn:aws:states:::states:startExecution",
                "Parameters": {
                    "StateMachineArn.$": "$$.StateMachine.Id",
                    "Name.$": "$.successor",
                    "Input": {f"{name}.$": f"$.{name}" for name in STATE_FIELDS},
                },
                "ResultPath": None,  # the execution's output is the state handed over
                "TimeoutSeconds": START_TIMEOUT_S,
                "Retry": [_START_RETRY],
                "End": True,
            },
            "Done": {"Type": "Succeed"},
        },
    }


HANDOVER_AFTER_MS = (
    EXPRESS_LIMIT_MS - worst_case_tail_ms(state_machine_definition("arn")) - SAFETY_MS
)
"""A loop hands over when its next wake would come later than this after the loop started
(about 3 minutes): the worst case after that wake still ends inside Express's 5 minutes."""


def loop_state(event: dict[str, Any], next_due_ms: int | None, now_ms: int) -> dict[str, Any]:
    """The state after one wake (the clock function's result minus ``applied``/``name``).

    ``event``: the state the machine handed in (or a plain ``Timer`` event). ``next_due_ms``:
    when the loop must wake next (UTC ms), None to end. The loop keeps ``kind``/``ref``/
    ``seq`` (the round's identity) and moves ``due_ms``; ``due`` is the Wait's timestamp
    (``wait_timestamp``). ``handover`` is set when that wake would take the execution past
    ``HANDOVER_AFTER_MS``: the successor's ``loop_started_ms`` is then ``now_ms`` (never later
    than its real start, so the budget stays conservative), ``successor`` names it, and its
    first wait never exceeds the budget either (an intermediate wake only reads).
    """
    timer = Timer.from_event(event)
    started = int(event.get("loop_started_ms") or now_ms)
    state: dict[str, Any] = {**timer.to_event(), "due": wait_timestamp(timer.due_ms)}
    if next_due_ms is None:
        return {**state, "loop_started_ms": started, "loop": False, "handover": False}
    handover = _wake_ms(next_due_ms) - started > HANDOVER_AFTER_MS
    begins = now_ms if handover else started
    state = {
        **state,
        "due_ms": next_due_ms,
        "due": wait_timestamp(min(next_due_ms, begins + HANDOVER_AFTER_MS)),
        "loop_started_ms": begins,
        "loop": True,
        "handover": handover,
    }
    if handover:  # the successor's execution name (for the logs; Express does not dedupe)
        state["successor"] = f"{timer.name}-h{next_due_ms}"[-80:]
    return state


def _wake_ms(ms: int) -> int:
    """``ms`` rounded up to the whole second (when a Wait for it ends)."""
    return -(-ms // 1000) * 1000


def wait_timestamp(ms: int) -> str:
    """Absolute UTC ms -> the Wait state's ``YYYY-MM-DDTHH:MM:SSZ``, rounded *up* to the whole
    second: Step Functions truncates a timestamp's milliseconds, so rounding down (or leaving
    them) would wake up to 1 s before ``ms``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(_wake_ms(ms) // 1000))


class StepFunctionsClock(LazyClient):
    """The Clock port on Step Functions. Args: client — boto3 ``stepfunctions`` (or the local
    interpreter, which has the same ``start_execution``), or None with ``client_factory``, which
    builds it on the first ``schedule`` (most invocations schedule nothing — a guess that passes
    the turn, a ping — so a cold start does not pay for the client); state_machine_arn — the
    deadline machine (Express); now_ms — the time source (default: this host's UTC clock);
    metrics — counts ``(name, value)``: ``ClockStartFailed`` per execution that failed to start
    (throttled past botocore's retries, refused, or a transport error), so a round loop that
    falls to the once-a-minute watchdog is seen (an alarm: ``infra/RUNBOOK.md``,
    "ClockStartFailures"); none: not counted. See the module docstring for what each timer kind
    starts."""

    def __init__(
        self,
        client: Any,
        state_machine_arn: str,
        now_ms: Callable[[], int] | None = None,
        *,
        client_factory: Callable[[], Any] | None = None,
        metrics: Callable[[str, float], None] | None = None,
    ) -> None:
        self._hold(client, client_factory)
        self._arn = state_machine_arn
        self._metrics = metrics
        if now_ms is not None:
            self.now_ms = now_ms  # type: ignore[method-assign]

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def schedule(self, timer: Timer) -> None:
        now = self.now_ms()
        payload = {
            **timer.to_event(),
            "due": wait_timestamp(min(timer.due_ms, now + HANDOVER_AFTER_MS)),
            "loop_started_ms": now,
        }
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            # The name is for the logs: Express does not deduplicate by name (a duplicate
            # execution is harmless, RULINGS.md "Clocks").
            self.client.start_execution(
                stateMachineArn=self._arn, name=timer.name, input=json.dumps(payload)
            )
        except ClientError as err:
            code = err.response.get("Error", {}).get("Code")
            if code == "ExecutionAlreadyExists":
                return
            # The watchdog applies deadlines whose execution failed to start.
            self._start_failed(str(code))
        except BotoCoreError as err:
            # a transport failure must not stop the pushes of a change already committed
            self._start_failed(type(err).__name__)

    def _start_failed(self, reason: str) -> None:
        if self._metrics is not None:
            self._metrics(START_FAILED_METRIC, 1)
        logger.warning("start_execution failed (%s); the watchdog will apply it", reason)
