"""Benchmark, figure 3: the prices and the billing arithmetic.

The prices are data (``prices.json``: date and source; ``load_prices``). Lambda duration is
measured: each invocation's own CPU time in-process (its process time minus the time inside its
AWS calls, where moto answers) plus a stated wait per AWS call (``CALL_LATENCY_MS``), rounded up
to the whole millisecond as Lambda bills (``billed_ms``); Lambda requests and GB-seconds at
``LAMBDA_GB`` (``lambda_usd``); Express executions' GB-seconds rounded up to the duration
increment at the smallest memory (``express_gb_s``). The fixed monthly costs are spread over
``TOURNAMENTS_PER_MONTH``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from infra.benchmarks.calls import Invocation

PRICES_PATH = Path(__file__).with_name("prices.json")
LAMBDA_MS = 50.0
"""The assumption the model used before handler times were measured (kept for the
sensitivity note)."""
LAMBDA_GB = 0.25
CALL_LATENCY_MS = {"dynamodb": 6.0, "apigatewaymanagementapi": 12.0, "stepfunctions": 20.0}
"""Wall time a handler waits on one AWS call in the same region, by service (assumptions: the
network round trip plus the service's own time; DynamoDB documents "single-digit millisecond"
latency, https://aws.amazon.com/dynamodb/; the Management API and Step Functions publish no
figure). A Lambda's billed duration is its own CPU (measured) plus these waits."""
TOURNAMENTS_PER_MONTH = 100_000
"""The volume the fixed monthly costs (alarms, dashboard, custom metrics) are spread over."""


def load_prices(path: Path = PRICES_PATH) -> dict[str, Any]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def billed_ms(inv: Invocation, *, own_cpu: bool = True) -> int:
    """One invocation's billed Lambda duration (ms, rounded up to the whole ms as Lambda
    bills): its own CPU as measured in-process (unless ``own_cpu`` is False: the floor) plus
    ``CALL_LATENCY_MS`` per AWS call."""
    waits = sum(CALL_LATENCY_MS.get(c.service, 10.0) for c in inv.calls)
    return max(1, math.ceil((inv.own_cpu_ms if own_cpu else 0.0) + waits))


def express_gb_s(seconds: float, prices: dict[str, Any]) -> float:
    """Billed Express GB-seconds of an execution lasting ``seconds``: rounded up to the
    duration increment (100 ms), at the smallest memory (64 MB)."""
    sfn = prices["stepfunctions"]
    inc_ms = float(sfn["express_duration_increment_ms"])
    return math.ceil(seconds * 1000 / inc_ms) * inc_ms / 1000 * float(sfn["express_min_memory_gb"])


def mean_billed_ms(invocations: list[Invocation]) -> float:
    """The mean ``billed_ms`` of ``invocations`` (``LAMBDA_MS`` when there are none)."""
    if not invocations:
        return LAMBDA_MS
    return sum(billed_ms(i) for i in invocations) / len(invocations)


def lambda_usd(prices: dict[str, Any], invocations: float, ms: float = LAMBDA_MS) -> float:
    """Lambda requests and duration of ``invocations`` billed ``ms`` each at ``LAMBDA_GB``
    (arm64), USD."""
    lam = prices["lambda"]
    gb_s = invocations * ms / 1000 * LAMBDA_GB
    return invocations * float(lam["request"]) + gb_s * float(lam["gb_second_arm64"])
