"""API Gateway WebSocket events (``$connect``, message, ``$disconnect``) as Lambda receives them.

The one builder for the local gateway (:mod:`infra.emulator.sockets`), the harness and the
benchmarks (:func:`ws_event`). Returns plain dicts; times are UTC epoch milliseconds. Fields: the
``$context`` variables of "API Gateway WebSocket API mapping template reference",
https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-websocket-api-mapping-template-reference.html
"""

from __future__ import annotations

import secrets
import string
import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

_ALNUM = string.ascii_letters + string.digits
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_EVENT_TYPES = {"$connect": "CONNECT", "$disconnect": "DISCONNECT"}


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


def event_type(route_key: str) -> str:
    """``CONNECT`` for ``$connect``, ``DISCONNECT`` for ``$disconnect``, else ``MESSAGE``."""
    return _EVENT_TYPES.get(route_key, "MESSAGE")


def request_context(
    route_key: str,
    *,
    connection_id: str,
    connected_at_ms: int,
    request_time_ms: int,
    source_ip: str,
    user_agent: str,
    domain_name: str,
    stage: str,
    api_id: str,
    request_id: str | None = None,
    extended_request_id: str | None = None,
    request_time_text: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An event's ``requestContext``; ``extra`` (``messageId``, ``disconnectStatusCode``, ...)
    follows ``routeKey``. Defaults: ``request_id`` a :func:`new_id`, ``extended_request_id``
    the request id, ``request_time_text`` :func:`request_time` of ``request_time_ms``."""
    request_id = new_id() if request_id is None else request_id
    ctx: dict[str, Any] = {"routeKey": route_key}
    ctx.update(extra)
    ctx.update(
        {
            "eventType": event_type(route_key),
            "extendedRequestId": request_id if extended_request_id is None else extended_request_id,
            "requestTime": (
                request_time(request_time_ms) if request_time_text is None else request_time_text
            ),
            "messageDirection": "IN",
            "stage": stage,
            "connectedAt": connected_at_ms,
            "requestTimeEpoch": request_time_ms,
            "identity": {"sourceIp": source_ip, "userAgent": user_agent},
            "requestId": request_id,
            "domainName": domain_name,
            "connectionId": connection_id,
            "apiId": api_id,
        }
    )
    return ctx


def connect_headers(
    raw_headers: Iterable[tuple[str, str]],
    *,
    connected_at_ms: int,
    source_ip: str,
    port: int,
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """A ``$connect`` event's ``headers`` (last value wins) and ``multiValueHeaders``: the
    upgrade request's headers, plus the ones API Gateway adds (``X-Amzn-Trace-Id``,
    ``X-Forwarded-*``) unless the client sent them."""
    headers: dict[str, str] = {}
    multi: dict[str, list[str]] = {}
    for name, value in raw_headers:
        headers[name] = value
        multi.setdefault(name, []).append(value)
    forwarded = {
        "X-Amzn-Trace-Id": f"Root=1-{connected_at_ms // 1000:08x}-{uuid.uuid4().hex[:24]}",
        "X-Forwarded-For": source_ip,
        "X-Forwarded-Port": str(port),
        "X-Forwarded-Proto": "http",
    }
    for name, value in forwarded.items():
        headers.setdefault(name, value)
        multi.setdefault(name, [value])
    return headers, multi


def connect_event(
    context: dict[str, Any],
    headers: dict[str, str],
    multi_value_headers: dict[str, list[str]],
    query: Mapping[str, list[str]] | None = None,
) -> dict[str, Any]:
    """The ``$connect`` event; ``query`` maps each query-string name to its values, in order
    (none or empty: API Gateway omits both query keys)."""
    event: dict[str, Any] = {"headers": headers, "multiValueHeaders": multi_value_headers}
    if query:
        event["queryStringParameters"] = {k: values[-1] for k, values in query.items()}
        event["multiValueQueryStringParameters"] = dict(query)
    event["requestContext"] = context
    event["isBase64Encoded"] = False
    return event


def message_event(context: dict[str, Any], body: str | None, is_base64: bool) -> dict[str, Any]:
    """A message event carrying ``body`` as received (base64 text of a binary frame)."""
    return {"requestContext": context, "body": body, "isBase64Encoded": is_base64}


def disconnect_event(context: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """The ``$disconnect`` event (``multiValueHeaders``: each header's one value)."""
    return {
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "requestContext": context,
        "isBase64Encoded": False,
    }


def ws_event(
    route: str,
    connection_id: str,
    body: str | None,
    now_ms: int,
    *,
    received_ms: int | None = None,
    source_ip: str = "127.0.0.1",
) -> dict[str, Any]:
    """An API Gateway WebSocket event (MESSAGE, CONNECT or DISCONNECT by ``route``) at
    ``now_ms``, with ids made from it (``r{now_ms}``): what the harness and benchmarks invoke
    handlers with. ``requestTimeEpoch``: ``received_ms`` if given (a message whose handler runs
    late), else ``now_ms``; ``source_ip``: the client's address (``identity.sourceIp``).
    ``$disconnect`` reports 1001 "going away"."""
    ctx = request_context(
        route,
        connection_id=connection_id,
        connected_at_ms=now_ms,
        request_time_ms=now_ms if received_ms is None else received_ms,
        source_ip=source_ip,
        user_agent="harness",
        domain_name="localhost",
        stage="local",
        api_id="local",
        request_id=f"r{now_ms}",
        extended_request_id=f"x{now_ms}",
        request_time_text="01/Jan/2027:00:00:00 +0000",
    )
    event: dict[str, Any] = {"requestContext": ctx, "isBase64Encoded": False}
    kind = event_type(route)
    if kind == "MESSAGE":
        ctx["messageId"] = f"m{now_ms}"
        event["body"] = body
    elif kind == "CONNECT":
        event["headers"] = {"Host": "localhost"}
        event["multiValueHeaders"] = {"Host": ["localhost"]}
    else:
        ctx["disconnectStatusCode"] = 1001
        ctx["disconnectReason"] = "going away"
        event["headers"] = {"Host": "localhost"}
        event["multiValueHeaders"] = {"Host": ["localhost"]}
    return event
