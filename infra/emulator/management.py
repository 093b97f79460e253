"""The local gateway's Management API: ``POST``/``GET``/``DELETE`` on ``@connections/{id}``.

:class:`ManagementApi` (a mixin of :class:`~infra.emulator.gateway.LocalGateway`) answers as
API Gateway does on the wire, for boto3's ``apigatewaymanagementapi`` client: status, headers
(``x-amzn-ErrorType``: 410 ``GoneException``, 413 ``PayloadTooLargeException``, ...) and body.
AWS: https://docs.aws.amazon.com/apigateway/latest/api/API_PostToConnection.html (and siblings).

Only the runtime's own handlers may call it, as only principals allowed
``execute-api:ManageConnections`` may on AWS: every request, over HTTP or in-process, must be
SigV4-signed with the gateway's :attr:`credentials` (:meth:`ManagementApi.authorize`,
:mod:`infra.emulator.iam`); anything else is answered 403 and nothing is sent or closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from aiohttp import WSCloseCode, web

from infra.emulator.iam import RuntimeCredentials, verify
from infra.emulator.sockets import CLOSE_REASONS, Connection


class ManagementApi:
    """The ``@connections`` API of :class:`~infra.emulator.gateway.LocalGateway` (a mixin: it
    reads the gateway's connections and closes and writes through its WebSocket side)."""

    if TYPE_CHECKING:
        credentials: RuntimeCredentials
        max_message_bytes: int
        _connections: dict[str, Connection]
        _loop: asyncio.AbstractEventLoop | None

        async def _close(self, conn: Connection, code: int, reason: str) -> None: ...

        async def _send(self, conn: Connection, data: bytes) -> bool: ...

        def seat(self, connection_id: str, data: bytes) -> None: ...

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

    def authorize(
        self, method: str, url: str, headers: Iterable[tuple[str, str | bytes]], body: bytes
    ) -> ManagementAnswer | None:
        """None when the request (``url`` as sent, every received header, the body) is
        SigV4-signed with :attr:`credentials`; else API Gateway's 403 for it: ``Missing
        Authentication Token`` when unsigned, ``UnrecognizedClientException`` for other
        credentials, ``InvalidSignatureException`` for a wrong or stale signature
        (:func:`infra.emulator.iam.verify`). Pure computation: any thread may call it."""
        refusal = verify(self.credentials, method, url, headers, body)
        if refusal is None:
            return None
        return self._error(403, refusal.error_type, refusal.message)

    async def _management(self, request: web.Request) -> web.StreamResponse:
        """The HTTP ``@connections`` route: :meth:`authorize`, then :meth:`manage`."""
        data = await request.read()
        url = f"{request.scheme}://{request.host}{request.raw_path}"
        answer = self.authorize(request.method, url, request.headers.items(), data)
        if answer is None:
            if request.method != "POST":
                data = b""
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
        transport (:mod:`infra.emulator.inprocess`) answer through here, each after
        :meth:`authorize` let the request in. Runs on the gateway's event loop.
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
            await self._close(conn, WSCloseCode.OK, CLOSE_REASONS[1000])
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
        self.seat(connection_id, data)
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


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"
