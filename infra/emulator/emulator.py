"""Local runtime: the composition of gateway, clock and DynamoDB that tests and the CLI start.

``async with Emulator(port=0, turn_seconds=1) as emu:`` then connect to ``emu.ws_url``. Runs the
real handlers (``functions.routes``) with API Gateway's limits; one emulator per process at a
time (the environment and moto's data are process-global). Credentials, start-up order,
transports, worker pool: ``shared/domain/RULINGS.md``, Design notes, "Local runtime".
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import logging
import os
import socket
import sys
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar

from infra.emulator.dynamo import EmbeddedDynamo, create_tables
from infra.emulator.dynamo_process import DynamoProcess
from infra.emulator.gateway import Handler, LocalGateway
from infra.emulator.iam import RuntimeCredentials
from infra.emulator.inprocess import ConnectionsTransport, DynamoTransport, register
from infra.emulator.lambda_context import (
    ACCOUNT_ID,
    DEFAULT_REGION,
    function_name_for,
    make_context,
)
from infra.emulator.pool import CLOCK, OTHER, WorkerPool
from infra.emulator.states import LocalClock
from infra.emulator.streams import POLL_SECONDS, StreamPoller, limited_invoker
from infra.emulator.throttles import TwinLimits
from shared.protocol.limits import IDLE_TIMEOUT_SECONDS, MAX_CONNECTION_SECONDS
from shared.services.deps import Deps

log = logging.getLogger(__name__)

BOTS_MODULE = "infra.players.bots"

SWITCH_INTERVAL_SECONDS = 0.001
"""How long a thread may hold the interpreter lock while another waits for it, while an
emulator runs (``sys.setswitchinterval``; CPython's default is 0.005 s). The gateway's event
loop drops the lock at every socket read and write and must then wait for a handler thread to
yield it; at 5 ms per wait, a loop writing a round's frames falls tens of milliseconds behind
(one run each at 100 tournaments: the loop's lag p99 52 ms at 5 ms, 25 ms at 1 ms; guess -> the
opponent's row p99 186 -> 142 ms, for about 7 % more CPU per guess). On AWS the gateway and each
invocation have their own machines, so this waiting is the twin's alone. CPython docs:
https://docs.python.org/3/library/sys.html#sys.setswitchinterval"""

HandlerSpec = Handler | str
"""A handler, or ``"module:attr"`` to import once the environment is set."""


def resolve(spec: HandlerSpec) -> Handler:
    """``"package.module:attr"`` -> the attribute (a callable passes through)."""
    if not isinstance(spec, str):
        return spec
    module_name, sep, attr = spec.partition(":")
    if not sep or not attr:
        raise ValueError(f"handler spec must be 'module:attr', got {spec!r}")
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{spec} is not callable")
    return target  # type: ignore[no-any-return]


def bind(spec: str, deps: Deps) -> Handler:
    """A ``functions.routes`` target (``"module:attr"``) as a gateway or clock handler: an
    entrypoint (``functions._entry.Entrypoint``) runs its Lambda wrapper with ``deps``; any
    other callable is called as a plain Lambda handler."""
    target: Any = resolve(spec)
    if callable(getattr(target, "invoke", None)):
        return lambda event, context: target.invoke(event, context, deps)
    return target  # type: ignore[no-any-return]


def scheduled_event(region: str, rule: str = "wordle-tournament-watchdog") -> dict[str, Any]:
    """An EventBridge scheduled-rule event, as a rate(...) rule delivers it."""
    now = datetime.now(UTC).replace(microsecond=0)
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": ACCOUNT_ID,
        "time": now.isoformat().replace("+00:00", "Z"),
        "region": region,
        "resources": [f"arn:aws:events:{region}:{ACCOUNT_ID}:rule/{rule}"],
        "detail": {},
    }


def worker_count(*, dynamodb_elsewhere: bool = True) -> int:
    """The handlers' worker pool size: the cores this process may run on (at least 2), plus one
    when DynamoDB answers from another process (``dynamodb_elsewhere``: its own process or an
    endpoint), whose waits leave the interpreter free (module docstring)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(2, cores) + (1 if dynamodb_elsewhere else 0)


def _route_functions() -> dict[str, str]:
    """Route key -> the function module serving it (``functions.routes.function_name``)."""
    routes = importlib.import_module("functions.routes")
    name = getattr(routes, "function_name", None)
    if name is None:  # a stand-in routes module (tests): every route its own function
        return {key: key for key in routes.ROUTES}
    return {key: name(target) for key, target in routes.ROUTES.items()}


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


class Emulator:
    """The whole backend on one machine: WebSocket API, ``@connections``, DynamoDB, clock.

    Every argument is optional and keyword-only (``port=0``: a free port, read back from
    :attr:`port`, :attr:`url`, :attr:`ws_url`); each is described in ``shared/domain/RULINGS.md``,
    Design notes, "The emulator's options". After :meth:`start`: :attr:`gateway`, :attr:`clock`,
    :attr:`env`, :attr:`credentials`, :meth:`management_client`, :meth:`dynamodb_client`.
    """

    _active: ClassVar[Emulator | None] = None

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        turn_seconds: float | None = None,
        intro_seconds: float | None = None,
        reconnect_seconds: float | None = None,
        dynamodb_endpoint: str | None = None,
        table_name: str | None = None,
        routes: Mapping[str, HandlerSpec] | None = None,
        clock_handler: HandlerSpec | None = None,
        watchdog_handler: HandlerSpec | None = None,
        watchdog_seconds: float | None = 60.0,
        route_responses: tuple[str, ...] = (),
        env: Mapping[str, str] | None = None,
        create_tables: bool = True,
        bots: int = 0,
        bots_languages: tuple[str, ...] = ("en",),
        stage: str = "local",
        max_workers: int | None = None,
        in_process: bool = True,
        dynamodb_process: bool = True,
        log_level: str | None = None,
        idle_timeout_seconds: float = IDLE_TIMEOUT_SECONDS,
        max_connection_seconds: float = MAX_CONNECTION_SECONDS,
        disconnect_loss: float = 0.0,
        half_open_seconds: float = 0.0,
        gateway_seed: int | None = None,
        switch_interval_seconds: float | None = SWITCH_INTERVAL_SECONDS,
        limits: TwinLimits | str | None = "prod",
        streams: bool = True,
        stream_handlers: Mapping[str, HandlerSpec] | None = None,
        stream_poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.host = host
        self.requested_port = port
        self.turn_seconds = turn_seconds
        self.intro_seconds = intro_seconds
        self.reconnect_seconds = reconnect_seconds
        self.requested_dynamodb_endpoint = dynamodb_endpoint
        self.requested_table_name = table_name
        self.routes_override = routes
        self.clock_handler_override = clock_handler
        self.watchdog_handler_override = watchdog_handler
        self.watchdog_seconds = watchdog_seconds
        self.route_responses = route_responses
        self.extra_env = dict(env or {})
        self.create_tables = create_tables
        self.bots = bots
        self.bots_languages = bots_languages
        self.stage = stage
        moto_here = not dynamodb_process and not dynamodb_endpoint  # in-process or over HTTP
        self.max_workers = max_workers or worker_count(dynamodb_elsewhere=not moto_here)
        self.in_process = in_process
        self.dynamodb_process = dynamodb_process
        self.log_level = log_level
        self.idle_timeout_seconds = idle_timeout_seconds
        self.max_connection_seconds = max_connection_seconds
        self.disconnect_loss = disconnect_loss
        self.half_open_seconds = half_open_seconds
        self.gateway_seed = gateway_seed
        self.switch_interval_seconds = switch_interval_seconds
        self.limits: TwinLimits | None = (
            TwinLimits.for_stage(limits) if isinstance(limits, str) else limits
        )
        """Throttles, reservations, timeouts, cold starts the gateway enforces (a stage name:
        that stage's deployed values, ``infra.limits``; None: none)."""

        self.streams_enabled = streams
        self.stream_handlers_override = stream_handlers
        self.stream_poll_seconds = stream_poll_seconds
        self.streams: dict[str, StreamPoller] = {}
        """Function module -> the poller delivering the table's stream to it
        (``functions.streams.STREAMS``; after :meth:`start`): its ``failures`` are the
        on-failure destination."""

        self.env: dict[str, str] = {}
        """The environment variables this emulator exported (after :meth:`start`)."""
        self.credentials: RuntimeCredentials | None = None
        """The runtime's own credentials, drawn at each :meth:`start` (module docstring)."""
        self._dynamodb_session: Any = None
        self._saved_env: dict[str, str | None] = {}
        self._executor: WorkerPool | None = None
        self._dynamo: EmbeddedDynamo | DynamoProcess | None = None
        self._dynamodb_endpoint: str | None = None
        self._gateway: LocalGateway | None = None
        self._clock: LocalClock | None = None
        self.deps: Deps | None = None
        """The handlers' dependencies (after :meth:`start`, with the real wiring)."""
        self._bots_task: asyncio.Task[Any] | None = None
        self._watchdog_task: asyncio.Task[None] | None = None
        self._watchdog: Handler | None = None
        self._cleanups: list[Callable[[], Any]] = []
        self._connections_transport: ConnectionsTransport | None = None
        self._failure: asyncio.Future[str] | None = None

    # -- lifecycle -------------------------------------------------------------------------

    async def __aenter__(self) -> Emulator:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> Emulator:
        """Start everything (see the module docstring for the order); returns self."""
        if Emulator._active is not None:
            raise RuntimeError("another Emulator is running in this process; stop it first")
        Emulator._active = self
        try:
            await self._start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def _start(self) -> None:
        loop = asyncio.get_running_loop()
        self._failure = loop.create_future()
        self._executor = WorkerPool(self.max_workers, thread_name_prefix="lambda")

        self.credentials = RuntimeCredentials.generate()
        if self.requested_dynamodb_endpoint:
            self._dynamodb_endpoint = self.requested_dynamodb_endpoint
            self._dynamodb_session = await loop.run_in_executor(self._executor, _callers_session)
        else:
            self._dynamo = (
                DynamoProcess(self.host, on_exit=self._dynamodb_exited)
                if self.dynamodb_process
                else EmbeddedDynamo(self.host)
            )
            await loop.run_in_executor(self._executor, self._dynamo.start)
            self._dynamodb_endpoint = self._dynamo.endpoint

        sock = _bind(self.host, self.requested_port)
        try:
            await self._start_on(sock)
        except BaseException:
            if self._gateway is None:  # the gateway owns (and closes) the socket once built
                sock.close()
            raise

    async def _start_on(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        assert self._executor is not None
        port = sock.getsockname()[1]
        self._apply_env(self._build_env(port))
        if self.switch_interval_seconds is not None:
            saved = sys.getswitchinterval()
            sys.setswitchinterval(self.switch_interval_seconds)
            self._cleanups.append(lambda: sys.setswitchinterval(saved))

        if self.create_tables:
            await loop.run_in_executor(
                self._executor, create_tables, self.dynamodb_client(), self.table_name
            )

        self._clock = LocalClock(executor=self._executor.lane(CLOCK), region=self.region)
        real_wiring = self.routes_override is None
        if real_wiring:
            from functions.routes import MOCK_ROUTES, ROUTES, TIMERS
            from shared.runtime.bootstrap import build
            from shared.runtime.settings import Settings

            self.deps = build(Settings.from_env(), clock=self._clock, session=self._session())
        clock_handler = (
            resolve(self.clock_handler_override)
            if self.clock_handler_override is not None
            else (bind(TIMERS["clock"], self.deps) if self.deps is not None else None)
        )
        self._clock.set_handler(clock_handler)

        routes = (
            {key: resolve(spec) for key, spec in self.routes_override.items()}
            if self.routes_override is not None
            else {key: bind(spec, self.deps) for key, spec in ROUTES.items() if self.deps}
        )
        self._gateway = LocalGateway(
            routes,
            sock=sock,
            stage=self.stage,
            region=self.region,
            executor=self._executor,
            route_responses=self.route_responses,
            mock_routes=MOCK_ROUTES if real_wiring else None,
            idle_timeout_seconds=self.idle_timeout_seconds,
            max_connection_seconds=self.max_connection_seconds,
            disconnect_loss=self.disconnect_loss,
            half_open_seconds=self.half_open_seconds,
            seed=self.gateway_seed,
            credentials=self.credentials,
            limits=self.limits,
            functions=_route_functions() if real_wiring else None,
        )
        await self._gateway.start()
        if self._connections_transport is not None:
            self._connections_transport.gateway = self._gateway
        self._clock.start()
        self._watchdog = (
            resolve(self.watchdog_handler_override)
            if self.watchdog_handler_override is not None
            else (bind(TIMERS["watchdog"], self.deps) if self.deps is not None else None)
        )
        if self._watchdog is not None and self.watchdog_seconds:
            self._watchdog_task = asyncio.create_task(self._watchdog_loop(self.watchdog_seconds))
        if self.streams_enabled:
            await loop.run_in_executor(self._executor, self._start_streams)
        if self.bots > 0:
            self._start_bots()
        log.info("emulator up: %s", self.url)

    async def stop(self) -> None:
        """Stop bots, gateway (delivering ``$disconnect``), clock and DynamoDB; restore the env."""
        try:
            if self._watchdog_task is not None:
                self._watchdog_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._watchdog_task
                self._watchdog_task = None
            if self._bots_task is not None:
                self._bots_task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._bots_task
                self._bots_task = None
            for cleanup in reversed(self._cleanups):
                result = cleanup()
                if inspect.isawaitable(result):
                    await result
            self._cleanups.clear()
            if self.streams:
                pollers, self.streams = list(self.streams.values()), {}
                loop = asyncio.get_running_loop()
                for poller in pollers:
                    await loop.run_in_executor(None, poller.stop)
            if self._gateway is not None:
                await self._gateway.stop()
                self._gateway = None
            if self._clock is not None:
                await asyncio.get_running_loop().run_in_executor(None, self._clock.stop)
                self._clock = None
                self.deps = None
            if self._dynamo is not None:
                self._dynamo.stop()
                self._dynamo = None
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None
        finally:
            self._restore_env()
            if Emulator._active is self:
                Emulator._active = None

    async def serve_forever(self) -> None:
        """Run until cancelled; ``RuntimeError`` (the reason) if the runtime can no longer serve
        (:meth:`wait_failure`)."""
        raise RuntimeError(await self.wait_failure())

    async def wait_failure(self) -> str:
        """Wait until the runtime can no longer serve and return why: its DynamoDB process
        exited on its own (killed, out of memory), after which every handler call would fail.
        The CLI then stops with that message and exit code 1. Never returns otherwise."""
        assert self._failure is not None, "start() first"
        return await asyncio.shield(self._failure)

    def _dynamodb_exited(self, exit_code: int | None) -> None:
        """``DynamoProcess.on_exit``, on its watcher thread."""
        failure = self._failure
        if failure is None:
            return
        reason = (
            f"the DynamoDB process exited unexpectedly (exit code {exit_code}): the local "
            "runtime cannot go on without its database"
        )
        with contextlib.suppress(RuntimeError):  # the loop is already closed: nothing waits
            failure.get_loop().call_soon_threadsafe(self._fail, failure, reason)

    @staticmethod
    def _fail(failure: asyncio.Future[str], reason: str) -> None:
        if not failure.done():
            log.critical("%s", reason)
            failure.set_result(reason)

    def _session(self) -> Any:
        """The boto3 session the handlers' clients come from (credentials from the
        environment, as on Lambda: the runtime's): with ``in_process``, Management API calls
        to this gateway and DynamoDB calls to the embedded moto skip the wire
        (:mod:`infra.emulator.inprocess`); an external ``dynamodb_endpoint`` is called over
        HTTP, with the caller's credentials (:class:`_DynamoDbElsewhere`)."""
        import boto3

        session: Any = boto3.session.Session()
        if self._dynamodb_session is not None:
            session = _DynamoDbElsewhere(session, self._dynamodb_session)
        if not self.in_process:
            return session
        self._connections_transport = ConnectionsTransport(None, self.env["CALLBACK_URL"])
        dynamo: DynamoTransport | None = None
        if isinstance(self._dynamo, DynamoProcess):
            dynamo = DynamoTransport(self._dynamo.endpoint, answer=self._dynamo.answer)
        elif self._dynamo is not None:
            dynamo = DynamoTransport(self._dynamo.endpoint, self._dynamo.lock)
        register(session, connections=self._connections_transport, dynamo=dynamo)
        return session

    # -- environment -----------------------------------------------------------------------

    def _build_env(self, port: int) -> dict[str, str]:
        env: dict[str, str] = {
            "CALLBACK_URL": f"http://{self.host}:{port}",
            "DYNAMODB_ENDPOINT": str(self._dynamodb_endpoint),
        }
        if self.requested_table_name:
            env["TABLE_NAME"] = self.requested_table_name
        for name, seconds in (
            ("TURN_SECONDS", self.turn_seconds),
            ("INTRO_SECONDS", self.intro_seconds),
            ("RECONNECT_SECONDS", self.reconnect_seconds),
        ):
            if seconds is not None:
                env[name] = repr(float(seconds))
        defaults = {
            "AWS_DEFAULT_REGION": DEFAULT_REGION,
            "POWERTOOLS_SERVICE_NAME": "wordle-tournament",
            "POWERTOOLS_METRICS_NAMESPACE": "WordleTournament",
            "POWERTOOLS_TRACE_DISABLED": "true",  # no X-Ray daemon on a laptop
            "POWERTOOLS_METRICS_DISABLED": "true",  # no EMF blobs on the console
            # every local client (the bots, the browser) shares the loopback address: no
            # limit on new players per source (ruling 17) unless the environment sets one
            "NEW_PLAYERS_PER_SOURCE": "0",
        }
        for name, value in defaults.items():
            if name not in os.environ:
                env[name] = value
        assert self.credentials is not None
        env.update(self.credentials.environ())  # the execution role's, as Lambda exports them
        if "AWS_REGION" not in os.environ:
            env["AWS_REGION"] = os.environ.get(
                "AWS_DEFAULT_REGION", env.get("AWS_DEFAULT_REGION", DEFAULT_REGION)
            )
        if self.log_level:
            env["POWERTOOLS_LOG_LEVEL"] = self.log_level.upper()
        env.update(self.extra_env)
        return env

    def _apply_env(self, env: dict[str, str]) -> None:
        for name, value in env.items():
            self._saved_env.setdefault(name, os.environ.get(name))
            os.environ[name] = value
        self.env = env

    def _restore_env(self) -> None:
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env.clear()

    # -- the table's stream ----------------------------------------------------------------

    def _start_streams(self) -> None:
        """One :class:`~infra.emulator.streams.StreamPoller` per ``functions.streams.STREAMS``
        entry with a handler (the real one with the real wiring, else ``stream_handlers``),
        reading the table's stream on the same endpoint as the handlers' DynamoDB, invoking
        through the worker pool (lowest priority: off the play path) and ``limits``."""
        import boto3

        from functions.streams import STREAMS

        handlers: dict[str, Handler] = {}
        if self.stream_handlers_override is not None:
            handlers = {m: resolve(h) for m, h in self.stream_handlers_override.items()}
        elif self.deps is not None:
            handlers = {m: bind(source.target, self.deps) for m, source in STREAMS.items()}
        if not handlers:
            return
        table = self.dynamodb_client().describe_table(TableName=self.table_name)["Table"]
        stream_arn = table.get("LatestStreamArn")
        if not stream_arn or not table.get("StreamSpecification", {}).get("StreamEnabled"):
            log.warning("table %s has no stream: history is not delivered", self.table_name)
            return
        session = self._dynamodb_session or boto3
        client = session.client(
            "dynamodbstreams", endpoint_url=self.dynamodb_endpoint, region_name=self.region
        )
        assert self._executor is not None
        for module, handler in handlers.items():
            invoke = limited_invoker(
                handler,
                module,
                executor=self._executor,
                limits=self.limits,
                region=self.region,
                priority=OTHER,
            )
            self.streams[module] = StreamPoller(
                client,
                stream_arn,
                STREAMS[module],
                invoke,
                region=self.region,
                function_arn=f"arn:aws:lambda:{self.region}:{ACCOUNT_ID}:function:{module}",
                poll_seconds=self.stream_poll_seconds,
            ).start()

    # -- watchdog --------------------------------------------------------------------------

    async def run_watchdog(self) -> Any:
        """Invoke the watchdog once now (as its scheduled rule would); returns its result."""
        if self._watchdog is None:
            raise RuntimeError("no watchdog handler (functions.routes.TIMERS['watchdog'])")
        handler = self._watchdog
        context = make_context(function_name_for(handler), region=self.region)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor, handler, scheduled_event(self.region), context
        )

    async def _watchdog_loop(self, period: float) -> None:
        while True:
            await asyncio.sleep(period)
            try:
                await self.run_watchdog()
            except Exception:  # the Lambda boundary: a failed run is logged, the rule goes on
                log.exception("watchdog failed")

    # -- bots ------------------------------------------------------------------------------

    def _start_bots(self) -> None:
        pools = importlib.import_module(BOTS_MODULE).BotPools(
            self.ws_url, self.bots, languages=self.bots_languages
        )
        self.gateway.observers.append(pools.observe)
        self._bots_task = asyncio.ensure_future(pools.run())

    def add_cleanup(self, cleanup: Callable[[], Any]) -> None:
        """Run ``cleanup()`` (sync or async) first thing in :meth:`stop` (e.g. to stop clients)."""
        self._cleanups.append(cleanup)

    # -- accessors -------------------------------------------------------------------------

    @property
    def gateway(self) -> LocalGateway:
        assert self._gateway is not None, "start() first"
        return self._gateway

    @property
    def clock(self) -> LocalClock:
        """The LocalClock the handlers' ``Deps`` were built with."""
        assert self._clock is not None, "start() first"
        return self._clock

    @property
    def port(self) -> int:
        return self.gateway.port

    @property
    def url(self) -> str:
        """``http://host:port/`` root: the web client."""
        return self.gateway.url

    @property
    def ws_url(self) -> str:
        """``ws://host:port/ws``: the WebSocket API."""
        return self.gateway.ws_url

    @property
    def callback_url(self) -> str:
        """The Management API endpoint (``CALLBACK_URL``)."""
        return self.gateway.callback_url

    @property
    def dynamodb_endpoint(self) -> str:
        assert self._dynamodb_endpoint is not None, "start() first"
        return self._dynamodb_endpoint

    @property
    def table_name(self) -> str:
        return os.environ.get("TABLE_NAME") or "wordle-tournament"

    @property
    def region(self) -> str:
        return (
            os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or (DEFAULT_REGION)
        )

    def management_client(self) -> Any:
        """A boto3 ``apigatewaymanagementapi`` client for this emulator's ``@connections``,
        signing with the runtime's :attr:`credentials` (the only ones it accepts)."""
        import boto3

        creds = self.credentials
        assert creds is not None, "start() first"
        return boto3.client(
            "apigatewaymanagementapi",
            endpoint_url=self.callback_url,
            region_name=self.region,
            aws_access_key_id=creds.access_key_id,
            aws_secret_access_key=creds.secret_access_key,
            aws_session_token=creds.session_token,
        )

    def dynamodb_client(self) -> Any:
        """A boto3 DynamoDB client for this emulator's database (signed as the handlers'
        DynamoDB calls are)."""
        import boto3

        session = self._dynamodb_session or boto3
        return session.client(
            "dynamodb", endpoint_url=self.dynamodb_endpoint, region_name=self.region
        )


def _callers_session() -> Any:
    """A boto3 session with the credentials this process has before an emulator exports its
    own: resolved now (the session keeps them), or the dummy ``testing`` pair when the
    environment names none (DynamoDB Local takes any, and keeps one database per key id)."""
    import boto3

    if "AWS_ACCESS_KEY_ID" not in os.environ and "AWS_PROFILE" not in os.environ:
        return boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing")
    session = boto3.session.Session()
    session.get_credentials()
    return session


class _DynamoDbElsewhere:
    """The handlers' boto3 session with ``dynamodb_endpoint``: DynamoDB clients from
    ``dynamodb`` (the caller's credentials, :func:`_callers_session`), every other client
    from ``session`` (the runtime's). Only ``client`` differs; the rest is ``session``'s."""

    def __init__(self, session: Any, dynamodb: Any) -> None:
        self._session = session
        self._dynamodb = dynamodb

    def client(self, service_name: str, *args: Any, **kwargs: Any) -> Any:
        source = self._dynamodb if service_name == "dynamodb" else self._session
        return source.client(service_name, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)
