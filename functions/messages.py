"""Entrypoints: the WebSocket message routes, one Lambda function per route group, generated
from the protocol's actions (``shared.protocol.inbound.ACTIONS``): ``guess``, ``join``,
``leave``, ``nickname``, ``session`` (and ``sign_out_everywhere``), ``party`` (the six
``party_*`` actions), ``progression`` (the read-only ``profile``, ``leaderboard``, ``history``
and ``replay``) and
``default`` (API Gateway's ``$default``: bodies whose ``action`` matched no route). ``ping`` has
no function: API Gateway answers it (``functions.routes.MOCK_ROUTES``, ruling 14).

Each message, in order: takes a token from its connection's bucket (``Deps.limiter``, clocked
by API Gateway's ``requestTimeEpoch``; empty: ``rate_limited``; a connection that keeps sending
into it (a message refused ``no_session`` costs more tokens) earns strikes on its item and
is closed at ``close_after_strikes``, in whichever containers they were earned); is parsed
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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from functions._entry import Entrypoint, Event, SocketEvent
from functions.routes import MESSAGE_FUNCTIONS, MOCK_ROUTES
from shared.domain.errors import DomainError, PausedError
from shared.lazy import lazy_module
from shared.protocol import inbound as msg
from shared.protocol.errors import DETAILED_CODES, ErrorCode, ProtocolError
from shared.runtime.observability import logger
from shared.services.deps import Deps
from shared.services.errors import NoSessionError

if TYPE_CHECKING:
    from shared.protocol import outbound
    from shared.services import duels, matchmaking, outbox, parties, presence, sessions
    from shared.services import progression as reads
    from shared.services.outbox import Request
else:
    outbound = lazy_module("shared.protocol.outbound")
    duels, matchmaking, outbox, parties, presence, sessions = (
        lazy_module(f"shared.services.{name}")
        for name in ("duels", "matchmaking", "outbox", "parties", "presence", "sessions")
    )
    reads = lazy_module("shared.services.progression")

OK = {"statusCode": 200}

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Action(Generic[M]):
    """One inbound action: its typed model and the use case call it makes."""

    model: type[M]
    call: Callable[[Deps, Request, M], None]


def _player(deps: Deps, req: Request) -> tuple[str, Request]:
    """The sender's player id and the request, with ``closed_ms`` when the connection had
    closed before this handler ran (``presence.sender``: received before the close)."""
    player, closed_ms = presence.sender(deps, req.connection_id, req.received_ms)
    logger.append_keys(player_id=player.player_id, tournament_id=player.tournament_id)
    if closed_ms is None:
        return player.player_id, req
    logger.append_keys(connection_closed=True)
    return player.player_id, replace(req, closed_ms=closed_ms)


def _held(deps: Deps, player_id: str, req: Request) -> None:
    """After an action from a closed connection: the reconnect deadline of a player it left
    held while disconnected (``presence.hold_closed``, ruling 9)."""
    if req.closed_ms is not None:
        presence.hold_closed(deps, player_id, req.closed_ms)


def _session(deps: Deps, req: Request, message: msg.SessionAction) -> None:
    sessions.session(deps, req, message.token, message.protocol)


def _open_player(deps: Deps, req: Request) -> str:
    """The sender's player id, for an action that needs its connection open (its reply is
    its whole point: a token); received before the close but run after it: NoSessionError."""
    player_id, req = _player(deps, req)
    if req.closed_ms is not None:
        raise NoSessionError("this connection is closed")
    return player_id


def _sign_out_everywhere(deps: Deps, req: Request, message: msg.SignOutEverywhereAction) -> None:
    sessions.sign_out_everywhere(deps, req, _open_player(deps, req))


def _nickname(deps: Deps, req: Request, message: msg.NicknameAction) -> None:
    pid, req = _player(deps, req)
    sessions.nickname(deps, req, pid, message.nickname)
    _held(deps, pid, req)


def _join(deps: Deps, req: Request, message: msg.JoinAction) -> None:
    pid, req = _player(deps, req)
    matchmaking.join(deps, req, pid, message.language)
    _held(deps, pid, req)


def _leave(deps: Deps, req: Request, message: msg.LeaveAction) -> None:
    pid, req = _player(deps, req)
    matchmaking.leave(deps, req, pid)
    _held(deps, pid, req)


def _guess(deps: Deps, req: Request, message: msg.GuessAction) -> None:
    # the tournament item knows the player's connection: no session lookup (1 read)
    logger.append_keys(duel_id=message.duel_id)  # never the word: it may be the secret
    duels.guess(deps, req, message.duel_id, message.word)


def _party_create(deps: Deps, req: Request, message: msg.PartyCreateAction) -> None:
    pid, req = _player(deps, req)
    parties.create(deps, req, pid)
    _held(deps, pid, req)


def _party_join(deps: Deps, req: Request, message: msg.PartyJoinAction) -> None:
    pid, req = _player(deps, req)
    parties.join(deps, req, pid, message.invite)
    _held(deps, pid, req)


def _party_leave(deps: Deps, req: Request, message: msg.PartyLeaveAction) -> None:
    pid, req = _player(deps, req)
    parties.leave(deps, req, pid)
    _held(deps, pid, req)


def _party_start(deps: Deps, req: Request, message: msg.PartyStartAction) -> None:
    pid, req = _player(deps, req)
    parties.start(deps, req, pid, message.language)
    _held(deps, pid, req)


def _party_remove(deps: Deps, req: Request, message: msg.PartyRemoveAction) -> None:
    pid, req = _player(deps, req)
    parties.remove(deps, req, pid, message.player_id)
    _held(deps, pid, req)


def _party_reset_invite(deps: Deps, req: Request, message: msg.PartyResetInviteAction) -> None:
    pid, req = _player(deps, req)
    parties.reset_invite(deps, req, pid)
    _held(deps, pid, req)


def _profile(deps: Deps, req: Request, message: msg.ProfileAction) -> None:
    pid, req = _player(deps, req)
    reads.profile(deps, req, pid, message.player_id)


def _leaderboard(deps: Deps, req: Request, message: msg.LeaderboardAction) -> None:
    pid, req = _player(deps, req)
    reads.leaderboard(deps, req, pid, message.board, message.language, message.week)


def _history(deps: Deps, req: Request, message: msg.HistoryAction) -> None:
    pid, req = _player(deps, req)
    reads.history(deps, req, pid, message.player_id, message.cursor, message.limit)


def _replay(deps: Deps, req: Request, message: msg.ReplayAction) -> None:
    _player(deps, req)  # a session is required
    reads.replay(deps, req, message.tournament_id)


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
    "profile": Action(msg.ProfileAction, _profile),
    "leaderboard": Action(msg.LeaderboardAction, _leaderboard),
    "history": Action(msg.HistoryAction, _history),
    "replay": Action(msg.ReplayAction, _replay),
}
"""Every inbound action but the gateway-answered ones (``MOCK_ROUTES``; checked below) -> its
use case. A ``ping`` that reaches a function anyway (a misrouted body) is ``unknown_action``."""

if set(ACTIONS) | set(MOCK_ROUTES) != set(msg.ACTIONS):  # pragma: no cover - protocol change
    raise RuntimeError(f"actions without a route: {set(msg.ACTIONS) ^ set(ACTIONS)}")


STARTS = frozenset({"join", "party_start"})
"""The actions that may start a tournament: refused (``paused``) while the game is paused.
A running tournament refuses moves by its own pause (``Tournament.paused_ms``), so the other
actions read no switch."""


def _paused(deps: Deps) -> bool:
    return deps.switch is not None and deps.switch.paused_since_ms() is not None


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
        arrived = deps.clock.now_ms() if received is None else received
        if deps.limiter is not None and not deps.limiter.allow(connection_id, arrived):
            _refuse_flood(deps, connection_id, event, arrived)
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
            if message.action in STARTS and _paused(deps):
                raise PausedError()
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
            if err.code == ErrorCode.NO_SESSION and deps.limiter is not None:
                deps.limiter.miss(connection_id, arrived)
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


def _refuse_flood(deps: Deps, connection_id: str, event: Event, arrived: int) -> None:
    """A message the connection's bucket refused (it arrived at ``arrived``, UTC ms): answer
    ``rate_limited`` with ``retry_after_ms``, unless it earned the strike that closes the
    connection (``_strike``; no reply: it is going away)."""
    deps.metrics("RateLimited", 1)
    if not _strike(deps, connection_id):
        after = deps.limiter.retry_after_ms(connection_id, arrived) if deps.limiter else None
        _reply_error(
            deps, connection_id, ErrorCode.RATE_LIMITED, None, _salvage(event), retry_after_ms=after
        )


def _strike(deps: Deps, connection_id: str) -> bool:
    """When this container's bucket tripped (``Limiter.tripped``), record one strike on the
    connection's item (``Store.add_strike``: one write, only for a flooding connection) and
    close it (API Gateway Management API ``DeleteConnection``; ``$disconnect`` then runs the
    usual flow) once it has ``close_after_strikes`` or its item is gone; True when closed. A
    table that cannot take the strike now closes nothing (the next trip tries again)."""
    limiter = deps.limiter
    if limiter is None or not limiter.tripped(connection_id):
        return False
    try:
        strikes = deps.store.add_strike(connection_id)
    except DomainError:
        logger.warning("could not record a flood strike")
        return False
    deps.metrics("FloodStrikes", 1)
    if strikes is not None and strikes < limiter.close_after_strikes:
        return False
    logger.warning("closing a connection that keeps flooding", extra={"strikes": strikes})
    deps.metrics("AbusiveConnectionsClosed", 1)
    deps.notifier.close(connection_id)
    limiter.forget(connection_id)
    return True


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
progression = Entrypoint(route(MESSAGE_FUNCTIONS["progression"]))
default = Entrypoint(route(MESSAGE_FUNCTIONS["default"]))

ENTRYPOINTS: dict[str, Entrypoint] = {
    "session": session,
    "join": join,
    "leave": leave,
    "guess": guess,
    "nickname": nickname,
    "party": party,
    "progression": progression,
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
    "progression",
    "route",
    "session",
]
