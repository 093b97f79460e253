"""Infrastructure: alarms an on-call person can act on, and one dashboard laid out by the golden
signals (traffic, errors, latency, saturation) per route function and for the clock.

What the alarms see (each is explained, with what to check and what to do, in
``infra/RUNBOOK.md`` under its construct id):

- the application's own counts (Powertools Metrics, namespace ``WordleTournament``, dimension
  ``service``): a message route answers every failure itself and returns 200, so Lambda's
  ``Errors`` never sees a bug in a route — ``InternalError`` does (``functions.messages``);
  ``TryAgain``, ``OverdueDeadlines`` and ``TimerLateMs`` (the clock), ``ClockStartFailed`` (a
  deadline execution the functions failed to start), ``WatchdogHeartbeat`` (one per completed
  watchdog run: missing data is breaching), ``PostFailed`` (the notifier);
- Lambda: each function's errors, throttles and (where its reservation is large enough for a
  warning to come before a throttle, ``saturation_threshold``) how much of its reservation it
  uses for 15 minutes; the account's concurrent executions;
- DynamoDB: throttled requests and system errors over every operation the store issues;
- Step Functions: failed and timed-out deadline executions, throttled state transitions
  (``ExecutionThrottled``) and throttled ``StartExecution`` calls (``ThrottledEvents``,
  dimension ``APIName``: an API metric of the account, not of one machine);
- the table's stream (``functions.streams.STREAMS``): each reading function's ``IteratorAge``
  (how old the last record it read was: it falls behind) and its on-failure queue's visible
  messages (a batch given up after its retries: history lost until redriven) — AWS, "Working
  with Lambda function metrics", event source mapping metrics, and "Available CloudWatch
  metrics for Amazon SQS",
  https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html;
- API Gateway: client errors (4xx), integration and execution errors, and 5xx answers counted
  from the access log by a metric filter (a WebSocket API publishes no 5XX metric: AWS,
  "Monitor WebSocket API execution with CloudWatch metrics",
  https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-websocket-api-logging.html).

Who hears of an alarm (``PAGE``): two SNS topics, given as context (``pageTopicArn``,
``ticketTopicArn``). Page-worthy alarms are the members of one composite alarm, ``GameDegraded``
("the game is degraded for players"), which alone notifies the page topic: one page per
incident, however many members fire (AWS, "Create a composite alarm",
https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Create_Composite_Alarm.html).
Every other alarm notifies the ticket topic. Each alarm reaches exactly one topic.

Metric sources: AWS/Lambda (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html),
AWS/DynamoDB (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/metrics-dimensions.html),
AWS/States (https://docs.aws.amazon.com/step-functions/latest/dg/procedure-cw-metrics.html).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from shared.adapters.step_functions import START_FAILED_METRIC

PERIOD = Duration.minutes(5)

TABLE_OPERATIONS = (
    dynamodb.Operation.GET_ITEM,
    dynamodb.Operation.BATCH_GET_ITEM,
    dynamodb.Operation.PUT_ITEM,
    dynamodb.Operation.UPDATE_ITEM,
    dynamodb.Operation.DELETE_ITEM,
    dynamodb.Operation.QUERY,
    dynamodb.Operation.TRANSACT_WRITE_ITEMS,
)
"""The operations ``DynamoStore`` issues."""

APP_COUNTS = (
    "InternalError",
    "TryAgain",
    "BadInput",
    "RateLimited",
    "FloodStrikes",
    "AbusiveConnectionsClosed",
    "PostGone",
    "PostFailed",
    START_FAILED_METRIC,
)
"""The application's per-message counts (dashboard: errors row)."""

SATURATION_SHARE = 0.8
"""A function's saturation alarm fires when its peak concurrency reaches this share of its
reservation for ``SATURATION_PERIODS`` periods in a row: a warning before throttles, for load
that lasts (a burst of a few seconds fills a small reservation in healthy operation)."""
SATURATION_PERIODS = 3
"""Periods in a row (15 minutes) a function's peak concurrency must stay at its share."""


def saturation_threshold(reserved: int) -> int | None:
    """The peak concurrency at which a function with ``reserved`` concurrency warns, or None
    where no warning can come before a throttle: when the share rounds up to the whole
    reservation (``reserved`` <= 4; the watchdog's 1 is every run of its every-minute schedule).
    Those functions are watched by their ``Throttles`` alarm alone."""
    threshold = math.ceil(reserved * SATURATION_SHARE)
    return threshold if threshold < reserved else None


DEFAULT_THRESHOLDS: dict[str, float] = {
    "TryAgain": 10,
    "ApiClientErrors": 100,
    "AccountConcurrency": 800,
    "PostFailed": 10,
    "DeadlineLatenessP99Ms": 3000,
    "FunctionThrottles": 5,
    "TableThrottles": 10,
    "StartExecutionThrottles": 5,
    "StreamIteratorAgeMs": 600_000,
}
"""Thresholds a stage may override (``MonitoringProps.thresholds``). Throttles are counted per
attempt, a retried one too (botocore retries DynamoDB and StartExecution throttles; a Task
retries its throttled Lambda invocation): the throttle alarms fire on more than the few a
retry absorbs (``infra/benchmarks/RESULTS.md``, "Alarms against the twin")."""

PAGE = frozenset(
    {
        "InternalErrors",
        "TryAgainRate",
        "DeadlineLateness",
        "WatchdogHeartbeat",
        "ApiIntegrationErrors",
        "ApiExecutionErrors",
        "Api5xx",
    }
)
"""The page-worthy alarms (members of ``GameDegraded``), by one rule: an alarm pages when its
metric counts players' messages failing now (an error answer, no answer: ``InternalErrors``,
``TryAgainRate``, the API's integration, execution and 5xx errors) or the game's clock failing
with nothing left to repair it (wakes late for 15 minutes: ``DeadlineLateness``; no watchdog:
``WatchdogHeartbeat``). Every other alarm is a ticket — a retry, the watchdog or a guard
coped (function errors and throttles, table throttles and system errors, failed, timed-out,
throttled or unstarted deadline executions, overdue deadlines, failed pushes, many 4xx), or a
capacity warning (saturation, account concurrency): if what it counts grows until players feel
it, a page-worthy alarm fires too."""

COMPOSITE = "GameDegraded"
"""The composite alarm over ``PAGE``: the one that pages."""

STATUS_FILTERS = {"ApiStatus4xx": '"4*"', "ApiStatus5xx": '"5*"'}
"""Metric name -> the access log ``status`` pattern it counts (a metric filter each)."""


@dataclass(frozen=True)
class MonitoringProps:
    functions: Mapping[str, lambda_.IFunction]
    state_machine: sfn.IStateMachine
    api_id: str
    stage_name: str
    table: dynamodb.ITable
    metrics_namespace: str
    service_name: str
    access_logs: logs.ILogGroup | None = None
    """The stage's JSON access logs (``status`` and ``stage`` fields): the 4xx/5xx filters."""
    log_groups: Mapping[str, logs.ILogGroup] = field(default_factory=dict)
    reserved: Mapping[str, int] = field(default_factory=dict)
    """Module -> reserved concurrency (a saturation alarm each where one can warn before a
    throttle: ``saturation_threshold``)."""
    thresholds: Mapping[str, float] = field(default_factory=dict)
    """Overrides of ``DEFAULT_THRESHOLDS``."""
    stream_functions: tuple[str, ...] = ()
    """Modules of ``functions`` that read the table's stream (an ``IteratorAge`` alarm each)."""
    failure_queues: Mapping[str, sqs.IQueue] = field(default_factory=dict)
    """Module -> its stream mapping's on-failure queue (a visible-messages alarm each)."""
    page_topic_arn: str | None = None
    """Where ``GameDegraded`` notifies (an existing SNS topic that pages on-call); none: nobody
    is paged."""
    ticket_topic_arn: str | None = None
    """Where every alarm not in ``PAGE`` notifies (an existing SNS topic that files a ticket
    for working hours); none: those alarms only show in the console and on the dashboard."""


class Monitoring(Construct):
    """Attributes: ``alarms`` (construct id -> alarm), ``game_degraded`` (the composite over
    ``PAGE``), ``topics`` (``page`` / ``ticket`` -> construct id -> the topic it notifies, where
    that topic is given), ``metric_filters``, ``dashboard``."""

    def __init__(self, scope: Construct, construct_id: str, *, props: MonitoringProps) -> None:
        super().__init__(scope, construct_id)
        self._props = props
        self._thresholds = {**DEFAULT_THRESHOLDS, **props.thresholds}
        self.alarms: dict[str, cw.Alarm] = {}
        self.metric_filters: dict[str, logs.MetricFilter] = {}
        self._build_metric_filters()
        self._build_application_alarms()
        self._build_function_alarms()
        self._build_table_alarms()
        self._build_state_machine_alarms()
        self._build_api_alarms()
        self._build_stream_alarms()
        self.game_degraded = self._build_game_degraded()
        self.topics: dict[str, dict[str, str]] = {"page": {}, "ticket": {}}
        self._build_alarm_actions()
        self.dashboard = self._build_dashboard()

    # -- metrics -----------------------------------------------------------------------------

    def _api_metric(self, name: str, statistic: str = "Sum") -> cw.Metric:
        return cw.Metric(
            namespace="AWS/ApiGateway",
            metric_name=name,
            dimensions_map={"ApiId": self._props.api_id, "Stage": self._props.stage_name},
            statistic=statistic,
            period=PERIOD,
        )

    def _app_metric(self, name: str, statistic: str = "Sum") -> cw.Metric:
        """A Powertools metric the functions emit (namespace and service from their env)."""
        return cw.Metric(
            namespace=self._props.metrics_namespace,
            metric_name=name,
            dimensions_map={"service": self._props.service_name},
            statistic=statistic,
            period=PERIOD,
        )

    def _status_metric(self, name: str) -> cw.Metric:
        """A count from the access-log metric filters (dimension ``stage``)."""
        return cw.Metric(
            namespace=self._props.metrics_namespace,
            metric_name=name,
            dimensions_map={"stage": self._props.stage_name},
            statistic="Sum",
            period=PERIOD,
        )

    def _start_execution_throttles(self) -> cw.Metric:
        """StartExecution calls Step Functions throttled: ``ThrottledEvents`` with dimension
        ``APIName`` (AWS, "Step Functions metrics", API metrics:
        https://docs.aws.amazon.com/step-functions/latest/dg/procedure-cw-metrics.html). The
        account's, over every machine in the region: the quota is the account's too."""
        return cw.Metric(
            namespace="AWS/States",
            metric_name="ThrottledEvents",
            dimensions_map={"APIName": "StartExecution"},
            statistic="Sum",
            period=PERIOD,
        )

    def _account_concurrency(self) -> cw.Metric:
        return cw.Metric(
            namespace="AWS/Lambda",
            metric_name="ConcurrentExecutions",
            statistic="Maximum",
            period=PERIOD,
        )

    # -- alarms ------------------------------------------------------------------------------

    def _alarm(
        self,
        construct_id: str,
        metric: cw.IMetric,
        description: str,
        *,
        threshold: float = 1,
        evaluation_periods: int = 1,
        comparison: cw.ComparisonOperator = (
            cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
        ),
        missing: cw.TreatMissingData = cw.TreatMissingData.NOT_BREACHING,
        runbook: str | None = None,
    ) -> None:
        """``runbook``: the alarm's section in ``infra/RUNBOOK.md`` (default: its id)."""
        anchor = (runbook or construct_id).lower()
        self.alarms[construct_id] = cw.Alarm(
            self,
            construct_id,
            metric=metric,
            threshold=threshold,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=evaluation_periods,
            comparison_operator=comparison,
            treat_missing_data=missing,
            alarm_description=f"{description} Runbook: infra/RUNBOOK.md#{anchor}",
        )

    def _build_metric_filters(self) -> None:
        if self._props.access_logs is None:
            return
        for name, status in STATUS_FILTERS.items():
            self.metric_filters[name] = logs.MetricFilter(
                self,
                f"{name}Filter",
                log_group=self._props.access_logs,
                metric_namespace=self._props.metrics_namespace,
                metric_name=name,
                filter_pattern=logs.FilterPattern.literal(f"{{ $.status = {status} }}"),
                metric_value="1",
                dimensions={"stage": "$.stage"},
            )

    def _build_application_alarms(self) -> None:
        t = self._thresholds
        self._alarm(
            "InternalErrors",
            self._app_metric("InternalError"),
            "A message route hit an unexpected exception and answered internal_error.",
        )
        self._alarm(
            "TryAgainRate",
            self._app_metric("TryAgain"),
            "Players are being told try_again: the table stays busy or contended.",
            threshold=t["TryAgain"],
        )
        self._alarm(
            "OverdueDeadlines",
            self._app_metric("OverdueDeadlines"),
            "The watchdog had to apply deadlines whose clock loop never fired.",
        )
        self._alarm(
            "DeadlineLateness",
            self._app_metric("TimerLateMs", "p99"),
            "Clock wakes run late (p99 over the threshold, 3 periods in a row).",
            threshold=t["DeadlineLatenessP99Ms"],
            evaluation_periods=3,
        )
        self._alarm(
            "WatchdogHeartbeat",
            self._app_metric("WatchdogHeartbeat"),
            "The watchdog has not completed a run for 10 minutes (no data counts as missing).",
            evaluation_periods=2,
            comparison=cw.ComparisonOperator.LESS_THAN_THRESHOLD,
            missing=cw.TreatMissingData.BREACHING,
        )
        self._alarm(
            "PostFailures",
            self._app_metric("PostFailed"),
            "Pushes to live connections fail (other than gone): throttled or forbidden.",
            threshold=t["PostFailed"],
        )

    def _build_function_alarms(self) -> None:
        props = self._props
        for module, function in props.functions.items():
            name = "".join(part.capitalize() for part in module.split("_"))
            self._alarm(
                f"{name}Errors",
                function.metric_errors(period=PERIOD, statistic="Sum"),
                f"The {module} function raised (unhandled error or time-out).",
                runbook="FunctionErrors",
            )
            self._alarm(
                f"{name}Throttles",
                function.metric_throttles(period=PERIOD, statistic="Sum"),
                f"The {module} function was throttled (its reservation or the account's "
                "concurrency is exhausted).",
                threshold=self._thresholds["FunctionThrottles"],
                runbook="FunctionThrottles",
            )
            reserved = props.reserved.get(module)
            threshold = saturation_threshold(reserved) if reserved else None
            if reserved and threshold is not None:
                self._alarm(
                    f"{name}Saturation",
                    function.metric("ConcurrentExecutions", period=PERIOD, statistic="Maximum"),
                    f"The {module} function used {threshold} of its {reserved} reserved "
                    f"concurrent executions for {SATURATION_PERIODS} periods in a row.",
                    threshold=threshold,
                    evaluation_periods=SATURATION_PERIODS,
                    runbook="FunctionSaturation",
                )
        self._alarm(
            "AccountConcurrency",
            self._account_concurrency(),
            "The account's concurrent Lambda executions are near its quota.",
            threshold=self._thresholds["AccountConcurrency"],
        )

    def _build_table_alarms(self) -> None:
        operations = list(TABLE_OPERATIONS)
        self._alarm(
            "TableThrottles",
            self._table_sum("ThrottledRequests", operations),
            "DynamoDB throttled requests to the table.",
            threshold=self._thresholds["TableThrottles"],
        )
        self._alarm(
            "TableSystemErrors",
            self._table_sum("SystemErrors", operations),
            "DynamoDB answered requests to the table with a 500 (system error).",
        )

    def _table_sum(self, metric: str, operations: list[dynamodb.Operation]) -> cw.MathExpression:
        """``metric`` summed over ``operations``, each FILLed with 0: DynamoDB publishes a
        per-operation count only for operations that had one, and metric math has no value
        where a series it adds has none (CDK's ``metric_*_for_operations`` add them unfilled:
        the sum exists only when every operation throttled). AWS, "Using metric math", FILL:
        https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html"""
        table = self._props.table
        # the enum's value is GET_ITEM; DynamoDB's dimension value is GetItem
        names = {op: "".join(w.capitalize() for w in op.value.split("_")) for op in operations}
        using = {
            op.value.lower(): cw.Metric(
                namespace="AWS/DynamoDB",
                metric_name=metric,
                dimensions_map={"TableName": table.table_name, "Operation": names[op]},
                statistic="Sum",
                period=PERIOD,
            )
            for op in operations
        }
        return cw.MathExpression(
            expression=" + ".join(f"FILL({key}, 0)" for key in using),
            using_metrics=using,
            label=f"{metric}, every operation",
            period=PERIOD,
        )

    def _build_state_machine_alarms(self) -> None:
        machine = self._props.state_machine
        self._alarm(
            "DeadlinesFailed",
            machine.metric_failed(period=PERIOD, statistic="Sum"),
            "A deadline execution failed after its retries; the watchdog will apply it late.",
        )
        self._alarm(
            "DeadlinesTimedOut",
            machine.metric_timed_out(period=PERIOD, statistic="Sum"),
            "A deadline execution timed out; the watchdog will apply it late.",
        )
        self._alarm(
            "DeadlinesThrottled",
            machine.metric_throttled(period=PERIOD, statistic="Sum"),
            "Step Functions throttled state transitions of deadline executions (they wait and "
            "retry: wakes run late).",
        )
        self._alarm(
            "DeadlineStartsThrottled",
            self._start_execution_throttles(),
            "Step Functions throttled StartExecution calls (the account's): round loops and "
            "handovers that did not start fall to the watchdog.",
            threshold=self._thresholds["StartExecutionThrottles"],
        )
        self._alarm(
            "ClockStartFailures",
            self._app_metric(START_FAILED_METRIC),
            "A function failed to start a deadline execution (throttled, refused, transport): "
            "that round's deadlines wait for the once-a-minute watchdog.",
        )

    def _build_api_alarms(self) -> None:
        # WebSocket APIs have no 4XX/5XXError metric: ClientError counts 4xx (throttled
        # messages included), IntegrationError a failed Lambda integration, ExecutionError an
        # API Gateway-side failure; 5xx answers come from the access log's metric filter.
        self._alarm(
            "ApiIntegrationErrors",
            self._api_metric("IntegrationError"),
            "A WebSocket route's Lambda integration failed (the client got an internal error).",
        )
        self._alarm(
            "ApiExecutionErrors",
            self._api_metric("ExecutionError"),
            "API Gateway failed to execute a WebSocket route.",
        )
        self._alarm(
            "ApiClientErrors",
            self._api_metric("ClientError"),
            "Many 4xx answers: throttled messages (429), refused connects, bad frames.",
            threshold=self._thresholds["ApiClientErrors"],
        )
        if "ApiStatus5xx" in self.metric_filters:
            self._alarm(
                "Api5xx",
                self._status_metric("ApiStatus5xx"),
                "API Gateway answered 5xx (counted from the access log).",
            )

    def _build_stream_alarms(self) -> None:
        """Per stream-reading function: ``<Name>IteratorAge`` (Maximum over
        ``StreamIteratorAgeMs`` for 3 periods: it falls behind the table's writes, history
        and boards lag) and ``<Name>FailureQueue`` (a failed batch waits for a redrive)."""
        props = self._props
        for module in props.stream_functions:
            name = "".join(part.capitalize() for part in module.split("_"))
            function = props.functions[module]
            self._alarm(
                f"{name}IteratorAge",
                function.metric("IteratorAge", period=PERIOD, statistic="Maximum"),
                f"The {module} function reads the table's stream late (iterator age over "
                f"{self._thresholds['StreamIteratorAgeMs'] / 60_000:g} min, 3 periods in a row).",
                threshold=self._thresholds["StreamIteratorAgeMs"],
                evaluation_periods=3,
                runbook="StreamIteratorAge",
            )
            queue = props.failure_queues.get(module)
            if queue is not None:
                self._alarm(
                    f"{name}FailureQueue",
                    queue.metric_approximate_number_of_messages_visible(
                        period=PERIOD, statistic="Maximum"
                    ),
                    f"A batch of stream records for the {module} function failed past its "
                    "retries: its metadata waits in the failure queue for a redrive.",
                    runbook="StreamFailureQueue",
                )

    def _build_game_degraded(self) -> cw.CompositeAlarm:
        members = [self.alarms[name] for name in sorted(PAGE) if name in self.alarms]
        return cw.CompositeAlarm(
            self,
            COMPOSITE,
            alarm_rule=cw.AlarmRule.any_of(
                *(cw.AlarmRule.from_alarm(a, cw.AlarmState.ALARM) for a in members)
            ),
            alarm_description=(
                "The game is degraded for players: a page-worthy alarm fired (players' "
                "messages fail, or the clock runs late with nothing to repair it). "
                f"Runbook: infra/RUNBOOK.md#{COMPOSITE.lower()}"
            ),
        )

    def _build_alarm_actions(self) -> None:
        """The composite notifies the page topic; every alarm not in ``PAGE`` the ticket topic
        (on ALARM and on OK). The page-worthy alarms have no action of their own: they page
        through the composite, once."""
        props = self._props
        if props.page_topic_arn:
            page = cw_actions.SnsAction(
                sns.Topic.from_topic_arn(self, "PageTopic", props.page_topic_arn)
            )
            self.game_degraded.add_alarm_action(page)
            self.game_degraded.add_ok_action(page)
            self.topics["page"][COMPOSITE] = props.page_topic_arn
        if props.ticket_topic_arn:
            ticket = cw_actions.SnsAction(
                sns.Topic.from_topic_arn(self, "TicketTopic", props.ticket_topic_arn)
            )
            for name, alarm in self.alarms.items():
                if name in PAGE:
                    continue
                alarm.add_alarm_action(ticket)
                alarm.add_ok_action(ticket)
                self.topics["ticket"][name] = props.ticket_topic_arn

    # -- dashboard ---------------------------------------------------------------------------

    def _per_function(self, metric: str, statistic: str) -> list[cw.IMetric]:
        return [
            f.metric(metric, period=PERIOD, statistic=statistic, label=module)
            for module, f in self._props.functions.items()
        ]

    def _build_dashboard(self) -> cw.Dashboard:
        props = self._props
        machine = props.state_machine
        table = props.table
        # No dashboard_name: a fixed physical name blocks a replacement; the name is an output.
        dashboard = cw.Dashboard(self, "Dashboard")
        dashboard.add_widgets(
            cw.AlarmStatusWidget(
                title="Alarms (GameDegraded first: it pages)",
                alarms=[self.game_degraded, *self.alarms.values()],
                width=24,
                height=6,
            )
        )

        def row(title: str, *widgets: cw.IWidget) -> None:
            dashboard.add_widgets(cw.TextWidget(markdown=f"## {title}", width=24, height=1))
            dashboard.add_widgets(*widgets)

        row(
            "Traffic",
            cw.GraphWidget(
                title="WebSocket: connects and messages",
                left=[self._api_metric("ConnectCount"), self._api_metric("MessageCount")],
            ),
            cw.GraphWidget(
                title="Invocations per route function and timer",
                left=self._per_function("Invocations", "Sum"),
            ),
            cw.GraphWidget(
                title="Clock: deadline executions started",
                left=[machine.metric_started(period=PERIOD)],
                right=[self._app_metric("WatchdogHeartbeat")],
            ),
        )
        row(
            "Errors",
            cw.GraphWidget(
                title="Application counts",
                left=[self._app_metric(name) for name in APP_COUNTS],
            ),
            cw.GraphWidget(
                title="Lambda errors per function",
                left=self._per_function("Errors", "Sum"),
            ),
            cw.GraphWidget(
                title="WebSocket errors",
                left=[
                    self._api_metric("ClientError"),
                    self._api_metric("IntegrationError"),
                    self._api_metric("ExecutionError"),
                    *(self._status_metric(name) for name in self.metric_filters),
                ],
            ),
            cw.GraphWidget(
                title="Clock: failed, timed out, throttled, starts failed",
                left=[
                    machine.metric_failed(period=PERIOD),
                    machine.metric_timed_out(period=PERIOD),
                    machine.metric_throttled(period=PERIOD),
                    self._start_execution_throttles(),
                ],
                right=[
                    self._app_metric("OverdueDeadlines"),
                    self._app_metric(START_FAILED_METRIC),
                ],
            ),
        )
        row(
            "Latency",
            cw.GraphWidget(
                title="WebSocket integration latency p95 (ms)",
                left=[self._api_metric("IntegrationLatency", "p95")],
            ),
            cw.GraphWidget(
                title="Duration p95 per function (ms)",
                left=self._per_function("Duration", "p95"),
            ),
            cw.GraphWidget(
                title="Clock: wake lateness p50 / p99 / max (ms)",
                left=[
                    self._app_metric("TimerLateMs", "p50"),
                    self._app_metric("TimerLateMs", "p99"),
                    self._app_metric("TimerLateMs", "Maximum"),
                ],
            ),
            cw.GraphWidget(
                title="Stream: iterator age max (ms) and failed batches",
                left=[
                    props.functions[m].metric(
                        "IteratorAge", period=PERIOD, statistic="Maximum", label=m
                    )
                    for m in props.stream_functions
                ],
                right=[
                    q.metric_approximate_number_of_messages_visible(
                        period=PERIOD, statistic="Maximum", label=f"{m} failure queue"
                    )
                    for m, q in props.failure_queues.items()
                ],
            ),
        )
        row(
            "Saturation",
            cw.GraphWidget(
                title="Concurrent executions per function (max) and the account's",
                left=self._per_function("ConcurrentExecutions", "Maximum"),
                right=[self._account_concurrency()],
            ),
            cw.GraphWidget(
                title="Throttles per function",
                left=self._per_function("Throttles", "Sum"),
            ),
            cw.GraphWidget(
                title="DynamoDB: consumed capacity and throttles",
                left=[
                    table.metric_consumed_read_capacity_units(period=PERIOD),
                    table.metric_consumed_write_capacity_units(period=PERIOD),
                ],
                right=[
                    table.metric_throttled_requests_for_operations(
                        operations=list(TABLE_OPERATIONS), period=PERIOD
                    )
                ],
            ),
            cw.GraphWidget(
                title="Flood guards: rate limited, strikes, connections closed",
                left=[self._app_metric("RateLimited"), self._app_metric("FloodStrikes")],
                right=[self._app_metric("AbusiveConnectionsClosed")],
            ),
        )
        return dashboard
