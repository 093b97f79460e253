"""The local gateway's WebSocket side: sockets, frames, size and time limits, message dispatch.

:class:`WebSocketApi` is the half of :class:`~infra.emulator.gateway.LocalGateway` that accepts
upgrades, runs ``$connect``/messages/``$disconnect`` (events from :mod:`infra.emulator.events`)
and closes connections (1009 over a size quota, 1001 at the idle or duration limit). Quotas:
"Amazon API Gateway quotas for configuring and running a WebSocket API" (shared.protocol.limits).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import random
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import WSCloseCode, WSMsgType, web

from infra.emulator import events
from infra.emulator.events import new_id
from infra.emulator.throttles import TOO_MANY_REQUESTS, throttled_frame

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any], Any], Any]
"""A Lambda handler: ``handler(event, context) -> response`` (synchronous)."""

CLOSE_REASONS = {
    1000: "Connection Closed Normally",
    1001: "Going away",
    1005: "Client-side close frame status not set",
    1006: "Connection closed abnormally",
    1009: "Message too big",
}
"""Close code -> the reason ``$disconnect`` reports when the closer gave none."""
_FORBIDDEN = "Forbidden"
_INTERNAL_ERROR = "Internal server error"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def select_route(body: str | None, routes: Collection[str]) -> str:
    """The route key for a message body (``$request.body.action``), ``$default`` if none matches.

    A body the expression cannot be evaluated on goes to ``$default`` too, as on AWS ("If the
    route selection expression cannot be evaluated against the message or if no matching route
    is found, API Gateway invokes the $default route"; "Create routes for WebSocket APIs in API
    Gateway", https://docs.aws.amazon.com/apigateway/latest/developerguide/websocket-api-develop-routes.html):
    not JSON, and JSON nested deeper than the parser goes (``RecursionError``, not a
    ``ValueError``: e.g. ``[[[[...]]]]`` some 10,000 deep, which fits in one 32 KB frame)."""
    if body is None:
        return "$default"
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
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


class WebSocketApi:
    """The WebSocket API of :class:`~infra.emulator.gateway.LocalGateway` (a mixin: the
    gateway's constructor sets the attributes declared below; see its docstring)."""

    if TYPE_CHECKING:
        routes: dict[str, Handler]
        mock_routes: dict[str, Any]
        route_responses: frozenset[str]
        observers: list[Callable[[str, str | None], None]]
        stage: str
        api_id: str
        posts_move_last_active: bool
        max_frame_bytes: int
        max_message_bytes: int
        idle_timeout_seconds: float
        max_connection_seconds: float
        disconnect_loss: float
        half_open_seconds: float
        serial_messages: bool
        _rng: random.Random
        _tasks: set[asyncio.Task[Any]]
        _connections: dict[str, Connection]
        _all: set[Connection]
        _workers: set[asyncio.Task[None]]

        @property
        def port(self) -> int: ...

        async def invoke(self, route_key: str, event: dict[str, Any]) -> Any: ...

        def admit(self, route_key: str, received_ms: int) -> bool: ...

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
            conn.close_code, conn.close_reason = 1006, CLOSE_REASONS[1006]
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

    def _request_context(
        self,
        conn: Connection,
        route_key: str,
        received_ms: int | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        now = _now_ms() if received_ms is None else received_ms
        return events.request_context(
            route_key,
            connection_id=conn.id,
            connected_at_ms=conn.connected_at_ms,
            request_time_ms=now,
            source_ip=conn.source_ip,
            user_agent=conn.user_agent,
            domain_name=conn.host,
            stage=self.stage,
            api_id=self.api_id,
            **extra,
        )

    def connect_event(self, conn: Connection, request: web.Request) -> dict[str, Any]:
        """The ``$connect`` event for ``request`` (headers, query string, requestContext)."""
        headers, multi = events.connect_headers(
            (
                (name.decode("latin-1"), value.decode("latin-1"))
                for name, value in request.raw_headers
            ),
            connected_at_ms=conn.connected_at_ms,
            source_ip=conn.source_ip,
            port=self.port,
        )
        query = {k: request.query.getall(k) for k in request.query}
        context = self._request_context(conn, "$connect")
        return events.connect_event(context, headers, multi, query)

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
        when its handler runs (its invocation may start late: a busy pool, or the serial
        mode; a guess counts by the time API Gateway received it: shared/protocol/README.md)."""
        context = self._request_context(conn, route_key, received_ms, messageId=new_id())
        return events.message_event(context, body, is_base64)

    def disconnect_event(self, conn: Connection) -> dict[str, Any]:
        """The ``$disconnect`` event (headers as API Gateway sends them: mostly empty)."""
        code = conn.close_code if conn.close_code is not None else 1006
        reason = conn.close_reason or CLOSE_REASONS.get(code, "")
        headers = {"Host": conn.host, "x-api-key": "", "X-Forwarded-For": "", "x-restapi": ""}
        context = self._request_context(
            conn, "$disconnect", disconnectStatusCode=code, disconnectReason=reason
        )
        return events.disconnect_event(context, headers)

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
        if not self.admit("$connect", now):  # API Gateway's throttle: no $connect runs
            return web.json_response({"message": TOO_MANY_REQUESTS}, status=429)
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
        await self._close(conn, WSCloseCode.GOING_AWAY, CLOSE_REASONS[1001])

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
        """Run one connection's messages, then its ``$disconnect``.

        By default as API Gateway does: each message is its own invocation, started as it
        arrives and running concurrently with the others, and ``$disconnect`` starts at the
        close without waiting for the messages still running (nothing orders a connection's
        invocations: "each message is an independent invocation"; AWS, "Working with routes
        for WebSocket APIs in API Gateway",
        https://docs.aws.amazon.com/apigateway/latest/developerguide/websocket-api-develop-routes.html).
        With ``serial_messages`` (a test switch, not AWS's behaviour): one at a time, in
        order, ``$disconnect`` after the last."""
        running: set[asyncio.Task[None]] = set()
        try:
            while (item := await conn.inbox.get()) is not None:
                body, is_base64, received_ms = item
                route = select_route(
                    None if is_base64 else body, self.routes.keys() | self.mock_routes.keys()
                )
                dispatch = self._dispatch(conn, route, body, is_base64, received_ms)
                if self.serial_messages:
                    await dispatch
                    continue
                task = asyncio.create_task(dispatch, name=f"message-{conn.id}")
                running.add(task)
                task.add_done_callback(running.discard)
            if "$disconnect" in self.routes and self._rng.random() < self.disconnect_loss:
                log.info("$disconnect of %s lost (disconnect_loss)", conn.id)
            elif "$disconnect" in self.routes:
                try:
                    await self.invoke("$disconnect", self.disconnect_event(conn))
                except Exception:  # the Lambda boundary: AWS just logs a failed $disconnect
                    log.exception("$disconnect handler failed for %s", conn.id)
            if running:
                await asyncio.gather(*running, return_exceptions=True)
        finally:
            self._all.discard(conn)

    async def _dispatch(
        self, conn: Connection, route: str, body: str | None, b64: bool, received_ms: int
    ) -> None:
        if not self.admit(route, received_ms):  # throttled: no integration, API GW's frame
            request_id = new_id()
            await self._send(conn, throttled_frame(conn.id, request_id).encode())
            return
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
