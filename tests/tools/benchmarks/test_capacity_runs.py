"""Unit tests: a capacity level run several times meets only if every run does."""

from __future__ import annotations

from types import SimpleNamespace

from infra.benchmarks.report import capacity_verdict


def _level(tournaments: int, p99: float, meets: bool) -> SimpleNamespace:
    return SimpleNamespace(tournaments=tournaments, p99=p99, guesses_per_s=1.0, meets=meets)


def test_the_largest_level_counts_only_if_every_run_meets() -> None:
    result = SimpleNamespace(
        levels=[_level(50, 40, True), _level(100, 80, True), _level(100, 130, False)]
    )
    verdict = capacity_verdict(result)
    assert verdict.startswith("The largest level meeting every goal in every run: 50 ")


def test_every_run_of_the_level_is_shown() -> None:
    result = SimpleNamespace(
        levels=[_level(50, 40, True), _level(100, 80, True), _level(100, 60, True)]
    )
    verdict = capacity_verdict(result)
    assert ": 100 human-paced tournaments (p99 80, 60 ms;" in verdict
    assert "over 2 runs" in verdict
