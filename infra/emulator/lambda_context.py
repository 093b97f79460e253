"""Local runtime: a stand-in for the AWS Lambda context object.

It has the attributes Powertools reads (``Logger.inject_lambda_context``,
``Metrics``, ``Tracer``) and the method handlers use to budget their time, so the real
``functions/`` handlers run unchanged. Shape: https://docs.aws.amazon.com/lambda/latest/dg/python-context-object.html
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

ACCOUNT_ID = "123456789012"  # moto's default account; never a real one
DEFAULT_REGION = "us-east-1"
DEFAULT_TIMEOUT_SECONDS = 29.0  # API Gateway's integration timeout


@dataclass(slots=True)
class LambdaContext:
    """What a Python Lambda handler receives as ``context`` (only the documented attributes)."""

    function_name: str
    invoked_function_arn: str
    aws_request_id: str
    log_group_name: str
    log_stream_name: str
    deadline_ms: int
    """Absolute wall-clock milliseconds at which the invocation would time out."""
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 256
    identity: Any = None
    client_context: Any = None
    tenant_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before the (notional) timeout; never negative."""
        return max(0, self.deadline_ms - time.time_ns() // 1_000_000)


def make_context(
    function_name: str,
    *,
    region: str = DEFAULT_REGION,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> LambdaContext:
    """A fresh context for one invocation of ``function_name`` (a new ``aws_request_id``)."""
    now_ms = time.time_ns() // 1_000_000
    day = time.strftime("%Y/%m/%d", time.gmtime(now_ms / 1000))
    return LambdaContext(
        function_name=function_name,
        invoked_function_arn=f"arn:aws:lambda:{region}:{ACCOUNT_ID}:function:{function_name}",
        aws_request_id=str(uuid.uuid4()),
        log_group_name=f"/aws/lambda/{function_name}",
        log_stream_name=f"{day}/[$LATEST]{uuid.uuid4().hex}",
        deadline_ms=now_ms + round(timeout_seconds * 1000),
    )


def function_name_for(handler: Any, prefix: str = "wordle-tournament") -> str:
    """A Lambda-like function name from a handler's module (``functions.connect`` ->
    ``…-connect``)."""
    module = getattr(handler, "__module__", None) or "handler"
    return f"{prefix}-{module.rsplit('.', 1)[-1]}".replace("_", "-")
