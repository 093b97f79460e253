"""Adapters layer: ``StepFunctionsClock`` — one execution of the deadline state machine per
timer, named deterministically (``Timer.name``) so a retried start is harmless
(``ExecutionAlreadyExists`` for the same input is ignored).

The state machine definition (Amazon States Language) lives here once; CDK and the tests load
it from ``state_machine_definition``.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from shared.services.ports import Timer

logger = logging.getLogger(__name__)


def state_machine_definition(clock_function_arn: str) -> dict[str, Any]:
    """ASL: wait until the deadline, then invoke the clock function with the timer.

    Input: ``{"kind", "ref", "seq", "due_ms", "due": "<ISO-8601 UTC>"}``.
    """
    return {
        "Comment": "Wordle Tournament deadline: wait until due, then apply it (DESIGN.md §3)",
        "StartAt": "WaitUntilDue",
        "States": {
            "WaitUntilDue": {"Type": "Wait", "TimestampPath": "$.due", "Next": "ApplyDeadline"},
            "ApplyDeadline": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {
                    "FunctionName": clock_function_arn,
                    "Payload": {
                        "kind.$": "$.kind",
                        "ref.$": "$.ref",
                        "seq.$": "$.seq",
                        "due_ms.$": "$.due_ms",
                    },
                },
                "Retry": [
                    {
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
                ],
                "End": True,
            },
        },
    }


def iso_utc(ms: int) -> str:
    """Absolute UTC ms -> ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (the Wait state's TimestampPath)."""
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


class StepFunctionsClock:
    """Args: client — boto3 ``stepfunctions``; state_machine_arn — the deadline machine."""

    def __init__(self, client: Any, state_machine_arn: str) -> None:
        self._client = client
        self._arn = state_machine_arn

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def schedule(self, timer: Timer) -> None:
        payload = {**timer.to_event(), "due": iso_utc(timer.due_ms)}
        try:
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
