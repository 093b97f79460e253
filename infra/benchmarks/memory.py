"""Benchmark, figure 3b: each function's memory against its cost, from measurement.

Lambda bills GB-seconds at the configured memory and gives CPU in proportion to it
(``prices.VCPU_MB``). For each function the play invoked, its measured CPU per invocation
(own + AWS clients, ``prices.cpu_ms``) and its AWS waits (``prices.waits_ms``) give, at each
candidate memory (``CANDIDATES_MB``): the warm duration, the CPU part of it, the cost of its
invocations in one tournament, and the cold start (its handler's import + ``container_deps()``
CPU from figure 2, stretched the same way: AWS bills the INIT phase as duration, "AWS Lambda
standardizes billing for INIT Phase",
https://aws.amazon.com/blogs/compute/aws-lambda-standardizes-billing-for-init-phase/). The
right size (``Sizing.chosen_mb``) is the cheapest candidate whose stretched CPU stays within
``WARM_CPU_GOAL_MS`` per invocation and whose cold start stays within ``COLD_GOAL_MS``; a
function the play never invoked keeps its configured memory unless its cold start misses the
goal there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from infra.benchmarks.prices import (
    cpu_ms,
    cpu_scale,
    function_memory_mb,
    function_of,
    waits_ms,
)

if TYPE_CHECKING:
    from infra.benchmarks.calls import Invocation

CANDIDATES_MB = (128, 256, 512, 768, 1024, 1536, 1769)
"""Memory sizes tried (Lambda accepts 128 to 10,240 MB in 1 MB steps; past 1,769 MB a
single-threaded handler gains nothing)."""
WARM_CPU_GOAL_MS = 15.0
"""What the memory may add to a warm invocation, ms of CPU per invocation on the mean: a guess
waits about 36 ms on AWS (``prices.CALL_LATENCY_MS``), so its round trip stays well inside the
100 ms p99 goal of figure 4."""
COLD_GOAL_MS = 2_000.0
"""A cold container's import + ``container_deps()`` CPU, stretched: a player's first message on
it is answered within about 2 s (the connection is already open; API Gateway waits 29 s)."""


@dataclass
class Candidate:
    memory_mb: int
    warm_ms: float
    """Mean billed duration of a warm invocation."""
    cpu_ms: float
    """The CPU part of ``warm_ms`` (stretched)."""
    cold_ms: float | None
    """The cold start's CPU, stretched (None: not measured)."""
    usd: float
    """The function's invocations of one tournament: requests + duration."""
    usd_per_cold_start: float | None

    @property
    def meets(self) -> bool:
        return self.cpu_ms <= WARM_CPU_GOAL_MS and (
            self.cold_ms is None or self.cold_ms <= COLD_GOAL_MS
        )


@dataclass
class Sizing:
    module: str
    configured_mb: int
    invocations: int
    cpu_ms: float
    """Mean CPU per invocation on one vCPU (own + clients)."""
    waits_ms: float
    cold_cpu_ms: float | None
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def chosen_mb(self) -> int:
        """The cheapest candidate that meets both goals (the largest if none does). A function
        the play never invoked keeps its configured memory unless its cold start misses its
        goal there: then the least memory that meets it."""
        if not self.invocations:
            conf = self.at(self.configured_mb)
            if conf.cold_ms is None or conf.cold_ms <= COLD_GOAL_MS:
                return self.configured_mb
            cold_ok = [c.memory_mb for c in self.candidates if (c.cold_ms or 0) <= COLD_GOAL_MS]
            return min(cold_ok) if cold_ok else self.candidates[-1].memory_mb
        meeting = [c for c in self.candidates if c.meets]
        if not meeting:
            return self.candidates[-1].memory_mb
        return min(meeting, key=lambda c: (c.usd, c.memory_mb)).memory_mb

    def at(self, memory_mb: int) -> Candidate:
        return next(c for c in self.candidates if c.memory_mb == memory_mb)


def cold_cpu_by_function(cold: Any) -> dict[str, float]:
    """Function module -> median cold-start CPU ms (figure 2's handler rows: a function's
    handler module, ``functions.messages`` for the message routes), empty without figure 2."""
    if cold is None:
        return {}
    from infra.cdk.constructs.functions import SPECS

    found: dict[str, float] = {}
    for module, spec in SPECS.items():
        handler_module = spec.handler.rsplit(".", 1)[0]
        if handler_module in cold.cpu:
            found[module] = cold.cpu_median(handler_module)
    return found


def size_functions(
    invocations: list[Invocation], prices: dict[str, Any], cold: Any = None
) -> list[Sizing]:
    """One ``Sizing`` per configured function (``prices.function_memory_mb``), from the
    play's ``invocations`` and, when given, figure 2's cold starts."""
    lam = prices["lambda"]
    request, gb_s_usd = float(lam["request"]), float(lam["gb_second_arm64"])
    colds = cold_cpu_by_function(cold)
    by_function: dict[str, list[Invocation]] = {}
    for inv in invocations:
        by_function.setdefault(function_of(inv.route), []).append(inv)
    out = []
    for module, configured in sorted(function_memory_mb().items()):
        invs = by_function.get(module, [])
        n = len(invs)
        cpu = sum(cpu_ms(i) for i in invs) / n if n else 0.0
        waits = sum(waits_ms(i) for i in invs) / n if n else 0.0
        sizing = Sizing(module, configured, n, cpu, waits, colds.get(module))
        for mb in sorted({*CANDIDATES_MB, configured}):
            stretched = cpu * cpu_scale(mb)
            warm = stretched + waits
            cold_ms = None if sizing.cold_cpu_ms is None else sizing.cold_cpu_ms * cpu_scale(mb)
            usd = n * request + n * warm / 1000 * mb / 1024 * gb_s_usd
            per_cold = None if cold_ms is None else cold_ms / 1000 * mb / 1024 * gb_s_usd
            sizing.candidates.append(Candidate(mb, warm, stretched, cold_ms, usd, per_cold))
        out.append(sizing)
    return out
