"""Infrastructure: the clocks (RULINGS.md, Clocks) — the Express deadline state machine built
from the one shared definition (``shared.adapters.step_functions.state_machine_definition``:
one looping execution per round, one wait+apply per reconnect deadline), and the every-minute
schedule that runs the watchdog."""

from __future__ import annotations

import json

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.cdk.constructs.nag import acknowledge
from infra.cdk.versions import LIVE_ALIAS, version_description
from shared.adapters.step_functions import state_machine_definition

WATCHDOG_RATE = Duration.minutes(1)
VENDED_LOGS_PREFIX = "/aws/vendedlogs/states/"
"""Step Functions logs to a group under this prefix: CloudWatch Logs then needs no resource
policy entry per log group, whose policy is limited to 5,120 characters per account and region
(AWS, "Logging in CloudWatch Logs" for Step Functions,
https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html, and "Enable logging from
AWS services", vended logs,
https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/AWS-logs-and-resource-policy.html)."""


def execution_log_group_name(stack_name: str) -> str:
    """The machine's log group: the vended-logs prefix, then the stack's name (unique per stage
    in an account and region, so two stages never collide)."""
    return f"{VENDED_LOGS_PREFIX}{stack_name}-Deadlines"


class DeadlineClock(Construct):
    """Attributes: ``state_machine`` (Express; its name is CloudFormation's, so a change that
    replaces it can deploy), ``watchdog_rule``.

    Args: clock_function — what the machine invokes (the clock function's ``live`` alias);
    watchdog_function — what the schedule runs (the watchdog's ``live`` alias); tracing — X-Ray
    on the machine's executions."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        clock_function: lambda_.IFunction,
        watchdog_function: lambda_.IFunction,
        log_retention: logs.RetentionDays,
        removal_policy: RemovalPolicy,
        tracing: bool = True,
        commit: str = "unknown",
    ) -> None:
        super().__init__(scope, construct_id)
        role = self._build_role(clock_function)
        log_group = logs.LogGroup(
            self,
            "ExecutionLogs",
            # The one fixed physical name of the stack: AWS asks for the vended-logs prefix,
            # which a CloudFormation-generated name cannot carry. Nothing here changes a log
            # group's replacement properties, so no update has to replace it.
            log_group_name=execution_log_group_name(Stack.of(self).stack_name),
            retention=log_retention,
            removal_policy=removal_policy,
        )
        self.state_machine = self._build_state_machine(clock_function, role, log_group, tracing)
        if not tracing:
            acknowledge(
                self.state_machine,
                "AwsSolutions-SF2",
                "Tracing is a per-stage policy (infra/README.md, Tracing): off in prod, where a "
                "round's loop would record a trace per wake for little insight the execution "
                "logs (level ALL) do not already give; -c tracing=active turns it on.",
            )
        self._grant_successor_start(role)
        self.version, self.alias = self._build_live_alias(commit)
        self.watchdog_rule = self._build_watchdog_schedule(watchdog_function)

    def _build_live_alias(
        self, commit: str
    ) -> tuple[sfn.CfnStateMachineVersion, sfn.CfnStateMachineAlias]:
        """A version of the machine per definition revision and a ``live`` alias on it, which
        the functions start executions through (``STATE_MACHINE_ARN``): rollback moves the alias
        with the functions' (``infra.operations.rollback``). Publishing is idempotent per
        revision (AWS, PublishStateMachineVersion), so a version's description names the first
        commit deployed with its definition; old versions are kept (RETAIN) for rollback.
        https://docs.aws.amazon.com/step-functions/latest/dg/concepts-state-machine-version.html
        """
        version = sfn.CfnStateMachineVersion(
            self,
            "Version",
            state_machine_arn=self.state_machine.state_machine_arn,
            state_machine_revision_id=self.state_machine.state_machine_revision_id,
            description=version_description(commit),
        )
        version.apply_removal_policy(RemovalPolicy.RETAIN)
        alias = sfn.CfnStateMachineAlias(
            self,
            "Live",
            name=LIVE_ALIAS,
            description="What the functions start deadline executions through",
            routing_configuration=[
                sfn.CfnStateMachineAlias.RoutingConfigurationVersionProperty(
                    state_machine_version_arn=version.attr_arn, weight=100
                )
            ],
        )
        return version, alias

    @property
    def live_arn(self) -> str:
        """The ``live`` alias's ARN: what the functions start executions with."""
        return self.alias.attr_arn

    def _build_role(self, clock_function: lambda_.IFunction) -> iam.Role:
        role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("states.amazonaws.com"),
            description=(
                "Deadline state machine: invoke the clock function, start its own successor, "
                "log, trace"
            ),
        )
        # The definition invokes the live alias's ARN only: no ``:*`` version grant.
        role.add_to_policy(
            iam.PolicyStatement(
                sid="InvokeClock",
                actions=["lambda:InvokeFunction"],
                resources=[clock_function.function_arn],
            )
        )
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::*]",
            "Step Functions log delivery (logs:*LogDelivery, resource policies) and X-Ray "
            "(PutTraceSegments, sampling) accept only Resource '*'; CDK adds exactly those.",
        )
        return role

    def _grant_successor_start(self, role: iam.Role) -> None:
        """A round's loop outlives an Express execution (5 min): it hands over to a successor
        execution of this same machine. The grant names the machine, in a policy the machine
        does not wait for (in the role's default policy it would be a dependency cycle)."""
        iam.Policy(
            self,
            "StartSuccessor",
            roles=[role],
            statements=[
                iam.PolicyStatement(
                    sid="StartSuccessor",
                    actions=["states:StartExecution"],
                    resources=[self.state_machine.state_machine_arn],
                )
            ],
        )

    def _build_state_machine(
        self,
        clock_function: lambda_.IFunction,
        role: iam.Role,
        log_group: logs.LogGroup,
        tracing: bool,
    ) -> sfn.StateMachine:
        definition = state_machine_definition(clock_function.function_arn)
        return sfn.StateMachine(
            self,
            "Deadlines",
            # No state_machine_name: CloudFormation names it, so a change that needs a
            # replacement (e.g. the type) creates the new machine before deleting the old.
            # Express: billed per request and duration, not per transition; a round's loop
            # wakes ~5 times and mostly waits (infra/benchmarks/RESULTS.md, figure 3).
            state_machine_type=sfn.StateMachineType.EXPRESS,
            definition_body=sfn.DefinitionBody.from_string(json.dumps(definition)),
            role=role,
            tracing_enabled=tracing,
            # Express keeps no execution history: CloudWatch Logs are its only record (ALL:
            # every state, so a loop's wakes, handovers and failures can be followed). Execution
            # data stays out of the logs: the input names refs and seqs only, but the Lambda's
            # output is not ours to log.
            logs=sfn.LogOptions(
                destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=False
            ),
        )

    def _build_watchdog_schedule(self, watchdog_function: lambda_.IFunction) -> events.Rule:
        return events.Rule(
            self,
            "WatchdogSchedule",
            description="Apply deadlines whose timer never fired (RULINGS.md, Clocks)",
            schedule=events.Schedule.rate(WATCHDOG_RATE),
            targets=[
                # A missed run is harmless: the next one, a minute later, does the same work.
                targets.LambdaFunction(
                    watchdog_function, retry_attempts=1, max_event_age=Duration.minutes(2)
                )
            ],
        )
