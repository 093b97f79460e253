"""Infrastructure: every alarm of the synthesized prod template, evaluated as CloudWatch does
(``infra.emulator.metrics``) over the metrics the twin publishes from simulated runs
(``infra.simulation.cloud``): none fires over hours of healthy play with its ordinary noise,
and each fires under the fault injected for it (``infra.simulation.alarms``).

Slow: a healthy run of 75 simulated minutes (about 45 tournaments) and one short run per fault.
The times to fire are printed (``-s``), never asserted; ``infra/benchmarks/RESULTS.md`` has them.
"""

from __future__ import annotations

from typing import Any

import pytest

from infra.emulator.metrics import Alarms, MetricStream
from infra.simulation import alarms as catalogue
from infra.simulation.cloud import twin_names
from tests.tools.cdk.cfn import resources

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _no_emf_on_stdout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Powertools prints nothing: the runs serialize the metric set themselves."""
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")


def _every_alarm(template: dict[str, Any]) -> set[str]:
    return set(resources(template, "AWS::CloudWatch::Alarm")) | set(
        resources(template, "AWS::CloudWatch::CompositeAlarm")
    )


def test_the_evaluator_reads_every_alarm_of_the_template(prod: dict[str, Any]) -> None:
    """Each alarm's metric resolves to a series the twin publishes under its own names."""
    alarms = Alarms.from_template(prod, twin_names(prod))
    assert set(alarms.alarms) | set(alarms.composites) == _every_alarm(prod)
    for alarm in alarms.alarms.values():
        for query in alarm.queries.values():
            assert not any(
                v.startswith(("{", "Functions", "Data", "WebSocket")) for _, v in query.dims
            )


def test_missing_data_and_m_of_n_as_cloudwatch_documents_them(prod: dict[str, Any]) -> None:
    """The heartbeat (LessThan, missing is breaching, 2 of 2) fires after two empty periods,
    not one; a sum alarm (missing is not breaching) does not fire on silence."""
    alarms = Alarms.from_template(prod, twin_names(prod))
    (heartbeat,) = [a for k, a in alarms.alarms.items() if "WatchdogHeartbeat" in k]
    (internal,) = [a for k, a in alarms.alarms.items() if "InternalErrors" in k]
    stream = MetricStream()
    query = heartbeat.queries["m"]
    t0 = 1_800_000_000_000
    for minute in range(5):
        stream.put(query.namespace, query.name, 1, t0 + minute * 60_000, **dict(query.dims))
    assert heartbeat.state(stream, t0 + 300_000, "OK") == "OK"
    assert heartbeat.state(stream, t0 + 600_000, "OK") == "OK"  # one empty period: filled 1 of 2
    assert heartbeat.state(stream, t0 + 900_000, "OK") == "ALARM"
    assert internal.state(stream, t0 + 900_000, "OK") == "OK"


@pytest.fixture(scope="module")
def healthy(synthesized: Any) -> catalogue.Outcome:
    template = synthesized.templates["prod"]
    return catalogue.run(template, catalogue.NOISE, rate=0.1, window_s=3600, horizon_s=4500)


def test_a_long_healthy_run_with_its_noise_fires_no_alarm(healthy: catalogue.Outcome) -> None:
    out = healthy
    assert out.figures.played_to_end >= 30, "too few tournaments to show anything"
    assert out.figures.errors == {}
    # the noise happened: duplicate and busy wakes, retried table and Lambda throttles
    assert out.counts.get("AWS/DynamoDB:ThrottledRequests", 0) >= 2
    assert out.counts.get("AWS/Lambda:Throttles", 0) >= 1
    assert out.evaluation.fired == {}


@pytest.mark.parametrize("index", range(len(catalogue.cases({"Resources": {}}))))
def test_each_fault_fires_its_alarm(synthesized: Any, index: int) -> None:
    template = synthesized.templates["prod"]
    case = catalogue.cases(template)[index]
    out = catalogue.run(template, case.faults)
    wanted = [a for prefix in case.expect for a in catalogue.matching(template, prefix)]
    assert wanted, f"no alarm matches {case.expect}"
    late = {a: out.fired_s(a) for a in wanted}
    for alarm, fired in late.items():
        print(f"{alarm}: {case.name}: {None if fired is None else fired - catalogue.FAULT_AT_S} s")
    assert [a for a, fired in late.items() if fired is None] == []
    assert all(fired is not None and fired > catalogue.FAULT_AT_S for fired in late.values())
