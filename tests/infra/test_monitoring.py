"""Infrastructure: alarms on every function's errors and throttles, on failed and timed-out
deadline executions, on WebSocket integration/execution errors; one dashboard."""

from __future__ import annotations

from infra.constructs.functions import SPECS
from tests.infra.cfn import functions_by_handler, resources


def _alarms(template):
    return list(resources(template, "AWS::CloudWatch::Alarm").values())


def _dimension(alarm, name):
    return next(d["Value"] for d in alarm["Dimensions"] if d["Name"] == name)


def test_every_function_has_error_and_throttle_alarms(dev):
    for logical_id, _ in functions_by_handler(dev).values():
        metrics = {
            a["MetricName"]
            for a in _alarms(dev)
            if a["Namespace"] == "AWS/Lambda"
            and _dimension(a, "FunctionName") == {"Ref": logical_id}
        }
        assert metrics == {"Errors", "Throttles"}, logical_id
    assert sum(a["Namespace"] == "AWS/Lambda" for a in _alarms(dev)) == 2 * len(SPECS)


def test_deadline_failures_and_timeouts_alarm(dev):
    metrics = {a["MetricName"] for a in _alarms(dev) if a["Namespace"] == "AWS/States"}
    assert metrics == {"ExecutionsFailed", "ExecutionsTimedOut"}


def test_websocket_errors_alarm(dev):
    (api_id,) = resources(dev, "AWS::ApiGatewayV2::Api")
    api_alarms = [a for a in _alarms(dev) if a["Namespace"] == "AWS/ApiGateway"]
    assert {a["MetricName"] for a in api_alarms} == {"IntegrationError", "ExecutionError"}
    for alarm in api_alarms:
        assert _dimension(alarm, "ApiId") == {"Ref": api_id}
        assert _dimension(alarm, "Stage") == "dev"


def test_alarms_fire_on_the_first_occurrence_and_ignore_silence(dev):
    for alarm in _alarms(dev):
        assert alarm["Threshold"] == 1
        assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
        assert alarm["TreatMissingData"] == "notBreaching"


def test_one_dashboard_named_after_the_stack(dev):
    (dashboard,) = resources(dev, "AWS::CloudWatch::Dashboard").values()
    assert dashboard["DashboardName"] == "WordleTournament-dev"
