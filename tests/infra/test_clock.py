"""Infrastructure: the deadline state machine is the shared definition
(``shared.adapters.clock.state_machine_definition``) with the clock function's ARN; the watchdog
runs every minute."""

from __future__ import annotations

import json

from shared.adapters.clock import state_machine_definition
from tests.infra.cfn import functions_by_handler, resources

CLOCK_ARN = "<clock function ARN>"


def test_definition_equals_the_shared_one(dev):
    (machine,) = resources(dev, "AWS::StepFunctions::StateMachine").values()
    clock_id, _ = functions_by_handler(dev)["functions.clock.handler"]
    separator, parts = machine["DefinitionString"]["Fn::Join"]
    assert separator == ""
    text = "".join(CLOCK_ARN if p == {"Fn::GetAtt": [clock_id, "Arn"]} else p for p in parts)
    assert json.loads(text) == state_machine_definition(CLOCK_ARN)


def test_standard_machine_with_logs_and_tracing(dev):
    (machine,) = resources(dev, "AWS::StepFunctions::StateMachine").values()
    assert machine["StateMachineType"] == "STANDARD"
    assert machine["StateMachineName"] == "WordleTournament-dev-deadlines"
    assert machine["TracingConfiguration"] == {"Enabled": True}
    assert machine["LoggingConfiguration"]["Level"] == "ALL"


def test_watchdog_runs_every_minute(dev):
    (rule,) = resources(dev, "AWS::Events::Rule").values()
    watchdog_id, _ = functions_by_handler(dev)["functions.watchdog.handler"]
    assert rule["ScheduleExpression"] == "rate(1 minute)"
    assert rule["State"] == "ENABLED"
    (target,) = rule["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [watchdog_id, "Arn"]}
