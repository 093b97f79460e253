"""Infrastructure: the one stack of a stage (``dev``, ``prod``). It only composes the
constructs of ``infra.constructs`` and wires their outputs together; every resource is built
inside a construct."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aws_cdk import CfnOutput, RemovalPolicy, Stack
from aws_cdk import aws_logs as logs
from constructs import Construct

from functions.routes import ROUTES, TIMERS
from infra.constructs.deadline_clock import DeadlineClock, state_machine_arn
from infra.constructs.functions import Functions, FunctionsProps
from infra.constructs.monitoring import Monitoring, MonitoringProps
from infra.constructs.nag import acknowledge
from infra.constructs.table import GameTable
from infra.constructs.websocket import WebSocketApi
from infra.runtime_version import LAMBDA_PYTHON_VERSION
from shared.runtime.settings import Settings

REPO_ROOT = Path(__file__).resolve().parent.parent

METRICS_NAMESPACE = "WordleTournament"


@dataclass(frozen=True)
class StageConfig:
    """What differs between stages."""

    name: str
    retain_data: bool
    """prod: table deletion protection, and tables and logs kept when the stack is deleted."""
    log_retention: logs.RetentionDays
    rate_limit: float
    """Stage-wide steady WebSocket messages per second (API Gateway throttling)."""
    burst_limit: int
    log_level: str = "INFO"
    """Never DEBUG in a shared stage: ruling 6 keeps secrets out of INFO and above only."""


STAGES: dict[str, StageConfig] = {
    "dev": StageConfig(
        "dev",
        retain_data=False,
        log_retention=logs.RetentionDays.ONE_WEEK,
        rate_limit=50,
        burst_limit=100,
    ),
    "prod": StageConfig(
        "prod",
        retain_data=True,
        log_retention=logs.RetentionDays.THREE_MONTHS,
        rate_limit=1000,
        burst_limit=2000,
    ),
}


class WordleTournamentStack(Stack):
    """Table, functions, WebSocket API, deadline clock and monitoring of one stage.

    Args: config — the stage; layer_dir — the dependency layer's folder (``infra.layer``; tests
    pass a stub); code_root — the folder holding ``functions/``, ``shared/``, ``wordlists/``;
    alarm_topic_arn — an existing SNS topic for alarms (optional); account_log_role — also set
    API Gateway's region-wide CloudWatch role (needed once per account and region).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        layer_dir: Path,
        code_root: Path = REPO_ROOT,
        alarm_topic_arn: str | None = None,
        account_log_role: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        removal = RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY
        service_name = f"wordle-tournament-{config.name}"
        machine_name = f"{construct_id}-deadlines"

        data = GameTable(self, "Data", retain_data=config.retain_data)
        websocket = WebSocketApi(
            self,
            "WebSocket",
            stage_name=config.name,
            rate_limit=config.rate_limit,
            burst_limit=config.burst_limit,
            log_retention=config.log_retention,
            removal_policy=removal,
            account_log_role=account_log_role,
        )
        functions = Functions(
            self,
            "Functions",
            props=FunctionsProps(
                code_root=code_root,
                layer_dir=layer_dir,
                table=data.table,
                settings=self._settings(
                    data.table.table_name,
                    websocket.callback_url,
                    state_machine_arn(self, machine_name),
                ),
                connections_arns=websocket.connections_arns,
                state_machine_arn=state_machine_arn(self, machine_name),
                powertools={
                    "POWERTOOLS_SERVICE_NAME": service_name,
                    "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
                    "POWERTOOLS_LOG_LEVEL": config.log_level,
                },
                log_retention=config.log_retention,
                removal_policy=removal,
            ),
        )
        websocket.add_routes({key: functions.for_target(t) for key, t in ROUTES.items()})
        clock = DeadlineClock(
            self,
            "Clock",
            state_machine_name=machine_name,
            clock_function=functions.for_target(TIMERS["clock"]),
            watchdog_function=functions.for_target(TIMERS["watchdog"]),
            log_retention=config.log_retention,
            removal_policy=removal,
        )
        Monitoring(
            self,
            "Monitoring",
            props=MonitoringProps(
                functions=functions.by_module,
                state_machine=clock.state_machine,
                api_id=websocket.api.api_id,
                stage_name=config.name,
                table=data.table,
                metrics_namespace=METRICS_NAMESPACE,
                service_name=service_name,
                alarm_topic_arn=alarm_topic_arn,
            ),
        )
        self._build_outputs(websocket, data, clock)
        self._acknowledge_stack_findings()

    @staticmethod
    def _settings(table_name: str, callback_url: str, machine_arn: str) -> dict[str, str]:
        """Values for the ``Settings`` fields the functions read; clock durations are the rules
        page's (the ``Settings`` defaults)."""
        defaults = Settings.model_validate({})
        return {
            "table_name": table_name,
            "callback_url": callback_url,
            "state_machine_arn": machine_arn,
            "turn_seconds": str(defaults.turn_seconds),
            "intro_seconds": str(defaults.intro_seconds),
            "reconnect_seconds": str(defaults.reconnect_seconds),
            "skip_grace_seconds": str(defaults.skip_grace_seconds),
            "heartbeat_timeout_seconds": str(defaults.heartbeat_timeout_seconds),
            "watchdog_grace_seconds": str(defaults.watchdog_grace_seconds),
            "max_message_bytes": str(defaults.max_message_bytes),
        }

    def _build_outputs(
        self, websocket: WebSocketApi, data: GameTable, clock: DeadlineClock
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

    def _acknowledge_stack_findings(self) -> None:
        acknowledge(
            self,
            "AwsSolutions-L1",
            f"Functions run Python {LAMBDA_PYTHON_VERSION} (cdk.json), which the layer and CI "
            "are tested on; a newer one is adopted deliberately, not by a synth default.",
        )
