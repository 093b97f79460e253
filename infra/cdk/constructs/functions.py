"""Infrastructure: the Lambda functions — one per handler module of ``functions.routes`` (routes
and timers), each with its own least-privilege role, log group and memory/timeout, a published
version per deploy and a ``live`` alias that everything invokes (the API's integrations, the
deadline machine, the watchdog's schedule): rolling back is pointing ``live`` at an older
version (AWS Lambda, "Lambda function aliases",
https://docs.aws.amazon.com/lambda/latest/dg/configuration-aliases.html). Reserved concurrency
(``FunctionsProps.reserved``) keeps the clock's and the watchdog's share when a flood takes the
account's, and caps what a public route may take
(https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html).

What each function may touch is declared in ``SPECS`` from what its code path does. Every
function that pushes a message can meet a closed connection (``GoneException``), which runs the
disconnect flow (``shared.services.presence.disconnect``: read and delete the connection item,
save the player, schedule the reconnect deadline): so every pusher reads, writes and schedules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from functions.routes import MESSAGE_FUNCTIONS, ROUTES, TIMERS, function_name
from functions.streams import STREAMS
from infra.cdk.bytecode import build_code_asset
from infra.cdk.constructs.nag import acknowledge, wildcard_resource_finding
from infra.cdk.runtime_version import LAMBDA_PYTHON_VERSION, RUNTIME_ENVIRONMENT
from infra.cdk.versions import LIVE_ALIAS, version_description
from infra.limits import FUNCTION_TIMEOUT_S
from shared.adapters.dynamo import schema
from shared.runtime.settings import Settings

RUNTIME: lambda_.Runtime = getattr(
    lambda_.Runtime, "PYTHON_" + LAMBDA_PYTHON_VERSION.replace(".", "_")
)
"""The runtime declared once in ``cdk.json`` (``infra.cdk.runtime_version``); an unknown version
fails here, at synth."""
ARCHITECTURE = lambda_.Architecture.ARM_64

CODE_PACKAGES = ("functions", "shared", "wordlists")
"""The top-level folders the handlers import; everything else in the repo stays out."""

CODE_EXCLUDE = [
    "/*",
    *(f"!/{package}/" for package in CODE_PACKAGES),
    "__pycache__/",
    "*.pyc",
    "tests/",
    "/wordlists/build.py",  # regenerates the lists offline; needs packages we never ship
    "/shared/protocol/conformance/",  # the client authors' kit (recorded JSON), not code
    "/shared/protocol/client/",  # the JavaScript reference client library, for clients
    "/shared/protocol/*.md",
    "/shared/domain/*.md",  # the rulings and design notes: documentation, not code
]
"""gitignore-style patterns (``IgnoreMode.GIT``): exclude everything, then re-include the
packages; caches, tests, ``.venv``, ``node_modules`` and ``cdk.out`` are never in the asset. The
asset's bytecode is compiled afresh from what is left (``infra.cdk.bytecode``), never copied from a
checkout's ``__pycache__``."""

READ_ACTIONS = ("dynamodb:GetItem", "dynamodb:BatchGetItem")
"""``DynamoStore`` reads: strongly consistent GetItem, BatchGetItem for a party's members."""
WRITE_ACTIONS = (
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem",
)
"""``DynamoStore`` writes: PutItem, and TransactWriteItems whose items are Put / Update (rating
``ADD``) / Delete (invites) / ConditionCheck (a lobby opener unchanged, ``join``); DeleteItem
for a closed connection. A transaction is authorised per item by these actions (IAM has no
separate TransactWriteItems action)."""


class TableAccess(Enum):
    PUT_ONLY = "put-only"
    """``$connect`` only records the connection (one conditional PutItem)."""
    READ_WRITE = "read-write"


@dataclass(frozen=True)
class FunctionSpec:
    """What one handler module needs. ``settings`` are extra ``Settings`` field names."""

    module: str
    memory_mb: int
    timeout_s: int
    table: TableAccess = TableAccess.READ_WRITE
    indexes: tuple[str, ...] = ()
    pushes: bool = True
    schedules: bool = True
    queries_table: bool = False
    """Queries the table itself (not only ``indexes``): the history function reads a
    tournament's round records (``TOURN#<id>``, ``ROUND#...``), the progression function a
    player's history entries and a tournament's record."""
    settings: tuple[str, ...] = ()
    description: str = ""
    machine_from_event: bool = False
    """The deadline machine invokes this function: it learns the machine's ARN from each
    execution's context, not its environment (naming it there would be a dependency cycle)."""

    @property
    def logical_id(self) -> str:
        return "".join(part.capitalize() for part in self.module.split("_"))

    @property
    def handler(self) -> str:
        """The Lambda ``handler`` setting: ``functions.messages.<name>`` for a message route
        group, else ``functions.<module>.handler``."""
        if self.module in MESSAGE_FUNCTIONS:
            return f"functions.messages.{self.module}"
        return f"functions.{self.module}.handler"

    def needed_settings(self) -> frozenset[str]:
        """The ``Settings`` field names this function reads (its environment covers them)."""
        names = {"table_name", *self.settings}
        if self.pushes:
            names.add("callback_url")
        if self.schedules:
            if not self.machine_from_event:
                names.add("state_machine_arn")
            names |= {
                "turn_seconds",
                "intro_seconds",
                "reconnect_seconds",
                "skip_grace_seconds",
                "heartbeat_timeout_seconds",
            }
        return frozenset(names)


_MESSAGE = ("max_message_bytes",)
"""Every WebSocket message handler checks the frame size (``functions.messages``)."""

SPECS: dict[str, FunctionSpec] = {
    s.module: s
    for s in (
        FunctionSpec(
            "connect",
            512,
            FUNCTION_TIMEOUT_S["connect"],
            table=TableAccess.PUT_ONLY,
            pushes=False,
            schedules=False,
            description="$connect: records the connection",
        ),
        FunctionSpec(
            "disconnect",
            512,
            FUNCTION_TIMEOUT_S["disconnect"],
            description="$disconnect: reconnect deadline",
        ),
        FunctionSpec(
            "default",
            512,
            FUNCTION_TIMEOUT_S["default"],
            settings=_MESSAGE,
            description="$default: answers bodies that matched no route (an error code)",
        ),
        FunctionSpec(
            "session",
            512,
            FUNCTION_TIMEOUT_S["session"],
            settings=(
                *_MESSAGE,
                "new_players_per_source",
                "new_players_window_seconds",
                "token_grace_seconds",
            ),
            description="session, sign_out_everywhere",
        ),
        FunctionSpec(
            "join",
            1024,
            FUNCTION_TIMEOUT_S["join"],
            indexes=(schema.GSI_WAITING,),
            settings=_MESSAGE,
            description="join: matchmaking; the 8th seat starts a tournament",
        ),
        FunctionSpec(
            "leave", 512, FUNCTION_TIMEOUT_S["leave"], settings=_MESSAGE, description="leave"
        ),
        # Memory: the cheapest size whose CPU per warm invocation (<= 15 ms) and cold start
        # (<= 2 s) meet their goals, measured (infra/benchmarks/RESULTS.md, figure 3b); guess
        # keeps 1,024 MB, the size the skip grace (2 s) was chosen for: at 512 MB its cold
        # start (1.95 s measured) leaves no margin inside the grace (RULINGS.md, "The skip
        # grace and cold starts").
        FunctionSpec(
            "guess", 1024, FUNCTION_TIMEOUT_S["guess"], settings=_MESSAGE, description="guess"
        ),
        FunctionSpec(
            "nickname",
            512,
            FUNCTION_TIMEOUT_S["nickname"],
            settings=_MESSAGE,
            description="nickname",
        ),
        FunctionSpec(
            "party",
            1024,
            FUNCTION_TIMEOUT_S["party"],
            settings=_MESSAGE,
            description="party_* actions",
        ),
        FunctionSpec(
            "progression",
            512,
            FUNCTION_TIMEOUT_S["progression"],
            indexes=(schema.GSI_BOARD,),
            queries_table=True,
            settings=_MESSAGE,
            description="profile, leaderboard, history, replay: read-only",
        ),
        FunctionSpec(
            "apply_deadlines",
            512,
            # the deadline machine's retries and handover budget count on this timeout
            FUNCTION_TIMEOUT_S["apply_deadlines"],
            description="the clock function: the deadline machine applies what is due",
            machine_from_event=True,
        ),
        FunctionSpec(
            "watchdog",
            512,
            FUNCTION_TIMEOUT_S["watchdog"],
            indexes=(schema.GSI_DUE,),
            settings=("watchdog_grace_seconds",),
            description="every minute: applies deadlines whose timer never fired",
        ),
        FunctionSpec(
            "history",
            512,
            FUNCTION_TIMEOUT_S["history"],
            pushes=False,
            schedules=False,
            queries_table=True,
            description="the table's stream: round and tournament records, boards",
        ),
    )
}


def handler_modules() -> list[str]:
    """The functions named by ``ROUTES``, ``TIMERS`` and ``functions.streams.STREAMS``
    (``functions.routes.function_name``; each becomes one Lambda function)."""
    targets = [*ROUTES.values(), *TIMERS.values(), *(s.target for s in STREAMS.values())]
    return list(dict.fromkeys(function_name(t) for t in targets))


def settings_environment(values: dict[str, str], names: frozenset[str]) -> dict[str, str]:
    """Environment variables for ``names`` (``Settings`` fields, upper-cased as the settings
    module reads them). Raises KeyError for a name that is not a ``Settings`` field or has no
    value, so a renamed setting breaks synth rather than a deployed function."""
    unknown = sorted(set(values) - set(Settings.names()))
    if unknown:
        raise KeyError(f"not Settings fields: {unknown}")
    return {name.upper(): values[name] for name in sorted(names)}


@dataclass(frozen=True)
class FunctionsProps:
    """Inputs the other constructs provide (tokens are fine)."""

    code_root: Path
    layer_dir: Path
    table: dynamodb.ITable
    settings: dict[str, str]
    """Settings field name -> value (tokens allowed), e.g. ``table_name``."""
    connections_arns: list[str]
    """``execute-api`` ARNs of this stage's ``@connections`` (POST, GET and DELETE)."""
    powertools: dict[str, str] = field(default_factory=dict)
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH
    removal_policy: RemovalPolicy = RemovalPolicy.DESTROY
    tracing: lambda_.Tracing = lambda_.Tracing.ACTIVE
    """X-Ray: ``ACTIVE`` samples by the account's sampling rules; ``PASS_THROUGH`` traces only
    what a caller already sampled (nothing upstream of these functions traces: effectively off)."""
    reserved: dict[str, int] = field(default_factory=dict)
    """Module -> reserved concurrent executions (absent: the unreserved pool)."""
    commit: str = "unknown"
    """The git commit synthesized (``infra.cdk.app.git_commit``): every published version's
    description is ``version_description(commit)``, which rollback looks up
    (``infra.operations.rollback``)."""


class Functions(Construct):
    """One function per handler module, sharing one code asset and one dependency layer.

    Attributes: ``by_module`` — module name -> ``lambda_.Function``; ``live`` — module name ->
    its ``live`` ``lambda_.Alias`` (what callers invoke); ``log_groups``.
    """

    def __init__(self, scope: Construct, construct_id: str, *, props: FunctionsProps) -> None:
        super().__init__(scope, construct_id)
        self._props = props
        modules = handler_modules()
        missing = sorted(set(modules) - set(SPECS))
        if missing:
            raise KeyError(f"no FunctionSpec for handler modules {missing}")
        self.code = self._build_code(props.code_root)
        self.layer = self._build_layer(props.layer_dir)
        unknown = sorted(set(props.reserved) - set(modules))
        if unknown:
            raise KeyError(f"reserved concurrency for unknown functions {unknown}")
        self.by_module: dict[str, lambda_.Function] = {}
        self.live: dict[str, lambda_.Alias] = {}
        self.log_groups: dict[str, logs.LogGroup] = {}
        self.roles: dict[str, iam.Role] = {}
        for module in modules:
            spec = SPECS[module]
            log_group = self._build_log_group(spec)
            role = self._build_role(spec, log_group)
            function = self._build_function(spec, role, log_group)
            self.by_module[module] = function
            self.live[module] = self._build_alias(spec, function)
            self.log_groups[module] = log_group
            self.roles[module] = role

    def for_target(self, target: str) -> lambda_.Alias:
        """The ``live`` alias for a ``ROUTES`` / ``TIMERS`` target
        (``"functions.messages:guess"``): what the API and the clocks invoke."""
        return self.live[function_name(target)]

    def function_for_target(self, target: str) -> lambda_.Function:
        """The function itself for a ``ROUTES`` / ``TIMERS`` target (metrics, grants)."""
        return self.by_module[function_name(target)]

    def attach_state_machine(self, state_machine_arn: str, start_arn: str | None = None) -> None:
        """Once the deadline machine exists: every function that schedules may start its
        executions (IAM on ``state_machine_arn``), and finds what to start (``start_arn``: the
        machine's live alias; default the machine) in ``STATE_MACHINE_ARN`` — except the clock
        function
        (``machine_from_event``), which the machine invokes through its alias: it learns the
        ARN from the execution context, and its grant is a policy of its own that the function
        does not wait for, so the stack has no dependency cycle."""
        for module, function in self.by_module.items():
            spec = SPECS[module]
            if not spec.schedules:
                continue
            statement = iam.PolicyStatement(
                sid="StartDeadline",
                actions=["states:StartExecution"],
                resources=[state_machine_arn],
            )
            if spec.machine_from_event:
                iam.Policy(
                    self,
                    f"{spec.logical_id}StartDeadline",
                    roles=[self.roles[module]],
                    statements=[statement],
                )
            else:
                self.roles[module].add_to_policy(statement)
                function.add_environment("STATE_MACHINE_ARN", start_arn or state_machine_arn)

    def _build_alias(self, spec: FunctionSpec, function: lambda_.Function) -> lambda_.Alias:
        # ``current_version`` publishes a new version whenever the code, the layer or the
        # configuration changes; old versions stay (RETAIN) so ``live`` can be pointed back.
        return lambda_.Alias(
            self,
            f"{spec.logical_id}Live",
            alias_name=LIVE_ALIAS,
            version=function.current_version,
            description="What the API, the deadline machine and the watchdog's schedule invoke",
        )

    def _build_code(self, code_root: Path) -> lambda_.Code:
        # The packages with their bytecode (unchecked-hash cache files, compiled by the
        # runtime's Python): a cold start loads them instead of compiling (infra.cdk.bytecode).
        return lambda_.Code.from_asset(str(build_code_asset(code_root, CODE_EXCLUDE)))

    def _build_layer(self, layer_dir: Path) -> lambda_.LayerVersion:
        return lambda_.LayerVersion(
            self,
            "Dependencies",
            code=lambda_.Code.from_asset(str(layer_dir)),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="Runtime dependencies, boto3 included (infra/requirements.lock)",
        )

    def _build_log_group(self, spec: FunctionSpec) -> logs.LogGroup:
        return logs.LogGroup(
            self,
            f"{spec.logical_id}Logs",
            retention=self._props.log_retention,
            removal_policy=self._props.removal_policy,
        )

    def _build_role(self, spec: FunctionSpec, log_group: logs.LogGroup) -> iam.Role:
        role = iam.Role(
            self,
            f"{spec.logical_id}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"Least privilege for the {spec.module} function",
        )
        for statement in self._statements(spec, log_group):
            role.add_to_policy(statement)
        self._acknowledge_wildcards(spec, role)
        return role

    def _acknowledge_wildcards(self, spec: FunctionSpec, role: iam.Role) -> None:
        reason = (
            "Active X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords accept "
            "only Resource '*' (CDK adds exactly these two actions for Tracing.ACTIVE)."
        )
        if spec.module in STREAMS:
            reason += (
                " Reading the table's stream: dynamodb:ListStreams has no resource type "
                "(Resource '*'; the stream's own actions name its ARN)."
            )
        acknowledge(role, "AwsSolutions-IAM5[Resource::*]", reason)
        if spec.pushes:
            for arn in self._props.connections_arns:
                acknowledge(
                    role,
                    wildcard_resource_finding(role, arn),
                    "API Gateway mints a connection id per client at $connect, so pushing "
                    "to or closing connections cannot name them in advance; the ARN is scoped "
                    "to this API, this stage and one @connections method.",
                )

    def _statements(
        self, spec: FunctionSpec, log_group: logs.LogGroup
    ) -> list[iam.PolicyStatement]:
        props = self._props
        table_arn = props.table.table_arn
        statements = [
            iam.PolicyStatement(
                sid="WriteOwnLogs",
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[log_group.log_group_arn],
            )
        ]
        if spec.table is TableAccess.PUT_ONLY:
            statements.append(
                iam.PolicyStatement(
                    sid="RecordConnection", actions=["dynamodb:PutItem"], resources=[table_arn]
                )
            )
        else:
            statements.append(
                iam.PolicyStatement(
                    sid="ReadWriteItems",
                    actions=[*READ_ACTIONS, *WRITE_ACTIONS],
                    resources=[table_arn],
                )
            )
        if spec.queries_table:
            statements.append(
                iam.PolicyStatement(
                    sid="QueryTable", actions=["dynamodb:Query"], resources=[table_arn]
                )
            )
        if spec.indexes:
            statements.append(
                iam.PolicyStatement(
                    sid="QueryIndexes",
                    actions=["dynamodb:Query"],
                    resources=[f"{table_arn}/index/{name}" for name in spec.indexes],
                )
            )
        if spec.pushes:
            # Connection ids are minted by API Gateway per client, so the ARN ends in a
            # wildcard; it is scoped to this API's stage and to POST/GET/DELETE @connections
            # (GET: GetConnection's LastActiveAt, ruling 14).
            statements.append(
                iam.PolicyStatement(
                    sid="PushToConnections",
                    actions=["execute-api:ManageConnections"],
                    resources=props.connections_arns,
                )
            )
        return statements

    def _build_function(
        self, spec: FunctionSpec, role: iam.Role, log_group: logs.LogGroup
    ) -> lambda_.Function:
        props = self._props
        # STATE_MACHINE_ARN comes later (``attach_state_machine``): the machine is built after
        # the functions, since it invokes the clock function's alias.
        environment = {
            **settings_environment(props.settings, spec.needed_settings() - {"state_machine_arn"}),
            **props.powertools,
            **RUNTIME_ENVIRONMENT,
        }
        return lambda_.Function(
            self,
            # Not bare "Default": that id would make $default's function this construct's
            # default child.
            f"{spec.logical_id}Function",
            description=spec.description or spec.module,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=spec.handler,
            code=self.code,
            layers=[self.layer],
            memory_size=spec.memory_mb,
            timeout=Duration.seconds(spec.timeout_s),
            role=role,
            log_group=log_group,
            environment=environment,
            # X-Ray by the stage's policy, without Powertools Tracer (see
            # shared/runtime/observability.py).
            tracing=props.tracing,
            reserved_concurrent_executions=props.reserved.get(spec.module),
            # Versions stay when a deploy publishes a new one: rollback points live back. The
            # commit in the description changes with every commit, so each deploy publishes a
            # version of every function: rollback finds all of a commit's versions.
            current_version_options=lambda_.VersionOptions(
                removal_policy=RemovalPolicy.RETAIN,
                description=version_description(props.commit),
            ),
        )
