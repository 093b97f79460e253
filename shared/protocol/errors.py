"""Protocol layer: every error code a client can receive, and the protocol's own parse error.

An ``error`` event carries ``code`` (a member of ``ErrorCode``), an English ``message`` and the
``request_id`` of the message it answers. Codes are stable: once published a code never changes
meaning (the client guide). Clients branch on the code, never on the message text.

Three families share the enum:

- domain codes, verbatim from ``shared.domain.errors`` (a test checks every ``DomainError``
  subclass's ``code`` is a member, so a new rule refusal cannot ship without a wire code);
- parse codes, raised by ``shared.protocol.inbound.parse_inbound`` (``PARSE_CODES``);
- service codes (sessions, throttling, contention, lookups, the catch-all).

Stdlib only, so handlers can map errors without importing pydantic.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class ErrorCode(StrEnum):
    """Stable wire codes for the ``error`` event's ``code`` field."""

    # --- domain: words and languages (shared.domain.errors) ---------------------------------
    RULE_VIOLATION = "rule_violation"
    UNKNOWN_LANGUAGE = "unknown_language"
    WRONG_LENGTH = "wrong_length"
    INVALID_LETTERS = "invalid_letters"
    NOT_IN_WORD_LIST = "not_in_word_list"
    # --- domain: duels ------------------------------------------------------------------------
    NOT_YOUR_TURN = "not_your_turn"
    TURN_OVER = "turn_over"
    NOT_IN_DUEL = "not_in_duel"
    DUEL_OVER = "duel_over"
    DUEL_NOT_STARTED = "duel_not_started"
    # --- domain: tournaments ------------------------------------------------------------------
    NOT_IN_TOURNAMENT = "not_in_tournament"
    ELIMINATED = "eliminated"
    TOURNAMENT_OVER = "tournament_over"
    # --- domain: lobbies and matchmaking ------------------------------------------------------
    LOBBY_FULL = "lobby_full"
    RATING_WINDOW = "rating_window"
    ALREADY_QUEUED = "already_queued"
    ALREADY_PLAYING = "already_playing"
    NOT_QUEUED = "not_queued"
    # --- domain: parties ----------------------------------------------------------------------
    PARTY_FULL = "party_full"
    NOT_PARTY_LEADER = "not_party_leader"
    NOT_IN_PARTY = "not_in_party"
    ALREADY_IN_PARTY = "already_in_party"
    PARTY_MEMBER_PLAYING = "party_member_playing"
    PARTY_MEMBER_OFFLINE = "party_member_offline"
    UNKNOWN_INVITE = "unknown_invite"
    # --- domain: players ----------------------------------------------------------------------
    INVALID_NICKNAME = "invalid_nickname"
    NICKNAME_LOOKALIKE = "nickname_lookalike"
    # --- domain: operations -------------------------------------------------------------------
    PAUSED = "paused"

    # --- protocol: parse_inbound --------------------------------------------------------------
    MESSAGE_TOO_LARGE = "message_too_large"
    INVALID_JSON = "invalid_json"
    NOT_AN_OBJECT = "not_an_object"
    UNKNOWN_ACTION = "unknown_action"
    MISSING_FIELD = "missing_field"
    UNKNOWN_FIELD = "unknown_field"
    WRONG_TYPE = "wrong_type"
    FIELD_TOO_LONG = "field_too_long"
    INVALID_VALUE = "invalid_value"

    # --- service ------------------------------------------------------------------------------
    NO_SESSION = "no_session"
    INVALID_TOKEN = "invalid_token"
    SESSION_BOUND = "session_bound"
    UNSUPPORTED_PROTOCOL = "unsupported_protocol"
    TOO_MANY_NEW_PLAYERS = "too_many_new_players"
    SESSION_REPLACED = "session_replaced"
    RATE_LIMITED = "rate_limited"
    TRY_AGAIN = "try_again"
    INTERNAL_ERROR = "internal_error"
    NOT_FOUND = "not_found"
    INVALID_CURSOR = "invalid_cursor"


PARSE_CODES: Final[frozenset[ErrorCode]] = frozenset(
    {
        ErrorCode.MESSAGE_TOO_LARGE,
        ErrorCode.INVALID_JSON,
        ErrorCode.NOT_AN_OBJECT,
        ErrorCode.UNKNOWN_ACTION,
        ErrorCode.MISSING_FIELD,
        ErrorCode.UNKNOWN_FIELD,
        ErrorCode.WRONG_TYPE,
        ErrorCode.FIELD_TOO_LONG,
        ErrorCode.INVALID_VALUE,
    }
)
"""The codes ``parse_inbound`` can raise (and no others)."""

_DESCRIPTIONS: Final[dict[ErrorCode, str]] = {
    ErrorCode.RULE_VIOLATION: "That is not allowed by the game rules.",
    ErrorCode.UNKNOWN_LANGUAGE: "That language is not one of the game languages.",
    ErrorCode.WRONG_LENGTH: "The guess does not have the word's length.",
    ErrorCode.INVALID_LETTERS: "The guess uses letters outside the game language's alphabet.",
    ErrorCode.NOT_IN_WORD_LIST: "The guess is not in the word list.",
    ErrorCode.NOT_YOUR_TURN: "It is your opponent's turn.",
    ErrorCode.TURN_OVER: "Your time for this turn ran out before the guess arrived.",
    ErrorCode.NOT_IN_DUEL: "You are not playing in this duel.",
    ErrorCode.DUEL_OVER: "The duel is already over.",
    ErrorCode.DUEL_NOT_STARTED: "The duel has not started yet.",
    ErrorCode.NOT_IN_TOURNAMENT: "You are not in this tournament.",
    ErrorCode.ELIMINATED: "You have already been eliminated from this tournament.",
    ErrorCode.TOURNAMENT_OVER: "The tournament has already ended.",
    ErrorCode.LOBBY_FULL: "The lobby is full.",
    ErrorCode.RATING_WINDOW: "Your rating is outside this lobby's rating window.",
    ErrorCode.ALREADY_QUEUED: "You are already waiting in a lobby.",
    ErrorCode.ALREADY_PLAYING: "You are already playing in a tournament.",
    ErrorCode.NOT_QUEUED: "You are not waiting in a lobby or playing in a tournament.",
    ErrorCode.PARTY_FULL: "The party is full.",
    ErrorCode.NOT_PARTY_LEADER: "Only the party leader can do that.",
    ErrorCode.NOT_IN_PARTY: "You are not in a party.",
    ErrorCode.ALREADY_IN_PARTY: "You are already in a party.",
    ErrorCode.PARTY_MEMBER_PLAYING: "A party member is still in a lobby or tournament.",
    ErrorCode.PARTY_MEMBER_OFFLINE: "A party member is not connected.",
    ErrorCode.UNKNOWN_INVITE: "No party has this invite.",
    ErrorCode.INVALID_NICKNAME: (
        "Nicknames have 3 to 20 characters: letters, digits, spaces and _ - ."
    ),
    ErrorCode.NICKNAME_LOOKALIKE: (
        "That nickname looks like another player's in your lobby or tournament."
    ),
    ErrorCode.PAUSED: (
        "The game is paused for maintenance: nothing changed and no clock runs; send it again "
        "in a few seconds."
    ),
    ErrorCode.MESSAGE_TOO_LARGE: "The message is too large.",
    ErrorCode.INVALID_JSON: "The message is not valid JSON.",
    ErrorCode.NOT_AN_OBJECT: "The message must be a JSON object.",
    ErrorCode.UNKNOWN_ACTION: "The message has a missing or unknown action.",
    ErrorCode.MISSING_FIELD: "A required field is missing.",
    ErrorCode.UNKNOWN_FIELD: "The message has a field this action does not take.",
    ErrorCode.WRONG_TYPE: "A field has the wrong type.",
    ErrorCode.FIELD_TOO_LONG: "A field is too long.",
    ErrorCode.INVALID_VALUE: "A field has an invalid value.",
    ErrorCode.NO_SESSION: "Send a session message first.",
    ErrorCode.INVALID_TOKEN: "The session token is not valid.",
    ErrorCode.SESSION_BOUND: (
        "This connection already belongs to a player; open a new connection for another one."
    ),
    ErrorCode.UNSUPPORTED_PROTOCOL: (
        "This server does not speak that protocol version; update the app."
    ),
    ErrorCode.TOO_MANY_NEW_PLAYERS: (
        "Too many new players came from your network lately; resume your player with its "
        "token, or try again later."
    ),
    ErrorCode.SESSION_REPLACED: "This session was opened on another connection.",
    ErrorCode.RATE_LIMITED: "Too many messages; slow down.",
    ErrorCode.TRY_AGAIN: "The server is busy; please try again.",
    ErrorCode.INTERNAL_ERROR: "Something went wrong on the server.",
    ErrorCode.NOT_FOUND: "That does not exist (any more).",
    ErrorCode.INVALID_CURSOR: (
        "That cursor is not one this player's history pages gave; start again without one."
    ),
}


class Recovery(StrEnum):
    """What a client does after an ``error`` with a given code (``RECOVERY``)."""

    RETRY = "retry"
    """Send the same message again, with the same ``request_id``, after ``retry_after_ms`` (the
    server applies a repeated ``request_id`` once, ruling 18)."""
    RESUME = "resume"
    """Send ``session`` with the stored token (on a new connection if this one closed), then
    redraw from the snapshot; resend the request only if the snapshot shows it is still wanted."""
    START_OVER = "start_over"
    """The stored token is useless: drop it and send ``session`` without a token (a new player)."""
    NONE = "none"
    """Do not resend it as it was: the request was refused by a rule or is malformed. Show the
    message or change the request (another word, another nickname, ...)."""


RECOVERY: Final[dict[ErrorCode, Recovery]] = {
    **dict.fromkeys(ErrorCode, Recovery.NONE),
    ErrorCode.RATE_LIMITED: Recovery.RETRY,
    ErrorCode.TRY_AGAIN: Recovery.RETRY,
    ErrorCode.PAUSED: Recovery.RETRY,
    ErrorCode.NO_SESSION: Recovery.RESUME,
    ErrorCode.INTERNAL_ERROR: Recovery.RESUME,
    ErrorCode.TOO_MANY_NEW_PLAYERS: Recovery.RESUME,
    ErrorCode.INVALID_TOKEN: Recovery.START_OVER,
}
"""Each code's recovery: retry, resume, start over, or none (published as ``x-retry`` in the
AsyncAPI document and as a column of the guide's error table). ``session_replaced`` is
``none``: the player plays on another connection; do not reconnect automatically."""

DETAILED_CODES: Final[frozenset[ErrorCode]] = frozenset(
    {
        *PARSE_CODES,
        ErrorCode.PARTY_MEMBER_OFFLINE,
        ErrorCode.TOO_MANY_NEW_PLAYERS,
        ErrorCode.UNSUPPORTED_PROTOCOL,
    }
)
"""The codes whose ``message`` says more than ``describe`` (the field at fault, when the party
can start, how many new players per how long, the supported versions); every other code's
``message`` is exactly ``describe(code)``, the guide's table."""

RETRY_AFTER_CODES: Final[frozenset[ErrorCode]] = frozenset(
    code for code, how in RECOVERY.items() if how is Recovery.RETRY
)
"""The codes whose ``error`` carries ``retry_after_ms`` (an int, ms); null on every other."""


def describe(code: ErrorCode | str) -> str:
    """The default English message for ``code``.

    Accepts a member or its string value (e.g. a ``DomainError.code``); an unknown string gets
    the ``internal_error`` text rather than raising, because this runs on error paths.
    """
    try:
        return _DESCRIPTIONS[ErrorCode(code)]
    except ValueError:
        return _DESCRIPTIONS[ErrorCode.INTERNAL_ERROR]


class ProtocolError(ValueError):
    """An inbound message that is not a valid protocol message (raised by ``parse_inbound``).

    ``code`` is one of ``PARSE_CODES``; ``message`` is English and never echoes field values;
    ``request_id`` is the message's ``request_id`` when it could be salvaged (a string of at most
    64 characters), else ``None``; ``field`` names the offending field when there is one.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str = "",
        request_id: str | None = None,
        *,
        field: str | None = None,
    ) -> None:
        self.code = ErrorCode(code)
        self.message = message or describe(self.code)
        self.request_id = request_id
        self.field = field
        super().__init__(self.message)

    def __repr__(self) -> str:
        return (
            f"ProtocolError(code={self.code.value!r}, message={self.message!r}, "
            f"request_id={self.request_id!r}, field={self.field!r})"
        )
