"""Entrypoints: the WebSocket message routes, one Lambda function per route group, generated
from the protocol's actions (``shared.protocol.inbound.ACTIONS``): ``guess``, ``join``,
``leave``, ``nickname``, ``session`` (and ``sign_out_everywhere``), ``party`` (the six
``party_*`` actions) and
``default`` (API Gateway's ``$default``: bodies whose ``action`` matched no route). ``ping`` has
no function: API Gateway answers it (``functions.routes.MOCK_ROUTES``, ruling 14).

Each message, in order: takes a token from its connection's bucket (``Deps.limiter``; empty:
``rate_limited``, and a connection that keeps sending into it is closed); is parsed
(``parse_inbound``); must be an action of this route group (``unknown_action``); resolves the
session's player where needed (``no_session``); calls its one use case, which replies (echoing
``request_id``) and pushes. Every refusal is an ``error`` message with a stable code to the
caller only; an unexpected failure is ``internal_error`` (logged with the stack, never secrets).
The invocation returns 200 regardless; the alarms watch the counts ``InternalError``,
``TryAgain``, ``BadInput``, ``RateLimited`` and ``AbusiveConnectionsClosed`` (``Deps.metrics``).
How this keeps a cold start light: ``shared/domain/RULINGS.md``, design notes, "Message
functions".
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
from shared.protocol.errors import DETAILED_CODES, ErrorCode, ProtocolError
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


def _session(deps: Deps, req: Request, message: msg.SessionAction) -> None:
    sessions.session(deps, req, message.token, message.protocol)


def _sign_out_everywhere(deps: Deps, req: Request, message: msg.SignOutEverywhereAction) -> None:
    sessions.sign_out_everywhere(deps, req, _player(deps, req))


def _nickname(deps: Deps, req: Request, message: msg.NicknameAction) -> None:
    sessions.nickname(deps, req, _player(deps, req), message.nickname)


def _join(deps: Deps, req: Request, message: msg.JoinAction) -> None:
    matchmaking.join(deps, req, _player(deps, req), message.language)


def _leave(deps: Deps, req: Request, message: msg.LeaveAction) -> None:
    matchmaking.leave(deps, req, _player(deps, req))


def _guess(deps: Deps, req: Request, message: msg.GuessAction) -> None:
    # the tournament item knows the player's connection: no session lookup (1 read)
    logger.append_keys(duel_id=message.duel_id)  # never the word: it may be the secret
    duels.guess(deps, req, message.duel_id, message.word)


def _party_create(deps: Deps, req: Request, message: msg.PartyCreateAction) -> None:
    parties.create(deps, req, _player(deps, req))


def _party_join(deps: Deps, req: Request, message: msg.PartyJoinAction) -> None:
    parties.join(deps, req, _player(deps, req), message.invite)


def _party_leave(deps: Deps, req: Request, message: msg.PartyLeaveAction) -> None:
    parties.leave(deps, req, _player(deps, req))


def _party_start(deps: Deps, req: Request, message: msg.PartyStartAction) -> None:
    parties.start(deps, req, _player(deps, req), message.language)


def _party_remove(deps: Deps, req: Request, message: msg.PartyRemoveAction) -> None:
    parties.remove(deps, req, _player(deps, req), message.player_id)


def _party_reset_invite(deps: Deps, req: Request, message: msg.PartyResetInviteAction) -> None:
    parties.reset_invite(deps, req, _player(deps, req))


ACTIONS: dict[str, Action[Any]] = {
    "session": Action(msg.SessionAction, _session),
    "sign_out_everywhere": Action(msg.SignOutEverywhereAction, _sign_out_everywhere),
    "nickname": Action(msg.NicknameAction, _nickname),
    "join": Action(msg.JoinAction, _join),
    "leave": Action(msg.LeaveAction, _leave),
    "guess": Action(msg.GuessAction, _guess),
    "party_create": Action(msg.PartyCreateAction, _party_create),
    "party_join": Action(msg.PartyJoinAction, _party_join),
    "party_leave": Action(msg.PartyLeaveAction, _party_leave),
    "party_start": Action(msg.PartyStartAction, _party_start),
    "party_remove": Action(msg.PartyRemoveAction, _party_remove),
    "party_reset_invite": Action(msg.PartyResetInviteAction, _party_reset_invite),
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
            # the guide's text (``describe``) unless the code's message is detailed
            detail = err.message if err.code in DETAILED_CODES else None
            _reply_error(deps, connection_id, err.code, detail, request_id)
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
    after = deps.limiter.retry_after_ms(connection_id, deps.clock.now_ms())
    _reply_error(
        deps, connection_id, ErrorCode.RATE_LIMITED, None, _salvage(event), retry_after_ms=after
    )


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
    deps: Deps,
    connection_id: str,
    code: str,
    message: str | None,
    request_id: str | None,
    *,
    retry_after_ms: int | None = None,
) -> None:
    """Send ``error`` to the caller (its ``request_id`` echoed when it can be; a retry code's
    ``retry_after_ms``, ms, defaulting to ``shared.protocol.limits.TRY_AGAIN_AFTER_MS``)."""
    if request_id is not None and not _encodable(request_id):
        request_id = None
    try:
        event = outbound.error_event(code, message, request_id, retry_after_ms=retry_after_ms)
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


# The deployed handlers, ``functions.messages:<name>`` (``functions.routes.ROUTES``): one per
# route group of ``MESSAGE_FUNCTIONS``, each taking exactly that group's actions.
session = Entrypoint(route(MESSAGE_FUNCTIONS["session"]))
join = Entrypoint(route(MESSAGE_FUNCTIONS["join"]))
leave = Entrypoint(route(MESSAGE_FUNCTIONS["leave"]))
guess = Entrypoint(route(MESSAGE_FUNCTIONS["guess"]))
nickname = Entrypoint(route(MESSAGE_FUNCTIONS["nickname"]))
party = Entrypoint(route(MESSAGE_FUNCTIONS["party"]))
default = Entrypoint(route(MESSAGE_FUNCTIONS["default"]))

ENTRYPOINTS: dict[str, Entrypoint] = {
    "session": session,
    "join": join,
    "leave": leave,
    "guess": guess,
    "nickname": nickname,
    "party": party,
    "default": default,
}
"""Function name -> its Lambda handler (``functions.messages.<name>``)."""

if set(ENTRYPOINTS) != set(MESSAGE_FUNCTIONS):  # pragma: no cover - protocol change
    raise RuntimeError(
        f"message functions without a handler: {set(MESSAGE_FUNCTIONS) ^ set(ENTRYPOINTS)}"
    )

__all__ = [
    "ACTIONS",
    "ENTRYPOINTS",
    "default",
    "guess",
    "join",
    "leave",
    "nickname",
    "party",
    "route",
    "session",
]
