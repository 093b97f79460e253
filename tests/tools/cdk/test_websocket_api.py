"""Infrastructure: the WebSocket API — one route per ``ROUTES`` key (the protocol's actions plus
``$connect``/``$disconnect``/``$default``), each integrated with the function of its target,
and one per ``MOCK_ROUTES`` key (``ping``) answered by API Gateway itself; a throttled stage
with access logs; the URLs as outputs."""

from __future__ import annotations

from typing import Any

from functions.routes import MOCK_ROUTES, PONG, ROUTES
from shared.protocol.inbound import ACTIONS
from tests.tools.cdk.cfn import functions_by_handler, render, resources


def _integration_function(template: dict[str, Any], route: dict[str, Any]) -> str:
    integration_id = render(route["Target"]).removeprefix("integrations/").strip("<>")
    integration = template["Resources"][integration_id]["Properties"]
    uri = render(integration["IntegrationUri"])
    # routes invoke the function's live alias (rollback moves the alias)
    function_ids = [
        render(alias["FunctionName"]).strip("<>")
        for alias_id, alias in resources(template, "AWS::Lambda::Alias").items()
        if f"<{alias_id}>" in uri
    ]
    assert len(function_ids) == 1, uri
    return function_ids[0]


def test_route_selection_is_the_action_field(dev):
    (api,) = resources(dev, "AWS::ApiGatewayV2::Api").values()
    assert api["ProtocolType"] == "WEBSOCKET"
    assert api["RouteSelectionExpression"] == "$request.body.action"


def test_routes_are_exactly_the_route_table(dev):
    keys = sorted(r["RouteKey"] for r in resources(dev, "AWS::ApiGatewayV2::Route").values())
    assert keys == sorted([*ROUTES, *MOCK_ROUTES])
    assert set(ACTIONS) | {"$connect", "$disconnect", "$default"} == set(keys)
    assert not set(ROUTES) & set(MOCK_ROUTES)


def test_ping_is_answered_by_the_gateway_with_no_function(dev):
    """Ruling 14: ``ping`` goes to a MOCK integration whose integration response makes the
    ``pong`` and whose route response sends it back; no Lambda is invoked."""
    routes = resources(dev, "AWS::ApiGatewayV2::Route")
    (route_id,) = [i for i, r in routes.items() if r["RouteKey"] == "ping"]
    route = routes[route_id]
    assert route["RouteResponseSelectionExpression"] == "$default"
    integration_id = render(route["Target"]).removeprefix("integrations/").strip("<>")
    integration = dev["Resources"][integration_id]["Properties"]
    assert integration["IntegrationType"] == "MOCK"
    assert not integration.get("IntegrationUri")  # nothing is invoked
    assert integration["RequestTemplates"] == {"$default": PONG.request_template}
    (response,) = [
        r
        for r in resources(dev, "AWS::ApiGatewayV2::IntegrationResponse").values()
        if render(r["IntegrationId"]).strip("<>") == integration_id
    ]
    assert response["IntegrationResponseKey"] == "$default"
    assert response["ResponseTemplates"] == {"$default": PONG.response_template}
    (route_response,) = [
        r
        for r in resources(dev, "AWS::ApiGatewayV2::RouteResponse").values()
        if render(r["RouteId"]).strip("<>") == route_id
    ]
    assert route_response["RouteResponseKey"] == "$default"


def test_each_route_invokes_the_function_of_its_target(dev):
    by_id = {
        logical_id: props["Handler"]
        for logical_id, props in resources(dev, "AWS::Lambda::Function").items()
    }
    for route in resources(dev, "AWS::ApiGatewayV2::Route").values():
        if route["RouteKey"] in MOCK_ROUTES:
            continue
        handler = by_id[_integration_function(dev, route)]
        assert handler == ROUTES[route["RouteKey"]].replace(":", "."), route["RouteKey"]


def test_routes_of_one_module_share_one_function(dev):
    handlers = functions_by_handler(dev)
    assert len(handlers) == len(resources(dev, "AWS::Lambda::Function"))
    assert "functions.messages.party" in handlers
    party_routes = [k for k, v in ROUTES.items() if v == "functions.messages:party"]
    assert sorted(party_routes) == sorted(a for a in ACTIONS if a.startswith("party_"))
    assert len(party_routes) == 6


def test_every_route_function_may_be_invoked_by_this_api_only(dev):
    (api_id,) = resources(dev, "AWS::ApiGatewayV2::Api")
    permissions = [
        p
        for p in resources(dev, "AWS::Lambda::Permission").values()
        if p["Principal"] == "apigateway.amazonaws.com"
    ]
    assert len(permissions) == len(ROUTES)
    for permission in permissions:
        assert f":<{api_id}>/" in render(permission["SourceArn"])


def test_stage_is_throttled_and_access_logged(dev):
    (stage,) = resources(dev, "AWS::ApiGatewayV2::Stage").values()
    assert stage["StageName"] == "dev"
    assert stage["AutoDeploy"] is True
    route_settings = stage["DefaultRouteSettings"]
    assert route_settings["ThrottlingRateLimit"] > 0
    assert route_settings["ThrottlingBurstLimit"] >= route_settings["ThrottlingRateLimit"]
    log_group = render(stage["AccessLogSettings"]["DestinationArn"]).strip("<>").split(".")[0]
    assert dev["Resources"][log_group]["Type"] == "AWS::Logs::LogGroup"
    assert "$context.requestId" in stage["AccessLogSettings"]["Format"]
    # Ruling 11: no query string (where a token could travel) in access logs; ruling 17: the
    # source address is there, so that an operator can find who farms identities.
    assert "querystring" not in stage["AccessLogSettings"]["Format"].lower()
    assert "$context.identity.sourceIp" in stage["AccessLogSettings"]["Format"]


def test_prod_is_throttled_higher_than_dev(dev, prod):
    (dev_stage,) = resources(dev, "AWS::ApiGatewayV2::Stage").values()
    (prod_stage,) = resources(prod, "AWS::ApiGatewayV2::Stage").values()
    assert (
        prod_stage["DefaultRouteSettings"]["ThrottlingRateLimit"]
        > dev_stage["DefaultRouteSettings"]["ThrottlingRateLimit"]
    )


def test_outputs_give_the_wss_url_and_the_callback_url(dev):
    (api_id,) = resources(dev, "AWS::ApiGatewayV2::Api")
    outputs = {name: render(o["Value"]) for name, o in dev["Outputs"].items()}
    assert outputs["WebSocketUrl"].startswith(f"wss://<{api_id}>.execute-api.")
    assert outputs["WebSocketUrl"].endswith("/dev")
    assert outputs["CallbackUrl"].startswith(f"https://<{api_id}>.execute-api.")
    assert outputs["CallbackUrl"].endswith("/dev")


def test_the_account_log_role_is_not_taken_over_by_default(dev, prod):
    """API Gateway's CloudWatch role is one setting per account and region: the stack sets it
    only when asked (``-c apiGatewayAccountRole=true``, tests/tools/cdk/test_operations.py)."""
    for template in (dev, prod):
        assert resources(template, "AWS::ApiGateway::Account") == {}
