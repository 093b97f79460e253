"""Infrastructure: alarms and a dashboard — function errors and throttles, deadline machine
failures and time-outs, WebSocket integration/execution errors, and the Powertools metrics the
clock functions emit (``TimerLateMs``, ``OverdueDeadlines``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

PERIOD = Duration.minutes(5)

TABLE_OPERATIONS = (
    dynamodb.Operation.GET_ITEM,
    dynamodb.Operation.BATCH_GET_ITEM,
    dynamodb.Operation.PUT_ITEM,
    dynamodb.Operation.DELETE_ITEM,
    dynamodb.Operation.QUERY,
    dynamodb.Operation.TRANSACT_WRITE_ITEMS,
)
"""The operations ``DynamoStore`` issues."""


@dataclass(frozen=True)
class MonitoringProps:
    functions: Mapping[str, lambda_.IFunction]
    state_machine: sfn.IStateMachine
    api_id: str
    stage_name: str
    table: dynamodb.ITable
    metrics_namespace: str
    service_name: str
    alarm_topic_arn: str | None = None
    """Where alarms notify (an existing SNS topic); none: alarms only show in the console."""


class Monitoring(Construct):
    """Attributes: ``alarms`` (every alarm), ``dashboard``."""

    def __init__(self, scope: Construct, construct_id: str, *, props: MonitoringProps) -> None:
        super().__init__(scope, construct_id)
        self._props = props
        self.alarms: list[cw.Alarm] = []
        self._build_function_alarms()
        self._build_state_machine_alarms()
        self._build_api_alarms()
        self._build_alarm_actions()
        self.dashboard = self._build_dashboard()

    def _alarm(self, construct_id: str, metric: cw.IMetric, description: str) -> None:
        self.alarms.append(
            cw.Alarm(
                self,
                construct_id,
                metric=metric,
                threshold=1,
                evaluation_periods=1,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
                alarm_description=description,
            )
        )

    def _api_metric(self, name: str, statistic: str = "Sum") -> cw.Metric:
        return cw.Metric(
            namespace="AWS/ApiGateway",
            metric_name=name,
            dimensions_map={"ApiId": self._props.api_id, "Stage": self._props.stage_name},
            statistic=statistic,
            period=PERIOD,
        )

    def _app_metric(self, name: str, statistic: str) -> cw.Metric:
        """A Powertools metric the functions emit (namespace and service from their env)."""
        return cw.Metric(
            namespace=self._props.metrics_namespace,
            metric_name=name,
            dimensions_map={"service": self._props.service_name},
            statistic=statistic,
            period=PERIOD,
        )

    def _build_function_alarms(self) -> None:
        for module, function in self._props.functions.items():
            name = module.capitalize()
            self._alarm(
                f"{name}Errors",
                function.metric_errors(period=PERIOD, statistic="Sum"),
                f"The {module} function raised (unhandled error or time-out)",
            )
            self._alarm(
                f"{name}Throttles",
                function.metric_throttles(period=PERIOD, statistic="Sum"),
                f"The {module} function was throttled (account concurrency exhausted?)",
            )

    def _build_state_machine_alarms(self) -> None:
        machine = self._props.state_machine
        self._alarm(
            "DeadlinesFailed",
            machine.metric_failed(period=PERIOD, statistic="Sum"),
            "A deadline execution failed after its retries; the watchdog will apply it late",
        )
        self._alarm(
            "DeadlinesTimedOut",
            machine.metric_timed_out(period=PERIOD, statistic="Sum"),
            "A deadline execution timed out; the watchdog will apply it late",
        )

    def _build_api_alarms(self) -> None:
        # WebSocket APIs have no 5XXError metric: a failed Lambda integration is an
        # IntegrationError, an API Gateway-side failure an ExecutionError.
        self._alarm(
            "ApiIntegrationErrors",
            self._api_metric("IntegrationError"),
            "A WebSocket route's Lambda integration failed (the client got an internal error)",
        )
        self._alarm(
            "ApiExecutionErrors",
            self._api_metric("ExecutionError"),
            "API Gateway failed to execute a WebSocket route",
        )

    def _build_alarm_actions(self) -> None:
        if not self._props.alarm_topic_arn:
            return
        topic = sns.Topic.from_topic_arn(self, "AlarmTopic", self._props.alarm_topic_arn)
        for alarm in self.alarms:
            alarm.add_alarm_action(cw_actions.SnsAction(topic))

    def _build_dashboard(self) -> cw.Dashboard:
        props = self._props
        functions = list(props.functions.values())
        dashboard = cw.Dashboard(self, "Dashboard", dashboard_name=Stack.of(self).stack_name)
        dashboard.add_widgets(
            cw.AlarmStatusWidget(title="Alarms", alarms=self.alarms, width=24, height=4)
        )
        dashboard.add_widgets(
            cw.GraphWidget(
                title="WebSocket: connects and messages",
                left=[self._api_metric("ConnectCount"), self._api_metric("MessageCount")],
            ),
            cw.GraphWidget(
                title="WebSocket: errors",
                left=[
                    self._api_metric("ClientError"),
                    self._api_metric("IntegrationError"),
                    self._api_metric("ExecutionError"),
                ],
            ),
            cw.GraphWidget(
                title="WebSocket: integration latency p95 (ms)",
                left=[self._api_metric("IntegrationLatency", "p95")],
            ),
        )
        dashboard.add_widgets(
            cw.GraphWidget(
                title="Functions: errors",
                left=[f.metric_errors(period=PERIOD, label=f.node.id) for f in functions],
            ),
            cw.GraphWidget(
                title="Functions: duration p95 (ms)",
                left=[
                    f.metric_duration(period=PERIOD, statistic="p95", label=f.node.id)
                    for f in functions
                ],
            ),
            cw.GraphWidget(
                title="Functions: throttles",
                left=[f.metric_throttles(period=PERIOD, label=f.node.id) for f in functions],
            ),
        )
        dashboard.add_widgets(
            cw.GraphWidget(
                title="Deadlines: executions",
                left=[
                    props.state_machine.metric_started(period=PERIOD),
                    props.state_machine.metric_succeeded(period=PERIOD),
                    props.state_machine.metric_failed(period=PERIOD),
                    props.state_machine.metric_timed_out(period=PERIOD),
                ],
            ),
            cw.GraphWidget(
                title="Deadlines: lateness p99 (ms) and watchdog catches",
                left=[self._app_metric("TimerLateMs", "p99")],
                right=[self._app_metric("OverdueDeadlines", "Sum")],
            ),
            cw.GraphWidget(
                title="DynamoDB: consumed capacity and throttles",
                left=[
                    props.table.metric_consumed_read_capacity_units(period=PERIOD),
                    props.table.metric_consumed_write_capacity_units(period=PERIOD),
                ],
                right=[
                    props.table.metric_throttled_requests_for_operations(
                        operations=list(TABLE_OPERATIONS), period=PERIOD
                    )
                ],
            ),
        )
        return dashboard
