"""Benchmark: cold starts on the guess path and the skip grace (ruling 13).

``python -m infra.benchmarks.grace [--tournaments N] [--turn-seconds S] [--share P]`` prints:

1. the cold-start model per function (:func:`cold_start_seconds`): figure 2's local medians
   (``infra/benchmarks/RESULTS.md``, "2. Cold start") scaled to arm64 at the function's memory,
   plus the platform's share for the code and the layer (assumptions: :data:`ASSUMPTIONS`);
2. the twin's guess path with those delays injected (``infra.emulator.throttles.ColdStarts``,
   every invocation recycled with probability ``--share`` so that cold ones are sampled): the
   delay from receipt (``requestTimeEpoch``) to the handler's end, warm and cold, and the
   ``turn_over`` refusals the bots got;
3. for each grace: the share of guesses received in the last second of their turn that a cold
   start makes land after the skip (judged late although received in time), that share at
   production's cold-start rate, and what the grace costs the next player per skip.

A benchmark: it measures and prints, it asserts nothing. The choice it informs:
``shared/domain/RULINGS.md``, design notes, "The skip grace and cold starts".
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

LOCAL_COLD_MS: dict[str, float] = {
    "guess": 597,
    "messages": 519,
    "connect": 406,
    "disconnect": 444,
    "apply_deadlines": 417,
    "watchdog": 411,
}
"""Figure 2's medians (``infra/benchmarks/RESULTS.md``, "2. Cold start", this machine, one
core): ``guess`` is its "first guess" row (import, ``container_deps()`` and one guess handled),
``messages`` the other message functions' row (import and ``container_deps()``)."""

FULL_VCPU_MB = 1769
"""Lambda gives a function one full vCPU at 1,769 MB, a proportional share below
(https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html)."""
ARM64_FACTOR = 1.2
"""Assumption: one Graviton2 vCPU runs this Python start-up about 1.2x slower than a core of
the machine figure 2 ran on."""
PLATFORM_S = 0.15
"""Assumption: the platform's own part of a cold start (placing the execution environment,
starting the runtime) before any code or layer is read."""
PER_MB_S = 0.005
"""Assumption: seconds per MB of code and layers fetched and unpacked (5 ms/MB)."""
LAYER_MB = 54.0
"""The dependency layer, unzipped (issue 35: 54 MB)."""
CODE_MB = 2.0
"""The code asset (``functions``, ``shared``, ``wordlists``), unzipped: a few MB."""
PROD_COLD_SHARE = 0.01
"""Assumption: share of production invocations that start cold (AWS: under 1% of invocations
in steady production traffic, "Understanding the Lambda execution environment lifecycle",
https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html)."""
GRACES = (1.0, 1.5, 2.0, 2.5, 3.0)
SKIPS_PER_TOURNAMENT = 5
"""Skips the clock applied in the cost benchmark's tournament ([B], ``infra/CAPACITY.md``)."""

ASSUMPTIONS = (
    f"cold start = {PLATFORM_S:g} s platform + {PER_MB_S * 1000:g} ms/MB x"
    f" ({LAYER_MB:g} MB layer + {CODE_MB:g} MB code) + figure 2's local median x"
    f" {ARM64_FACTOR:g} (arm64) x {FULL_VCPU_MB} MB / memory (CPU share, at most 1 vCPU);"
    " no init CPU boost; the init phase is not counted in the function's timeout"
)


def cold_start_seconds(function: str, memory_mb: int) -> float:
    """The modelled cold start of ``function`` at ``memory_mb`` (seconds; :data:`ASSUMPTIONS`)."""
    local = LOCAL_COLD_MS.get(function, LOCAL_COLD_MS["messages"]) / 1000
    cpu = min(1.0, memory_mb / FULL_VCPU_MB)
    return PLATFORM_S + PER_MB_S * (LAYER_MB + CODE_MB) + local * ARM64_FACTOR / cpu


def cold_start_model() -> dict[str, float]:
    """Function module -> modelled cold start (seconds), at each deployed memory size."""
    from infra.cdk.constructs.functions import SPECS

    return {m: cold_start_seconds(m, spec.memory_mb) for m, spec in sorted(SPECS.items())}


def late_share(delays_s: Sequence[float], grace_s: float, rng: random.Random) -> float:
    """Of guesses received uniformly within the last second before their deadline, the share
    whose handler ends after the skip: the skip is applied at the deadline plus ``grace_s``
    rounded up to the whole second (the Wait state's timestamps), so its real grace is
    uniform in [grace, grace + 1). Monte Carlo over ``delays_s`` (receipt to handler end)."""
    n, late = 20_000, 0
    for _ in range(n):
        delay = rng.choice(delays_s)
        before = rng.random()  # received this long before the deadline
        deadline = rng.random()  # the deadline's position within its second
        skip = math.ceil(deadline + grace_s) - deadline  # after the deadline
        late += delay > before + skip
    return late / n


async def _play(tournaments: int, turn_seconds: float, share: float, seed: int) -> dict[str, Any]:
    from infra.emulator import Emulator
    from infra.emulator.throttles import ColdStarts, TwinLimits
    from infra.players.bots import BotConfig, play_tournament

    cold = ColdStarts(cold_start_model(), jitter=0.25, seed=seed, share=share)
    limits = TwinLimits.for_stage("prod", cold_starts=cold)
    delays: list[float] = []
    async with Emulator(
        port=0,
        turn_seconds=turn_seconds,
        intro_seconds=0.5,
        reconnect_seconds=10,
        limits=limits,
        watchdog_seconds=None,
        log_level="WARNING",
    ) as emu:
        gateway = emu.gateway
        invoke = gateway.invoke

        async def timed(route_key: str, event: dict[str, Any]) -> Any:
            received_ms = event["requestContext"]["requestTimeEpoch"]
            try:
                return await invoke(route_key, event)
            finally:
                if route_key == "guess":
                    delays.append(time.time() - received_ms / 1000)

        gateway.invoke = timed  # type: ignore[method-assign]
        think = (0, round(turn_seconds * 1000))  # many guesses near the deadline
        runs = [
            play_tournament(
                emu.ws_url,
                8,
                "en",
                config=BotConfig(think_ms=think),
                seed=seed + i,
                timeout=60 * turn_seconds,
                name_prefix=f"t{i}-",
            )
            for i in range(tournaments)
        ]
        results = [r for batch in await asyncio.gather(*runs) for r in batch]
    codes = [e.get("code") for r in results for e in r.errors]
    return {
        "delays": delays,
        "cold": dict(cold.cold),
        "turn_over": codes.count("turn_over"),
        "finished": sum(r.finished for r in results),
        "players": len(results),
    }


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.benchmarks.grace")
    parser.add_argument("--tournaments", type=int, default=2, help="played at once (default 2)")
    parser.add_argument("--turn-seconds", type=float, default=4.0, help="turn length (4)")
    parser.add_argument(
        "--share", type=float, default=0.25, help="invocations recycled cold (default 0.25)"
    )
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    model = cold_start_model()
    print("## Cold starts and the skip grace\n")
    print(f"Model ({ASSUMPTIONS}):\n")
    print("| function | cold start s |")
    print("|---|---|")
    for module, seconds in model.items():
        print(f"| `{module}` | {seconds:.2f} |")

    started = time.monotonic()
    run = asyncio.run(_play(args.tournaments, args.turn_seconds, args.share, args.seed))
    delays = run["delays"]
    threshold = 0.5 * min(model.values())
    warm = [d for d in delays if d < threshold]
    cold = [d for d in delays if d >= threshold]
    print(
        f"\nTwin: {args.tournaments} tournaments of 8 bots at once, {args.turn_seconds:g} s"
        f" turns, think time up to the whole turn, every invocation recycled cold with"
        f" probability {args.share:g}; {time.monotonic() - started:.0f} s;"
        f" {run['finished']}/{run['players']} bots finished; cold starts {run['cold']};"
        f" `turn_over` refusals seen by the bots: {run['turn_over']}.\n"
    )
    print("| guess receipt -> handler end | n | median s | p90 s | p99 s | max s |")
    print("|---|---|---|---|---|---|")
    for label, sample in (("warm", warm), ("cold", cold)):
        if sample:
            print(
                f"| {label} | {len(sample)} | {statistics.median(sample):.3f} |"
                f" {_pct(sample, 0.9):.3f} | {_pct(sample, 0.99):.3f} | {max(sample):.3f} |"
            )
    rng = random.Random(args.seed)
    print(
        "\n| grace s | real grace s (whole-second Wait) | cold guesses in the last second"
        f" judged late | all guesses in the last second, at {PROD_COLD_SHARE:.0%} cold |"
        " warm guesses in the last second judged late | next player waits per skip (mean s)"
        f" | per tournament ({SKIPS_PER_TOURNAMENT} skips) s |"
    )
    print("|---|---|---|---|---|---|---|")
    for grace in GRACES:
        cold_late = late_share(cold, grace, rng) if cold else float("nan")
        warm_late = late_share(warm, grace, rng) if warm else float("nan")
        overall = PROD_COLD_SHARE * cold_late + (1 - PROD_COLD_SHARE) * warm_late
        wait = grace + 0.5
        print(
            f"| {grace:g} | {grace:g}-{grace + 1:g} | {cold_late:.1%} | {overall:.2%} |"
            f" {warm_late:.1%} | {wait:.1f} | {wait * SKIPS_PER_TOURNAMENT:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
