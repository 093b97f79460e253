"""Local runtime: an aiohttp server that behaves like an API Gateway WebSocket API.

One port serves the WebSocket API (``/ws``, or an upgrade on ``/``; route selection
``$request.body.action``, else ``$default``), the ``@connections`` Management API
(``/@connections/{id}``, ``/{stage}/@connections/{id}``: boto3's wire format, taking only
requests SigV4-signed by the runtime's own credentials, as on AWS: ``infra.emulator.iam``) and
the static web client (``infra/emulator/web/``, and at ``/client/`` the reference client library
it plays through, ``shared/protocol/client/``). This module binds the port and runs the
handlers (:mod:`infra.emulator.sockets`, :mod:`infra.emulator.management` and
:mod:`infra.emulator.events` do the rest); how it mirrors API Gateway, quota by quota, is in
``shared/domain/RULINGS.md`` (design notes, "How the local gateway mirrors API Gateway").
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from aiohttp import WSCloseCode, web

from infra.emulator.iam import RuntimeCredentials
from infra.emulator.lambda_context import DEFAULT_REGION, function_name_for, make_context
from infra.emulator.management import ManagementApi
from infra.emulator.pool import WorkerPool, message_priority
from infra.emulator.sockets import Connection, Handler, WebSocketApi
from infra.emulator.throttles import (
    FunctionTimeoutError,
    Invocation,
    TooManyRequestsError,
    TwinLimits,
)
from shared.protocol.limits import (
    IDLE_TIMEOUT_SECONDS,
    MAX_CONNECTION_SECONDS,
    MAX_FRAME_BYTES,
    MAX_MESSAGE_BYTES,
)

__all__ = ["Handler", "LocalGateway"]  # Handler: the type of ``routes``, from sockets

log = logging.getLogger(__name__)

WEB_DIR = Path(__file__).parent / "web"
CLIENT_DIR = Path(__file__).resolve().parents[2] / "shared" / "protocol" / "client"
"""The reference client library (``wordle-client.js``), served at ``/client/`` beside the web
client that imports it."""

_SESSION_REPLY = b'"type":"session"'
"""How a posted ``session`` reply starts its JSON (``shared.protocol.outbound``)."""


class LocalGateway(WebSocketApi, ManagementApi):
    """API Gateway WebSocket API + ``@connections`` Management API + static files, on one port.

    ``routes`` maps route keys to synchronous handlers, run in ``executor`` with a fresh
    ``LambdaContext`` each; bind ``host``/``port`` (0 = free) or pass ``sock``; ``start``/``stop``.
    Limits default to AWS's quotas (``shared.protocol.limits``; seconds, bytes); failure modes
    (``disconnect_loss``, ``half_open_seconds``) are off by default. A connection's messages
    and its ``$disconnect`` run concurrently, unordered, as on AWS (``serial_messages``: one at
    a time, in order, for a test that needs it). ``credentials``: the only ones
    the Management API accepts (default: fresh random ones, read back from ``credentials``).
    ``limits`` (``infra.emulator.throttles.TwinLimits``; default none): route and account
    throttles, reserved concurrency, each function's timeout and cold starts, the function of a
    route key being ``functions[route_key]`` (default: the route key).
    """

    def __init__(
        self,
        routes: Mapping[str, Handler] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        sock: socket.socket | None = None,
        stage: str = "local",
        api_id: str = "local",
        region: str = DEFAULT_REGION,
        executor: Executor | None = None,
        web_dir: Path | None = WEB_DIR,
        route_responses: Collection[str] = (),
        mock_routes: Mapping[str, Any] | None = None,
        posts_move_last_active: bool = False,
        max_frame_bytes: int = MAX_FRAME_BYTES,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        handler_timeout_seconds: float = 29.0,
        idle_timeout_seconds: float = IDLE_TIMEOUT_SECONDS,
        max_connection_seconds: float = MAX_CONNECTION_SECONDS,
        disconnect_loss: float = 0.0,
        half_open_seconds: float = 0.0,
        serial_messages: bool = False,
        seed: int | None = None,
        credentials: RuntimeCredentials | None = None,
        limits: TwinLimits | None = None,
        functions: Mapping[str, str] | None = None,
    ) -> None:
        if not 0.0 <= disconnect_loss <= 1.0:
            raise ValueError(f"disconnect_loss must be within 0..1, got {disconnect_loss}")
        if idle_timeout_seconds <= 0 or max_connection_seconds <= 0:
            raise ValueError("idle_timeout_seconds and max_connection_seconds must be positive")
        if half_open_seconds < 0:
            raise ValueError(f"half_open_seconds must be >= 0, got {half_open_seconds}")
        self.routes: dict[str, Handler] = dict(routes or {})
        self.limits = limits
        """What the gateway enforces (``infra.emulator.throttles``); None: nothing."""
        self.functions: dict[str, str] = dict(functions or {})
        """Route key -> the function module that serves it (timeouts, reservations)."""
        self.credentials = credentials or RuntimeCredentials.generate()
        """The credentials every ``@connections`` request must be signed with."""
        self.stage = stage
        self.api_id = api_id
        self.region = region
        self.route_responses = frozenset(route_responses)
        self.mock_routes: dict[str, Any] = dict(mock_routes or {})
        """Route key -> an object with ``answer(request_time_ms, body) -> str``."""
        self.posts_move_last_active = posts_move_last_active
        self.max_frame_bytes = max_frame_bytes
        self.max_message_bytes = max_message_bytes
        self.handler_timeout_seconds = handler_timeout_seconds
        self.idle_timeout_seconds = idle_timeout_seconds
        self.max_connection_seconds = max_connection_seconds
        self.disconnect_loss = disconnect_loss
        self.half_open_seconds = half_open_seconds
        self.serial_messages = serial_messages
        """Run a connection's messages one at a time, in order, ``$disconnect`` after the
        last (a test switch: API Gateway runs them concurrently and unordered, the default;
        ``WebSocketApi._worker``)."""
        self._rng = random.Random(seed)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._host = host
        self._port = port
        self._sock = sock
        self._own_executor = executor is None
        self._executor: Executor = executor or ThreadPoolExecutor(
            max_workers=32, thread_name_prefix="lambda"
        )
        self._web_dir = web_dir
        self._connections: dict[str, Connection] = {}  # postable ones only
        self._seated: set[str] = set()
        """Connections the backend has answered ``session`` (:meth:`seat`): the pool's
        priorities, not an AWS behaviour (``infra.emulator.pool.message_priority``)."""
        self._all: set[Connection] = set()
        self._workers: set[asyncio.Task[None]] = set()
        self._runner: web.AppRunner | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._bound: tuple[str, int] | None = None
        self.app = self._build_app()
        self.observers: list[Callable[[str, str | None], None]] = []
        """Called with (route key, body) for every client message before its handler runs (the
        emulator's bot pools watch ``join`` this way); an observer that raises is logged."""

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> LocalGateway:
        """Bind and serve; returns self."""
        self._loop = asyncio.get_running_loop()
        self._runner = web.AppRunner(self.app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site: web.BaseSite
        if self._sock is not None:
            site = web.SockSite(self._runner, self._sock)
        else:
            site = web.TCPSite(self._runner, self._host, self._port, reuse_address=True)
        await site.start()
        server = site._server  # the asyncio.Server; aiohttp has no public accessor
        assert isinstance(server, asyncio.Server)
        name = server.sockets[0].getsockname()
        self._bound = (str(name[0]), int(name[1]))
        log.info("gateway listening on %s", self.url)
        return self

    async def stop(self) -> None:
        """Close every socket (1001 "Going away"), deliver their ``$disconnect``, stop serving.

        ``disconnect_loss`` applies here too; a half-open connection reports 1006.
        """
        # concurrently: an unresponsive client may take aiohttp's close timeout (10 s)
        await asyncio.gather(
            *(self._close(c, WSCloseCode.GOING_AWAY, "Going away") for c in list(self._all)),
            return_exceptions=True,
        )
        if self._workers:
            await asyncio.gather(*self._workers, return_exceptions=True)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._own_executor:
            self._executor.shutdown(wait=True)

    async def __aenter__(self) -> LocalGateway:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def host(self) -> str:
        assert self._bound is not None, "start() first"
        return self._bound[0]

    @property
    def port(self) -> int:
        assert self._bound is not None, "start() first"
        return self._bound[1]

    @property
    def url(self) -> str:
        """``http://host:port`` — the web client and the Management API endpoint."""
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        """``ws://host:port/ws`` — the WebSocket API."""
        return f"ws://{self.host}:{self.port}/ws"

    @property
    def callback_url(self) -> str:
        """Management API endpoint for boto3 (``endpoint_url``); ``{url}/{stage}`` works too."""
        return self.url

    # -- app -------------------------------------------------------------------------------

    def _build_app(self) -> web.Application:
        app = web.Application(client_max_size=self.max_message_bytes * 4)
        app.router.add_get("/ws", self._websocket)
        app.router.add_route("*", "/@connections/{connection_id}", self._management)
        app.router.add_route("*", "/{stage}/@connections/{connection_id}", self._management)
        app.router.add_get("/", self._root)
        if self._web_dir is not None and self._web_dir.is_dir():
            if CLIENT_DIR.is_dir():  # before "/", which would answer 404 for /client/...
                app.router.add_static("/client/", CLIENT_DIR, show_index=False)
            app.router.add_static("/", self._web_dir, show_index=False)
        return app

    async def _root(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await self._websocket(request)
        index = self._web_dir / "index.html" if self._web_dir is not None else None
        if index is None or not index.is_file():
            raise web.HTTPNotFound(text="no web client (infra/emulator/web/index.html)")
        return web.FileResponse(index)

    def seat(self, connection_id: str, data: bytes) -> None:
        """Note a connection as seated when the backend posts it a ``session`` reply (its
        player is bound); thread-safe (a set's add)."""
        if _SESSION_REPLY in data:
            self._seated.add(connection_id)

    async def _run(self, route_key: str, handler: Handler, event: dict[str, Any]) -> Any:
        context = make_context(
            function_name_for(handler),
            region=self.region,
            timeout_seconds=self.handler_timeout_seconds,
        )
        if isinstance(self._executor, WorkerPool):  # players' routes first (pool docs)
            connection_id = (event.get("requestContext") or {}).get("connectionId")
            priority = message_priority(route_key, connection_id in self._seated)
            if route_key == "$disconnect":
                self._seated.discard(connection_id)
            future = self._executor.submit_at(priority, handler, event, context)
            return await asyncio.wrap_future(future)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, handler, event, context)

    def function_of(self, route_key: str) -> str:
        """The function module serving ``route_key`` (``functions``; else the key itself)."""
        return self.functions.get(route_key, route_key)

    def admit(self, route_key: str, received_ms: int) -> bool:
        """Whether API Gateway's throttles let a message (or ``$connect``) of ``route_key``
        received at ``received_ms`` (UTC ms) through (always, without ``limits``)."""
        throttles = self.limits.throttles if self.limits is not None else None
        return throttles is None or throttles.admit(route_key, received_ms / 1000)

    async def invoke(self, route_key: str, event: dict[str, Any]) -> Any:
        """Run the handler for ``route_key`` in the pool; exceptions propagate. With
        ``limits``: ``TooManyRequestsError`` at once beyond the function's reserved concurrency
        (Lambda rejects, it does not queue), ``FunctionTimeoutError`` past the function's timeout
        (counted from the handler's start; the handler is stopped there, its later effects
        never happen: ``infra.emulator.throttles.Invocation``), after its cold start."""
        handler = self.routes[route_key]
        limits = self.limits
        if limits is None:  # nothing enforced: the handler as it is
            return await self._run(route_key, handler, event)
        function = self.function_of(route_key)
        timeout = limits.timeout_for(function, self.handler_timeout_seconds)
        concurrency = limits.concurrency
        if concurrency is not None and not concurrency.acquire(function):
            raise TooManyRequestsError(f"Rate Exceeded: {function} is at its reserved concurrency")
        cold = limits.cold_starts
        try:
            invocation = Invocation(
                handler,
                event,
                lambda: make_context(
                    function_name_for(handler), region=self.region, timeout_seconds=timeout
                ),
                cold.start(function) if cold is not None else 0.0,
            )
            loop = asyncio.get_running_loop()
            started = loop.create_future()

            def mark_started() -> None:
                if not started.done():
                    started.set_result(None)

            def on_start() -> None:
                loop.call_soon_threadsafe(mark_started)

            invocation.on_start = on_start
            if isinstance(self._executor, WorkerPool):  # players' routes first (pool docs)
                connection_id = (event.get("requestContext") or {}).get("connectionId")
                priority = message_priority(route_key, connection_id in self._seated)
                if route_key == "$disconnect":
                    self._seated.discard(connection_id)
                future = self._executor.submit_at(priority, invocation.run)
            else:
                future = self._executor.submit(invocation.run)
            done = asyncio.wrap_future(future)
            done.add_done_callback(lambda f: f.cancelled() or f.exception())
            await asyncio.wait({started, done}, return_when=asyncio.FIRST_COMPLETED)
            try:
                return await asyncio.wait_for(asyncio.shield(done), timeout)
            except TimeoutError:
                if invocation.stop():
                    log.info("%s timed out after %.3g s", function, timeout)
                    raise FunctionTimeoutError(
                        f"Task timed out after {timeout:.2f} seconds"
                    ) from None
                return await done
        finally:
            if cold is not None:
                cold.end(function)
            if concurrency is not None:
                concurrency.release(function)
