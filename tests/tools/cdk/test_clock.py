"""Infrastructure: the deadline state machine is the shared definition
(``shared.adapters.step_functions.state_machine_definition``) with the clock function's ``live``
alias; the watchdog (its ``live`` alias) runs every minute."""

from __future__ import annotations

import json

import pytest

from infra.cdk.stack import STAGES
from shared.adapters.step_functions import state_machine_definition
from tests.tools.cdk.cfn import functions_by_handler, granted, live_alias, machine_id, resources

CLOCK_ARN = "<clock function ARN>"


def test_definition_equals_the_shared_one(dev):
    (machine,) = resources(dev, "AWS::StepFunctions::StateMachine").values()
    clock_id, _ = functions_by_handler(dev)["functions.apply_deadlines.handler"]
    separator, parts = machine["DefinitionString"]["Fn::Join"]
    assert separator == ""
    # the machine invokes the clock function's live alias (rollback moves the alias)
    alias = {"Ref": live_alias(dev, clock_id)}
    text = "".join(CLOCK_ARN if p == alias else p for p in parts)
    assert json.loads(text) == state_machine_definition(CLOCK_ARN)


def test_express_machine_with_logs_and_tracing(dev):
    """Express (one looping execution per round): its logs are its only execution record."""
    (machine,) = resources(dev, "AWS::StepFunctions::StateMachine").values()
    assert machine["StateMachineType"] == "EXPRESS"
    # no fixed name: CloudFormation names it, so a replacement can deploy
    assert "StateMachineName" not in machine
    assert machine["LoggingConfiguration"]["Level"] == "ALL"
    assert machine["LoggingConfiguration"]["IncludeExecutionData"] is False
    (destination,) = machine["LoggingConfiguration"]["Destinations"]
    assert "CloudWatchLogsLogGroup" in destination


def test_the_machine_may_start_only_itself(dev):
    """A round's loop hands over to a successor execution of the same machine (Express lasts
    at most 5 minutes): its role may start exactly that machine (a Ref, in a policy the machine
    does not wait for)."""
    (machine,) = resources(dev, "AWS::StepFunctions::StateMachine").values()
    role = machine["RoleArn"]["Fn::GetAtt"][0]
    starts = {(a, r) for a, r in granted(dev, role) if a.startswith("states:")}
    ((action, arn),) = starts
    assert action == "states:StartExecution"
    assert arn == f"<{machine_id(dev)}>"


def test_watchdog_runs_every_minute(dev):
    (rule,) = resources(dev, "AWS::Events::Rule").values()
    watchdog_id, _ = functions_by_handler(dev)["functions.watchdog.handler"]
    assert rule["ScheduleExpression"] == "rate(1 minute)"
    assert rule["State"] == "ENABLED"
    (target,) = rule["Targets"]
    assert target["Arn"] == {"Ref": live_alias(dev, watchdog_id)}


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_the_machine_logs_to_a_vended_logs_group(synthesized, stage):
    """Step Functions asks for a log group under ``/aws/vendedlogs/``: otherwise each group
    adds to the CloudWatch Logs resource policy, which is limited to 5,120 characters (AWS,
    "Logging in CloudWatch Logs", https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html).
    The stack's name (one per stage) keeps two stages in one account apart."""
    template = synthesized.templates[stage]
    (machine,) = resources(template, "AWS::StepFunctions::StateMachine").values()
    (destination,) = machine["LoggingConfiguration"]["Destinations"]
    group_id = destination["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    name = resources(template, "AWS::Logs::LogGroup")[group_id]["LogGroupName"]
    assert name == f"/aws/vendedlogs/states/WordleTournament-{stage}-Deadlines"
