"""Unit tests: the SQS delay-queue clock's cost model (a model for a design decision)."""

from __future__ import annotations

import pytest

from infra.benchmarks.clocks import sqs_clock_usd
from infra.benchmarks.prices import load_prices
from infra.cdk.constructs.functions import SPECS


def test_three_requests_and_one_invocation_per_deadline_plus_the_idle_polling() -> None:
    prices = load_prices()
    sqs, total = sqs_clock_usd(100, prices, lambda_ms=40.0, rru=100.0)
    # idle: 5 pollers x (30 days / 20 s) long polls, spread over 100,000 tournaments = 6.48
    assert sqs == pytest.approx((100 * 3 + 6.48) * 0.40e-6)
    gb = SPECS["apply_deadlines"].memory_mb / 1024  # the clock function's configured memory
    lambda_usd = 100 * 0.20e-6 + 100 * 0.040 * gb * 1.33334e-5
    assert total == pytest.approx(sqs + lambda_usd + 100 * 0.125e-6)


def test_no_deadline_costs_only_the_idle_polling() -> None:
    sqs, total = sqs_clock_usd(0, load_prices(), lambda_ms=40.0, rru=0.0)
    assert sqs == total == pytest.approx(6.48 * 0.40e-6)
