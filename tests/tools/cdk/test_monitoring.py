"""Infrastructure: the alarms an on-call person acts on, in both stages — each alarm's metric,
threshold, periods and treatment of missing data, read from the synthesized template with
``aws_cdk.assertions.Template``; the access-log metric filters; the golden-signals dashboard;
every alarm points at its section of ``infra/RUNBOOK.md``."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from infra.cdk.constructs.functions import SPECS
from infra.cdk.constructs.monitoring import DEFAULT_THRESHOLDS
from infra.cdk.stack import STAGES
from tests.tools.cdk.cfn import PAGE_TOPIC, TICKET_TOPIC, functions_by_handler, resources

RUNBOOK = Path(__file__).resolve().parents[3] / "infra" / "RUNBOOK.md"
STAGE_NAMES = sorted(STAGES)


def _template(synthesized: Any, stage: str) -> Template:
    return Template.from_json(synthesized.templates[stage])


def _alarms(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Runbook anchor (``infra/RUNBOOK.md#<anchor>``) -> the alarms that name it."""
    out: dict[str, list[dict[str, Any]]] = {}
    for props in resources(template, "AWS::CloudWatch::Alarm").values():
        anchor = props["AlarmDescription"].rsplit("#", 1)[1]
        out.setdefault(anchor, []).append(props)
    return out  # type: ignore[return-value]


def _one(template: dict[str, Any], anchor: str) -> dict[str, Any]:
    (alarm,) = _alarms(template)[anchor]
    return alarm


def _app_alarm(stage: str, metric: str, **expected: Any) -> dict[str, Any]:
    return {
        "Namespace": "WordleTournament",
        "MetricName": metric,
        "Dimensions": [{"Name": "service", "Value": f"wordle-tournament-{stage}"}],
        **expected,
    }


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_application_alarms(synthesized, stage):
    """A route's bug (InternalError > 0), a try-again rate, overdue deadlines, late wakes,
    failed pushes: the counts Lambda's own metrics cannot see."""
    template = _template(synthesized, stage)
    thresholds = STAGES[stage].alarm_thresholds
    cases = {
        "InternalError": {"Threshold": 1, "EvaluationPeriods": 1, "Statistic": "Sum"},
        "TryAgain": {"Threshold": thresholds["TryAgain"], "EvaluationPeriods": 1},
        "OverdueDeadlines": {"Threshold": 1, "EvaluationPeriods": 1},
        "PostFailed": {"Threshold": 10, "EvaluationPeriods": 1},
        # a deadline execution a function failed to start: the watchdog applies it late
        "ClockStartFailed": {"Threshold": 1, "EvaluationPeriods": 1, "Statistic": "Sum"},
        "TimerLateMs": {"Threshold": 3000, "EvaluationPeriods": 3, "ExtendedStatistic": "p99"},
    }
    for metric, expected in cases.items():
        template.has_resource_properties(
            "AWS::CloudWatch::Alarm",
            _app_alarm(
                stage,
                metric,
                ComparisonOperator="GreaterThanOrEqualToThreshold",
                TreatMissingData="notBreaching",
                Period=300,
                **expected,
            ),
        )


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_a_silent_watchdog_alarms(synthesized, stage):
    """The heartbeat: fewer than 1 completed run in each of two 5-minute periods, and no data
    at all (the watchdog never ran) counts as breaching."""
    _template(synthesized, stage).has_resource_properties(
        "AWS::CloudWatch::Alarm",
        _app_alarm(
            stage,
            "WatchdogHeartbeat",
            ComparisonOperator="LessThanThreshold",
            Threshold=1,
            EvaluationPeriods=2,
            DatapointsToAlarm=2,
            TreatMissingData="breaching",
        ),
    )


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_every_function_alarms_on_errors_and_throttles(synthesized, stage):
    template = synthesized.templates[stage]
    assertions = _template(synthesized, stage)
    for spec in SPECS.values():
        logical_id, _ = functions_by_handler(template)[spec.handler]
        dimensions = [{"Name": "FunctionName", "Value": {"Ref": logical_id}}]
        for metric in ("Errors", "Throttles"):
            assertions.has_resource_properties(
                "AWS::CloudWatch::Alarm",
                {"Namespace": "AWS/Lambda", "MetricName": metric, "Dimensions": dimensions},
            )
    assertions.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Namespace": "AWS/Lambda",
            "MetricName": "ConcurrentExecutions",
            "Dimensions": Match.absent(),
            "Threshold": STAGES[stage].alarm_thresholds["AccountConcurrency"],
        },
    )
    alarms = _alarms(template)
    assert len(alarms["functionerrors"]) == len(SPECS)
    assert len(alarms["functionthrottles"]) == len(SPECS)
    # a throttled invocation a retry absorbed (the clock's Task) does not alarm
    thresholds = {a["Threshold"] for a in alarms["functionthrottles"]}
    assert thresholds == {DEFAULT_THRESHOLDS["FunctionThrottles"]}


def _saturation_alarms(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Function module -> its alarm on its own ``ConcurrentExecutions``."""
    by_id = {logical_id: module for module, (logical_id, _) in _functions(template).items()}
    out = {}
    for props in resources(template, "AWS::CloudWatch::Alarm").values():
        if props.get("MetricName") == "ConcurrentExecutions" and props.get("Dimensions"):
            (dimension,) = props["Dimensions"]
            out[by_id[dimension["Value"]["Ref"]]] = props
    return out


def _functions(template: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    by_handler = functions_by_handler(template)
    return {module: by_handler[spec.handler] for module, spec in SPECS.items()}


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_saturation_warns_before_throttles_and_only_for_load_that_lasts(synthesized, stage):
    """Peak concurrency at 80 % of the reservation for 3 periods in a row (15 minutes), and
    only where 80 % is below the whole reservation: with a reservation of 1 (the watchdog)
    every run would be "saturation", and its schedule runs it every minute — an alarm that is
    red for ever. Such a function has its Throttles alarm only."""
    alarms = _saturation_alarms(synthesized.templates[stage])
    for module, reserved in STAGES[stage].reserved.items():
        share = math.ceil(reserved * 0.8)
        if share >= reserved:
            assert module not in alarms, module
            continue
        alarm = alarms[module]
        assert alarm["Threshold"] == share, module
        assert alarm["Statistic"] == "Maximum"
        assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
        assert (alarm["EvaluationPeriods"], alarm["DatapointsToAlarm"]) == (3, 3), module
    assert "watchdog" not in alarms
    assert len(_alarms(synthesized.templates[stage])["functionsaturation"]) == len(alarms)


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_no_function_alarm_fires_at_the_watchdogs_steady_concurrency(synthesized, stage):
    """The watchdog runs every minute, one at a time: its concurrency is 1 whenever it runs.
    No alarm on its own metrics may fire at that (healthy) value."""
    template = synthesized.templates[stage]
    watchdog_id, _ = _functions(template)["watchdog"]
    for props in resources(template, "AWS::CloudWatch::Alarm").values():
        if {"Name": "FunctionName", "Value": {"Ref": watchdog_id}} not in props.get(
            "Dimensions", []
        ):
            continue
        if props["MetricName"] == "ConcurrentExecutions":
            assert props["Threshold"] > 1, props


def _math_metric_names(alarm: dict[str, Any]) -> set[str]:
    return {m["MetricStat"]["Metric"]["MetricName"] for m in alarm["Metrics"] if "MetricStat" in m}


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_table_throttles_and_system_errors_alarm(synthesized, stage):
    template = synthesized.templates[stage]
    (table_id,) = resources(template, "AWS::DynamoDB::Table")
    for anchor, metric in (
        ("tablethrottles", "ThrottledRequests"),
        ("tablesystemerrors", "SystemErrors"),
    ):
        alarm = _one(template, anchor)
        assert _math_metric_names(alarm) == {metric}
        operations = set()
        for m in alarm["Metrics"]:
            if "MetricStat" in m:
                dims = {d["Name"]: d["Value"] for d in m["MetricStat"]["Metric"]["Dimensions"]}
                assert dims["TableName"] == {"Ref": table_id}
                operations.add(dims["Operation"])
        assert {"GetItem", "PutItem", "UpdateItem", "TransactWriteItems", "Query"} <= operations
        # every operation's count is FILLed: an unfilled sum has no value unless every
        # operation had one in the period (infra.emulator.metrics evaluates it so)
        (expression,) = [m["Expression"] for m in alarm["Metrics"] if "Expression" in m]
        ids = [m["Id"] for m in alarm["Metrics"] if "MetricStat" in m]
        assert all(f"FILL({i}, 0)" in expression for i in ids)
        # one throttle botocore retried does not alarm; a system error does
        expected = DEFAULT_THRESHOLDS["TableThrottles"] if metric == "ThrottledRequests" else 1
        assert alarm["Threshold"] == expected


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_deadline_machine_failures_timeouts_and_throttles_alarm(synthesized, stage):
    template = synthesized.templates[stage]
    (machine_id,) = resources(template, "AWS::StepFunctions::StateMachine")
    assertions = _template(synthesized, stage)
    for metric in ("ExecutionsFailed", "ExecutionsTimedOut", "ExecutionThrottled"):
        assertions.has_resource_properties(
            "AWS::CloudWatch::Alarm",
            {
                "Namespace": "AWS/States",
                "MetricName": metric,
                "Dimensions": [{"Name": "StateMachineArn", "Value": {"Ref": machine_id}}],
                "Threshold": 1,
            },
        )


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_throttled_start_executions_alarm(synthesized, stage):
    """``ExecutionThrottled`` counts throttled state transitions of running executions; a
    StartExecution call Step Functions throttled is ``ThrottledEvents`` with the dimension
    ``APIName`` = ``StartExecution`` (AWS, "Step Functions metrics", API metrics:
    https://docs.aws.amazon.com/step-functions/latest/dg/procedure-cw-metrics.html)."""
    alarm = _one(synthesized.templates[stage], "deadlinestartsthrottled")
    assert (alarm["Namespace"], alarm["MetricName"]) == ("AWS/States", "ThrottledEvents")
    assert alarm["Dimensions"] == [{"Name": "APIName", "Value": "StartExecution"}]
    # botocore retries a throttled StartExecution (each attempt counts): a few do not alarm
    threshold = DEFAULT_THRESHOLDS["StartExecutionThrottles"]
    assert (alarm["Statistic"], alarm["Threshold"]) == ("Sum", threshold)
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    failed = _one(synthesized.templates[stage], "clockstartfailures")
    assert (failed["Namespace"], failed["MetricName"]) == ("WordleTournament", "ClockStartFailed")


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_websocket_errors_alarm(synthesized, stage):
    template = synthesized.templates[stage]
    (api_id,) = resources(template, "AWS::ApiGatewayV2::Api")
    assertions = _template(synthesized, stage)
    dimensions = [{"Name": "ApiId", "Value": {"Ref": api_id}}, {"Name": "Stage", "Value": stage}]
    thresholds = {
        "IntegrationError": 1,
        "ExecutionError": 1,
        "ClientError": STAGES[stage].alarm_thresholds["ApiClientErrors"],
    }
    for metric, threshold in thresholds.items():
        assertions.has_resource_properties(
            "AWS::CloudWatch::Alarm",
            {
                "Namespace": "AWS/ApiGateway",
                "MetricName": metric,
                "Dimensions": dimensions,
                "Threshold": threshold,
            },
        )
    # 5xx: WebSocket APIs publish no 5XX metric; the access log's metric filter counts them
    assertions.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Namespace": "WordleTournament",
            "MetricName": "ApiStatus5xx",
            "Dimensions": [{"Name": "stage", "Value": stage}],
            "Threshold": 1,
        },
    )


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_access_log_metric_filters_count_4xx_and_5xx_per_stage(synthesized, stage):
    template = synthesized.templates[stage]
    (stage_props,) = resources(template, "AWS::ApiGatewayV2::Stage").values()
    access_log_group = stage_props["AccessLogSettings"]["DestinationArn"]["Fn::GetAtt"][0]
    assertions = _template(synthesized, stage)
    assertions.resource_count_is("AWS::Logs::MetricFilter", 2)
    for name, digit in (("ApiStatus4xx", "4"), ("ApiStatus5xx", "5")):
        assertions.has_resource_properties(
            "AWS::Logs::MetricFilter",
            {
                "LogGroupName": {"Ref": access_log_group},
                "FilterPattern": f'{{ $.status = "{digit}*" }}',
                "MetricTransformations": [
                    {
                        "MetricNamespace": "WordleTournament",
                        "MetricName": name,
                        "MetricValue": "1",
                        "Dimensions": [{"Key": "stage", "Value": "$.stage"}],
                    }
                ],
            },
        )
    # the filters' dimension is in the access log
    assert '"stage": "$context.stage"' in stage_props["AccessLogSettings"]["Format"]


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_every_alarm_has_a_runbook_section(synthesized, stage):
    headings = {
        re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in RUNBOOK.read_text(encoding="utf-8").splitlines()
        if line.startswith("### ")
    }
    anchors = set(_alarms(synthesized.templates[stage]))
    anchors.add(_anchor(_composite(synthesized.templates[stage])[1]))
    assert anchors - headings == set()


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_dashboard_is_laid_out_by_the_golden_signals(synthesized, stage):
    (dashboard,) = resources(synthesized.templates[stage], "AWS::CloudWatch::Dashboard").values()
    assert "DashboardName" not in dashboard  # no fixed physical name
    body = str(dashboard["DashboardBody"])
    rows = [body.index(f"## {signal}") for signal in ("Traffic", "Errors", "Latency", "Saturation")]
    assert rows == sorted(rows)
    for metric in ("InternalError", "TimerLateMs", "ConcurrentExecutions", "MessageCount"):
        assert metric in body


def test_the_readme_counts_the_alarms_the_templates_have(synthesized):
    """``infra/README.md`` states how many alarms each stage has (and what they cost): the
    figure must be the template's."""
    readme = (RUNBOOK.parent / "README.md").read_text(encoding="utf-8")
    found = re.search(r"(\d+) alarms in dev, (\d+) in prod", readme)
    assert found is not None
    counts = {
        stage: len(resources(synthesized.templates[stage], "AWS::CloudWatch::Alarm"))
        for stage in ("dev", "prod")
    }
    assert (int(found[1]), int(found[2])) == (counts["dev"], counts["prod"])
    assert f"{counts['prod']} standard alarms" in readme


PAGE_WORTHY = {
    "internalerrors",
    "tryagainrate",
    "deadlinelateness",
    "watchdogheartbeat",
    "apiintegrationerrors",
    "apiexecutionerrors",
    "api5xx",
}
"""Runbook anchors of the alarms that page (players' messages fail now, or the clock fails with
nothing left to repair it); every other alarm files a ticket."""


def _composite(template: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    ((logical_id, props),) = resources(template, "AWS::CloudWatch::CompositeAlarm").items()
    return logical_id, props


def _anchor(props: dict[str, Any]) -> str:
    return str(props["AlarmDescription"].rsplit("#", 1)[1])


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_the_game_is_degraded_composite_is_over_the_page_worthy_alarms(synthesized, stage):
    template = synthesized.templates[stage]
    _, composite = _composite(template)
    assert _anchor(composite) == "gamedegraded"
    rule = str(composite["AlarmRule"])
    members = {
        _anchor(props)
        for logical_id, props in resources(template, "AWS::CloudWatch::Alarm").items()
        if logical_id in rule
    }
    assert members == PAGE_WORTHY
    assert rule.count("ALARM(") == len(PAGE_WORTHY)


def test_every_prod_alarm_reaches_exactly_one_topic(synthesized):
    """Page-worthy alarms page through the composite (one page per incident, not one per
    member: they have no action of their own); every other alarm files a ticket. On ALARM and
    on OK alike."""
    template = synthesized.templates["prod"]
    _, composite = _composite(template)
    assert composite["AlarmActions"] == [PAGE_TOPIC]
    assert composite["OKActions"] == [PAGE_TOPIC]
    rule = str(composite["AlarmRule"])
    alarms = resources(template, "AWS::CloudWatch::Alarm")
    assert len(alarms) > len(PAGE_WORTHY)
    for logical_id, props in alarms.items():
        reached = list(props.get("AlarmActions", []))
        if logical_id in rule:
            reached.append(PAGE_TOPIC)
        assert reached in ([PAGE_TOPIC], [TICKET_TOPIC]), (logical_id, reached)
        assert props.get("OKActions", []) == props.get("AlarmActions", []), logical_id
        assert (reached == [PAGE_TOPIC]) == (_anchor(props) in PAGE_WORTHY), logical_id


def test_without_topics_nothing_notifies_and_a_kept_stage_warns(synthesized, tmp_path):
    """dev is synthesized without topics: no action anywhere. prod without them would notify
    nobody: synth warns (``cdk deploy`` shows it)."""
    template = synthesized.templates["dev"]
    for props in [
        *resources(template, "AWS::CloudWatch::Alarm").values(),
        *resources(template, "AWS::CloudWatch::CompositeAlarm").values(),
    ]:
        assert "AlarmActions" not in props
    from aws_cdk import App
    from aws_cdk.assertions import Annotations

    from infra.cdk.app import add_stage

    (tmp_path / "python").mkdir()
    stack = add_stage(App(), "prod", layer_dir=tmp_path)
    Annotations.from_stack(stack).has_warning("*", Match.string_like_regexp("notify nobody"))
