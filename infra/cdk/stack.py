"""Infrastructure: the one stack of a stage (``dev``, ``prod``). It only composes the
constructs of ``infra.cdk.constructs`` and wires their outputs together; every resource is built
inside a construct."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aws_cdk import Annotations, CfnOutput, RemovalPolicy, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from functions.routes import MOCK_ROUTES, ROUTES, TIMERS
from functions.streams import STREAMS
from infra.cdk.constructs.deadline_clock import DeadlineClock
from infra.cdk.constructs.edge import EdgeGuard
from infra.cdk.constructs.functions import Functions, FunctionsProps
from infra.cdk.constructs.monitoring import Monitoring, MonitoringProps
from infra.cdk.constructs.nag import acknowledge
from infra.cdk.constructs.streams import StreamSources
from infra.cdk.constructs.table import GameTable
from infra.cdk.constructs.websocket import WebSocketApi
from infra.cdk.runtime_version import LAMBDA_PYTHON_VERSION
from infra.limits import STAGE_LIMITS, StageLimits
from shared.runtime.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[2]

METRICS_NAMESPACE = "WordleTournament"


@dataclass(frozen=True)
class StageConfig:
    """What differs between stages."""

    name: str
    retain_data: bool
    """prod: table deletion protection, and the table and logs kept when the stack is deleted
    (``retained_removal_policy``)."""
    log_retention: logs.RetentionDays
    rate_limit: float
    """The stage's default route throttle, steady messages per second (API Gateway applies it
    per route). Throttles and reservations come from ``infra.limits.STAGE_LIMITS``, which the
    local twin enforces too; sizing: ``infra/CAPACITY.md``."""
    burst_limit: int
    route_throttles: dict[str, tuple[float, int]]
    """Route key -> (steady messages per second, burst), tighter than the stage's: ``$connect``
    and ``session`` (each costs a table write and a new player or a resume snapshot) much tighter
    than ``guess`` (the game itself)."""
    reserved: dict[str, int]
    """Function module -> reserved concurrency: a guaranteed share for the clock function and
    the watchdog (a flood of messages cannot take it), a cap for every public route. Their sum
    must leave the account 100 unreserved (Lambda's minimum); the default account quota is
    1000, prod needs it raised (``infra.limits.account_quotas``;
    https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html)."""
    tracing: str
    """X-Ray policy: ``active`` (functions sampled by X-Ray's rules, machine traced) or ``off``
    (functions ``PassThrough``: traced only when a caller already sampled, and nothing upstream
    does; machine untraced). Overridden by the ``tracing`` context value."""
    alarm_thresholds: dict[str, float]
    """Alarm name -> threshold where a stage differs (``infra.cdk.constructs.monitoring``)."""
    log_level: str = "INFO"
    """Never DEBUG in a shared stage: ruling 6 keeps secrets out of INFO and above only."""


TRACING_POLICIES = ("active", "off")


def route_throttles(limits: StageLimits) -> dict[str, tuple[float, int]]:
    """``StageConfig.route_throttles`` from the shared limits (``infra.limits``)."""
    return {key: (t.rate, t.burst) for key, t in limits.routes.items()}


def retained_removal_policy(retain_data: bool) -> RemovalPolicy:
    """The table's and the log groups' removal policy: where a stage keeps its data,
    CloudFormation's ``RetainExceptOnCreate`` — kept when the stack is deleted or an update
    removes or replaces them, but deleted when the operation that created them rolls back, so a
    failed first create leaves no orphans to clean up before the retry (AWS, "DeletionPolicy
    attribute",
    https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-attribute-deletionpolicy.html);
    else deleted with the stack."""
    return RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE if retain_data else RemovalPolicy.DESTROY


STAGES: dict[str, StageConfig] = {
    "dev": StageConfig(
        "dev",
        retain_data=False,
        log_retention=logs.RetentionDays.ONE_WEEK,
        rate_limit=STAGE_LIMITS["dev"].stage.rate,
        burst_limit=STAGE_LIMITS["dev"].stage.burst,
        route_throttles=route_throttles(STAGE_LIMITS["dev"]),
        reserved=dict(STAGE_LIMITS["dev"].reserved),
        tracing="active",
        alarm_thresholds={"TryAgain": 10, "ApiClientErrors": 100, "AccountConcurrency": 100},
    ),
    "prod": StageConfig(
        "prod",
        retain_data=True,
        log_retention=logs.RetentionDays.THREE_MONTHS,
        rate_limit=STAGE_LIMITS["prod"].stage.rate,
        burst_limit=STAGE_LIMITS["prod"].stage.burst,
        route_throttles=route_throttles(STAGE_LIMITS["prod"]),
        reserved=dict(STAGE_LIMITS["prod"].reserved),
        tracing="off",
        alarm_thresholds={"TryAgain": 50, "ApiClientErrors": 1000, "AccountConcurrency": 800},
    ),
}


class WordleTournamentStack(Stack):
    """Table, functions, WebSocket API, deadline clock, the stream's event sources and
    monitoring of one stage.

    Args: config — the stage; layer_dir — the dependency layer's folder (``infra.cdk.layer``; tests
    pass a stub); code_root — the folder holding ``functions/``, ``shared/``, ``wordlists/``;
    page_topic_arn / ticket_topic_arn — existing SNS topics: the composite ``GameDegraded`` pages
    through the first, every other alarm files a ticket through the second
    (``infra.cdk.constructs.monitoring.PAGE``); a stage that keeps its data (prod) warns at synth
    without them; account_log_role — also set
    API Gateway's region-wide CloudWatch role (once per account and region; off by default, see
    ``infra/README.md``); tracing — ``active`` | ``off`` (default: the stage's policy);
    reserve_concurrency — apply the stage's reserved concurrency (off for an account whose
    concurrency quota is too small to reserve any); legacy_waiting_index — keep the waiting
    index from before ``gsi_lobbies`` (first deployment of an upgrade; ``infra/RUNBOOK.md``);
    board_index — create ``gsi_board`` (off only for the upgrade's second deployment);
    edge_guard — put CloudFront with an AWS WAF rate-based rule per source address in front of
    the API (``infra.cdk.constructs.edge``; us-east-1 only; output ``EdgeWebSocketUrl``).
    commit — the git commit synthesized, in every published version's description (rollback).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        layer_dir: Path,
        code_root: Path = REPO_ROOT,
        page_topic_arn: str | None = None,
        ticket_topic_arn: str | None = None,
        account_log_role: bool = False,
        tracing: str | None = None,
        reserve_concurrency: bool = True,
        legacy_waiting_index: bool = False,
        board_index: bool = True,
        edge_guard: bool = False,
        commit: str = "unknown",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        tracing = tracing or config.tracing
        if tracing not in TRACING_POLICIES:
            raise ValueError(f"tracing must be one of {TRACING_POLICIES}, got {tracing!r}")
        removal = retained_removal_policy(config.retain_data)
        service_name = f"wordle-tournament-{config.name}"

        data = GameTable(
            self,
            "Data",
            retain_data=config.retain_data,
            legacy_waiting_index=legacy_waiting_index,
            board_index=board_index,
        )
        websocket = WebSocketApi(
            self,
            "WebSocket",
            stage_name=config.name,
            rate_limit=config.rate_limit,
            burst_limit=config.burst_limit,
            log_retention=config.log_retention,
            removal_policy=removal,
            account_log_role=account_log_role,
            route_throttles=config.route_throttles,
        )
        functions = Functions(
            self,
            "Functions",
            props=FunctionsProps(
                code_root=code_root,
                layer_dir=layer_dir,
                table=data.table,
                settings=self._settings(data.table.table_name, websocket.callback_url),
                connections_arns=websocket.connections_arns,
                powertools={
                    "POWERTOOLS_SERVICE_NAME": service_name,
                    "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
                    "POWERTOOLS_LOG_LEVEL": config.log_level,
                },
                log_retention=config.log_retention,
                removal_policy=removal,
                tracing=(
                    lambda_.Tracing.ACTIVE if tracing == "active" else lambda_.Tracing.PASS_THROUGH
                ),
                reserved=dict(config.reserved) if reserve_concurrency else {},
                commit=commit,
            ),
        )
        websocket.add_routes(
            {key: functions.for_target(t) for key, t in ROUTES.items()}, MOCK_ROUTES
        )
        clock = DeadlineClock(
            self,
            "Clock",
            clock_function=functions.for_target(TIMERS["clock"]),
            watchdog_function=functions.for_target(TIMERS["watchdog"]),
            log_retention=config.log_retention,
            removal_policy=removal,
            tracing=tracing == "active",
            commit=commit,
        )
        # starts go through the machine's live alias (the definition rolls back with the
        # code); IAM authorises them on the machine's own ARN (AWS, "Authorization for
        # versions and aliases": https://docs.aws.amazon.com/step-functions/latest/dg/auth-version-alias.html)
        functions.attach_state_machine(clock.state_machine.state_machine_arn, clock.live_arn)
        streams = StreamSources(
            self,
            "Streams",
            table=data.table,
            aliases={module: functions.live[module] for module in STREAMS},
            streams=STREAMS,
        )
        for module, queue in streams.failure_queues.items():
            name = "".join(part.capitalize() for part in module.split("_"))
            CfnOutput(
                self,
                f"{name}FailureQueueUrl",
                value=queue.queue_url,
                description=f"Failed {module} stream batches (infra/RUNBOOK.md, redrive)",
            )
        monitoring = Monitoring(
            self,
            "Monitoring",
            props=MonitoringProps(
                functions=functions.by_module,
                log_groups=functions.log_groups,
                reserved=dict(config.reserved) if reserve_concurrency else {},
                state_machine=clock.state_machine,
                api_id=websocket.api.api_id,
                stage_name=config.name,
                access_logs=websocket.access_logs,
                table=data.table,
                stream_functions=tuple(STREAMS),
                failure_queues=streams.failure_queues,
                metrics_namespace=METRICS_NAMESPACE,
                service_name=service_name,
                thresholds=config.alarm_thresholds,
                page_topic_arn=page_topic_arn,
                ticket_topic_arn=ticket_topic_arn,
            ),
        )
        if config.retain_data and not (page_topic_arn and ticket_topic_arn):
            Annotations.of(self).add_warning_v2(
                "wordle:alarm-topics",
                "No pageTopicArn and ticketTopicArn: this stage's alarms notify nobody "
                "(infra/RUNBOOK.md, Deploy).",
            )
        self._build_outputs(websocket, data, clock, functions)
        if edge_guard:
            edge = EdgeGuard(
                self,
                "Edge",
                api_domain=f"{websocket.api.api_id}.execute-api.{self.region}.{self.url_suffix}",
                stage=config.name,
            )
            CfnOutput(
                self,
                "EdgeWebSocketUrl",
                value=edge.url,
                description="Clients connect here when the edge guard is on (WAF per source)",
            )
        CfnOutput(
            self,
            "DashboardName",
            value=monitoring.dashboard.dashboard_name,
            description="The CloudWatch dashboard (golden signals)",
        )
        self._acknowledge_stack_findings()

    @staticmethod
    def _settings(table_name: str, callback_url: str) -> dict[str, str]:
        """Values for the ``Settings`` fields the functions read; clock durations are the rules
        page's (the ``Settings`` defaults)."""
        defaults = Settings()
        return {
            "table_name": table_name,
            "callback_url": callback_url,
            "turn_seconds": str(defaults.turn_seconds),
            "intro_seconds": str(defaults.intro_seconds),
            "reconnect_seconds": str(defaults.reconnect_seconds),
            "skip_grace_seconds": str(defaults.skip_grace_seconds),
            "heartbeat_timeout_seconds": str(defaults.heartbeat_timeout_seconds),
            "watchdog_grace_seconds": str(defaults.watchdog_grace_seconds),
            "max_message_bytes": str(defaults.max_message_bytes),
            "new_players_per_source": str(defaults.new_players_per_source),
            "new_players_window_seconds": str(defaults.new_players_window_seconds),
            "token_grace_seconds": str(defaults.token_grace_seconds),
        }

    def _build_outputs(
        self,
        websocket: WebSocketApi,
        data: GameTable,
        clock: DeadlineClock,
        functions: Functions,
    ) -> None:
        CfnOutput(self, "WebSocketUrl", value=websocket.url, description="Clients connect here")
        CfnOutput(
            self,
            "CallbackUrl",
            value=websocket.callback_url,
            description="API Gateway Management API endpoint the functions push through",
        )
        CfnOutput(self, "TableName", value=data.table.table_name)
        CfnOutput(self, "StateMachineArn", value=clock.state_machine.state_machine_arn)
        CfnOutput(
            self,
            "StateMachineAliasArn",
            value=clock.live_arn,
            description="the machine's live alias: what the functions start (rollback moves it)",
        )
        CfnOutput(
            self,
            "FunctionNames",
            value=" ".join(
                f"{module}={function.function_name}"
                for module, function in sorted(functions.by_module.items())
            ),
            description="module=function name, for rollback (aws lambda update-alias ... live)",
        )

    def _acknowledge_stack_findings(self) -> None:
        acknowledge(
            self,
            "AwsSolutions-L1",
            f"Functions run Python {LAMBDA_PYTHON_VERSION} (cdk.json), which the layer and CI "
            "are tested on; a newer one is adopted deliberately, not by a synth default.",
        )
