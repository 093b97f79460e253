"""Protocol layer: the AsyncAPI 3.0 document of the WebSocket API and its client guide, both
generated from the code.

The document is the published client contract. It is committed as ``shared/protocol/asyncapi.json``
beside ``shared/protocol/README.md`` (the client guide: the same text as the document's
``info.description``, plus an index of the messages), and a unit test fails when either file
differs from what the code generates. Regenerate both with::

    python -m shared.protocol.asyncapi            # rewrite the committed files
    python -m shared.protocol.asyncapi --check    # exit 1 if one is out of date

Shape: one channel (the connection, API Gateway routes on ``$request.body.action``); one message
per inbound action (the server *receives* it) and per outbound event type (the server *sends*
it); one operation per message. Payload schemas come from pydantic (JSON Schema Draft 2020-12;
inbound in validation mode, outbound in serialization mode, where every key is required because
``dump_event`` sends nulls).

Sources of the guide, so that it cannot drift from the code: the numbers are the constants of
``shared.protocol.limits`` (rulings 9, 13-15; API Gateway quotas); the error table lists every
member of ``ErrorCode`` in order with its ``describe()`` text and when it is sent
(``_ERROR_WHEN``, which must cover every code: the build raises ``KeyError`` otherwise); the
message index takes each model's docstring.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import TypeAdapter
from pydantic.json_schema import JsonSchemaMode

from shared.protocol.errors import (
    DETAILED_CODES,
    PARSE_CODES,
    RECOVERY,
    ErrorCode,
    Recovery,
    describe,
)
from shared.protocol.examples import INBOUND_EXAMPLES, OUTBOUND_EXAMPLES
from shared.protocol.inbound import MAX_REQUEST_ID, MODEL_BY_ACTION
from shared.protocol.limits import (
    HEARTBEAT_TIMEOUT_SECONDS,
    IDLE_TIMEOUT_SECONDS,
    MAX_CONNECTION_SECONDS,
    MAX_FRAME_BYTES,
    MAX_MESSAGE_BYTES,
    PING_INTERVAL_SECONDS,
    RATE_LIMIT_BURST,
    RATE_LIMIT_PER_SECOND,
    RECONNECT_SECONDS,
    SKIP_GRACE_MS,
    TOKEN_GRACE_SECONDS,
    WATCHDOG_GRACE_MS,
)
from shared.protocol.outbound import EVENT_BY_TYPE
from shared.protocol.replies import REPLIES, REPLY_WHEN
from shared.protocol.version import PROTOCOL, PROTOCOL_MIN

__all__ = [
    "ASYNCAPI_PATH",
    "README_PATH",
    "RECORD_SCHEMA_PATH",
    "REGENERATE_COMMAND",
    "build_asyncapi",
    "client_guide",
    "error_table",
    "main",
    "record_schema",
    "render",
    "render_readme",
    "reply_table",
]

ASYNCAPI_PATH: Final = Path(__file__).with_name("asyncapi.json")
README_PATH: Final = Path(__file__).with_name("README.md")
RECORD_SCHEMA_PATH: Final = Path(__file__).with_name("tournament-record.schema.json")
"""The export format's JSON Schema (``TournamentRecord``, the ``replay`` reply's ``record``)."""
RECORD_SCHEMA_ID: Final = "urn:wordle-tournament:tournament-record:1"
REGENERATE_COMMAND: Final = "python -m shared.protocol.asyncapi"
CONFORMANCE_COMMAND: Final = "python -m tests.contract.record"
"""Re-records the conformance kit (``shared/protocol/conformance/``); named in the guide."""

LOCAL_HOST: Final = "127.0.0.1:8000"
"""The local runtime's default address (``python -m infra.emulator``: ``--host``, ``--port``)."""
LOCAL_PATH: Final = "/ws"
"""The local runtime's WebSocket path (``infra.emulator.gateway.LocalGateway.ws_url``)."""

CHANNEL: Final = "game"
_REF_TEMPLATE: Final = "#/components/schemas/{model}"

_CORRELATION: Final = {
    "description": "The request_id of the client message; its answer (one event of the "
    "operation's reply, or an error) carries the same value. Inside a batch the answer is the "
    "event carrying it (the batch's own request_id is always null).",
    "location": "$message.payload#/request_id",
}


def _duration(seconds: int) -> str:
    """``60`` -> ``"60 s"``, ``600`` -> ``"10 minutes"``, ``7200`` -> ``"2 hours"``."""
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds // 3600} hours"
    if seconds >= 600 and seconds % 60 == 0:
        return f"{seconds // 60} minutes"
    return f"{seconds} s"


def _kb(size: int) -> str:
    return f"{size // 1024} KB"


_RATE: Final = (
    f"{RATE_LIMIT_PER_SECOND:g} messages per second sustained, bursts of up to {RATE_LIMIT_BURST}"
)

_ERROR_WHEN: Final[dict[ErrorCode, str]] = {
    ErrorCode.RULE_VIOLATION: "Any action refused by a game rule that has no more specific "
    "code (a fallback); `party_remove` naming the leader themselves (`party_leave` is for "
    "that).",
    ErrorCode.UNKNOWN_LANGUAGE: "`join`, `party_start` or a weekly `leaderboard` with a code "
    "that is not a game language.",
    ErrorCode.WRONG_LENGTH: "`guess` whose word does not have the duel's length; the turn and "
    "its clock keep running.",
    ErrorCode.INVALID_LETTERS: "`guess` with letters outside the game language's alphabet; the "
    "turn keeps running.",
    ErrorCode.NOT_IN_WORD_LIST: "`guess` of a word that is not in the language's word list; "
    "the turn keeps running.",
    ErrorCode.NOT_YOUR_TURN: "`guess` while it is the opponent's turn.",
    ErrorCode.TURN_OVER: "`guess` that API Gateway received at or after the turn's "
    "`deadline_ms`, or after the turn was skipped. The skip follows shortly after the deadline "
    "as a `turn` with a skipped row.",
    ErrorCode.NOT_IN_DUEL: "`guess` for a duel of the current round that is not the player's.",
    ErrorCode.DUEL_OVER: "`guess` in a duel that has ended, also one of an earlier round of the "
    "tournament (e.g. your own, still on screen after the round moved on).",
    ErrorCode.DUEL_NOT_STARTED: "`guess` during the round intro, before `intro_deadline_ms`.",
    ErrorCode.NOT_IN_TOURNAMENT: "`guess` for a tournament the player is not in.",
    ErrorCode.ELIMINATED: "`guess` by a player who is out of the tournament.",
    ErrorCode.TOURNAMENT_OVER: "`guess` after the tournament ended.",
    ErrorCode.LOBBY_FULL: "Not sent by this server version: `join` takes a seat only in a "
    "lobby that has one, else opens a new lobby.",
    ErrorCode.RATING_WINDOW: "Not sent by this server version: `join` takes a seat only in a "
    "lobby whose rating window admits the player, else opens a new lobby.",
    ErrorCode.ALREADY_QUEUED: "`join` while already waiting in a lobby.",
    ErrorCode.ALREADY_PLAYING: "`join` while in a running tournament; `party_join` while in a "
    "lobby or tournament; `leave` sent to a lobby that started meanwhile (send `leave` again to "
    "leave the tournament).",
    ErrorCode.NOT_QUEUED: "`leave` while neither waiting in a lobby nor in a running "
    "tournament (also after the tournament ended).",
    ErrorCode.PARTY_FULL: "`party_join` when the party has no room left.",
    ErrorCode.NOT_PARTY_LEADER: "`party_start`, `party_remove` or `party_reset_invite` by a "
    "member who is not the leader.",
    ErrorCode.NOT_IN_PARTY: "`party_leave`, `party_start`, `party_remove` or "
    "`party_reset_invite` without a party; `party_remove` of a player who is not a member.",
    ErrorCode.ALREADY_IN_PARTY: "`party_create` or `party_join` while in a party; `join` by a "
    "party member (the leader starts the whole party with `party_start`).",
    ErrorCode.PARTY_MEMBER_PLAYING: "`party_start` while a member is still in a lobby or "
    "tournament; `party_join` or `party_remove` while the party is in a game.",
    ErrorCode.PARTY_MEMBER_OFFLINE: "`party_start` while a member is not connected; the "
    f"message says within how long they leave the party ({_duration(RECONNECT_SECONDS)} after "
    "they went away, unless they come back), after which the party can start without them.",
    ErrorCode.UNKNOWN_INVITE: "`party_join` with an invite no party has (or a malformed one, "
    "one the leader replaced with `party_reset_invite`, or one of a party whose last member "
    "left).",
    ErrorCode.INVALID_NICKNAME: "`nickname` that breaks the nickname rules.",
    ErrorCode.NICKNAME_LOOKALIKE: "`nickname` whose UTS #39 skeleton (case folded) is another "
    "player's in the sender's lobby or running tournament: a look-alike copy (ruling 16).",
    ErrorCode.PAUSED: "`guess` or `leave` in a tournament, `join` or `party_start`, while the "
    "operators have paused the game (maintenance, an incident): nothing changed and no clock "
    "runs — no turn times out and no reconnect window closes meanwhile. Send the same message "
    "again after a few seconds (5 s is a good pace). When the game resumes, every deadline "
    "of the tournament moved later by the pause's length: resume with `session` (the token) to "
    "get them; the opponent's next `turn` carries them too.",
    ErrorCode.MESSAGE_TOO_LARGE: f"Any message over {_kb(MAX_FRAME_BYTES)} (sent in several "
    f"frames: a single frame over {_kb(MAX_FRAME_BYTES)} never arrives, API Gateway closes the "
    "connection with 1009).",
    ErrorCode.INVALID_JSON: "Any frame that is not JSON text (UTF-8).",
    ErrorCode.NOT_AN_OBJECT: "Any frame whose JSON is not an object.",
    ErrorCode.UNKNOWN_ACTION: "Any message whose `action` is missing, not a string or not an "
    "action of the protocol.",
    ErrorCode.MISSING_FIELD: "Any message without a field its action requires.",
    ErrorCode.UNKNOWN_FIELD: "Any message with a field its action does not take (client "
    "messages are strict).",
    ErrorCode.WRONG_TYPE: "Any message with a field of the wrong JSON type.",
    ErrorCode.FIELD_TOO_LONG: "Any message with a string longer than its field allows (e.g. "
    f"`request_id` over {MAX_REQUEST_ID} characters).",
    ErrorCode.INVALID_VALUE: "Any message with a field value out of range, or a string that is "
    "not valid Unicode; a malformed player or tournament id (`profile`, `history`, `replay`); "
    "a `leaderboard` whose `language` is missing (weekly) or out of place (rating), as the "
    "message says.",
    ErrorCode.NO_SESSION: "Any action but `session` and `ping` on a connection that has no "
    "session, or whose session moved to a newer connection, or closed meanwhile: send "
    "`session` (with the token) again.",
    ErrorCode.INVALID_TOKEN: "`session` with a token the server does not know, one unused for "
    "30 days, or one replaced by a newer token (tokens rotate at every resume; the previous "
    "one works only for a short grace) or revoked by `sign_out_everywhere`: start over with a "
    "`session` without a token (a new player).",
    ErrorCode.SESSION_BOUND: "`session` on a connection that already belongs to a player, "
    "without a token or with another player's: nothing changed. A connection belongs to one "
    "player for its whole life; open a new connection for another player.",
    ErrorCode.UNSUPPORTED_PROTOCOL: "`session` whose `protocol` has another major version "
    "than the server's (the message names the supported range): nothing happened. The app "
    "must be updated.",
    ErrorCode.TOO_MANY_NEW_PLAYERS: "`session` without a token from a network (an address, an "
    "IPv6 /64) that created too many new players in the current window (the message says how "
    "many per how long, and when to try again); nothing was created. Resume an existing player "
    "with its token instead.",
    ErrorCode.SESSION_REPLACED: "Pushed, unasked, to a connection whose player sent `session` "
    "with the token on a newer connection; the server then closes this one. Do not reconnect "
    "from it automatically: the player is playing elsewhere.",
    ErrorCode.RATE_LIMITED: f"Any message beyond the connection's rate ({_RATE}): it was "
    "dropped unread; slow down, then resend.",
    ErrorCode.TRY_AGAIN: "The change could not be saved because of contention or throttling; "
    "nothing was saved: send the same message again after a short pause.",
    ErrorCode.INTERNAL_ERROR: "An unexpected server failure. If the state is in doubt, resume "
    "with `session` (the snapshot tells what is true).",
    ErrorCode.NOT_FOUND: (
        "`leave` by a player whose tournament no longer exists. (A `guess` naming a duel of no "
        "tournament is answered `not_in_duel`, like any duel that is not the player's.) "
        "`profile` or `history` of no such player; `replay` of a tournament that is unknown, "
        "still running (its record is kept once it ends, a moment later), or past its year."
    ),
    ErrorCode.INVALID_CURSOR: (
        "`history` with a `cursor` that is not a `next_cursor` of that player's pages "
        "(forged, garbage, or another player's): start again without one."
    ),
}
"""When each code is sent. Every member of ``ErrorCode`` must have an entry (the guide's error
table raises KeyError otherwise, and a unit test builds it)."""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def error_table() -> str:
    """The Markdown table of every error code, in ``ErrorCode`` order: code, when it is sent
    (``_ERROR_WHEN``) and the default English message (``describe``). Raises KeyError for a
    code without a when-text."""
    lines = [
        "| code | sent when | recovery | `message` |",
        "| --- | --- | --- | --- |",
    ]
    for code in ErrorCode:
        kind = " (parse)" if code in PARSE_CODES else ""
        kind += " (detailed)" if code in DETAILED_CODES else ""
        lines.append(
            f"| `{code.value}`{kind} | {_cell(_ERROR_WHEN[code])} | `{RECOVERY[code].value}` "
            f"| {_cell(describe(code))} |"
        )
    return "\n".join(lines)


NORMALISATION: Final[tuple[tuple[str, str, str, str], ...]] = (
    ("en, id, it, pt", "lower case, accents stripped", "Café", "cafe"),
    ("de", "lower case, accents stripped but ä ö ü kept; ß and ẞ become ß", "GRÜẞE", "grüße"),
    ("es", "lower case, accents stripped but ñ kept", "Canción", "cancion"),
    ("fr", "lower case, accents stripped, œ → oe, æ → ae", "Cœur", "coeur"),
    ("nl", "lower case, accents stripped, ĳ → ij", "ĲS", "ijs"),
    ("pl", "lower case only (ą ć ę ł ń ó ś ź ż are letters of their own)", "ŻÓŁW", "żółw"),
    ("ru", "lower case, ё → е", "Ёлка", "елка"),
    ("uk", "lower case, the apostrophe dropped (it is no tile)", "пам'ять", "память"),
    ("kk", "lower case, Latin look-alikes → Kazakh Cyrillic", "Aлма", "алма"),
    (
        "uz",
        "lower case, accents stripped, any apostrophe → ʻ after o or g, else ʼ",
        "O'zbek",
        "oʻzbek",
    ),
)
"""Each game language's folding (``shared.domain.languages``), with an example: languages,
rule, typed, play form. A unit test normalises every example with the domain's code."""


def normalisation_table() -> str:
    """The Markdown table of ``NORMALISATION``."""
    lines = ["| language | play form | typed | sent back |", "| --- | --- | --- | --- |"]
    lines += [f"| {c} | {_cell(r)} | `{t}` | `{w}` |" for c, r, t, w in NORMALISATION]
    return "\n".join(lines)


def recovery_list() -> str:
    """The Markdown list of the recoveries (``shared.protocol.errors.Recovery``)."""
    return "\n".join(f"- `{r.value}`: {' '.join((r.__doc__ or '').split())}" for r in Recovery)


def _duration_ms(ms: int) -> str:
    return _duration(ms // 1000) if ms % 1000 == 0 else f"{ms / 1000:g} s"


def reply_table() -> str:
    """The Markdown table of each action's answer (``shared.protocol.replies.REPLY_WHEN``)."""
    lines = ["| action | answered by |", "| --- | --- |"]
    for action in MODEL_BY_ACTION:
        lines.append(f"| `{action}` | {_cell(REPLY_WHEN[action])} Or `error`. |")
    return "\n".join(lines)


def _unwrap(markdown: str) -> str:
    """Source-wrapped Markdown with one line per paragraph and per list item (headings and
    tables kept), so the text reads the same wherever it is rendered or re-wrapped."""
    blocks = []
    for block in markdown.strip().split("\n\n"):
        lines = block.splitlines()
        if lines[0].startswith(("#", "|")):
            blocks.append(block)
            continue
        items: list[str] = []
        for line in lines:
            if line.startswith("- ") or not items:
                items.append(line.strip())
            else:
                items[-1] += " " + line.strip()
        blocks.append("\n".join(items))
    return "\n\n".join(blocks) + "\n"


def client_guide() -> str:
    """The client guide (Markdown): connecting, resuming, liveness, time, limits, errors and
    the conformance kit. Every number comes from ``shared.protocol.limits``. It is the AsyncAPI
    document's ``info.description`` and the body of ``shared/protocol/README.md``."""
    return _unwrap(f"""\
Real-time API of Wordle Tournament: 8 players, 3 lives each, rounds of parallel 1v1 Wordle duels.

## Connecting

One WebSocket per player carries JSON text frames. Client messages are objects with an `action`
(API Gateway routes on `$request.body.action`); server messages are objects with a `type`.
Every client message may carry a `request_id` (at most {MAX_REQUEST_ID} characters), echoed in
the reply and in `error` events. The first message on a connection must be `session` (only
`ping` works without one). A frame without a `type` is API Gateway's own (`{{"message": "Too
Many Requests" | "Internal server error" | "Forbidden", "connectionId": ..., "requestId":
...}}`): one of your requests was not processed, or its outcome is unknown, and the frame does
not say which. Do not ignore it: see "Retries" below.

## Versions

The protocol version is `MAJOR.MINOR` (this document: {PROTOCOL}). Declare the version your
client speaks in `session` (`protocol`, e.g. `"{PROTOCOL}"`; omitted means `{PROTOCOL_MIN}`).
The `session` reply says what the server speaks (`protocol_version`) and the oldest version it
accepts (`protocol_min`); a client of another major is refused `unsupported_protocol` (update
the app). A minor version only adds: optional fields, message types, error codes, enum values.
Every change is listed in `shared/protocol/CHANGELOG.md`. Rules, so that an older client keeps
working against a newer server of the same major:

- **Unknown `type`:** ignore the message (also inside a `batch`), do not fail.
- **Unknown field** in a server message: ignore it.
- **Unknown enum value** (a new `code`, `status`, `reason`, `mark`, ...): treat it as the
  documented fallback (an unknown error `code`: show `message` and follow `retry_after_ms` if
  set, else recovery `none`; any other enum: redraw from a resync). Model enums so that
  decoding does not fail: in Swift an `enum` with a `case unknown(String)` and a custom
  `init(from:)` (or a `RawRepresentable` struct), in Kotlin a sealed class with an `Unknown(raw:
  String)` member or kotlinx.serialization `@JsonNames` plus `coerceInputValues` and a
  default; never a plain `Codable` enum or `enumValueOf`, which throw on a new value.
- **Client messages** are strict: an unknown field is refused `unknown_field` (so a typo never
  passes silently); `ping` alone is not checked (API Gateway answers it; unknown fields are
  ignored). The server never removes or renames a field within a major.

**Batches:** the events one change produces for a connection (a round-closing guess: the row,
the duel's end, standings, eliminations, the next round) arrive as one message, `batch`, whose
`events` you handle in order exactly as if each had come alone (redraw once, after the last).
A single event comes alone, unwrapped; a batch never nests.

## Every request answered

Every client message gets exactly one answer carrying its `request_id`: the reply event below,
or an `error` (nothing changed). It is the first event of the change sent to your connection:
alone, or inside a `batch` as the one event there carrying the `request_id` (the batch's own
`request_id` is always null). Wait for it by `request_id` (the AsyncAPI document declares it as
each operation's `reply`, with a `correlationId` on `$message.payload#/request_id`); other
events may arrive before it. A `request_id` that is not a string of at most {MAX_REQUEST_ID}
characters is not echoed: the `error` (`wrong_type`, `field_too_long`) carries `null`.

{reply_table()}

## Sessions and resuming

- **First visit:** send `session` without a token. The reply `session` carries `player` and a
  secret `token`: store it (it is the player's identity; never put it in a URL). A network
  may create only so many new players an hour (`too_many_new_players`): resume with the
  stored token rather than starting over.
- **Where to keep the token:** in the platform's secure storage: the iOS Keychain
  (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`), on Android EncryptedSharedPreferences or
  a file encrypted with an Android Keystore key; in a browser, `localStorage` of the game's
  origin. Never in logs, URLs, analytics or backups that leave the device.
- **A slow `session` reply:** never send a second tokenless `session` on the same connection
  (it is refused `session_bound`; the first one is still being answered). Wait for the reply
  by its `request_id`; if none comes within {_duration(PING_INTERVAL_SECONDS)}, close the
  connection, open a new one and send `session` again: with the stored token if you have one,
  else without (the first attempt may have created a player whose token you never got; that
  player is simply abandoned). Store a new token before you use anything else of the reply.
- **Resume:** whenever the connection is lost, open a new WebSocket and send `session` with the
  token. The reply carries a new `token`: store it in place of the old one (tokens rotate at
  every resume; the old one still resumes for {_duration(TOKEN_GRACE_SECONDS)}, so a reply lost
  on the way does not lock the player out; an older token is refused `invalid_token`). The
  reply has `resumed: true` and a `snapshot` with everything a screen shows: the game
  language (alphabet, keyboard, multi-letter tiles), the lobby, the round, the own duel's board,
  the duels to watch, standings, who is disconnected, the own elimination and rating, the
  party. Each part reads like the latest message of its kind: redraw everything from it and
  drop the screen state you had. Messages sent while you were away are not replayed. A
  tournament that ended meanwhile is shown once (`tournament_end` in the snapshot); the next
  resume finds the player idle.
- **Sequence numbers (since 1.2):** every message about a tournament that a player receives
  (`round`, `duel_start`, `turn`, `duel_end`, `standings`, `player_status`, `eliminated`,
  `rating`, `tournament_end`) carries `seq`, that player's number for it within the
  tournament: 1, 2, 3... with no gaps, spectators and leavers included; inside a `batch` each
  event has its own (the batch's is null). Everything else (lobby, party, `session`, `pong`,
  `error`, `player`) has `seq: null`, and so has an answer that repeats an earlier event to
  the sender only (ruling 18's repeated `guess` or `leave`: the original `turn` or
  `eliminated` again), which is not numbered. A
  resume's `snapshot.seq` is the last number the server sent the player in the tournament it
  shows (0: none yet): the next event is `snapshot.seq + 1`. A `seq` that is not the last one
  + 1 is a gap: events were lost (a post that failed); one not above the last is a duplicate
  (drop it). A `seq` of 1 starts a sequence afresh: a new tournament's first event, or the
  server's counters restarting (a rollback of the server).
- **Resync without reconnecting:** when a gap shows (above), or a client suspects it missed
  messages otherwise (no message for longer than the turn clock while a duel runs), it sends
  `session` with the stored token on the same connection. The reply is a resume's (`resumed:
  true`, a new `token` to store, the `snapshot`): redraw from it exactly as after a reconnect,
  then continue from the snapshot's `seq` (events after it count from there). Messages of
  1.0 and 1.1 carry no `seq`; without one the signs are a `turn` whose row number skips one
  of its duel's, a `round` number that jumps, a `duel_end` for a duel it never saw start.
- **Spectating:** when your own duel ends while others still run, its `duel_end` brings their
  boards whole (`spectating`); their next rows come as `turn` messages (skip a row number you
  already have). `standings` follow every duel end.
- **Sign out everywhere:** `sign_out_everywhere` revokes every token the player ever got;
  the connection that sent it stays the player's and gets a `session` reply (as a resume's)
  with a new token, the only one that resumes from then on.
- **One player per connection:** a connection belongs to the player of its first `session`
  for its whole life; another `session` on it without a token or with another player's is
  refused `session_bound`.
- **One connection per player:** when a player resumes on a new connection, an older one still
  open gets an `error` with code `session_replaced` and is closed by the server. Do not
  reconnect automatically from a replaced connection (the player is playing elsewhere).
- **API Gateway closes every connection** after {_duration(IDLE_TIMEOUT_SECONDS)} without
  messages and at {_duration(MAX_CONNECTION_SECONDS)} of age, whatever happens: reconnect and
  resume.
- **Reconnect window:** a player in a lobby or tournament who is disconnected has
  {_duration(RECONNECT_SECONDS)} to resume; the others get `player_status` `disconnected` with
  the `reconnect_deadline_ms`. Meanwhile a duelist's turns run out and are skipped. Past the
  deadline, a lobby seat is released, and a player in a tournament is out: `eliminated` with
  reason `timeout`, and their duel ends (`duel_end` reason `timeout`, the opponent wins). A
  resume in time sends `player_status` `connected` to the others. A lobby never starts with an
  offline player: when its last seat fills, the seats of disconnected players are released
  and the lobby waits for more (on resume, the snapshot shows no lobby: join again).
- **Parties:** every member gets `party` with the invite whenever the party changes. The leader
  can remove a member while the party is idle (`party_remove`: that member gets `party` with
  status `left`, the others the new member list) and replace the invite
  (`party_reset_invite`: every member gets `party` with the new one; the old one answers
  `unknown_invite`). A party member disconnected for longer than the
  {_duration(RECONNECT_SECONDS)} reconnect window leaves the party, like `party_leave`
  (leadership passes to the longest-standing member); until then `party_start` is refused
  with `party_member_offline`. A party is gone, and its invite with it, when its last member
  leaves.

## Liveness

The `session` reply carries the intervals below as numbers (milliseconds): `ping_interval_ms`,
`heartbeat_timeout_ms`, `reconnect_window_ms`; use those rather than the figures printed here.

- Send a message at least every {_duration(PING_INTERVAL_SECONDS)}; any message counts, and
  `ping` does when you have nothing else to send. API Gateway answers `ping` itself: `pong`
  with `server_time_ms` (when the gateway received the ping) and the ping's `request_id` if it
  had one. A ping needs no session, is not checked (unknown fields are ignored) and is not
  counted in the server's rate limit.
- A player in a lobby or tournament not heard from for {_duration(HEARTBEAT_TIMEOUT_SECONDS)}
  (the heartbeat timeout) is treated as disconnected from then on: their turns are skipped, the
  {_duration(RECONNECT_SECONDS)} reconnect window runs, then they count as left. The server
  closes that connection; the client reconnects and resumes.

## Time and deadlines

- A field ending in `deadline_ms` or `time_ms` is an absolute UTC time in milliseconds; other
  `*_ms` fields (`remaining_ms`, `retry_after_ms`, `ping_interval_ms`, ...) are durations in
  milliseconds.
- **Countdowns:** `duel_start` and `turn` carry `remaining_ms` beside `deadline_ms`: the time
  left when the server sent the message. A client whose clock may be wrong counts down
  `remaining_ms` from the moment the message arrived (it errs by the delivery time only, well
  under a second); a client with a clock offset (below) counts down to `deadline_ms + offset`.
- **Clock sync:** send `ping` and note your clock at send (`t0`) and when the `pong` arrives
  (`t1`); `pong.server_time_ms` (`ts`) is when API Gateway received the ping. The offset is
  `ts - (t0 + t1) / 2` (server minus local), the round trip `t1 - t0`. Do it 3 to 5 times on
  connect (a ping each, not counted against the rate limit) and keep the offset of the sample
  with the smallest round trip; repeat with the regular pings and keep the best of the last few.
  A deadline in your clock is `deadline_ms - offset`.
- A guess counts if API Gateway received it before the turn's `deadline_ms`. One received at
  or after the deadline gets an `error` `turn_over`. The server skips the turn (a `turn` whose
  row is `skipped`) after a grace of {_duration_ms(SKIP_GRACE_MS)}, on the next whole second:
  the skip is sent at most {_duration_ms(SKIP_GRACE_MS + 1000)} after `deadline_ms` (plus
  delivery), and should the clock function be late, the watchdog applies it within
  {_duration_ms(WATCHDOG_GRACE_MS)} more. Until the skip arrives the turn shows `0`.
- Duels start at the round's `intro_deadline_ms` (`duel_start`); a guess before gets
  `duel_not_started`.

## Words and tiles

- A word is made of *tiles*: one letter each, except the multi-letter tiles of a language
  (`multi_letter_tiles` of the `LanguageInfo` in every `lobby` and in a resume's snapshot:
  Uzbek oʻ gʻ sh ch). `length` (in `duel_start` and a board) counts tiles, not characters: the
  Uzbek `shahar` is 5 tiles long. A row's `tiles` and `marks` have one entry per tile.
- Send a guess as typed: the server turns it into its *play form* (Unicode NFC, surrounding
  spaces removed, lower case, then the language's folding below), checks it, and sends rows
  and the secret in play form (`display`, when set, is the secret as it should be shown).
  Draw and compare words in play form; a keyboard offers only the language's tiles.

{normalisation_table()}

## Profiles, leaderboards, history and replays (since 1.3)

Four read-only requests, answered like any other (each needs a session; they change nothing and
count against the rate limit like every message). What they show is written a moment after a
tournament ends, off the game's path: a profile, board or history asked for right after
`tournament_end` may not show that tournament yet; ask again a few seconds later (a `replay`
of it is `not_found` until then). No reply ever holds a token, a connection or a party: only
player ids, nicknames and results.

- `profile` (`player_id`, default you): nickname, rating, tournaments, wins (place 1),
  podiums (places 1-3), average place, best rating, per game language, and `rating_history`:
  a point per tournament (the last 100, oldest first) to draw a rating chart.
- `leaderboard` `board: "rating"`: the top 100 by rating; `me` (your rank, null until your
  first rated tournament) and `around`: up to 5 players just above you, you, up to 5 just
  below. A rank is 1 + the players with a higher score (ties share it; ties are listed by
  player id). `board: "weekly"` with a game `language` (and `week`: `current`, the default,
  or `previous`): the rating points gained in that language's tournaments that week (Monday
  00:00 UTC to Monday; negative when lost), the top 100 and `me` (your points, 0 when none;
  your rank only when you are in the top 100); `week` in the reply is that Monday.
- `history` (`player_id`, `limit` 1-50, default 20): finished tournaments, newest first, each
  with its place, rating before and after, and the opponents met (as named then). Send the
  reply's `next_cursor` back as `cursor` for the next page; null means the last page. A cursor
  is opaque and belongs to one player's pages: anything else is `invalid_cursor`.
- `replay` (`tournament_id`): the whole finished tournament — every round, duel and row (with
  when it was played), the secrets revealed, the places and rating changes, the players under
  their current nicknames — to step through. `record` is also the export format: save it as
  it is (JSON); its schema is `TournamentRecord` here and, as a file of its own,
  `tournament-record.schema.json` beside this document. Kept a year; at most about
  {_kb(MAX_MESSAGE_BYTES)} like any message (the longest tournament, 23 duels of 12 rows,
  is about 60 KB).

## Limits

- **Rate:** per connection, {_RATE} (`ping` aside: the gateway answers it), counted by when
  API Gateway received each message. Beyond that a message is answered `rate_limited` and
  dropped unread. A message answered `no_session` counts as 5: send `session` first. A
  connection that keeps sending into `rate_limited` (about 20 refusals) is closed by the server.
- **Size:** an inbound frame is at most {_kb(MAX_FRAME_BYTES)}: API Gateway closes the connection
  with status 1009 ("Message too big") on a larger one. A message, in either direction, is at
  most {_kb(MAX_MESSAGE_BYTES)}; the server reads client messages of up to
  {_kb(MAX_FRAME_BYTES)} (`message_too_large` beyond).

## Retries

- **Send every request with a `request_id`** and keep it until a server message carries it back
  (the reply, or an `error`). A repeat of a request with the same `request_id` from the same
  player is applied once and answered with the first outcome (ruling 18), so a request whose
  outcome you do not know is safe to send again, unchanged.
- **After a frame without a `type`** (throttled: `"Too Many Requests"`; a failed integration:
  `"Internal server error"`), send each request still unanswered again, with the same
  `request_id`, after an exponential backoff with full jitter: wait a random time in
  [0, min(2 s, 100 ms × 2^n)] before retry n (n = 0, 1, ...). After `rate_limited` or
  `try_again`, wait its `retry_after_ms` first. Retry a guess only while it still reaches the
  server well before the turn's `deadline_ms` (300 ms); past it, the skip stands. Give up on
  other requests after about 6 tries and tell the player.
- **After a reconnect**, send the unanswered requests again on the new connection once `session`
  (resumed) came back: a guess whose reply was lost with the connection is answered with the
  same `turn` if it had been played.
- **What is remembered, and how long:** a guess's `request_id` is kept in the row it played, for
  as long as the duel's board is shown (the current round): a repeat gets that row's `turn`
  event again (to you only; not the rest of a batch it came with), at no extra cost to the
  server (the row is written anyway; a few dozen bytes per row). `join`, `leave` and `party_start`
  are remembered on your player, the last 8 of them (about 60 bytes each, saved with the action
  itself: no extra write): a repeat gets the lobby as it is now (`lobby`; status `left` for a
  leave of a lobby) or, for leaving a tournament, your `eliminated` again. A refused request
  changed nothing, so its repeat is judged again. Other actions are judged again on a repeat:
  they change nothing when already applied (`already_in_party`, `not_in_party`, ...).

## Errors

A refused or failed request is answered with an `error` event to the sender only: `code` (stable:
branch on it), `message` (English, for people, may change) and the request's `request_id`.
Nothing changed. The one unasked `error` is `session_replaced`, pushed to a connection that a
newer one replaced. Codes marked (parse) concern the message's form and can answer any action.
The `message` is the table's text, word for word, except for codes marked (detailed), whose
message says more (the field at fault, when the party can start, the limit, the versions).

Each code's **recovery** (also `x-retry` on the `ErrorCode` schema of the AsyncAPI document):

{recovery_list()}

{error_table()}

## Conformance kit

`shared/protocol/conformance/` holds recorded message sequences of the main scenarios (join,
play a whole tournament, a skipped turn, leaving, disconnect and resume, parties, refusals):
per connection, what the client sent and received, in order, as JSON. Every recorded message
validates against this document, and the recordings are re-made and compared in CI. Backend
developers re-record them after a protocol change with `{CONFORMANCE_COMMAND}`.
""")


def _operation_notes() -> dict[str, str]:
    """Per-operation client notes (the operation's ``description``), by operation name."""
    return {
        "receiveSession": "First message on every connection. Without `token`: a new player, whose "
        "token is in the reply. With `token`: resume; the reply carries the next token (store "
        "it: the one sent stops working after a short grace), its `snapshot` redraws "
        "everything, and an older open connection of the player gets `session_replaced` and is "
        "closed. A second `session` on a connection for another player (or without a token) is "
        "`session_bound`. API Gateway closes idle connections after "
        f"{_duration(IDLE_TIMEOUT_SECONDS)} and every connection at "
        f"{_duration(MAX_CONNECTION_SECONDS)}: reconnect and resume.",
        "receivePing": f"Send a message at least every {_duration(PING_INTERVAL_SECONDS)} (any "
        "message counts; `ping` does, answered by API Gateway itself with `pong`). A player in "
        "a lobby or tournament not heard from for "
        f"{_duration(HEARTBEAT_TIMEOUT_SECONDS)} is treated as disconnected (turns skip, the "
        f"{_duration(RECONNECT_SECONDS)} reconnect window runs, then left) and the connection is "
        "closed.",
        "receiveGuess": "Counts if API Gateway received it before the turn's `deadline_ms` "
        "(absolute UTC ms); at or after it the reply is `error` `turn_over`.",
        "sendPlayerStatus": f"`disconnected` starts the {_duration(RECONNECT_SECONDS)} reconnect "
        "window (`reconnect_deadline_ms`); past it a lobby seat is released and a tournament "
        "player is out (`eliminated` reason `timeout`).",
        "sendError": "Sent to the requester only, and nothing changed (except `session_replaced`, "
        "pushed to a replaced connection). Codes and when each is sent:\n\n" + error_table(),
    }


def _summary(model: type, fallback: str) -> str:
    # The docstring's first paragraph on one line, reST ``literals`` as Markdown `literals`.
    paragraph = (model.__doc__ or fallback).strip().split("\n\n")[0]
    return " ".join(paragraph.split()).replace("``", "`")


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _schemas() -> dict[str, Any]:
    # Inbound messages are pydantic models, outbound ones stdlib dataclasses: one adapter each,
    # their schemas built together so that shared parts become one definition.
    models: list[tuple[type, JsonSchemaMode, TypeAdapter[Any]]] = [
        (m, "validation", TypeAdapter(m)) for m in MODEL_BY_ACTION.values()
    ]
    models += [(m, "serialization", TypeAdapter(m)) for m in EVENT_BY_TYPE.values()]
    _, top = TypeAdapter.json_schemas(models, ref_template=_REF_TEMPLATE)
    defs: dict[str, Any] = top.get("$defs", {})
    inbound = {m.__name__ for m in MODEL_BY_ACTION.values()}
    defs["ErrorCode"]["x-retry"] = {code.value: RECOVERY[code].value for code in ErrorCode}
    # ping is answered by API Gateway unchecked: unknown fields are ignored, as the guide says
    defs["PingAction"].pop("additionalProperties", None)
    _tighten_batch(defs["BatchEvent"])
    for name, schema in defs.items():
        if name not in inbound:
            # Server messages may gain fields within a protocol version: clients must tolerate
            # them, so the published schema does not forbid extras (the models still do).
            schema.pop("additionalProperties", None)
    _discriminators_as_names(defs)
    for name, schema in defs.items():
        _name_enums(name, schema)
    return dict(sorted(defs.items()))


def _name_enums(owner: str, schema: dict[str, Any]) -> None:
    # Generators name a type after its schema's ``title``: pydantic titles an inline enum after
    # its field only ("Status", "Reason"), so different enums share a name (and overwrite each
    # other in Modelina's output) or have none (``AnonymousSchema_156``). Each gets its own:
    # owner and field, e.g. LobbyStatus, EliminatedReason, RowMark. So does each event's ``type``
    # constant (SessionEventType): in a union with a discriminator Modelina makes it an enum too.
    base = owner.removesuffix("Event").removesuffix("Action")
    for field, prop in schema.get("properties", {}).items():
        camel = _camel(field)
        if field == "type" and "const" in prop:
            prop["title"] = f"{owner}Type"
        for node, singular in _enum_nodes(prop):
            part = camel.removesuffix("s") if singular else camel
            node["title"] = base if base.endswith(part) else base + part


def _enum_nodes(prop: dict[str, Any], in_items: bool = False) -> list[tuple[dict[str, Any], bool]]:
    # The enum schemas of one property (itself, inside anyOf/oneOf, or its array's items).
    if "enum" in prop:
        return [(prop, in_items)]
    found: list[tuple[dict[str, Any], bool]] = []
    for option in prop.get("anyOf", []) + prop.get("oneOf", []):
        found += _enum_nodes(option, in_items)
    if isinstance(prop.get("items"), dict):
        found += _enum_nodes(prop["items"], True)
    return found


def _discriminators_as_names(node: Any) -> None:
    # pydantic writes OpenAPI's discriminator object ({"propertyName", "mapping"}); the AsyncAPI
    # Schema Object's ``discriminator`` is the property's name, a string, and the AsyncAPI parser
    # (so every generator, Modelina's too) rejects the document otherwise.
    # https://www.asyncapi.com/docs/reference/specification/v3.0.0#schemaObject
    if isinstance(node, dict):
        found = node.get("discriminator")
        if isinstance(found, dict):
            node["discriminator"] = found["propertyName"]
        for value in node.values():
            _discriminators_as_names(value)
    elif isinstance(node, list):
        for value in node:
            _discriminators_as_names(value)


def _tighten_batch(schema: dict[str, Any]) -> None:
    """What ``BatchEvent.__post_init__`` checks, in the published schema: a batch's own
    ``request_id`` and ``seq`` are always null and its events are never a batch."""
    schema["properties"]["request_id"] = {
        "type": "null",
        "description": "Always null: the event answering a request carries its request_id.",
        "title": "Request Id",
    }
    schema["properties"]["seq"] = {
        "type": "null",
        "description": "Always null: each numbered event inside carries its own seq.",
        "title": "Seq",
    }
    items = schema["properties"]["events"]["items"]
    batch_ref = _REF_TEMPLATE.format(model="BatchEvent")
    items["oneOf"] = [ref for ref in items["oneOf"] if ref.get("$ref") != batch_ref]
    items["discriminator"]["mapping"].pop("batch")


def _message(
    model: type, name: str, example: dict[str, Any], kind: Literal["action", "type"]
) -> dict[str, Any]:
    summary = _summary(model, name)
    return {
        "name": name,
        "title": f"{kind} {name}",
        "summary": summary,
        "contentType": "application/json",
        "payload": {"$ref": _REF_TEMPLATE.format(model=model.__name__)},
        "examples": [{"name": name, "payload": example}],
        "correlationId": {"$ref": "#/components/correlationIds/requestId"},
    }


def _channel_message_ref(key: str) -> dict[str, str]:
    return {"$ref": f"#/channels/{CHANNEL}/messages/{key}"}


def build_asyncapi() -> dict[str, Any]:
    """The AsyncAPI 3.0.0 document (a JSON-ready dict) describing every message of the API."""
    messages: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    channel_ref = {"$ref": f"#/channels/{CHANNEL}"}

    for action, in_model in MODEL_BY_ACTION.items():
        messages[in_model.__name__] = _message(in_model, action, INBOUND_EXAMPLES[action], "action")
    for type_, out_model in EVENT_BY_TYPE.items():
        messages[out_model.__name__] = _message(out_model, type_, OUTBOUND_EXAMPLES[type_], "type")

    error_key = EVENT_BY_TYPE["error"].__name__
    for action, in_model in MODEL_BY_ACTION.items():
        operation: dict[str, Any] = {
            "action": "receive",
            "channel": channel_ref,
            "title": f"Client sends {action}",
            "summary": _summary(in_model, action),
            "messages": [_channel_message_ref(in_model.__name__)],
        }
        replies = [EVENT_BY_TYPE[t].__name__ for t in REPLIES[action]]
        operation["reply"] = {
            "channel": channel_ref,
            "messages": [
                _channel_message_ref(key)
                for key in [*replies, error_key, EVENT_BY_TYPE["batch"].__name__]
            ],
            "x-answer": f"Exactly one: {REPLY_WHEN[action]} Or an `error`. The answer comes "
            "alone or as the event carrying this request_id inside a `batch`.",
        }
        operations[f"receive{_camel(action)}"] = operation
    for type_, out_model in EVENT_BY_TYPE.items():
        operations[f"send{_camel(type_)}"] = {
            "action": "send",
            "channel": channel_ref,
            "title": f"Server sends {type_}",
            "summary": _summary(out_model, type_),
            "messages": [_channel_message_ref(out_model.__name__)],
        }

    # Last, so that generators naming a union after the channel (Modelina: the last operation
    # with several messages wins) produce the complete one: every server message.
    operations["sendAnyEvent"] = {
        "action": "send",
        "channel": channel_ref,
        "title": "Server sends any event",
        "summary": "Every server message the connection carries, as one union to decode a frame "
        "into (branch on `type`; ignore a type you do not know).",
        "messages": [_channel_message_ref(m.__name__) for m in EVENT_BY_TYPE.values()],
    }
    for name, note in _operation_notes().items():
        operations[name]["description"] = note

    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Wordle Tournament WebSocket API",
            "version": PROTOCOL,
            "description": client_guide(),
        },
        "defaultContentType": "application/json",
        "servers": {
            "aws": {
                "host": "{apiId}.execute-api.{region}.amazonaws.com",
                "pathname": "/{stage}",
                "protocol": "wss",
                "description": "API Gateway WebSocket API (deployed with CDK).",
                "variables": {
                    "apiId": {"description": "API Gateway API id."},
                    "region": {"default": "us-east-1", "description": "AWS region."},
                    "stage": {"default": "prod", "description": "API stage."},
                },
            },
            "local": {
                "host": "{host}",
                "pathname": LOCAL_PATH,
                "protocol": "ws",
                "description": "The local runtime (python -m infra.emulator), same messages.",
                "variables": {"host": {"default": LOCAL_HOST}},
            },
        },
        "channels": {
            CHANNEL: {
                "address": "/",
                "title": "Game connection",
                "description": "The player's WebSocket connection; both directions.",
                "messages": {key: {"$ref": f"#/components/messages/{key}"} for key in messages},
            }
        },
        "operations": operations,
        "components": {
            "schemas": _schemas(),
            "messages": messages,
            "correlationIds": {"requestId": _CORRELATION},
        },
    }


def record_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the tournament export format, ``TournamentRecord``
    (version 1), built from the same model as its AsyncAPI component; published beside the
    document as ``RECORD_SCHEMA_PATH``. Unlike the messages it forbids unknown keys: a new
    key is a new ``version``."""
    from shared.protocol.outbound import TournamentRecord

    schema = TypeAdapter(TournamentRecord).json_schema(
        mode="serialization", ref_template="#/$defs/{model}"
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": RECORD_SCHEMA_ID,
        **schema,
    }


def render_record_schema() -> str:
    """``record_schema`` as committed: 2-space indented JSON, UTF-8, trailing newline."""
    return json.dumps(record_schema(), indent=2, ensure_ascii=False) + "\n"


def render(document: dict[str, Any] | None = None) -> str:
    """The document as committed: 2-space indented JSON, UTF-8, trailing newline."""
    doc = build_asyncapi() if document is None else document
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _index_rows(models: dict[str, type], column: str) -> list[str]:
    rows = [f"| {column} | what |", "| --- | --- |"]
    rows += [f"| `{name}` | {_cell(_summary(model, name))} |" for name, model in models.items()]
    return rows


_CLIENT_LIBRARY = """## Reference client and generated models

[`client/`](client/README.md) holds the reference client in JavaScript (`wordle-client.js`, an ES
module for browsers, React Native and Node 20+; the local runtime's web client plays through it):
the connection state machine, session and resume with an injected token store, batches unfolded,
heartbeats, the clock offset, requests as promises resolved by their reply or `error`, retries of
API Gateway's type-less frames and of `rate_limited` / `try_again` with the same `request_id`
within the turn's deadline, and gap detection on `seq` (a `gap` listener; `resync()`). Its types
(`protocol.d.ts`) and the TypeScript and Kotlin models of every message are generated from
`asyncapi.json` by Modelina, the AsyncAPI project's generator (`client/models.mjs`), and CI
compiles the TypeScript with `tsc --strict`. `Game` is the union of every server message."""


def render_readme(document: dict[str, Any] | None = None) -> str:
    """``shared/protocol/README.md``: the client guide (the document's ``info.description``,
    verbatim) and an index of the messages (each model's first docstring line)."""
    doc = build_asyncapi() if document is None else document
    lines = [
        f"# {doc['info']['title']} (protocol {doc['info']['version']}): client guide",
        "",
        f"Generated by `{REGENERATE_COMMAND}` from `shared/protocol/` together with the AsyncAPI "
        "3.0 document [`asyncapi.json`](asyncapi.json), whose `info.description` is the same "
        "text; do not edit by hand. The recorded scenarios are in "
        "[`conformance/`](conformance/README.md).",
        "",
        doc["info"]["description"].rstrip("\n"),
        "",
        _CLIENT_LIBRARY,
        "",
        "## Messages",
        "",
        'A "ruling N" in a description names one of the numbered product rulings of the '
        "game's design (the decisions behind the rules), stated in `shared/domain/RULINGS.md`; "
        "what it means for the protocol is stated here.",
        "",
        "Client to server (payload schemas: `components.schemas` of `asyncapi.json`):",
        "",
        *_index_rows(dict(MODEL_BY_ACTION), "action"),
        "",
        "Server to client:",
        "",
        *_index_rows(dict(EVENT_BY_TYPE), "type"),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """CLI: write ``ASYNCAPI_PATH``, ``README_PATH`` and ``RECORD_SCHEMA_PATH`` (or
    ``--output``, ``--readme`` and ``--record-schema``);
    with ``--check`` only compare (exit 1 when one is out of date)."""
    parser = argparse.ArgumentParser(prog=REGENERATE_COMMAND, description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if a file is out of date")
    parser.add_argument("--output", type=Path, default=ASYNCAPI_PATH)
    parser.add_argument("--readme", type=Path, default=README_PATH)
    parser.add_argument("--record-schema", type=Path, default=RECORD_SCHEMA_PATH)
    args = parser.parse_args(argv)
    document = build_asyncapi()
    targets: list[tuple[Path, str]] = [
        (args.output, render(document)),
        (args.readme, render_readme(document)),
        (args.record_schema, render_record_schema()),
    ]
    if args.check:
        stale = [
            path
            for path, text in targets
            if (path.read_text(encoding="utf-8") if path.exists() else "") != text
        ]
        for path in stale:
            print(f"{path} is out of date; run: {REGENERATE_COMMAND}", file=sys.stderr)
        return 1 if stale else 0
    for path, text in targets:
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
