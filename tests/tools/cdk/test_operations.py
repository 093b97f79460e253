"""Infrastructure: the guards and the rollback path, in both stages, read with
``aws_cdk.assertions.Template`` — reserved concurrency (a share for the clock and the watchdog, a
cap for every public route), stage and per-route throttles (``$connect`` and ``session``
tighter than ``guess``), a ``live`` alias per function that the API, the deadline machine and
the watchdog's schedule invoke, no fixed physical names, the tracing policy per stage, and the
opt-in API Gateway account role."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App
from aws_cdk.assertions import Match, Template

from functions.routes import ROUTES
from infra.cdk.app import add_stage
from infra.cdk.constructs.functions import SPECS
from infra.cdk.stack import STAGES
from tests.tools.cdk.cfn import functions_by_handler, live_alias, render, resources

STAGE_NAMES = sorted(STAGES)
CLOCK = ("apply_deadlines", "watchdog")


def _template(synthesized: Any, stage: str) -> Template:
    return Template.from_json(synthesized.templates[stage])


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_every_function_has_reserved_concurrency(synthesized, stage):
    template = synthesized.templates[stage]
    reserved = STAGES[stage].reserved
    assert set(reserved) == set(SPECS)
    for module, spec in SPECS.items():
        _, fn = functions_by_handler(template)[spec.handler]
        assert fn["ReservedConcurrentExecutions"] == reserved[module], module
    # one watchdog at a time; Lambda keeps 100 unreserved: dev fits the default 1000, prod's
    # need is a quota to raise (infra/CAPACITY.md, checked by test_capacity_limits)
    assert reserved["watchdog"] == 1
    assert sum(reserved.values()) + 100 <= (1000 if stage == "dev" else 4000)


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_stage_and_route_throttles(synthesized, stage):
    config = STAGES[stage]
    _template(synthesized, stage).has_resource_properties(
        "AWS::ApiGatewayV2::Stage",
        {
            "DefaultRouteSettings": {
                "ThrottlingRateLimit": config.rate_limit,
                "ThrottlingBurstLimit": config.burst_limit,
            },
            "RouteSettings": {
                key: {"ThrottlingRateLimit": rate, "ThrottlingBurstLimit": burst}
                for key, (rate, burst) in config.route_throttles.items()
            },
        },
    )
    throttles = config.route_throttles
    for tight in ("$connect", "session"):
        assert throttles[tight][0] < throttles["guess"][0], tight
        assert throttles[tight][1] < throttles["guess"][1], tight
    assert throttles["guess"][0] <= config.rate_limit


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_the_stage_waits_for_the_routes_its_settings_name(synthesized, stage):
    """API Gateway refuses RouteSettings for a route key that does not exist yet."""
    template = synthesized.templates[stage]
    (stage_id,) = resources(template, "AWS::ApiGatewayV2::Stage")
    depends = set(template["Resources"][stage_id].get("DependsOn", []))
    routes = {
        props["RouteKey"]: logical_id
        for logical_id, props in resources(template, "AWS::ApiGatewayV2::Route").items()
    }
    for key in STAGES[stage].route_throttles:
        assert routes[key] in depends, key


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_each_function_has_a_live_alias_on_a_published_version(synthesized, stage):
    template = synthesized.templates[stage]
    versions = resources(template, "AWS::Lambda::Version")
    for module, spec in SPECS.items():
        logical_id, _ = functions_by_handler(template)[spec.handler]
        alias = template["Resources"][live_alias(template, logical_id)]["Properties"]
        version_id = alias["FunctionVersion"]["Fn::GetAtt"][0]
        assert version_id in versions, module
        assert versions[version_id]["FunctionName"] == {"Ref": logical_id}
        # old versions stay, so live can be pointed back at one
        assert template["Resources"][version_id]["DeletionPolicy"] == "Retain"


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_routes_machine_and_schedule_invoke_the_live_aliases(synthesized, stage):
    template = synthesized.templates[stage]
    aliases = set(resources(template, "AWS::Lambda::Alias"))
    for integration in resources(template, "AWS::ApiGatewayV2::Integration").values():
        if integration["IntegrationType"] == "MOCK":
            continue  # ping: answered by API Gateway, no function (ruling 14)
        uri = render(integration["IntegrationUri"])
        assert any(f"<{alias}>" in uri for alias in aliases), uri
    permissions = [
        p
        for p in resources(template, "AWS::Lambda::Permission").values()
        if p["Principal"] == "apigateway.amazonaws.com"
    ]
    assert len(permissions) == len(ROUTES)
    for permission in permissions:
        assert render(permission["FunctionName"]).strip("<>") in aliases
    (machine,) = resources(template, "AWS::StepFunctions::StateMachine").values()
    clock_id, _ = functions_by_handler(template)["functions.apply_deadlines.handler"]
    assert {"Ref": live_alias(template, clock_id)} in machine["DefinitionString"]["Fn::Join"][1]
    (rule,) = resources(template, "AWS::Events::Rule").values()
    watchdog_id, _ = functions_by_handler(template)["functions.watchdog.handler"]
    assert rule["Targets"][0]["Arn"] == {"Ref": live_alias(template, watchdog_id)}


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_no_fixed_physical_names(synthesized, stage):
    """A fixed name makes an update that replaces the resource fail (the new one is created
    before the old one is deleted): the machine, functions, roles, log groups, alarms and the
    dashboard are named by CloudFormation — but for the state machine's log group, whose name
    must start with ``/aws/vendedlogs/`` (``test_clock``), and carries the stack's name."""
    template = _template(synthesized, stage)
    named = {
        "AWS::StepFunctions::StateMachine": "StateMachineName",
        "AWS::Lambda::Function": "FunctionName",
        "AWS::IAM::Role": "RoleName",
        "AWS::Logs::LogGroup": "LogGroupName",
        "AWS::CloudWatch::Alarm": "AlarmName",
        "AWS::CloudWatch::Dashboard": "DashboardName",
        "AWS::DynamoDB::Table": "TableName",
    }
    for type_name, prop in named.items():
        for logical_id, props in template.find_resources(type_name).items():
            value = props.get("Properties", {}).get(prop)
            if type_name == "AWS::Logs::LogGroup" and str(value).startswith("/aws/vendedlogs/"):
                assert f"WordleTournament-{stage}" in value
                continue
            assert value is None, (logical_id, prop)


def test_tracing_is_active_in_dev_and_off_in_prod(synthesized):
    """dev: every function ``Active`` and the machine traced; prod: ``PassThrough`` (traced
    only if a caller sampled, and nothing upstream does) and the machine untraced."""
    for stage, mode, machine_traced in (("dev", "Active", True), ("prod", "PassThrough", False)):
        template = _template(synthesized, stage)
        functions = template.find_resources("AWS::Lambda::Function")
        assert len(functions) == len(SPECS)
        for logical_id, fn in functions.items():
            assert fn["Properties"]["TracingConfig"] == {"Mode": mode}, (stage, logical_id)
        template.has_resource_properties(
            "AWS::StepFunctions::StateMachine",
            {"TracingConfiguration": {"Enabled": machine_traced}},
        )


def _layer(tmp_path: Path) -> Path:
    layer = tmp_path / "layer"
    (layer / "python").mkdir(parents=True)
    (layer / "python" / "README.txt").write_text("stub layer\n")
    return layer


def test_context_flags_take_the_account_role_override_tracing_and_drop_reservations(tmp_path):
    """``apiGatewayAccountRole=true`` adds the account-wide role (kept on delete);
    ``tracing=active`` traces prod; ``reserveConcurrency=false`` reserves nothing."""
    app = App(outdir=str(tmp_path / "out"), analytics_reporting=False)
    stack = add_stage(
        app,
        "prod",
        layer_dir=_layer(tmp_path),
        account_log_role=True,
        tracing="active",
        reserve_concurrency=False,
    )
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::ApiGateway::Account", 1)
    template.has_resource("AWS::ApiGateway::Account", {"DeletionPolicy": "Retain"})
    template.has_resource_properties(
        "AWS::IAM::Role",
        {
            "ManagedPolicyArns": [
                {"Fn::Join": ["", Match.array_with([Match.string_like_regexp("PushToCloudWatch")])]}
            ]
        },
    )
    template.has_resource_properties("AWS::Lambda::Function", {"TracingConfig": {"Mode": "Active"}})
    template.has_resource_properties(
        "AWS::StepFunctions::StateMachine", {"TracingConfiguration": {"Enabled": True}}
    )
    for fn in template.find_resources("AWS::Lambda::Function").values():
        assert "ReservedConcurrentExecutions" not in fn["Properties"]
    assert (
        template.find_resources(
            "AWS::CloudWatch::Alarm",
            {"Properties": {"MetricName": "ConcurrentExecutions", "Dimensions": Match.any_value()}},
        )
        == {}
    )


def test_an_unknown_tracing_policy_fails_synth(tmp_path):
    app = App(outdir=str(tmp_path / "out"), analytics_reporting=False)
    with pytest.raises(ValueError, match="tracing"):
        add_stage(app, "dev", layer_dir=_layer(tmp_path), tracing="sometimes")


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_outputs_name_what_the_runbook_needs(synthesized, stage):
    template = synthesized.templates[stage]
    outputs = template["Outputs"]
    assert {
        "WebSocketUrl",
        "CallbackUrl",
        "TableName",
        "StateMachineArn",
        "StateMachineAliasArn",
        "FunctionNames",
        "DashboardName",
    } <= set(outputs)
    (dashboard_id,) = resources(template, "AWS::CloudWatch::Dashboard")
    assert outputs["DashboardName"]["Value"] == {"Ref": dashboard_id}
    # module=function pairs, one per function, for `aws lambda update-alias` (rollback)
    text = render(outputs["FunctionNames"]["Value"])
    for module, spec in SPECS.items():
        logical_id, _ = functions_by_handler(template)[spec.handler]
        assert f"{module}=<{logical_id}>" in text.split(), module
