"""Protocol layer: inbound messages (client → server), discriminated by ``action``.

Every message is a JSON object with an ``action`` (API Gateway routes on ``$request.body.action``,
one route per member of ``ACTIONS``) and an optional ``request_id`` that the server echoes in its
reply, including ``error`` replies. Syntax is checked here (types, unknown fields, string sizes);
meaning (does the duel exist, is the word in the list, is the nickname allowed) is checked by the
services and the domain. The client guide names the actions.

``parse_inbound`` turns one raw WebSocket frame into a model or raises ``ProtocolError`` with one
of ``PARSE_CODES``; nothing else escapes it.
"""

import json
from typing import Annotated, Any, Final, Literal, TypeAlias, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.protocol.errors import ErrorCode, ProtocolError
from shared.protocol.version import VERSION_PATTERN

__all__ = [
    "ACTIONS",
    "DEFAULT_MAX_BYTES",
    "MAX_REQUEST_ID",
    "MODEL_BY_ACTION",
    "GuessAction",
    "HistoryAction",
    "InboundMessage",
    "JoinAction",
    "LeaderboardAction",
    "LeaveAction",
    "NicknameAction",
    "PartyCreateAction",
    "PartyJoinAction",
    "PartyLeaveAction",
    "PartyRemoveAction",
    "PartyResetInviteAction",
    "PartyStartAction",
    "PingAction",
    "ProfileAction",
    "ProtocolError",
    "ReplayAction",
    "SessionAction",
    "SignOutEverywhereAction",
    "parse_inbound",
]

MAX_REQUEST_ID: Final = 64
DEFAULT_MAX_BYTES: Final = 32 * 1024
"""API Gateway's WebSocket frame limit (32 KB); ``Settings.max_message_bytes`` mirrors it."""


class _Inbound(BaseModel):
    # Each model's validator is built on its first message (``defer_build``): a function
    # builds only the model of its own action.
    model_config = ConfigDict(
        extra="forbid", str_strip_whitespace=False, frozen=True, defer_build=True
    )

    request_id: str | None = Field(
        default=None,
        max_length=MAX_REQUEST_ID,
        description="Opaque client id for this request; echoed in the reply (and in errors).",
    )


class SessionAction(_Inbound):
    """Open a session: first message on every connection. Without ``token`` a new anonymous
    player is created and its secret token returned; with ``token`` the player is resumed and
    the reply carries the next token (ruling 11: tokens rotate; the token travels in this
    message, never in the URL). A connection belongs to one player: a second ``session`` on it
    for another player, or without a token, is refused ``session_bound``."""

    action: Literal["session"] = Field(description="Route: session.")
    token: str | None = Field(
        default=None,
        max_length=128,
        description="Secret token from the latest session reply (each reply carries a new one).",
    )
    protocol: str | None = Field(
        default=None,
        max_length=7,
        pattern=VERSION_PATTERN,
        description="The protocol version the client speaks, MAJOR.MINOR (e.g. '1.1'); "
        "omitted: 1.0. Another major than the server's is refused unsupported_protocol.",
    )


class SignOutEverywhereAction(_Inbound):
    """Revoke every session token of this player (ruling 11): no token issued so far resumes
    any more. This connection stays the player's; the reply is ``session`` with a new token,
    the only one that resumes from now on."""

    action: Literal["sign_out_everywhere"] = Field(description="Route: sign_out_everywhere.")


class JoinAction(_Inbound):
    """Queue for a tournament in a game language (matchmaking, ruling 8)."""

    action: Literal["join"] = Field(description="Route: join.")
    language: str = Field(
        min_length=2, max_length=8, description="Game language code, e.g. 'en' or 'pt-br'."
    )


class LeaveAction(_Inbound):
    """Leave the lobby (free) or the running tournament (eliminates at once, ruling 3)."""

    action: Literal["leave"] = Field(description="Route: leave.")


class GuessAction(_Inbound):
    """Guess a word in one of the player's duels, on the player's turn."""

    action: Literal["guess"] = Field(description="Route: guess.")
    duel_id: str = Field(max_length=64, description="The duel, from duel_start.")
    word: str = Field(
        max_length=64,
        description="The guess as typed; the server normalises it per language (ruling 12).",
    )


class NicknameAction(_Inbound):
    """Change the player's nickname (the server checks the 3–20 character rule)."""

    action: Literal["nickname"] = Field(description="Route: nickname.")
    nickname: str = Field(max_length=64, description="The new nickname.")


class PartyCreateAction(_Inbound):
    """Create a party led by this player; the reply carries the invite token (ruling 10)."""

    action: Literal["party_create"] = Field(description="Route: party_create.")


class PartyJoinAction(_Inbound):
    """Join a party by its invite token."""

    action: Literal["party_join"] = Field(description="Route: party_join.")
    invite: str = Field(max_length=64, description="The party's invite token.")


class PartyLeaveAction(_Inbound):
    """Leave the party; if the leader leaves, the longest-standing member leads (ruling 10)."""

    action: Literal["party_leave"] = Field(description="Route: party_leave.")


class PartyStartAction(_Inbound):
    """Leader only: queue the whole party for a tournament in a game language."""

    action: Literal["party_start"] = Field(description="Route: party_start.")
    language: str = Field(min_length=2, max_length=8, description="Game language code.")


class PartyRemoveAction(_Inbound):
    """Leader only: remove a member from the party while it is idle (not in a lobby or
    tournament); they get ``party`` with status ``left``, the others the new member list."""

    action: Literal["party_remove"] = Field(description="Route: party_remove.")
    player_id: str = Field(max_length=64, description="The member to remove.")


class PartyResetInviteAction(_Inbound):
    """Leader only: replace the party's invite with a new one; the old invite stops working
    (``unknown_invite``). Every member gets ``party`` with the new invite."""

    action: Literal["party_reset_invite"] = Field(description="Route: party_reset_invite.")


ID_PATTERN: Final = r"^[A-Za-z0-9_-]{1,64}$"
"""What a player or tournament id looks like when a client names one (``profile``,
``history``, ``replay``): anything else is ``invalid_value``."""

HISTORY_PAGE_MAX: Final = 50
"""The most tournaments one ``history`` page holds."""


class ProfileAction(_Inbound):
    """Since 1.3. A player's public profile: nickname, rating, rating history (a point per
    tournament, the last 100), tournaments, wins, podiums, average place, best rating, per
    game language. Read-only; the reply is ``profile`` (``not_found`` for no such player)."""

    action: Literal["profile"] = Field(description="Route: profile.")
    player_id: str | None = Field(
        default=None,
        max_length=64,
        pattern=ID_PATTERN,
        description="The player; omitted: you.",
    )


class LeaderboardAction(_Inbound):
    """Since 1.3. A leaderboard: ``rating`` (every player by rating: the top 100, your rank
    and the players just above and below you) or ``weekly`` (one game language's rating points
    gained this week or last, reset Monday 00:00 UTC: the top 100 and your line). Read-only;
    the reply is ``leaderboard``."""

    action: Literal["leaderboard"] = Field(description="Route: leaderboard.")
    board: Literal["rating", "weekly"] = Field(description="Which board.")
    language: str | None = Field(
        default=None,
        min_length=2,
        max_length=8,
        description="Weekly board only (required there): the game language code.",
    )
    week: Literal["current", "previous"] | None = Field(
        default=None, description="Weekly board only: this week (default) or the previous one."
    )


class HistoryAction(_Inbound):
    """Since 1.3. A player's finished tournaments, newest first, a page at a time: send the
    reply's ``next_cursor`` back as ``cursor`` for the next page. Read-only; the reply is
    ``history`` (``invalid_cursor`` for a cursor this player's pages did not give)."""

    action: Literal["history"] = Field(description="Route: history.")
    player_id: str | None = Field(
        default=None, max_length=64, pattern=ID_PATTERN, description="The player; omitted: you."
    )
    cursor: str | None = Field(
        default=None,
        max_length=256,
        description="Opaque: a previous reply's next_cursor; omitted: the newest page.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        le=HISTORY_PAGE_MAX,
        description=f"Tournaments per page, 1 to {HISTORY_PAGE_MAX}; omitted: 20.",
    )


class ReplayAction(_Inbound):
    """Since 1.3. The full record of a finished tournament (every round, duel and row, the
    secrets revealed), to step through or export. Read-only; the reply is ``replay``
    (``not_found`` while it runs, or when it is unknown or expired)."""

    action: Literal["replay"] = Field(description="Route: replay.")
    tournament_id: str = Field(max_length=64, pattern=ID_PATTERN, description="The tournament.")


class PingAction(_Inbound):
    """Keep-alive and clock sync; answered by ``pong`` with the server time. API Gateway
    answers it without checking it: unknown fields are ignored (the published schema allows
    them; this model, which no function runs on a ping, stays strict like every action)."""

    action: Literal["ping"] = Field(description="Route: ping.")


InboundMessage: TypeAlias = Annotated[
    SessionAction
    | JoinAction
    | LeaveAction
    | GuessAction
    | NicknameAction
    | PartyCreateAction
    | PartyJoinAction
    | PartyLeaveAction
    | PartyStartAction
    | PartyRemoveAction
    | PartyResetInviteAction
    | PingAction
    | SignOutEverywhereAction
    | ProfileAction
    | LeaderboardAction
    | HistoryAction
    | ReplayAction,
    Field(discriminator="action"),
]
"""Any inbound message; pydantic picks the model by ``action``."""


def _members() -> tuple[type[_Inbound], ...]:
    union = get_args(InboundMessage)[0]
    return tuple(get_args(union))


def _action_of(model: type[BaseModel]) -> str:
    (value,) = get_args(model.model_fields["action"].annotation)
    return str(value)


MODEL_BY_ACTION: Final[dict[str, type[_Inbound]]] = {_action_of(m): m for m in _members()}
"""Action name → model, derived from ``InboundMessage`` (never a second hand-written list)."""

ACTIONS: Final[tuple[str, ...]] = tuple(MODEL_BY_ACTION)
"""Every inbound action, in union order. CDK creates one API Gateway route per action."""


# pydantic error ``type`` → our code. Anything not listed (and not ending in ``_type``, which
# pydantic uses for "wrong JSON type") is an invalid value: bad lengths below the minimum,
# literals, enums, numbers out of range.
_CODE_BY_PYDANTIC_TYPE: Final[dict[str, ErrorCode]] = {
    "missing": ErrorCode.MISSING_FIELD,
    "extra_forbidden": ErrorCode.UNKNOWN_FIELD,
    "string_too_long": ErrorCode.FIELD_TOO_LONG,
    "too_long": ErrorCode.FIELD_TOO_LONG,
    "bytes_too_long": ErrorCode.FIELD_TOO_LONG,
    "union_tag_invalid": ErrorCode.UNKNOWN_ACTION,
    "union_tag_not_found": ErrorCode.UNKNOWN_ACTION,
    "none_required": ErrorCode.WRONG_TYPE,
    "is_instance_of": ErrorCode.WRONG_TYPE,
}

_MAX_FIELD_NAME_IN_MESSAGE: Final = 64


def _code_for(pydantic_type: str) -> ErrorCode:
    code = _CODE_BY_PYDANTIC_TYPE.get(pydantic_type)
    if code is not None:
        return code
    if pydantic_type.endswith("_type"):
        return ErrorCode.WRONG_TYPE
    return ErrorCode.INVALID_VALUE


def _field_name(loc: tuple[int | str, ...]) -> str | None:
    # The action's own model validates (``action`` already picked it): no union tag in front.
    parts = [str(p) for p in loc]
    if not parts:
        return None
    return ".".join(parts)[:_MAX_FIELD_NAME_IN_MESSAGE]


_MESSAGES: Final[dict[ErrorCode, str]] = {
    ErrorCode.MISSING_FIELD: "Missing field '{field}'.",
    ErrorCode.UNKNOWN_FIELD: "Unknown field '{field}' for this action.",
    ErrorCode.WRONG_TYPE: "Field '{field}' has the wrong type.",
    ErrorCode.FIELD_TOO_LONG: "Field '{field}' is too long.",
    ErrorCode.INVALID_VALUE: "Field '{field}' has an invalid value.",
}


def _reject_constant(name: str) -> Any:
    # NaN / Infinity / -Infinity are not JSON, although Python's json accepts them.
    raise ValueError(f"not JSON: {name}")


def _too_large(raw: str | bytes, max_bytes: int) -> bool:
    if isinstance(raw, bytes):
        return len(raw) > max_bytes
    # A character is 1 to 4 bytes of UTF-8: only encode when the length alone cannot decide.
    if len(raw) > max_bytes:
        return True
    if len(raw) * 4 <= max_bytes:
        return False
    # surrogatepass: a str with lone surrogates still has a size (it fails as JSON later, or not).
    return len(raw.encode("utf-8", "surrogatepass")) > max_bytes


def parse_inbound(raw: str | bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> InboundMessage:
    """Parse one WebSocket frame (``str`` or UTF-8 ``bytes``) into an inbound message model.

    Checks, in order, and raises ``ProtocolError`` at the first failure:

    1. ``message_too_large``: more than ``max_bytes`` bytes of UTF-8 (before any decoding);
    2. ``invalid_json``: not UTF-8, not JSON (``NaN``/``Infinity`` included), or nested too deep;
    3. ``not_an_object``: valid JSON but not an object;
    4. ``unknown_action``: ``action`` missing, not a string, or not one of ``ACTIONS``;
    5. field errors, first error wins: ``missing_field``, ``unknown_field``, ``wrong_type``,
       ``field_too_long``, ``invalid_value``.

    From step 3 on, the error carries the object's ``request_id`` when that is a string of at
    most 64 characters. Validation is strict (no coercion: ``"language": 5`` is ``wrong_type``).
    """
    if _too_large(raw, max_bytes):
        raise ProtocolError(ErrorCode.MESSAGE_TOO_LARGE, f"The message exceeds {max_bytes} bytes.")
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        obj = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        # ValueError covers JSONDecodeError, UnicodeDecodeError and the int-digits limit.
        raise ProtocolError(ErrorCode.INVALID_JSON) from None
    if not isinstance(obj, dict):
        raise ProtocolError(ErrorCode.NOT_AN_OBJECT)

    request_id = obj.get("request_id")
    if not (isinstance(request_id, str) and len(request_id) <= MAX_REQUEST_ID):
        request_id = None

    action = obj.get("action")
    if not isinstance(action, str) or action not in MODEL_BY_ACTION:
        raise ProtocolError(ErrorCode.UNKNOWN_ACTION, request_id=request_id, field="action")

    try:
        # The action's own model, not the union: a function builds only its actions' validators.
        return cast("InboundMessage", MODEL_BY_ACTION[action].model_validate(obj, strict=True))
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False, include_context=False)[0]
        code = _code_for(first["type"])
        field = _field_name(first["loc"])
        template = _MESSAGES.get(code)
        message = template.format(field=field) if template and field else ""
        raise ProtocolError(code, message, request_id, field=field) from None
