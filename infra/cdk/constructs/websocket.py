"""Infrastructure: the API Gateway WebSocket API — route selection on ``action``, one route per
``functions.routes.ROUTES`` key, one throttled stage (stage-wide limits plus tighter per-route
limits, ``route_throttles``) with JSON access logs, and the stage's ``@connections`` callback URL
and ARNs for the functions that push.

Throttling: API Gateway applies the route's limit where one is set, else the stage default, and
answers over-limit messages itself (429, no Lambda invoked); AWS, "Throttle requests to your
WebSocket APIs":
https://docs.aws.amazon.com/apigateway/latest/developerguide/websocket-api-protect.html"""

from __future__ import annotations

import json
from collections.abc import Mapping

import jsii
from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from functions.routes import MockRoute
from infra.cdk.constructs.log_formats import ACCESS_LOG_FORMAT
from infra.cdk.constructs.nag import acknowledge

ROUTE_SELECTION = "$request.body.action"


@jsii.implements(apigwv2.IAccessLogSettings)
class _AccessLogs:
    def __init__(self, log_group: logs.ILogGroup) -> None:
        self._destination = apigwv2.LogGroupLogDestination(log_group)

    @property
    def destination(self) -> apigwv2.IAccessLogDestination:
        return self._destination

    @property
    def format(self) -> apigw.AccessLogFormat:
        return apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG_FORMAT))


class WebSocketApi(Construct):
    """The API and its one stage. Call ``add_routes`` once the functions exist.

    Attributes: ``api``, ``stage``, ``url`` (``wss://``), ``callback_url`` (``https://``, the
    Management API endpoint), ``connections_arns`` (POST, GET and DELETE ``@connections/*`` of this
    stage: post, read ``LastActiveAt``, close).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        stage_name: str,
        rate_limit: float,
        burst_limit: int,
        log_retention: logs.RetentionDays,
        removal_policy: RemovalPolicy,
        account_log_role: bool,
        route_throttles: Mapping[str, tuple[float, int]] | None = None,
    ) -> None:
        """``route_throttles``: route key -> (steady messages per second, burst)."""
        super().__init__(scope, construct_id)
        self._route_throttles = dict(route_throttles or {})
        self.api = self._build_api()
        self.access_logs = self._build_access_log_group(log_retention, removal_policy)
        account = self._build_account_log_role() if account_log_role else None
        self.stage = self._build_stage(stage_name, rate_limit, burst_limit)
        if account is not None:
            # API Gateway refuses a stage with access logs until the account has a log role.
            self.stage.node.add_dependency(account)
        self.url = self.stage.url
        self.callback_url = self.stage.callback_url
        self.connections_arns = self._connections_arns(stage_name)
        self._integrations: dict[str, integrations.WebSocketLambdaIntegration] = {}

    def add_routes(
        self,
        targets: Mapping[str, lambda_.IFunction],
        mock_routes: Mapping[str, MockRoute] | None = None,
    ) -> None:
        """One route per key (``$connect``, ``$disconnect``, ``$default`` and each action),
        integrated with its function; functions shared by several routes share one integration.
        ``mock_routes`` (``functions.routes.MOCK_ROUTES``: ``ping``) are answered by API Gateway
        itself: a MOCK integration, its integration response and a route response
        (``returnResponse``), no function (ruling 14)."""
        mock_routes = dict(mock_routes or {})
        unknown = sorted(set(self._route_throttles) - set(targets) - set(mock_routes))
        if unknown:
            raise KeyError(f"throttles for routes that do not exist: {unknown}")
        for route_key, function in targets.items():
            route = self.api.add_route(route_key, integration=self._integration(function))
            # The stage's RouteSettings name route keys: API Gateway refuses unknown ones.
            self.stage.node.add_dependency(route)
        for route_key, mock in mock_routes.items():
            self._add_mock_route(route_key, mock)
        self._apply_route_throttles()
        self._acknowledge_open_routes()

    def _add_mock_route(self, route_key: str, mock: MockRoute) -> None:
        """A route answered by the gateway: the MOCK integration's request template sets the
        status (200) and carries the fields the answer echoes; the integration response's
        template makes the answer; the route response sends it back. AWS, "Set up a WebSocket
        API integration response" and "Set up route responses for a WebSocket API":
        https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-websocket-api-integration-responses.html
        https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-websocket-api-route-response.html
        """
        name = f"{route_key.capitalize()}Mock"
        route = self.api.add_route(
            route_key,
            integration=integrations.WebSocketMockIntegration(
                name,
                request_templates={"$default": mock.request_template},
                template_selection_expression="\\$default",
            ),
            return_response=True,
        )
        bound = route.node.find_child(name)
        assert isinstance(bound, apigwv2.WebSocketIntegration)
        apigwv2.CfnIntegrationResponse(
            self,
            f"{name}Response",
            api_id=self.api.api_id,
            integration_id=bound.integration_id,
            integration_response_key="$default",
            response_templates={"$default": mock.response_template},
            template_selection_expression="\\$default",
        )
        self.stage.node.add_dependency(route)

    def _apply_route_throttles(self) -> None:
        if not self._route_throttles:
            return
        stage = self.stage.node.default_child
        assert isinstance(stage, apigwv2.CfnStage)
        stage.route_settings = {
            key: {"ThrottlingRateLimit": rate, "ThrottlingBurstLimit": burst}
            for key, (rate, burst) in sorted(self._route_throttles.items())
        }

    def _build_api(self) -> apigwv2.WebSocketApi:
        return apigwv2.WebSocketApi(
            self,
            "Api",
            api_name=f"{Stack.of(self).stack_name}-ws",
            description="Wordle Tournament: JSON over WebSocket, one route per inbound action",
            route_selection_expression=ROUTE_SELECTION,
        )

    def _build_access_log_group(
        self, retention: logs.RetentionDays, removal_policy: RemovalPolicy
    ) -> logs.LogGroup:
        return logs.LogGroup(self, "AccessLogs", retention=retention, removal_policy=removal_policy)

    def _build_account_log_role(self) -> apigw.CfnAccount:
        """The region-wide API Gateway setting that lets it write logs (needed for access logs).

        Kept on stack deletion: another stack or stage in the account may rely on it.
        """
        role = iam.Role(
            self,
            "ApiGatewayLogsRole",
            assumed_by=iam.ServicePrincipal("apigateway.amazonaws.com"),
            managed_policies=[
                iam.ManagedPolicy.from_aws_managed_policy_name(
                    "service-role/AmazonAPIGatewayPushToCloudWatchLogs"
                )
            ],
        )
        role.apply_removal_policy(RemovalPolicy.RETAIN)
        acknowledge(
            role,
            "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
            "AmazonAPIGatewayPushToCloudWatchLogs]",
            "API Gateway's account-level logging role must be able to create and write any of "
            "the account's API log groups; this AWS managed policy is the documented one.",
        )
        account = apigw.CfnAccount(self, "ApiGatewayAccount", cloud_watch_role_arn=role.role_arn)
        account.apply_removal_policy(RemovalPolicy.RETAIN)
        return account

    def _build_stage(
        self, stage_name: str, rate_limit: float, burst_limit: int
    ) -> apigwv2.WebSocketStage:
        return apigwv2.WebSocketStage(
            self,
            "Stage",
            web_socket_api=self.api,
            stage_name=stage_name,
            auto_deploy=True,
            throttle=apigwv2.ThrottleSettings(rate_limit=rate_limit, burst_limit=burst_limit),
            access_log_settings=_AccessLogs(self.access_logs),
        )

    def _connections_arns(self, stage_name: str) -> list[str]:
        stack = Stack.of(self)
        return [
            stack.format_arn(
                service="execute-api",
                resource=self.api.api_id,
                resource_name=f"{stage_name}/{method}/@connections/*",
            )
            for method in ("POST", "GET", "DELETE")
        ]

    def _integration(self, function: lambda_.IFunction) -> integrations.WebSocketLambdaIntegration:
        key = function.node.path
        if key not in self._integrations:
            self._integrations[key] = integrations.WebSocketLambdaIntegration(
                f"{function.node.id}Integration", function
            )
        return self._integrations[key]

    def _acknowledge_open_routes(self) -> None:
        acknowledge(
            self.api,
            "AwsSolutions-APIG4",
            "Players are anonymous by design (ruling 11): the first session message "
            "creates a player and returns a secret token; later connections present it in the "
            "session message, never in the URL. Every action checks the session.",
        )
