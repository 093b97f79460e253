"""Entrypoints: the WebSocket message routes, one Lambda function per route group, generated
from the protocol's actions (``shared.protocol.inbound.ACTIONS``): ``guess``, ``join``,
``leave``, ``nickname``, ``session`` (and ``sign_out_everywhere``), ``party`` (the four
``party_*`` actions) and
``default`` (API Gateway's ``$default``: bodies whose ``action`` matched no route). ``ping`` has
no function: API Gateway answers it (``functions.routes.MOCK_ROUTES``, ruling 14).

Each message, in order:

1. takes a token from its connection's bucket (``Deps.limiter``): an empty bucket is answered
   ``rate_limited`` with no parse and no table access, and a connection that keeps sending into
   its empty bucket (``Limiter.exhausted``) is closed instead (Management API
   ``DeleteConnection``; AWS, "Use @connections commands in your backend service",
   https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-how-to-call-websocket-api-connections.html);
2. is parsed into its typed inbound model (``parse_inbound``: size, JSON, action, fields);
3. must be an action of this function's route group — any other (a body that reached the
   wrong function) is refused ``unknown_action``;
4. resolves the session's player where the action needs one (``no_session`` otherwise);
5. calls its one use case, which replies (echoing ``request_id``) and pushes.

API Gateway's event is read through ``functions._entry.SocketEvent`` (a typed view of the dict:
nothing to build on a cold start, where the Powertools parser's event models cost about 100 ms of
imports and its data classes 50 ms; the event's shape is API Gateway's, "WebSocket API request
context",
https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-websocket-api-mapping-template-reference.html);
the body, the only part a client writes, is parsed and validated by the protocol's models.
The use case modules are imported by the first message that calls one (``shared.lazy``): every
message function shares this module, and each needs only its own; the outbound events and the
outbox come with the first reply, so a cold start (import and ``container_deps()``) runs no
domain rule, codec or event model.

Every refusal becomes an ``error`` message with a stable code sent to the caller only (one
registry: the ``code`` attribute of domain/service errors and ``ProtocolError``); unexpected
failures become ``internal_error`` (logged with the stack, never with secrets).

The reply is sent and the invocation returns 200 even for an unexpected failure, so Lambda's
``Errors`` metric never sees a bug in a route: the operational counts below are what the
alarms watch (``Deps.metrics``, Powertools Metrics on Lambda, one namespace; one count each):

- ``InternalError``: an unexpected exception (a bug, or AWS failing past its retries);
- ``TryAgain``: a ``try_again`` refusal (the table stayed busy or contended);
- ``BadInput``: a malformed or misrouted message (a protocol error);
- ``RateLimited``: a message refused by the per-connection bucket;
- ``AbusiveConnectionsClosed``: a connection closed for ignoring ``rate_limited``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from functions._entry import Entrypoint, Event, SocketEvent
from functions.routes import MESSAGE_FUNCTIONS, MOCK_ROUTES
from shared.domain.errors import DomainError
from shared.lazy import lazy_module
from shared.protocol import inbound as msg
from shared.protocol.errors import ErrorCode, ProtocolError
from shared.runtime.observability import logger
from shared.services.deps import Deps

if TYPE_CHECKING:
    from shared.protocol import outbound
    from shared.services import duels, matchmaking, outbox, parties, presence, sessions
    from shared.services.outbox import Request
else:
    outbound = lazy_module("shared.protocol.outbound")
    duels, matchmaking, outbox, parties, presence, sessions = (
        lazy_module(f"shared.services.{name}")
        for name in ("duels", "matchmaking", "outbox", "parties", "presence", "sessions")
    )

OK = {"statusCode": 200}

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Action(Generic[M]):
    """One inbound action: its typed model and the use case call it makes."""

    model: type[M]
    call: Callable[[Deps, Request, M], None]


def _player(deps: Deps, req: Request) -> str:
    player = presence.player_for_connection(deps, req.connection_id)
    logger.append_keys(player_id=player.player_id, tournament_id=player.tournament_id)
    return player.player_id


def _guess(deps: Deps, req: Request, message: msg.GuessAction) -> None:
    logger.append_keys(duel_id=message.duel_id)  # never the word: it may be the secret
    duels.guess(deps, req, message.duel_id, message.word)


ACTIONS: dict[str, Action[Any]] = {
    "session": Action(msg.SessionAction, lambda d, r, m: sessions.session(d, r, m.token)),
    "sign_out_everywhere": Action(
        msg.SignOutEverywhereAction,
        lambda d, r, m: sessions.sign_out_everywhere(d, r, _player(d, r)),
    ),
    "nickname": Action(
        msg.NicknameAction, lambda d, r, m: sessions.nickname(d, r, _player(d, r), m.nickname)
    ),
    "join": Action(
        msg.JoinAction, lambda d, r, m: matchmaking.join(d, r, _player(d, r), m.language)
    ),
    "leave": Action(msg.LeaveAction, lambda d, r, m: matchmaking.leave(d, r, _player(d, r))),
    # the tournament item knows the player's connection: no session lookup (1 read)
    "guess": Action(msg.GuessAction, lambda d, r, m: _guess(d, r, m)),
    "party_create": Action(
        msg.PartyCreateAction, lambda d, r, m: parties.create(d, r, _player(d, r))
    ),
    "party_join": Action(
        msg.PartyJoinAction, lambda d, r, m: parties.join(d, r, _player(d, r), m.invite)
    ),
    "party_leave": Action(msg.PartyLeaveAction, lambda d, r, m: parties.leave(d, r, _player(d, r))),
    "party_start": Action(
        msg.PartyStartAction, lambda d, r, m: parties.start(d, r, _player(d, r), m.language)
    ),
}
"""Every inbound action but the gateway-answered ones (``MOCK_ROUTES``; checked below) -> its
use case. A ``ping`` that reaches a function anyway (a misrouted body) is ``unknown_action``."""

if set(ACTIONS) | set(MOCK_ROUTES) != set(msg.ACTIONS):  # pragma: no cover - protocol change
    raise RuntimeError(f"actions without a route: {set(msg.ACTIONS) ^ set(ACTIONS)}")


def route(actions: tuple[str, ...]) -> Callable[[Event, Deps], dict[str, Any]]:
    """The ``handle(event, deps)`` of a function taking exactly ``actions``."""

    def handle(event: Event, deps: Deps) -> dict[str, Any]:
        context = SocketEvent(event)
        connection_id = context.connection_id
        logger.append_keys(
            connection_id=connection_id,
            route=context.route_key,
            api_request_id=context.request_id,
        )
        received = _received_ms(event)
        if deps.limiter is not None and not deps.limiter.allow(connection_id, deps.clock.now_ms()):
            _refuse_flood(deps, connection_id, event)
            return OK
        request_id: str | None = None
        try:
            message = msg.parse_inbound(event.get("body") or "", max_bytes=deps.max_message_bytes)
            _check_encodable(message)
            request_id = message.request_id
            if request_id is not None:
                logger.append_keys(request_id=request_id)
            if message.action not in actions:
                raise ProtocolError(
                    ErrorCode.UNKNOWN_ACTION,
                    f"Action '{message.action}' is not taken by this route.",
                    request_id,
                )
            action = ACTIONS[message.action]
            assert isinstance(message, action.model)
            action.call(deps, outbox.Request(connection_id, request_id, received), message)
        except ProtocolError as err:
            deps.metrics("BadInput", 1)
            logger.info("bad input", extra={"code": err.code})
            _reply_error(deps, connection_id, err.code, err.message, err.request_id)
        except DomainError as err:
            if err.code == ErrorCode.TRY_AGAIN:
                deps.metrics("TryAgain", 1)
            logger.info("refused", extra={"code": err.code})
            _reply_error(deps, connection_id, err.code, err.message, request_id)
        except Exception:
            deps.metrics("InternalError", 1)
            logger.exception("unhandled error")
            _reply_error(deps, connection_id, ErrorCode.INTERNAL_ERROR, None, request_id)
        return OK

    return handle


def _refuse_flood(deps: Deps, connection_id: str, event: Event) -> None:
    """A message the connection's bucket refused: answer ``rate_limited``, or close a
    connection that keeps sending into its empty bucket (no reply: it is going away;
    ``$disconnect`` then runs the usual disconnect flow)."""
    assert deps.limiter is not None
    deps.metrics("RateLimited", 1)
    if deps.limiter.exhausted(connection_id):
        logger.warning("closing a connection that ignores rate_limited")
        deps.metrics("AbusiveConnectionsClosed", 1)
        deps.notifier.close(connection_id)
        deps.limiter.forget(connection_id)
        return
    _reply_error(deps, connection_id, ErrorCode.RATE_LIMITED, None, _salvage(event))


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


def _reply_error(
    deps: Deps, connection_id: str, code: str, message: str | None, request_id: str | None
) -> None:
    """Send ``error`` to the caller (its ``request_id`` echoed when it can be)."""
    if request_id is not None and not _encodable(request_id):
        request_id = None
    try:
        event = outbound.error_event(code, message, request_id)
    except ValueError:
        event = outbound.error_event(ErrorCode.INTERNAL_ERROR, None, request_id)
    box = outbox.Outbox()
    box.add([connection_id], event)
    presence.drop(deps, box.flush(deps.clock, deps.notifier))


def _received_ms(event: Event) -> int | None:
    """``requestContext.requestTimeEpoch`` (UTC ms; API Gateway, "WebSocket API request
    context": the epoch-formatted time the request was received), or None."""
    value = (event.get("requestContext") or {}).get("requestTimeEpoch")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _salvage(event: Event) -> str | None:
    """The ``request_id`` of a refused body, when it is cheap and safe to find (echoed only
    if it is a short string, like ``parse_inbound`` does)."""
    body = event.get("body") or ""
    if not isinstance(body, str) or len(body) > 4096 or '"request_id"' not in body:
        return None
    try:
        return msg.parse_inbound(body).request_id
    except ProtocolError as err:
        return err.request_id


ENTRYPOINTS: dict[str, Entrypoint] = {
    name: Entrypoint(route(actions)) for name, actions in MESSAGE_FUNCTIONS.items()
}
"""Function name -> its Lambda handler (``functions.messages.<name>``)."""

globals().update(ENTRYPOINTS)
__all__ = ["ACTIONS", "ENTRYPOINTS", "route", *ENTRYPOINTS]
