"""Benchmarks: the skip-grace figures' arithmetic (``infra.benchmarks.grace``): when a guess
received in time lands after the skip, and how the cold-start model scales with memory."""

from __future__ import annotations

import random

from infra.benchmarks.grace import cold_start_seconds, late_share


def test_a_guess_is_late_only_when_its_delay_passes_the_skip() -> None:
    rng = random.Random(1)
    assert late_share([0.0], 1.0, rng) == 0.0  # handled at once: never late
    assert late_share([5.0], 1.0, rng) == 1.0  # past any real grace (at most 2 s + 1 s early)
    # a 1.5 s delay: late only when the real grace (1-2 s) plus how early it came is shorter
    share = late_share([1.5], 1.0, rng)
    assert 0.0 < share < 0.5
    assert late_share([1.5], 2.0, rng) == 0.0  # a real grace of at least 2 s covers it


def test_less_memory_means_a_slower_cold_start_up_to_one_vcpu() -> None:
    assert cold_start_seconds("guess", 256) > cold_start_seconds("guess", 1024)
    assert cold_start_seconds("guess", 1769) == cold_start_seconds("guess", 3008)  # 1 vCPU cap
