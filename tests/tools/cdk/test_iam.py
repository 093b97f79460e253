"""Infrastructure: least privilege — one role per function; every statement names its
resources; the only wildcards are the ones AWS requires, each allowed here by name with why."""

from __future__ import annotations

import re
from typing import Any

import pytest

from functions.streams import STREAMS
from infra.cdk.constructs.functions import SPECS
from shared.adapters.dynamo import schema
from tests.tools.cdk.cfn import (
    as_list,
    functions_by_handler,
    granted,
    live_alias,
    render,
    resources,
)

ONLY_STAR = {
    # X-Ray has no resource-level permissions for sending traces or reading sampling rules.
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
    # Step Functions' vended log delivery to CloudWatch Logs: these accept only "*".
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
    # Lambda's stream poller (the history function's role): ListStreams has no resource type.
    "dynamodb:ListStreams",
}
"""Actions allowed on Resource "*" (AWS offers no narrower resource for them)."""

STREAM_READ = {"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"}
"""What Lambda's poller does with a stream-reading function's role, on the stream's ARN."""

CONNECTIONS = re.compile(
    r"^arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<WebSocketApi\w+>"
    r"/(dev|prod)/(POST|GET|DELETE)/@connections/\*$"
)
"""Connection ids are minted per client by API Gateway: the ARN names this API, this stage and
one method, and leaves only the connection id open."""


def _statements(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        statement
        for props in resources(template, "AWS::IAM::Policy").values()
        for statement in props["PolicyDocument"]["Statement"]
    ]


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_every_statement_names_its_resources(synthesized, stage):
    template = synthesized.templates[stage]
    for statement in _statements(template):
        assert statement["Effect"] == "Allow"
        actions = as_list(statement["Action"])
        assert not [a for a in actions if "*" in a], actions
        for resource in as_list(statement["Resource"]):
            text = render(resource)
            if text == "*":
                assert set(actions) <= ONLY_STAR, actions
            elif "*" in text:
                assert actions == ["execute-api:ManageConnections"], (actions, text)
                assert CONNECTIONS.match(text), text


def test_no_managed_policies(dev, prod):
    """The only managed policy would be API Gateway's account log role, which is opt-in
    (``apiGatewayAccountRole``; tests/tools/cdk/test_operations.py synthesizes it)."""
    for template in (dev, prod):
        roles = resources(template, "AWS::IAM::Role")
        assert not any(props.get("ManagedPolicyArns") for props in roles.values())


def _role_of(template: dict[str, Any], module: str) -> str:
    _, fn = functions_by_handler(template)[SPECS[module].handler]
    return fn["Role"]["Fn::GetAtt"][0]


def test_one_role_per_function(dev):
    roles = [fn["Role"]["Fn::GetAtt"][0] for _, fn in functions_by_handler(dev).values()]
    assert len(roles) == len(set(roles)) == len(SPECS)


def test_connect_may_only_put_an_item(dev):
    (table_id,) = resources(dev, "AWS::DynamoDB::Table")
    grants = granted(dev, _role_of(dev, "connect"))
    dynamo = {g for g in grants if g[0].startswith("dynamodb:")}
    assert dynamo == {("dynamodb:PutItem", f"<{table_id}.Arn>")}
    assert not any(a.startswith(("execute-api:", "states:")) for a, _ in grants)


def test_only_join_queries_the_waiting_index_and_only_the_watchdog_the_due_one(dev):
    """... and only the read-only progression function the board index and the table (a
    player's history, a tournament's record: issue 38)."""
    (table_id,) = resources(dev, "AWS::DynamoDB::Table")
    for module in SPECS:
        queries = {r for a, r in granted(dev, _role_of(dev, module)) if a == "dynamodb:Query"}
        expected = {
            "join": {f"<{table_id}.Arn>/index/{schema.GSI_WAITING}"},
            "watchdog": {f"<{table_id}.Arn>/index/{schema.GSI_DUE}"},
            "history": {f"<{table_id}.Arn>"},  # a tournament's round records
            "progression": {f"<{table_id}.Arn>", f"<{table_id}.Arn>/index/{schema.GSI_BOARD}"},
        }.get(module, set())
        assert queries == expected, module


def test_no_function_scans_or_touches_another_table(dev):
    (table_id,) = resources(dev, "AWS::DynamoDB::Table")
    for module in SPECS:
        for action, resource in granted(dev, _role_of(dev, module)):
            if action.startswith("dynamodb:"):
                assert action != "dynamodb:Scan"
                if action == "dynamodb:ListStreams":  # no resource type (ONLY_STAR)
                    assert module in STREAMS, module
                    assert resource == "*", (module, resource)
                elif action in STREAM_READ:
                    assert module in STREAMS, (module, action)
                    assert resource == f"<{table_id}.StreamArn>", (module, resource)
                else:
                    assert resource.startswith(f"<{table_id}.Arn>"), (module, resource)


def test_schedulers_start_only_the_deadline_machine(dev):
    (machine_id,) = resources(dev, "AWS::StepFunctions::StateMachine")
    for module, spec in SPECS.items():
        starts = {r for a, r in granted(dev, _role_of(dev, module)) if a.startswith("states:")}
        if spec.schedules:
            assert len(starts) == 1, module
            (arn,) = starts
            assert arn == f"<{machine_id}>"
            assert ("states:StartExecution", arn) in granted(dev, _role_of(dev, module))
        else:
            assert starts == set(), module


def test_functions_log_only_to_their_own_group(dev):
    for module in SPECS:
        role = _role_of(dev, module)
        _, fn = functions_by_handler(dev)[SPECS[module].handler]
        group = fn["LoggingConfig"]["LogGroup"]["Ref"]
        logs = {(a, r) for a, r in granted(dev, role) if a.startswith("logs:")}
        assert logs == {
            ("logs:CreateLogStream", f"<{group}.Arn>"),
            ("logs:PutLogEvents", f"<{group}.Arn>"),
        }


def test_the_state_machine_may_invoke_only_the_clock(dev):
    (machine,) = resources(dev, "AWS::StepFunctions::StateMachine").values()
    role = machine["RoleArn"]["Fn::GetAtt"][0]
    clock_id, _ = functions_by_handler(dev)["functions.apply_deadlines.handler"]
    invokes = {r for a, r in granted(dev, role) if a.startswith("lambda:")}
    assert invokes == {f"<{live_alias(dev, clock_id)}>"}
