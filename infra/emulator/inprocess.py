"""Local runtime: in-process transports for the handlers' boto3 clients. A ``before-send`` hook
answers Management API calls from the local gateway (signature checked) and DynamoDB calls from
the embedded moto (:func:`moto_dynamodb_answer`), skipping only the wire; each answers only its
own endpoint. :func:`register` them on a boto3 session before building its clients. How:
``shared/domain/RULINGS.md``, Design notes, "Local runtime".
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from io import BytesIO
from typing import Any
from urllib.parse import unquote, urlsplit

from botocore.awsrequest import AWSPreparedRequest, AWSResponse, HTTPHeaders

from infra.emulator.gateway import LocalGateway

CONNECTIONS_PATH = "/@connections/"


class _RawBody(BytesIO):
    """The raw body botocore reads from an ``AWSResponse`` (``read`` and ``stream``)."""

    def stream(self, **_: Any) -> Any:
        while chunk := self.read(65536):
            yield chunk


def _response(url: str, status: int, headers: dict[str, str], body: bytes) -> AWSResponse:
    return AWSResponse(url, status, headers, _RawBody(body))  # type: ignore[arg-type]


def _under(url: str, prefix: str) -> bool:
    """Whether ``url`` is ``prefix`` or below it (``http://h:80`` is not under ``http://h:8``)."""
    return url.startswith(prefix) and url[len(prefix) : len(prefix) + 1] in ("", "/", "?")


def _body(request: AWSPreparedRequest) -> bytes:
    body = request.body
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, bytes | bytearray):
        return bytes(body)
    data: bytes | str = body.read()  # a file-like body
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


class ConnectionsTransport:
    """``before-send`` handler: Management API calls to ``callback_url`` answered by
    ``gateway.manage`` in-process (PostToConnection, GetConnection, DeleteConnection), with the
    status, headers and body the HTTP route sends (403 for a request not signed with the
    gateway's credentials, 410 ``GoneException``, 413 ``PayloadTooLargeException``, ...).
    Called on a worker thread; on the gateway's own event
    loop thread (where it would wait for itself), or while ``gateway`` is None (not yet built),
    the request goes over HTTP instead."""

    def __init__(self, gateway: LocalGateway | None, callback_url: str) -> None:
        self.gateway = gateway
        self.prefix = callback_url.rstrip("/")

    def __call__(self, request: AWSPreparedRequest, **_: Any) -> AWSResponse | None:
        url = request.url
        gateway = self.gateway
        if gateway is None or not _under(url, self.prefix):
            return None
        path = urlsplit(url).path
        at = path.find(CONNECTIONS_PATH)
        if at < 0:
            return None
        connection_id = unquote(path[at + len(CONNECTIONS_PATH) :])
        body = _body(request)
        answer = gateway.authorize(request.method, url, request.headers.items(), body)
        if answer is None:
            try:
                answer = gateway.manage_threadsafe(request.method, connection_id, body)
            except RuntimeError:  # the gateway's own thread, or not running: use the wire
                return None
        return _response(url, answer.status, answer.headers, answer.body)


def moto_dynamodb_answer(
    method: str, url: str, headers: dict[str, str], body: bytes, lock: threading.Lock
) -> tuple[int, dict[str, str], bytes]:
    """``(status, headers, body)`` of moto's DynamoDB request handler for one HTTP request
    (``url`` with its path and query, ``headers`` as botocore signed them), under ``lock``:
    the code the embedded server's HTTP route runs, without the socket. moto's errors
    (``ConditionalCheckFailedException``, validation, ...) come back as their HTTP answers."""
    from moto.core.request import normalize_request
    from moto.dynamodb.responses import DynamoHandler
    from werkzeug.exceptions import HTTPException  # what moto's errors derive from

    request = AWSPreparedRequest(
        method, url, HTTPHeaders.from_dict(headers), body, stream_output=False
    )
    with lock:
        normalized = normalize_request(request)
        try:
            status, answer_headers, answer = DynamoHandler.dispatch(
                normalized, normalized.raw_url, normalized.headers
            )
        except HTTPException as exc:
            status, answer_headers, answer = exc.code, exc.get_headers(), exc.get_body()
    if isinstance(answer, str):
        answer = answer.encode("utf-8")
    return int(status), {k: str(v) for k, v in dict(answer_headers).items()}, bytes(answer)


class DynamoTransport:
    """``before-send`` handler: DynamoDB calls to ``endpoint`` answered by moto's DynamoDB
    request handler in this process, one at a time under ``lock`` (the embedded server's).

    ``answer`` replaces the handler: a callable with :func:`moto_dynamodb_answer`'s signature
    minus the lock, e.g. :meth:`infra.emulator.dynamo_process.DynamoProcess.answer`, which
    sends the request to moto in its own process."""

    def __init__(
        self,
        endpoint: str,
        lock: threading.Lock | None = None,
        *,
        answer: Callable[[str, str, dict[str, str], bytes], tuple[int, dict[str, str], bytes]]
        | None = None,
    ) -> None:
        if answer is None:
            if lock is None:
                raise TypeError("DynamoTransport needs the embedded server's lock or an answer")
            answer = functools.partial(moto_dynamodb_answer, lock=lock)
        self.prefix = endpoint.rstrip("/")
        self._answer = answer

    def __call__(self, request: AWSPreparedRequest, **_: Any) -> AWSResponse | None:
        if not _under(request.url, self.prefix):
            return None
        status, headers, body = self._answer(
            request.method, request.url, dict(request.headers.items()), _body(request)
        )
        return _response(request.url, status, headers, body)


def register(
    session: Any,
    *,
    connections: ConnectionsTransport | None = None,
    dynamo: DynamoTransport | None = None,
) -> None:
    """Register the transports on ``session`` (a ``boto3.session.Session``): clients created
    from it afterwards send Management API / DynamoDB calls in-process."""
    events = session.events
    if connections is not None:
        events.register("before-send.apigatewaymanagementapi", connections)
    if dynamo is not None:
        events.register("before-send.dynamodb", dynamo)
