"""Entrypoints: the one wrapper every WebSocket message handler uses.

It parses the API Gateway WebSocket event (Powertools Parser model), parses the body into the
protocol's inbound model, resolves the session's player, calls one service, and maps every
refusal to an ``error`` message with a stable code sent to the caller only (one registry: the
``code`` attribute of domain/service errors and ``ProtocolError``). Unexpected failures become
``internal_error`` (logged with the stack, never with secrets).

Before anything else each message takes a token from the connection's bucket
(``services.base.RateLimiter``: ``rate_limit_per_second``, ``rate_limit_burst``); an empty bucket
is answered ``rate_limited`` with no parse and no table access.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.models import APIGatewayWebSocketMessageEventModel

from shared.domain.errors import DomainError
from shared.protocol.errors import ErrorCode, ProtocolError
from shared.protocol.inbound import parse_inbound
from shared.protocol.outbound import dump_event, error_event
from shared.runtime.bootstrap import get_deps
from shared.runtime.observability import logger, metrics
from shared.runtime.settings import get_settings
from shared.services.base import REQUEST, Deps
from shared.services.players import player_for_connection

OK = {"statusCode": 200}

RECEIVED_MS: ContextVar[int | None] = ContextVar("received_ms", default=None)
"""When API Gateway received the message being handled (``requestContext.requestTimeEpoch``,
UTC ms, set by the gateway, never by the client; None when the event has none). The guess
is judged by it (``shared.services.tournaments.guess``)."""

Action = Callable[[Deps, str, Any], None]
"""(deps, connection_id, parsed inbound message) -> None; raises DomainError to refuse."""


def _encodable(text: str) -> bool:
    r"""False for a string holding a lone surrogate (JSON allows ``"\ud800"``; UTF-8 does not):
    it could be neither stored nor sent back."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_encodable(message: Any) -> None:
    """Refuse a parsed message whose string fields cannot be encoded (``invalid_value``);
    such a ``request_id`` is not echoed."""
    request_id = message.request_id
    if request_id is not None and not _encodable(request_id):
        raise ProtocolError(ErrorCode.INVALID_VALUE, "Field 'request_id' has an invalid value.")
    for name, value in message:
        if isinstance(value, str) and not _encodable(value):
            raise ProtocolError(
                ErrorCode.INVALID_VALUE,
                f"Field '{name}' has an invalid value.",
                request_id,
                field=name,
            )


def reply_error(
    deps: Deps, connection_id: str, code: str, message: str | None, request_id: str | None
) -> None:
    if request_id is not None and not _encodable(request_id):
        request_id = None
    try:
        event = error_event(code, message, request_id)
    except ValueError:
        event = error_event(ErrorCode.INTERNAL_ERROR, None, request_id)
    gone = deps.notifier.send([(connection_id, dump_event(event))])
    if gone and deps.on_gone:
        deps.on_gone(connection_id)


def handle_message(event: dict[str, Any], action: Action) -> dict[str, Any]:
    """Run one inbound WebSocket message through ``action`` with error mapping."""
    request = parse(event=event, model=APIGatewayWebSocketMessageEventModel)
    connection_id = request.request_context.connection_id
    logger.append_keys(
        connection_id=connection_id, route=event.get("requestContext", {}).get("routeKey")
    )
    deps = get_deps()
    RECEIVED_MS.set(_received_ms(event))
    request_id: str | None = None
    if deps.limiter is not None and not deps.limiter.allow(connection_id, deps.clock.now_ms()):
        metrics.add_metric(name="RateLimited", unit="Count", value=1)
        reply_error(deps, connection_id, ErrorCode.RATE_LIMITED, None, _salvage_request_id(event))
        return OK
    try:
        message = parse_inbound(event.get("body") or "", max_bytes=get_settings().max_message_bytes)
        _check_encodable(message)
        request_id = message.request_id
        if request_id is not None:
            REQUEST.set((connection_id, request_id))
        action(deps, connection_id, message)
    except ProtocolError as err:
        metrics.add_metric(name="BadInput", unit="Count", value=1)
        reply_error(deps, connection_id, err.code, err.message, err.request_id)
    except DomainError as err:
        logger.info("refused", extra={"code": err.code})
        reply_error(deps, connection_id, err.code, err.message, request_id)
    except Exception:
        logger.exception("unhandled error")
        reply_error(deps, connection_id, ErrorCode.INTERNAL_ERROR, None, request_id)
    finally:
        REQUEST.set(None)
    return OK


def _received_ms(event: dict[str, Any]) -> int | None:
    """``requestContext.requestTimeEpoch`` (UTC ms; API Gateway, "WebSocket API request
    context": the epoch-formatted time the request was received), or None."""
    value = (event.get("requestContext") or {}).get("requestTimeEpoch")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _salvage_request_id(event: dict[str, Any]) -> str | None:
    """The ``request_id`` of a refused body, when it is cheap and safe to find (echoed only
    if it is a short string, like ``parse_inbound`` does)."""
    body = event.get("body") or ""
    if not isinstance(body, str) or len(body) > 4096 or '"request_id"' not in body:
        return None
    try:
        return parse_inbound(body).request_id
    except ProtocolError as err:
        return err.request_id


def for_player(fn: Callable[[Deps, str, Any], None]) -> Action:
    """Wrap an action that needs the session's player id (NoSessionError otherwise)."""

    def action(deps: Deps, connection_id: str, message: Any) -> None:
        player = player_for_connection(deps, connection_id)
        logger.append_keys(player_id=player.player_id)
        fn(deps, player.player_id, message)

    return action
