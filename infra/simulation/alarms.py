"""Simulation: the stack's alarms evaluated over the metrics of simulated runs — a healthy run
with its ordinary noise, and one injected fault per alarm (``FAULTS``).

Run ``python -m infra.simulation.alarms TEMPLATE.json`` (a synthesized template, e.g.
``cdk.out/WordleTournament-prod.template.json``; about a minute) to print the table of
``infra/benchmarks/RESULTS.md``, "Alarms against the twin": alarm, fault, simulated time to fire.
The test ``tests/tools/cdk/test_alarms_against_the_twin.py`` runs the same catalogue.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infra.emulator.metrics import Alarms, Evaluation, metric_filters
from infra.simulation.cloud import (
    CLOCK,
    HISTORY,
    Fault,
    quiet,
    reserved_of,
    route_function,
    twin_names,
)

FAULT_AT_S = 1230.0
"""Faults start here (not on a period boundary), after the run warmed up."""

NOISE = (
    Fault("duplicate_wakes", count=20),
    Fault("stale_index", count=25),
    Fault("clock_busy", count=30),
    Fault("table_throttles", 600, 660, count=1),
    Fault("table_throttles", 660, 720, count=1),
    Fault("table_throttles", 4000, 4060, count=1),
    Fault("throttle", 900, 901.5, target=CLOCK),
)
"""The ordinary noise of a healthy run: every 20th clock wake duplicated (Express is
at-least-once), every 25th leaves a stale due-time index entry, every 30th finds the table
busy (the designed retry), three DynamoDB throttles botocore retried, and the clock function
throttled for 1.5 s (the Task retries).

One forced throttle at a time, each in its own minute: botocore makes 2 attempts
(``shared/runtime/bootstrap.py``), so a single throttle is absorbed by the retry, while two in
a row would fail the call past its retries (an error, not ordinary noise)."""


def functions(template: Mapping[str, Any]) -> list[str]:
    """Every function's handler in the template."""
    return sorted(
        res["Properties"]["Handler"]
        for res in template["Resources"].values()
        if res["Type"] == "AWS::Lambda::Function" and "Handler" in res.get("Properties", {})
    )


@dataclass(frozen=True)
class Case:
    """One injected fault: its description, the faults and the alarms (construct-id
    prefixes, e.g. ``MonitoringTableThrottles``) it must fire."""

    name: str
    faults: tuple[Fault, ...]
    expect: tuple[str, ...]


def cases(template: Mapping[str, Any]) -> list[Case]:
    """One fault per alarm (a family of per-function alarms shares one fault on every
    function), from the template's functions and saturation thresholds."""
    at = FAULT_AT_S
    handlers = functions(template)
    traffic = tuple(Fault("traffic", at, target=h, count=6) for h in handlers)
    saturation: list[Fault] = []
    for logical_id, res in template["Resources"].items():
        props = res.get("Properties", {})
        if res["Type"] == "AWS::CloudWatch::Alarm" and "Saturation" in logical_id:
            ref = props["Dimensions"][0]["Value"]["Ref"]
            handler = template["Resources"][ref]["Properties"]["Handler"]
            saturation.append(Fault("hold", at, target=handler, count=int(props["Threshold"])))
    guess = route_function("guess")
    return [
        Case("every function raises", (Fault("raise", at), *traffic), ("Errors",)),
        Case("every function throttled", (Fault("throttle", at), *traffic), ("Throttles",)),
        Case(
            "each function held at its saturation threshold",
            tuple(saturation),
            ("Saturation",),
        ),
        Case(
            "other workloads run 800 executions",
            (Fault("account_load", at, count=800),),
            ("AccountConcurrency",),
        ),
        Case("a bug in the guess route", (Fault("bug", at, target=guess),), ("InternalErrors",)),
        Case(
            "the table stays busy for guesses",
            (Fault("busy", at, target=guess),),
            ("TryAgainRate",),
        ),
        Case(
            "every round loop dies for a minute",
            (Fault("clock_kill", at, at + 60),),
            ("OverdueDeadlines",),
        ),
        Case(
            "every clock wake 5 s late", (Fault("clock_delay", at, count=5),), ("DeadlineLateness",)
        ),
        Case(
            "the watchdog's schedule stops", (Fault("watchdog_stop", at),), ("WatchdogHeartbeat",)
        ),
        Case("every push fails", (Fault("post_failed", at),), ("PostFailures",)),
        Case(
            "20 table throttles a minute",
            (Fault("table_throttles", at, count=20),),
            ("TableThrottles",),
        ),
        Case("a table system error a minute", (Fault("table_errors", at),), ("TableSystemErrors",)),
        Case(
            "the clock function fails every attempt",
            (Fault("raise", at, target=CLOCK),),
            ("DeadlinesFailed",),
        ),
        Case("an execution times out a minute", (Fault("timed_out", at),), ("DeadlinesTimedOut",)),
        Case(
            "a state transition throttled a minute",
            (Fault("state_throttled", at),),
            ("DeadlinesThrottled",),
        ),
        Case(
            "StartExecution throttled past retries",
            (Fault("start_throttled", at),),
            ("DeadlineStartsThrottled", "ClockStartFailures"),
        ),
        Case(
            "API Gateway execution errors",
            (Fault("api_execution_errors", at),),
            ("ApiExecutionErrors",),
        ),
        Case(
            "300 client errors a minute",
            (Fault("api_client_errors", at, count=300),),
            ("ApiClientErrors",),
        ),
        Case(
            "the guess function raises",
            (Fault("raise", at, target=guess),),
            ("ApiIntegrationErrors", "Api5xx", "GameDegraded"),
        ),
        Case(
            "the history function reads the stream 15 min late",
            (Fault("stream_lag", at, target=HISTORY, count=15 * 60_000),),
            ("HistoryIteratorAge",),
        ),
        Case(
            "a failed stream batch in the failure queue",
            (Fault("stream_failures", at, count=1),),
            ("HistoryFailureQueue",),
        ),
    ]


@dataclass
class Outcome:
    evaluation: Evaluation
    start_ms: int
    figures: Any
    counts: dict[str, int]

    def fired_s(self, logical_id: str) -> float | None:
        t = self.evaluation.first(logical_id)
        return None if t is None else (t - self.start_ms) / 1000


def run(
    template: Mapping[str, Any],
    faults: tuple[Fault, ...],
    *,
    rate: float = 0.1,
    window_s: float = 1800.0,
    horizon_s: float = 2400.0,
    seed: int = 1,
) -> Outcome:
    """One simulated run with the watchdog on and every tournament played, its metrics
    evaluated against every alarm of ``template``."""
    from infra.simulation.run import Options, Run

    opts = Options(
        rate=rate,
        window_s=window_s,
        seed=seed,
        play=10**9,
        watchdog=True,
        horizon_s=horizon_s,
        faults=faults,
        reserved=reserved_of(template),
        filters=tuple(metric_filters(template)),
    )
    r = Run(opts)
    with quiet():
        figures = r.execute()
    alarms = Alarms.from_template(template, twin_names(template))
    start = r.sim.start_ms
    ev = alarms.evaluate(r.cloud.stream, start, start + int(horizon_s * 1000))
    return Outcome(ev, start, figures, dict(r.cloud.counts))


def matching(template: Mapping[str, Any], prefix: str) -> list[str]:
    """Alarm logical ids of construct ``Monitoring<prefix>``; for ``Errors``, ``Throttles`` and
    ``Saturation``, every per-function alarm (``Monitoring<Function><prefix>``, an AWS/Lambda
    metric with a ``FunctionName`` dimension)."""
    out = []
    for logical_id, res in template["Resources"].items():
        if res["Type"] not in ("AWS::CloudWatch::Alarm", "AWS::CloudWatch::CompositeAlarm"):
            continue
        name = construct_name(logical_id)
        if prefix in ("Errors", "Throttles", "Saturation"):
            props = res["Properties"]
            dims = {d["Name"] for d in props.get("Dimensions", [])}
            lambda_metric = props.get("Namespace") == "AWS/Lambda" and "FunctionName" in dims
            if lambda_metric and name.endswith(prefix):
                out.append(logical_id)
        elif name == prefix:
            out.append(logical_id)
    return out


def construct_name(logical_id: str) -> str:
    """``MonitoringTableThrottles0A82F423`` -> ``TableThrottles`` (CDK's 8-digit hash off)."""
    return logical_id.removeprefix("Monitoring")[:-8]


def table(template: Mapping[str, Any]) -> list[tuple[str, str, float | None, list[str]]]:
    """(alarm, fault, seconds from the fault to ALARM or None, other alarms that fired)."""
    rows = []
    for case in cases(template):
        out = run(template, case.faults)
        wanted = [a for prefix in case.expect for a in matching(template, prefix)]
        for logical_id in wanted:
            fired = out.fired_s(logical_id)
            rows.append(
                (
                    construct_name(logical_id),
                    case.name,
                    None if fired is None else fired - FAULT_AT_S,
                    sorted(construct_name(k) for k in out.evaluation.fired if k not in wanted),
                )
            )
    return rows


def main(argv: list[str]) -> None:
    with open(argv[0]) as f:
        template = json.load(f)
    print("| Alarm | Fault injected | Simulated time to fire |")
    print("|---|---|---|")
    for alarm, fault, secs, others in table(template):
        fired = "did not fire" if secs is None else f"{secs / 60:.1f} min"
        print(f"| {alarm} | {fault} | {fired} | {', '.join(others)}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
