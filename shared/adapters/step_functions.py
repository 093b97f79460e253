"""Adapters layer: ``StepFunctionsClock`` — one looping Express execution per round.

The deadline state machine (Amazon States Language) lives here once; CDK and the tests load it
from ``state_machine_definition``. It is an **Express** state machine that loops:

    WaitUntilDue (Wait until $.due) -> ApplyDeadline (invoke the clock function; its
    Payload becomes the state) -> Next (Choice): loop and handover -> StartSuccessor;
    loop -> WaitUntilDue; else Done (Succeed).

Why one loop per round never misses a deadline (DESIGN.md §3 Clocks): the clock function
applies *every* deadline due at the wake time (``Tournament.expire``), then returns the round's
earliest pending deadline, and the loop waits until then. Within a round a deadline is only
ever replaced by one no earlier — a turn lasts at most ``turn_ms`` and the next turn's deadline
is ``now + turn_ms`` (a guess, made before the old deadline) or ``old deadline + turn_ms`` (a
skip) — and the loop's next wake is the earliest of the deadlines pending when it was set, so no
deadline can fall due before that wake (at worst a wake is stale: nothing due, it only reads and
waits again). Whatever a wake finds due it applies, however late, so no deadline is ever lost.
A new round brings its own intro timer, hence its own loop; a loop ends when its round closes
or the tournament ends.

What ``schedule`` does with each Timer kind (the services' per-deadline timers stay the Clock
port's contract; the local runtime fires each of them):

- INTRO: starts the round's loop (input ``{kind:"intro", ref: tid, seq: round, due_ms, due,
  loop_started_ms}``);
- TURN: nothing — the round's loop covers it (its deadline is never earlier than the loop's
  next wake, see above). A guess therefore starts no execution;
- RECONNECT: starts one execution of the same machine: one wait and one apply (the clock
  function returns ``loop: false`` for it).

Express executions are at-least-once and have no name idempotency: a duplicate start (a retried
request, the watchdog restarting a loop that was merely late) runs a second loop, which is
harmless — the clock function applies only what is due and is a read-only no-op otherwise. An
Express execution lasts at most 5 minutes and a round can last longer (12 turns x 30 s + the
intro): when the next wake would come more than ``HANDOVER_AFTER_MS`` after the loop started,
the clock function sets ``handover`` and the machine starts a successor execution of itself
with the current state (``states:startExecution``, request-response: Express supports no
``.sync``) and ends. A loop that dies anyway (Lambda errors past the retries) leaves an overdue
deadline: the watchdog applies it and schedules the round's loop again.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from shared.services.ports import Timer, TimerKind

logger = logging.getLogger(__name__)

EXPRESS_LIMIT_MS = 300_000
"""An Express execution's maximum duration (5 minutes)."""
HANDOVER_AFTER_MS = 240_000
"""A loop hands over to a successor when its next wake would come later than this after the
loop started: 60 s are left for the last apply (its retries) and the successor's start."""

_LAMBDA_RETRY = {
    "ErrorEquals": [
        "Lambda.ServiceException",
        "Lambda.AWSLambdaException",
        "Lambda.SdkClientException",
        "Lambda.TooManyRequestsException",
        "States.TaskFailed",
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
STATE_FIELDS = ("kind", "ref", "seq", "due_ms", "due", "loop_started_ms")
"""What one wake hands to the next (and a loop to its successor)."""


def state_machine_definition(clock_function_arn: str) -> dict[str, Any]:
    """ASL of the deadline loop (see the module docstring).

    Input (and the state between wakes): ``{"kind", "ref", "seq", "due_ms", "due":
    "<ISO-8601 UTC>", "loop_started_ms"}``. The clock function receives the whole state and
    returns the next one (``loop_state``), with ``loop`` and ``handover``.
    """
    return {
        "Comment": (
            "Wordle Tournament deadlines: one looping Express execution per round (wait until "
            "the round's earliest deadline, apply what is due, repeat) or one wait+apply per "
            "reconnect deadline (DESIGN.md §3)"
        ),
        "StartAt": "WaitUntilDue",
        "States": {
            "WaitUntilDue": {"Type": "Wait", "TimestampPath": "$.due", "Next": "ApplyDeadline"},
            "ApplyDeadline": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {"FunctionName": clock_function_arn, "Payload.$": "$"},
                "OutputPath": "$.Payload",
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
                "Retry": [_START_RETRY],
                "End": True,
            },
            "Done": {"Type": "Succeed"},
        },
    }


def loop_state(event: dict[str, Any], next_due_ms: int | None, now_ms: int) -> dict[str, Any]:
    """The state after one wake (the clock function's result minus ``applied``/``name``).

    ``event``: the state the machine handed in (or a plain ``Timer`` event, from the local
    clock or an older execution). ``next_due_ms``: the round's next deadline, None to end.
    The loop keeps ``kind``/``ref``/``seq`` (the round's identity) and moves ``due_ms``.
    ``handover`` is set when waiting that long would take the execution past
    ``HANDOVER_AFTER_MS``; the successor's ``loop_started_ms`` is then ``now_ms`` (never later
    than its real start, so the budget stays conservative) and ``successor`` names it.
    """
    timer = Timer.from_event(event)
    started = int(event.get("loop_started_ms") or now_ms)
    state: dict[str, Any] = {**timer.to_event(), "due": iso_utc(timer.due_ms)}
    if next_due_ms is None:
        return {**state, "loop_started_ms": started, "loop": False, "handover": False}
    handover = next_due_ms - started > HANDOVER_AFTER_MS
    state = {
        **state,
        "due_ms": next_due_ms,
        "due": iso_utc(next_due_ms),
        "loop_started_ms": now_ms if handover else started,
        "loop": True,
        "handover": handover,
    }
    if handover:  # the successor's execution name (for the logs; Express does not dedupe)
        state["successor"] = f"{timer.name}-h{next_due_ms}"[-80:]
    return state


def iso_utc(ms: int) -> str:
    """Absolute UTC ms -> ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (the Wait state's TimestampPath)."""
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


class StepFunctionsClock:
    """Args: client — boto3 ``stepfunctions``; state_machine_arn — the deadline machine
    (Express). See the module docstring for what each timer kind starts."""

    def __init__(self, client: Any, state_machine_arn: str) -> None:
        self._client = client
        self._arn = state_machine_arn

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def schedule(self, timer: Timer) -> None:
        if timer.kind is TimerKind.TURN:
            return  # the round's loop (started by its intro timer) applies turn deadlines
        payload = {
            **timer.to_event(),
            "due": iso_utc(timer.due_ms),
            "loop_started_ms": self.now_ms(),
        }
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            # The name is for the logs: Express does not deduplicate by name (a duplicate
            # execution is harmless, see the module docstring).
            self._client.start_execution(
                stateMachineArn=self._arn, name=timer.name, input=json.dumps(payload)
            )
        except ClientError as err:
            code = err.response.get("Error", {}).get("Code")
            if code == "ExecutionAlreadyExists":
                return
            # The watchdog applies deadlines whose execution failed to start.
            logger.warning("start_execution failed (%s); the watchdog will apply it", code)
        except BotoCoreError as err:
            # a transport failure must not stop the pushes of a change already committed
            logger.warning(
                "start_execution failed (%s); the watchdog will apply it", type(err).__name__
            )
