"""Unit tests: the cold-start figure pairs each row with the floor measured in the same round."""

from __future__ import annotations

import pytest

from infra.benchmarks.cold import BASELINE_LABEL, ColdResult
from infra.benchmarks.report import cold_table


def _result() -> ColdResult:
    # The machine slows down in rounds 3 and 4; the handler stays 1.4x-1.6x of the floor
    # measured beside it.
    floor = [400.0, 400.0, 800.0, 800.0, 400.0]
    handler = [560.0, 640.0, 1120.0, 1280.0, 600.0]
    return ColdResult(
        rounds=5,
        samples={BASELINE_LABEL: floor, "functions.x": handler},
        cpu={BASELINE_LABEL: floor, "functions.x": handler},
    )


def test_round_ratios_pair_each_sample_with_the_floor_of_its_round() -> None:
    assert _result().round_ratios("functions.x") == pytest.approx([1.4, 1.6, 1.4, 1.6, 1.5])


def test_the_spread_is_the_middle_half_of_the_round_ratios() -> None:
    result = _result()
    q1, q3 = result.ratio_spread("functions.x")
    assert q1 == pytest.approx(1.4)
    assert q3 == pytest.approx(1.6)
    # the verdict still uses the ratio of the medians: 640 / 400
    assert result.ratio("functions.x") == pytest.approx(1.6)


def test_the_table_shows_the_spread_beside_the_ratio() -> None:
    row = next(line for line in cold_table(_result()).splitlines() if "functions.x" in line)
    assert "| 1.60x | 1.40-1.60x |" in row
