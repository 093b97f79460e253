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
  SigV4 headers are ignored.
* ``/`` (GET) and other paths: the static web client from ``infra/emulator/web/``.

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
  Frames are measured on the wire, before aiohttp reassembles them (:class:`FrameScanner`).
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
import base64
import contextlib
import json
import logging
import random
import secrets
import socket
import string
import time
import uuid
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from infra.emulator.lambda_context import DEFAULT_REGION, function_name_for, make_context
from infra.emulator.pool import WorkerPool, route_priority
from shared.protocol.limits import (
    IDLE_TIMEOUT_SECONDS,
    MAX_CONNECTION_SECONDS,
    MAX_FRAME_BYTES,
    MAX_MESSAGE_BYTES,
)

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any], Any], Any]
"""A Lambda handler: ``handler(event, context) -> response`` (synchronous)."""

WEB_DIR = Path(__file__).parent / "web"
_ALNUM = string.ascii_letters + string.digits
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_CLOSE_REASONS = {
    1000: "Connection Closed Normally",
    1001: "Going away",
    1005: "Client-side close frame status not set",
    1006: "Connection closed abnormally",
    1009: "Message too big",
}
_FORBIDDEN = "Forbidden"
_INTERNAL_ERROR = "Internal server error"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def new_id() -> str:
    """An API-Gateway-like id: 15 base64-ish characters and ``=`` (e.g. ``L0SM9cOFvHcCIhw=``).

    Real connection ids end in ``=``; keeping it means the ``%3D`` in Management API paths is
    exercised locally too.
    """
    return "".join(secrets.choice(_ALNUM) for _ in range(15)) + "="


def request_time(ms: int) -> str:
    """API Gateway's ``requestTime``: CLF with English months, ``06/Jan/2023:19:45:06 +0000``."""
    t = time.gmtime(ms / 1000)
    return (
        f"{t.tm_mday:02d}/{_MONTHS[t.tm_mon - 1]}/{t.tm_year}:{time.strftime('%H:%M:%S', t)} +0000"
    )


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def select_route(body: str | None, routes: Collection[str]) -> str:
    """The route key for a message body (``$request.body.action``), ``$default`` if none matches."""
    if body is None:
        return "$default"
    try:
        parsed = json.loads(body)
    except ValueError:
        return "$default"
    action = parsed.get("action") if isinstance(parsed, dict) else None
    if isinstance(action, str) and not action.startswith("$") and action in routes:
        return action
    return "$default"


class FrameScanner:
    """Reads WebSocket frame headers off the raw inbound bytes, ahead of aiohttp's reader.

    aiohttp hands over whole (reassembled) messages only, but API Gateway's quotas are per frame
    (``max_frame_bytes``) and per message (``max_message_bytes``, the frames of one fragmented
    message added up). This wrapper sits where aiohttp's ``WebSocketReader`` sits (the
    connection's payload parser: ``feed_data(bytes) -> (eof, tail)``, ``feed_eof()``), follows
    the frame headers (RFC 6455 §5.2: 2 bytes, 0/2/8 bytes of extended length, 4 bytes of mask)
    and forwards the bytes unchanged. ``on_frame(opcode, fin, length)`` is called at each
    complete header; when it returns False the frame is refused: the bytes from that header on
    are never forwarded (nor is anything after them), so the handler never sees that message.
    """

    def __init__(self, parser: Any, on_frame: Callable[[int, bool, int], bool]) -> None:
        self._parser = parser
        self._on_frame = on_frame
        self._head = bytearray()
        self._remaining = 0  # payload bytes of the current frame still to come
        self.refused = False

    def _header_size(self) -> int:
        """Bytes the current header needs (2 until the length byte is known)."""
        if len(self._head) < 2:
            return 2
        length7 = self._head[1] & 0x7F
        extended = 2 if length7 == 126 else 8 if length7 == 127 else 0
        return 2 + extended + (4 if self._head[1] & 0x80 else 0)

    def _frame(self) -> tuple[int, bool, int]:
        head = self._head
        length = head[1] & 0x7F
        if length == 126:
            length = int.from_bytes(head[2:4], "big")
        elif length == 127:
            length = int.from_bytes(head[2:10], "big")
        return head[0] & 0x0F, bool(head[0] & 0x80), length

    def feed_data(self, data: bytes | bytearray | memoryview) -> tuple[bool, bytes]:
        if self.refused:
            return False, b""
        view = memoryview(data)
        i, size = 0, len(view)
        header_start = 0 if self._head else None  # None: no header under way in this chunk
        while i < size:
            if self._remaining:
                step = min(self._remaining, size - i)
                self._remaining -= step
                i += step
                continue
            if not self._head:
                header_start = i
            need = self._header_size() - len(self._head)
            self._head += view[i : i + need]
            i += min(need, size - i)
            if len(self._head) < self._header_size():
                continue  # the length byte just arrived, or the header goes on in the next chunk
            opcode, fin, length = self._frame()
            self._head.clear()
            if not self._on_frame(opcode, fin, length):
                self.refused = True
                keep = header_start or 0
                if keep:
                    return self._parser.feed_data(bytes(view[:keep]))  # type: ignore[no-any-return]
                return False, b""
            self._remaining = length
        return self._parser.feed_data(data)  # type: ignore[no-any-return]

    def feed_eof(self) -> None:
        self._parser.feed_eof()


class _ScannedWebSocketResponse(web.WebSocketResponse):
    """aiohttp's server WebSocket with a :class:`FrameScanner` in front of its frame reader.

    Uses two private attributes of aiohttp's ``RequestHandler`` (``_payload_parser``, set by
    ``set_parser``, and ``_message_tail``, bytes that arrived with the upgrade); the gateway
    tests break if a new aiohttp renames them.
    """

    def __init__(self, on_frame: Callable[[int, bool, int], bool], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._on_frame = on_frame

    def _post_start(self, request: Any, protocol: Any, writer: Any) -> None:
        handler = request.protocol
        tail = getattr(handler, "_message_tail", b"")
        if tail:
            handler._message_tail = b""  # scanned below, not fed to the reader unseen
        super()._post_start(request, protocol, writer)
        scanner = FrameScanner(handler._payload_parser, self._on_frame)
        handler._payload_parser = scanner
        if tail:
            scanner.feed_data(tail)


@dataclass(eq=False)
class Connection:
    """One WebSocket, as API Gateway would track it.

    Times: ``*_ms`` are UTC epoch milliseconds (what the events and ``GetConnection`` report);
    ``opened_at``, ``active_at`` and ``half_open_until`` are event-loop (monotonic) seconds for
    the idle, duration and half-open limits.
    """

    id: str
    ws: web.WebSocketResponse
    connected_at_ms: int
    source_ip: str
    user_agent: str
    host: str
    last_active_ms: int
    opened_at: float = 0.0
    active_at: float = 0.0
    inbox: asyncio.Queue[tuple[str | None, bool, int] | None] = field(default_factory=asyncio.Queue)
    """Messages waiting for their handler: (body, is base64, UTC ms received)."""
    postable: bool = False
    close_code: int | None = None
    close_reason: str = ""
    message_bytes: int = 0
    """Payload bytes of the inbound message under way (its frames so far)."""
    transport: asyncio.Transport | None = None
    dropped: bool = False
    """The client's TCP connection vanished (:meth:`LocalGateway.drop`): writes are discarded."""
    half_open_until: float | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the gateway is done with the connection (closed, expired, deleted)."""
    closing: bool = False
    """The limits task is closing the socket (it must not be cancelled half way)."""
    limits: asyncio.Task[None] | None = None
    sending: asyncio.Future[bool] | None = None
    """The last accepted post still being written (posts go out in the order accepted)."""


class LocalGateway:
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
    ) -> None:
        if not 0.0 <= disconnect_loss <= 1.0:
            raise ValueError(f"disconnect_loss must be within 0..1, got {disconnect_loss}")
        if idle_timeout_seconds <= 0 or max_connection_seconds <= 0:
            raise ValueError("idle_timeout_seconds and max_connection_seconds must be positive")
        if half_open_seconds < 0:
            raise ValueError(f"half_open_seconds must be >= 0, got {half_open_seconds}")
        self.routes: dict[str, Handler] = dict(routes or {})
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

    def connection_ids(self) -> list[str]:
        """Ids of the connections that can currently be posted to (half-open ones included)."""
        return list(self._connections)

    def drop(self, connection_id: str) -> bool:
        """Make the client's TCP connection vanish without a close frame; False if unknown.

        The transport is aborted (the client sees an abnormal closure, 1006, and may reconnect),
        but for ``half_open_seconds`` the gateway behaves as with a dead TCP peer it has not
        noticed yet: ``PostToConnection`` answers 200 and discards the data, ``GetConnection``
        answers, ``$disconnect`` waits. Then the connection is gone (410) and ``$disconnect``
        reports 1006. With ``half_open_seconds`` 0 that happens at once.
        """
        conn = self._connections.get(connection_id)
        if conn is None or conn.dropped or conn.closing:
            return False
        conn.dropped = True
        if conn.close_code is None:
            conn.close_code, conn.close_reason = 1006, _CLOSE_REASONS[1006]
        loop = asyncio.get_running_loop()
        if self.half_open_seconds > 0:
            conn.half_open_until = loop.time() + self.half_open_seconds
            self._start_limits(conn)  # the half-open period may end before the other limits
        else:
            conn.postable = False
            self._connections.pop(conn.id, None)
            conn.ended.set()
        if conn.transport is not None:
            conn.transport.abort()
        log.info("connection %s dropped (half-open for %ss)", conn.id, self.half_open_seconds)
        return True

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

    # -- WebSocket API ---------------------------------------------------------------------

    def _request_context(
        self,
        conn: Connection,
        route_key: str,
        event_type: str,
        received_ms: int | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        now = _now_ms() if received_ms is None else received_ms
        request_id = new_id()
        ctx: dict[str, Any] = {"routeKey": route_key}
        ctx.update(extra)
        ctx.update(
            {
                "eventType": event_type,
                "extendedRequestId": request_id,
                "requestTime": request_time(now),
                "messageDirection": "IN",
                "stage": self.stage,
                "connectedAt": conn.connected_at_ms,
                "requestTimeEpoch": now,
                "identity": {"sourceIp": conn.source_ip, "userAgent": conn.user_agent},
                "requestId": request_id,
                "domainName": conn.host,
                "connectionId": conn.id,
                "apiId": self.api_id,
            }
        )
        return ctx

    def connect_event(self, conn: Connection, request: web.Request) -> dict[str, Any]:
        """The ``$connect`` event for ``request`` (headers, query string, requestContext)."""
        headers: dict[str, str] = {}
        multi: dict[str, list[str]] = {}
        for raw_name, raw_value in request.raw_headers:
            name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
            headers[name] = value
            multi.setdefault(name, []).append(value)
        forwarded = {
            "X-Amzn-Trace-Id": f"Root=1-{conn.connected_at_ms // 1000:08x}-{uuid.uuid4().hex[:24]}",
            "X-Forwarded-For": conn.source_ip,
            "X-Forwarded-Port": str(self.port),
            "X-Forwarded-Proto": "http",
        }
        for name, value in forwarded.items():
            headers.setdefault(name, value)
            multi.setdefault(name, [value])
        event: dict[str, Any] = {"headers": headers, "multiValueHeaders": multi}
        if request.query:
            # API Gateway omits both keys when there is no query string.
            event["queryStringParameters"] = {k: request.query.getall(k)[-1] for k in request.query}
            event["multiValueQueryStringParameters"] = {
                k: request.query.getall(k) for k in request.query
            }
        event["requestContext"] = self._request_context(conn, "$connect", "CONNECT")
        event["isBase64Encoded"] = False
        return event

    def message_event(
        self,
        conn: Connection,
        route_key: str,
        body: str | None,
        is_base64: bool,
        received_ms: int | None = None,
    ) -> dict[str, Any]:
        """A message event for ``route_key`` carrying ``body`` as received. ``requestTimeEpoch``
        is ``received_ms`` (UTC ms; default now): when the message reached the gateway, not
        when its handler runs (a connection's messages wait for the one before; a guess counts
        by the time API Gateway received it: shared/protocol/README.md)."""
        context = self._request_context(conn, route_key, "MESSAGE", received_ms, messageId=new_id())
        return {"requestContext": context, "body": body, "isBase64Encoded": is_base64}

    def disconnect_event(self, conn: Connection) -> dict[str, Any]:
        """The ``$disconnect`` event (headers as API Gateway sends them: mostly empty)."""
        code = conn.close_code if conn.close_code is not None else 1006
        reason = conn.close_reason or _CLOSE_REASONS.get(code, "")
        headers = {"Host": conn.host, "x-api-key": "", "X-Forwarded-For": "", "x-restapi": ""}
        return {
            "headers": headers,
            "multiValueHeaders": {k: [v] for k, v in headers.items()},
            "requestContext": self._request_context(
                conn,
                "$disconnect",
                "DISCONNECT",
                disconnectStatusCode=code,
                disconnectReason=reason,
            ),
            "isBase64Encoded": False,
        }

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

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        if not web.WebSocketResponse().can_prepare(request).ok:
            # not an upgrade: refuse before $connect runs (no handler side effects)
            return web.json_response({"message": "Bad Request"}, status=400)
        now = _now_ms()

        def on_frame(opcode: int, fin: bool, length: int) -> bool:
            return self._on_frame(conn, opcode, fin, length)  # frames come after the upgrade

        conn = Connection(
            id=new_id(),
            ws=self._new_socket(on_frame),
            connected_at_ms=now,
            source_ip=request.remote or "127.0.0.1",
            user_agent=request.headers.get("User-Agent", ""),
            host=request.host,
            last_active_ms=now,
        )
        if "$connect" in self.routes:
            refusal, protocol = await self._run_connect(conn, request)
            if refusal is not None:
                return refusal
            if protocol:
                conn.ws = self._new_socket(on_frame, protocol)
        await conn.ws.prepare(request)
        conn.transport = request.transport
        conn.opened_at = conn.active_at = asyncio.get_running_loop().time()
        conn.postable = True
        self._connections[conn.id] = conn
        self._all.add(conn)
        worker = asyncio.create_task(self._worker(conn), name=f"connection-{conn.id}")
        self._workers.add(worker)
        worker.add_done_callback(self._workers.discard)
        self._start_limits(conn)
        try:
            await self._read(conn)
            if conn.dropped:  # half-open: the gateway has not noticed yet
                await conn.ended.wait()
        finally:
            conn.postable = False
            self._connections.pop(conn.id, None)
            conn.ended.set()
            await self._stop_limits(conn)
            conn.inbox.put_nowait(None)  # after the last message: $disconnect
        await asyncio.shield(worker)
        return conn.ws

    def _new_socket(
        self, on_frame: Callable[[int, bool, int], bool], protocol: str | None = None
    ) -> _ScannedWebSocketResponse:
        """A server socket whose frames go through ``on_frame`` (size quotas; no compression)."""
        return _ScannedWebSocketResponse(
            on_frame,
            # the scanner enforces the quota; aiohttp's own check (a backstop) refuses a
            # message of exactly max_msg_size bytes, hence + 1
            max_msg_size=self.max_message_bytes + 1,
            compress=False,
            protocols=(protocol,) if protocol else (),
        )

    def _on_frame(self, conn: Connection, opcode: int, fin: bool, length: int) -> bool:
        """An inbound frame header (see :class:`FrameScanner`); False refuses it (1009)."""
        if opcode >= 0x8:  # close, ping, pong: not messages, not activity
            return True
        conn.message_bytes = length if opcode else conn.message_bytes + length
        if length > self.max_frame_bytes or conn.message_bytes > self.max_message_bytes:
            log.info(
                "connection %s: frame of %d bytes (message %d bytes so far) is over the quota;"
                " closing with 1009",
                conn.id,
                length,
                conn.message_bytes,
            )
            self._spawn(self._close(conn, WSCloseCode.MESSAGE_TOO_BIG, "Message too big"))
            return False
        if fin:
            conn.message_bytes = 0
        self._touch(conn, inbound=True)
        return True

    def _touch(self, conn: Connection, *, inbound: bool) -> None:
        """Activity: the idle timer (either direction) and ``LastActiveAt`` (inbound, or
        outbound too with ``posts_move_last_active``)."""
        if inbound or self.posts_move_last_active:
            conn.last_active_ms = _now_ms()
        conn.active_at = asyncio.get_running_loop().time()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- limits: idle timeout, connection duration, half-open period ------------------------

    def _start_limits(self, conn: Connection) -> None:
        if conn.limits is not None and not conn.closing:
            conn.limits.cancel()
        conn.limits = asyncio.get_running_loop().create_task(
            self._enforce_limits(conn), name=f"limits-{conn.id}"
        )

    async def _stop_limits(self, conn: Connection) -> None:
        task = conn.limits
        if task is None or task is asyncio.current_task():
            return
        if conn.closing:
            await asyncio.gather(asyncio.shield(task), return_exceptions=True)
        else:
            task.cancel()

    def _due(self, conn: Connection) -> float:
        """Loop time at which a limit ends the connection (activity may push it later)."""
        due = min(
            conn.active_at + self.idle_timeout_seconds,
            conn.opened_at + self.max_connection_seconds,
        )
        if conn.half_open_until is not None:
            due = min(due, conn.half_open_until)
        return due

    async def _enforce_limits(self, conn: Connection) -> None:
        loop = asyncio.get_running_loop()
        while (wait := self._due(conn) - loop.time()) > 0:
            await asyncio.sleep(wait)
        conn.closing = True
        if conn.dropped:
            log.info("connection %s: half-open peer given up", conn.id)
        else:
            idle = loop.time() - conn.active_at >= self.idle_timeout_seconds
            log.info(
                "connection %s: %s; closing with 1001",
                conn.id,
                "idle timeout" if idle else "maximum connection duration",
            )
        await self._close(conn, WSCloseCode.GOING_AWAY, _CLOSE_REASONS[1001])

    async def _run_connect(
        self, conn: Connection, request: web.Request
    ) -> tuple[web.Response | None, str | None]:
        """Run ``$connect``; (a refusal response or None, the selected subprotocol or None)."""
        try:
            result = await self.invoke("$connect", self.connect_event(conn, request))
        except Exception:  # the Lambda boundary: any handler failure refuses the connection
            log.exception("$connect handler failed; connection refused")
            return web.json_response({"message": _INTERNAL_ERROR}, status=500), None
        status = 200
        headers: dict[str, str] = {}
        if isinstance(result, dict):
            status = int(result.get("statusCode", 200))
            headers = {str(k): str(v) for k, v in (result.get("headers") or {}).items()}
        if not 200 <= status < 300:
            body = result.get("body") if isinstance(result, dict) else None
            return web.Response(status=status, text=body if isinstance(body, str) else None), None
        protocol = next(
            (v for k, v in headers.items() if k.lower() == "sec-websocket-protocol"), None
        )
        return None, protocol

    async def _read(self, conn: Connection) -> None:
        ws = conn.ws
        while True:
            msg = await ws.receive()
            if msg.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                if conn.dropped:  # read before the drop: a vanished peer's last bytes are lost
                    continue
                if msg.type is WSMsgType.TEXT:
                    conn.inbox.put_nowait((msg.data, False, _now_ms()))
                else:
                    conn.inbox.put_nowait((base64.b64encode(msg.data).decode(), True, _now_ms()))
            elif msg.type is WSMsgType.CLOSE:
                if conn.close_code is None:
                    conn.close_code = int(msg.data) if msg.data else 1005
                    conn.close_reason = msg.extra or ""
                await ws.close()
                return
            else:  # CLOSING, CLOSED, ERROR: the socket is gone
                if conn.close_code is None:
                    too_big = msg.type is WSMsgType.ERROR and ws.close_code == 1009
                    conn.close_code = 1009 if too_big else (ws.close_code or 1006)
                return

    async def _close(self, conn: Connection, code: int, reason: str) -> None:
        """Close from the server side, recording what ``$disconnect`` will report.

        A half-open connection has no socket left to close: it just ends (1006 stays).
        """
        conn.postable = False
        self._connections.pop(conn.id, None)
        if conn.close_code is None:
            conn.close_code, conn.close_reason = int(code), reason
        if conn.dropped:
            conn.ended.set()
            return
        await conn.ws.close(code=code, message=reason.encode())

    async def _worker(self, conn: Connection) -> None:
        """Handle one connection's messages in order, then its ``$disconnect``."""
        try:
            while (item := await conn.inbox.get()) is not None:
                body, is_base64, received_ms = item
                route = select_route(
                    None if is_base64 else body, self.routes.keys() | self.mock_routes.keys()
                )
                await self._dispatch(conn, route, body, is_base64, received_ms)
            if "$disconnect" in self.routes and self._rng.random() < self.disconnect_loss:
                log.info("$disconnect of %s lost (disconnect_loss)", conn.id)
            elif "$disconnect" in self.routes:
                try:
                    await self.invoke("$disconnect", self.disconnect_event(conn))
                except Exception:  # the Lambda boundary: AWS just logs a failed $disconnect
                    log.exception("$disconnect handler failed for %s", conn.id)
        finally:
            self._all.discard(conn)

    async def _dispatch(
        self, conn: Connection, route: str, body: str | None, b64: bool, received_ms: int
    ) -> None:
        for observe in self.observers:
            try:
                observe(route, None if b64 else body)
            except Exception:  # an observer never breaks the connection
                log.exception("message observer failed for route %s", route)
        event = self.message_event(conn, route, body, b64, received_ms)
        request_id = event["requestContext"]["requestId"]
        mock = self.mock_routes.get(route)
        if mock is not None:  # MOCK integration + route response: no handler runs
            answer = mock.answer(event["requestContext"]["requestTimeEpoch"], body)
            await self._send(conn, answer.encode())
            return
        if route not in self.routes:
            await self._send_error(conn, _FORBIDDEN, request_id)
            return
        try:
            result = await self.invoke(route, event)
        except Exception:  # the Lambda boundary: the client hears "Internal server error"
            log.exception("handler for route %s failed (connection %s)", route, conn.id)
            await self._send_error(conn, _INTERNAL_ERROR, request_id)
            return
        if route in self.route_responses and isinstance(result, dict) and "body" in result:
            await self._send(conn, str(result["body"]).encode())

    async def _send_error(self, conn: Connection, message: str, request_id: str) -> None:
        payload = {"message": message, "connectionId": conn.id, "requestId": request_id}
        await self._send(conn, json.dumps(payload).encode())

    async def _send(self, conn: Connection, data: bytes) -> bool:
        """Send ``data`` as a text frame (binary if not UTF-8); False if the socket is gone.

        To a half-open connection (:meth:`drop`): True, and the data goes nowhere.
        """
        if not conn.postable:
            return False
        if conn.dropped:
            self._touch(conn, inbound=False)
            return True
        if conn.ws.closed:
            return False
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        try:
            if text is None:
                await conn.ws.send_bytes(data)
            else:
                await conn.ws.send_str(text)
        except (ConnectionError, RuntimeError):  # closed under us (aiohttp raises both)
            return False
        self._touch(conn, inbound=False)
        return True

    # -- Management API --------------------------------------------------------------------

    @staticmethod
    def _error(status: int, error_type: str, message: str | None = None) -> ManagementAnswer:
        """An error as API Gateway's Management API sends it (boto3 reads the header)."""
        return ManagementAnswer(
            status,
            {
                "Content-Type": "application/json",
                "x-amzn-ErrorType": error_type,
                "x-amzn-RequestId": _request_id(),
            },
            json.dumps({"message": message}).encode(),
        )

    async def _management(self, request: web.Request) -> web.StreamResponse:
        """The HTTP ``@connections`` route: :meth:`manage` on the wire."""
        data = await request.read() if request.method == "POST" else b""
        answer = await self.manage(request.method, request.match_info["connection_id"], data)
        return web.Response(status=answer.status, headers=answer.headers, body=answer.body)

    async def manage(self, method: str, connection_id: str, data: bytes = b"") -> ManagementAnswer:
        """One Management API call: ``POST`` (PostToConnection, ``data`` sent as one message),
        ``GET`` (GetConnection) or ``DELETE`` (DeleteConnection) on ``connection_id``.

        Returns what API Gateway answers on the wire: 200 (POST), 200 with the JSON
        ``connectedAt``/``identity``/``lastActiveAt`` (GET), 204 (DELETE); errors with their
        ``x-amzn-ErrorType``: 410 ``GoneException`` (unknown, closed or not yet connected),
        413 ``PayloadTooLargeException`` (``data`` over ``max_message_bytes``), 403
        ``ForbiddenException`` (another method). Both the HTTP route and the in-process
        transport (:mod:`infra.emulator.inprocess`) answer through here. Runs on the gateway's
        event loop.
        """
        if method not in ("POST", "GET", "DELETE"):
            return self._error(403, "ForbiddenException", "Forbidden")
        if method == "POST":
            accepted = self._accept_post(connection_id, data)
            if isinstance(accepted, ManagementAnswer):
                return accepted
            assert accepted.sending is not None
            if not await asyncio.shield(accepted.sending):  # the HTTP route waits for the write
                return self._error(410, "GoneException")
            return ManagementAnswer(200, {"x-amzn-RequestId": _request_id()}, b"")
        conn = self._connections.get(connection_id)
        if conn is None or not conn.postable:
            return self._error(410, "GoneException")
        ok_headers = {"x-amzn-RequestId": _request_id()}
        if method == "GET":
            info = {
                "connectedAt": _iso(conn.connected_at_ms),
                "identity": {"sourceIp": conn.source_ip, "userAgent": conn.user_agent},
                "lastActiveAt": _iso(conn.last_active_ms),
            }
            headers = ok_headers | {"Content-Type": "application/json"}
            return ManagementAnswer(200, headers, json.dumps(info).encode())
        with contextlib.suppress(ConnectionError):
            await self._close(conn, WSCloseCode.OK, _CLOSE_REASONS[1000])
        return ManagementAnswer(204, ok_headers, b"")

    def manage_threadsafe(
        self, method: str, connection_id: str, data: bytes = b""
    ) -> ManagementAnswer:
        """:meth:`manage` from another thread (a handler in the worker pool). Raises
        ``RuntimeError`` before :meth:`start` or on the event loop's own thread.

        A ``POST`` (PostToConnection) is answered here, as API Gateway answers once it has
        accepted the message: 413 ``PayloadTooLargeException`` over the limit, 410
        ``GoneException`` for a connection that is unknown, not yet connected or closed, else
        200 — and the message is handed to the event loop to be written, after every message
        accepted before it for that connection (:meth:`_post_accepted`). The handler does not
        wait for the write, so a post costs the worker no round trip through the loop (on AWS
        a connection that closes after the 200 loses the message the same way). ``GET`` and
        ``DELETE`` block until the loop has answered."""
        loop = self._loop
        if loop is None or loop.is_closed():
            raise RuntimeError("the gateway is not running")
        if _running_loop() is loop:
            raise RuntimeError("manage_threadsafe called on the gateway's event loop")
        if method == "POST":
            accepted = self._accept_post(connection_id, data, loop)
            if isinstance(accepted, ManagementAnswer):
                return accepted
            return ManagementAnswer(200, {"x-amzn-RequestId": _request_id()}, b"")
        future = asyncio.run_coroutine_threadsafe(self.manage(method, connection_id, data), loop)
        return future.result()

    def _accept_post(
        self,
        connection_id: str,
        data: bytes,
        from_thread: asyncio.AbstractEventLoop | None = None,
    ) -> Connection | ManagementAnswer:
        """A PostToConnection's checks, as API Gateway makes them before it answers: 413
        ``PayloadTooLargeException`` over ``max_message_bytes``; 410 ``GoneException`` for a
        connection unknown, not yet connected or closed (a half-open one accepts). Accepted:
        the message is queued behind the connection's earlier ones (:meth:`_post_accepted`; on
        ``from_thread``'s loop when called from another thread) and the connection returned."""
        if len(data) > self.max_message_bytes:
            return self._error(413, "PayloadTooLargeException", "Request Entity Too Large")
        conn = self._connections.get(connection_id)
        if conn is None or not conn.postable or (not conn.dropped and conn.ws.closed):
            return self._error(410, "GoneException")
        if from_thread is None:
            self._post_accepted(conn, data)
        else:
            from_thread.call_soon_threadsafe(self._post_accepted, conn, data)
        return conn

    def _post_accepted(self, conn: Connection, data: bytes) -> None:
        """On the loop: write ``data`` to ``conn`` once the posts accepted before it are out."""
        previous = conn.sending

        async def send() -> bool:
            if previous is not None and not previous.done():
                with contextlib.suppress(Exception):
                    await previous
            return await self._send(conn, data)

        conn.sending = asyncio.ensure_future(send())


def _request_id() -> str:
    """An ``x-amzn-RequestId`` (a random UUID; ``random``, not ``os.urandom``: no system call)."""
    return str(uuid.UUID(int=random.getrandbits(128), version=4))


@dataclass(frozen=True)
class ManagementAnswer:
    """A Management API answer: HTTP ``status``, ``headers``, ``body`` (bytes; JSON or empty)."""

    status: int
    headers: dict[str, str]
    body: bytes


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
