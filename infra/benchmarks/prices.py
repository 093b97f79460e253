"""Benchmark, figure 3: the prices and the billing arithmetic.

The prices are data (``prices.json``: date and source; ``load_prices``). Lambda duration is
measured: each invocation's own CPU time in-process (its process time minus the time inside its
AWS calls, where moto answers) plus the AWS clients' CPU per call (``CLIENT_CPU_MS_PER_CALL``),
both stretched by the CPU share of the function's configured memory (``cpu_scale``), plus a
stated wait per AWS call (``CALL_LATENCY_MS``), rounded up to the whole millisecond as Lambda
bills (``billed_ms``). Each function is billed at the memory the CDK source configures for it
(``function_memory_mb``, read from ``infra.cdk.constructs.functions.SPECS``; ``lambda_usd``);
Express executions' GB-seconds rounded up to the duration increment at the smallest memory
(``express_gb_s``). The fixed monthly costs are spread over ``TOURNAMENTS_PER_MONTH``.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from infra.benchmarks.calls import Invocation

PRICES_PATH = Path(__file__).with_name("prices.json")
LAMBDA_MS = 50.0
"""The assumption the model used before handler times were measured (kept for the
sensitivity note)."""
VCPU_MB = 1769
"""Lambda allocates CPU in proportion to memory: "At 1,769 MB, a function has the equivalent
of one vCPU" (AWS Lambda, "Configure Lambda function memory",
https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html). The handlers are
single-threaded: below it their CPU time stretches by ``VCPU_MB / memory``, above it nothing
is gained. Assumption: one core of the benchmark machine does the work of one Lambda vCPU."""
CLIENT_CPU_MS_PER_CALL = 0.36
"""The AWS clients' own CPU per call (botocore: validate, serialise, sign, parse), which the
in-process measure cannot split from moto's: figure 1c's floor (the four calls of a valid
guess made on canned answers, 1.43 ms, ``infra.benchmarks.layers``) over its four calls."""
CLOCK_FUNCTION = "apply_deadlines"
"""The function the deadline machine invokes (``functions.routes.TIMERS["clock"]``)."""
CALL_LATENCY_MS = {"dynamodb": 6.0, "apigatewaymanagementapi": 12.0, "stepfunctions": 20.0}
"""Wall time a handler waits on one AWS call in the same region, by service (assumptions: the
network round trip plus the service's own time; DynamoDB documents "single-digit millisecond"
latency, https://aws.amazon.com/dynamodb/; the Management API and Step Functions publish no
figure). A Lambda's billed duration is its own CPU (measured) plus these waits."""
TOURNAMENTS_PER_MONTH = 100_000
"""The volume the fixed monthly costs (alarms, dashboard, custom metrics) are spread over."""


def load_prices(path: Path = PRICES_PATH) -> dict[str, Any]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]


@cache
def function_memory_mb() -> dict[str, int]:
    """Function module -> its configured memory (MB), read from the CDK source
    (``infra.cdk.constructs.functions.SPECS``) when first called: what the stack deploys."""
    from infra.cdk.constructs.functions import SPECS

    return {module: spec.memory_mb for module, spec in SPECS.items()}


def function_of(route: str) -> str:
    """The function module an invocation of ``route`` runs in: a WebSocket route key
    (``functions.routes.ROUTES``), a timer (``TIMERS``), or ``clock:...`` (the benchmark's
    name for a clock wake: ``CLOCK_FUNCTION``). Raises KeyError for anything else."""
    from functions.routes import ROUTES, TIMERS, function_name

    if route.startswith("clock:"):
        return CLOCK_FUNCTION
    target = ROUTES.get(route) or TIMERS[route]
    return function_name(target)


def cpu_scale(memory_mb: float) -> float:
    """How much longer single-threaded CPU work takes at ``memory_mb`` than on one vCPU."""
    return max(1.0, VCPU_MB / memory_mb)


def waits_ms(inv: Invocation) -> float:
    """``CALL_LATENCY_MS`` per AWS call of ``inv``: time waited, not computed."""
    return sum(CALL_LATENCY_MS.get(c.service, 10.0) for c in inv.calls)


def cpu_ms(inv: Invocation, *, own_cpu: bool = True) -> float:
    """CPU ms of ``inv`` on one vCPU: its own (measured; left out when ``own_cpu`` is False,
    the floor) plus ``CLIENT_CPU_MS_PER_CALL`` per AWS call."""
    return (inv.own_cpu_ms if own_cpu else 0.0) + CLIENT_CPU_MS_PER_CALL * len(inv.calls)


def memory_mb_of(inv: Invocation) -> int:
    """The configured memory (MB) of the function ``inv`` ran in."""
    return function_memory_mb()[function_of(inv.route)]


def billed_ms(inv: Invocation, *, own_cpu: bool = True, memory_mb: int | None = None) -> int:
    """One invocation's billed Lambda duration (ms, rounded up to the whole ms as Lambda
    bills) at ``memory_mb`` (default: its function's configured memory): ``cpu_ms``
    stretched by ``cpu_scale``, plus ``waits_ms``."""
    mb = memory_mb if memory_mb is not None else memory_mb_of(inv)
    return max(1, math.ceil(cpu_ms(inv, own_cpu=own_cpu) * cpu_scale(mb) + waits_ms(inv)))


def gb_seconds(invocations: list[Invocation], *, own_cpu: bool = True) -> float:
    """Billed GB-seconds of ``invocations``, each at its function's configured memory."""
    return sum(billed_ms(i, own_cpu=own_cpu) / 1000 * memory_mb_of(i) / 1024 for i in invocations)


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


def lambda_usd(
    prices: dict[str, Any],
    invocations: float,
    ms: float = LAMBDA_MS,
    module: str = CLOCK_FUNCTION,
) -> float:
    """Lambda requests and duration of ``invocations`` of function ``module`` billed ``ms``
    each at its configured memory (arm64), USD."""
    lam = prices["lambda"]
    gb_s = invocations * ms / 1000 * function_memory_mb()[module] / 1024
    return invocations * float(lam["request"]) + gb_s * float(lam["gb_second_arm64"])
