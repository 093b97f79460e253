"""The load simulation's clock outage (``infra.simulation.outage``): every round loop is
terminated at once, and the watchdog restarts every running tournament's clock. Behaviour only:
the times are printed by ``python -m infra.simulation.outage``, not asserted."""

from __future__ import annotations

import pytest

from infra.simulation.outage import recover


@pytest.fixture(autouse=True)
def _no_emf_on_stdout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")


@pytest.mark.parametrize(("width", "budget_s"), [(1, None), (4, 40.0)])
def test_every_running_tournament_gets_its_clock_back(width: int, budget_s: float | None) -> None:
    r = recover(80, width, budget_s, horizon_s=240.0)
    assert r.running >= 5, "too few tournaments were running to show anything"
    assert r.recovered + r.ended_unaided == r.running
    assert r.recovered > 0
    assert r.watchdog_errors == 0
