"""Local runtime: an aiohttp server that behaves like an API Gateway WebSocket API.

One port serves three things:

* ``/ws`` (and a WebSocket upgrade on ``/``): the WebSocket API. Each socket gets a connection
  id; ``$connect``, message and ``$disconnect`` events shaped exactly like API Gateway's (checked
  against Powertools' Parser models) go to synchronous Lambda-style handlers, run in a thread pool.
  Route selection expression: ``$request.body.action``; a body that is not a JSON object, an
  ``action`` that is not a string or not a route -> ``$default``.
* ``/@connections/{id}`` and ``/{stage}/@connections/{id}``: the API Gateway Management API
  (POST = send, GET = info, DELETE = close), speaking the wire format boto3's
  ``apigatewaymanagementapi`` client expects, errors included (410 ``GoneException``, ...).
  As on AWS it takes only SigV4-signed requests, and only by the gateway's own
  :attr:`~LocalGateway.credentials` (the runtime hands them to its handlers as Lambda hands
  a function its role's): unsigned -> 403 "Missing Authentication Token", other credentials
  or a wrong signature -> 403 (:mod:`infra.emulator.iam`).
* ``/`` (GET) and other paths: the static web client from ``infra/emulator/web/``.

This module binds the port and runs the handlers; the WebSocket side is
:mod:`infra.emulator.sockets`, the Management API :mod:`infra.emulator.management`, and the
events every handler receives are built by :mod:`infra.emulator.events`.

Fidelity choices (AWS behaviour mirrored unless noted):

* A ``$connect`` handler that raises or answers a non-2xx ``statusCode`` refuses the upgrade with
  that HTTP status (500 when it raised). A missing ``statusCode`` counts as 200 (lenient). A
  ``Sec-WebSocket-Protocol`` header in its response selects the subprotocol.
* The connection is postable only after ``$connect`` succeeded and until the socket closes
  (a POST during ``$connect`` answers 410, as on AWS).
* Messages of one connection are handled one at a time, in arrival order; ``$disconnect`` runs
  after the connection's last message. Different connections run concurrently. (AWS gives no
  ordering guarantee at all; this is the stricter, friendlier behaviour.)
* Sizes (API Gateway quotas, ``shared.protocol.limits``): an inbound frame larger than
  ``max_frame_bytes`` (32 KB), or a message (the frames of one fragmented message, added up)
  larger than ``max_message_bytes`` (128 KB), closes the socket with 1009 "Message too big"; the
  handler never sees that message and ``$disconnect`` reports 1009. Messages up to 128 KB sent in
  frames of at most 32 KB are reassembled and delivered as one event, as API Gateway does.
  Frames are measured on the wire, before aiohttp reassembles them
  (:class:`~infra.emulator.sockets.FrameScanner`).
  ``PostToConnection`` with ``Data`` over 128 KB answers 413 ``PayloadTooLargeException``.
  The local gateway negotiates no ``permessage-deflate``, so sizes are uncompressed payload bytes
  (API Gateway does negotiate it and does not document whether its quotas count compressed
  bytes; counting uncompressed bytes is the stricter reading).
* Idle timeout (``idle_timeout_seconds``, AWS 10 minutes): a connection with no message in
  either direction for that long (inbound data frames and successful ``PostToConnection`` or
  route responses count; WebSocket ping/pong control frames do not, and API Gateway never shows
  them to the backend) is closed with 1001 "Going away" and ``$disconnect`` reports 1001.
* Connection duration (``max_connection_seconds``, AWS 2 hours): at that age the connection is
  closed with 1001 "Going away", however busy, and ``$disconnect`` reports 1001. (1001 is what
  clients observe from API Gateway for both closes; its documentation names no code.)
* Lost ``$disconnect`` (``disconnect_loss``, 0..1, default 0; draws from ``random.Random(seed)``):
  that share of closed connections never runs the ``$disconnect`` handler ("$disconnect is a
  best-effort event", API Gateway developer guide, the ``$connect`` and ``$disconnect`` routes
  page).
* Half-open peers (``half_open_seconds``, default 0 = off): :meth:`LocalGateway.drop` makes a
  client's TCP connection vanish without a close frame (the transport is aborted; the client
  sees 1006). For ``half_open_seconds`` the gateway does not notice, as with a dead TCP peer:
  ``PostToConnection`` answers 200 (the data is discarded), ``GetConnection`` answers, no
  ``$disconnect`` runs. Then (or at the idle or duration limit, or a DELETE, if sooner) the
  connection is gone: 410 ``GoneException`` and ``$disconnect`` with 1006. With 0, a dropped
  connection is gone at once (``$disconnect`` 1006).
* ``GET @connections/{id}`` answers ``connectedAt``, ``identity`` and ``lastActiveAt`` (AWS
  documents it only as "the time in ISO 8601 format for when the connection was last active",
  GetConnection, https://docs.aws.amazon.com/apigateway/latest/api/API_GetConnection.html):
  here the time of the client's last inbound data frame (``$connect`` at first), the reading
  ruling 14's liveness relies on. Whether AWS also moves it on the server's own posts is not
  documented: ``posts_move_last_active`` (default off) makes successful ``PostToConnection``
  and route responses move it too, to exercise that reading. An unknown or closed connection
  answers 410 ``GoneException``.
* Mock routes (``mock_routes``: route key -> ``functions.routes.MockRoute``): answered by the
  gateway itself, as a MOCK integration with a route response is on AWS (``ping`` -> ``pong``):
  no handler runs; the answer is a route response (an outbound message).
* A handler that raises: the client gets ``{"message": "Internal server error", "connectionId",
  "requestId"}``; no route and no ``$default``: ``{"message": "Forbidden", ...}`` (both as AWS).
* A handler's return value is discarded, except for route keys listed in ``route_responses``
  (two-way routes), whose ``body`` is sent back to the caller.
* DELETE closes with 1000 and ``$disconnect`` reports 1000 "Connection Closed Normally".

Quotas: "Amazon API Gateway quotas for configuring and running a WebSocket API" (frame 32 KB,
message 128 KB, idle connection timeout 10 minutes, connection duration 2 hours), as cited in
``shared.protocol.limits``.
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
from infra.emulator.pool import WorkerPool, route_priority
from infra.emulator.sockets import Connection, Handler, WebSocketApi
from shared.protocol.limits import (
    IDLE_TIMEOUT_SECONDS,
    MAX_CONNECTION_SECONDS,
    MAX_FRAME_BYTES,
    MAX_MESSAGE_BYTES,
)

__all__ = ["Handler", "LocalGateway"]  # Handler: the type of ``routes``, from sockets

log = logging.getLogger(__name__)

WEB_DIR = Path(__file__).parent / "web"


class LocalGateway(WebSocketApi, ManagementApi):
    """API Gateway WebSocket API + ``@connections`` Management API + static files, on one port.

    ``routes`` maps route keys (``$connect``, ``$disconnect``, ``$default``, actions) to
    synchronous handlers; they run in ``executor`` (a private thread pool if omitted) with a
    fresh :class:`~infra.emulator.lambda_context.LambdaContext` each. Bind either ``host`` and
    ``port`` (0 = a free port) or pass an already bound ``sock``. Use :meth:`start` / :meth:`stop`
    (or ``async with``); :attr:`url`, :attr:`ws_url` and :attr:`callback_url` are valid after start.

    Limits and failure modes (the module docstring has the details; defaults are AWS's quotas
    from ``shared.protocol.limits``): ``max_frame_bytes`` (32 KB) and ``max_message_bytes``
    (128 KB, inbound messages and ``PostToConnection`` data), ``idle_timeout_seconds`` (600),
    ``max_connection_seconds`` (7200), ``disconnect_loss`` (share of ``$disconnect`` events
    never delivered, 0..1, default 0, seeded by ``seed``), ``half_open_seconds`` (how long a
    :meth:`drop`-ped connection still looks alive, default 0). Times in seconds (floats).
    ``mock_routes`` (answered by the gateway, no handler) and ``posts_move_last_active``
    (``LastActiveAt`` moves on outbound messages too; default: inbound only): module docstring.
    ``credentials``: the only ones the Management API accepts (default: fresh random ones,
    :meth:`~infra.emulator.iam.RuntimeCredentials.generate`); read them back from
    :attr:`credentials` to sign with.
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
        seed: int | None = None,
        credentials: RuntimeCredentials | None = None,
    ) -> None:
        if not 0.0 <= disconnect_loss <= 1.0:
            raise ValueError(f"disconnect_loss must be within 0..1, got {disconnect_loss}")
        if idle_timeout_seconds <= 0 or max_connection_seconds <= 0:
            raise ValueError("idle_timeout_seconds and max_connection_seconds must be positive")
        if half_open_seconds < 0:
            raise ValueError(f"half_open_seconds must be >= 0, got {half_open_seconds}")
        self.routes: dict[str, Handler] = dict(routes or {})
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
            app.router.add_static("/", self._web_dir, show_index=False)
        return app

    async def _root(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await self._websocket(request)
        index = self._web_dir / "index.html" if self._web_dir is not None else None
        if index is None or not index.is_file():
            raise web.HTTPNotFound(text="no web client (infra/emulator/web/index.html)")
        return web.FileResponse(index)

    async def invoke(self, route_key: str, event: dict[str, Any]) -> Any:
        """Run the handler for ``route_key`` in the pool; exceptions propagate."""
        handler = self.routes[route_key]
        context = make_context(
            function_name_for(handler),
            region=self.region,
            timeout_seconds=self.handler_timeout_seconds,
        )
        if isinstance(self._executor, WorkerPool):  # players' routes first (infra.emulator.pool)
            future = self._executor.submit_at(route_priority(route_key), handler, event, context)
            return await asyncio.wrap_future(future)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, handler, event, context)
