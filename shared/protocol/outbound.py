"""Protocol layer: outbound events (server → client), discriminated by ``type``.

Every event is a JSON object with a ``type`` and a ``request_id`` (the id of the inbound message
it answers, else ``null``). ``dump_event`` writes every field, ``null`` included, so clients can
rely on each key being present (the AsyncAPI schemas mark them all required).

Conventions: ids are opaque strings; deadlines are absolute UTC milliseconds (``*_ms``, ints) and
clients count down from them; ``round`` numbers start at 1; a duel's ``turn`` is its row number,
1 to 12 (6 per duelist, rules page). The secret word never appears before its duel is over
(ruling 6): ``DuelBoard`` refuses a ``word`` unless ``over``, and ``Row`` has no secret field.
DESIGN.md §4 names the events.
"""

import json
from collections.abc import Sequence
from typing import Annotated, Any, Final, Literal, Self, TypeAlias, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from shared.protocol.errors import ErrorCode, describe
from shared.protocol.limits import MAX_MESSAGE_BYTES
from shared.protocol.version import PROTOCOL_VERSION

__all__ = [
    "EVENT_BY_TYPE",
    "TYPES",
    "BatchEvent",
    "DuelBoard",
    "DuelEndEvent",
    "DuelStartEvent",
    "EliminatedEvent",
    "ErrorEvent",
    "LanguageInfo",
    "LobbyEvent",
    "Mark",
    "OutboundEvent",
    "Pair",
    "PartyEvent",
    "PlayerEvent",
    "PlayerStatusEvent",
    "PlayerView",
    "PongEvent",
    "RatingEvent",
    "RoundEvent",
    "Row",
    "SessionEvent",
    "Snapshot",
    "Standing",
    "StandingsEvent",
    "TournamentEndEvent",
    "TurnEvent",
    "dump_event",
    "error_event",
    "frames",
    "parse_outbound",
    "unpack",
]

Mark: TypeAlias = Literal["correct", "present", "absent"]
"""A tile's colour: green, yellow, grey (ruling 12: greens first, then yellows left to right)."""

_CONFIG: Final = ConfigDict(
    extra="forbid",
    frozen=True,
    # Every key is always sent (dump_event keeps nulls), so the published schema requires them.
    json_schema_serialization_defaults_required=True,
    # Each model's validator is built on its first use, not at import: a function builds only
    # the events it sends (about 40 ms of a cold start otherwise).
    defer_build=True,
)

_PLAYER_ID = "Player id."
_TOURNAMENT_ID = "Tournament id."
_DUEL_ID = "Duel id."


# --- building blocks ------------------------------------------------------------------------
class PlayerView(BaseModel):
    """What everybody may see of a player."""

    model_config = _CONFIG

    id: str = Field(description=_PLAYER_ID)
    nickname: str = Field(description="Display name (3–20 characters).")
    rating: int = Field(description="Current rating (integer Elo, starts at 1000, ruling 1).")


class Pair(BaseModel):
    """One duel of a round."""

    model_config = _CONFIG

    duel_id: str = Field(description=_DUEL_ID)
    players: list[str] = Field(
        min_length=2, max_length=2, description="The two duelists' player ids."
    )


class LanguageInfo(BaseModel):
    """A game language as a client draws it: its tiles, keyboard and writing direction."""

    model_config = _CONFIG

    code: str = Field(description="Game language code (ISO 639-1), e.g. uz.")
    name: str = Field(description="English name, e.g. Uzbek.")
    native_name: str = Field(description="The language's own name for itself, e.g. Oʻzbekcha.")
    alphabet: list[str] = Field(
        description="Every tile a word may use, in the language's alphabetical order: one "
        "letter, or one of multi_letter_tiles."
    )
    keyboard: list[list[str]] = Field(
        description="On-screen keyboard rows in the native layout, top first; each tile of "
        "the alphabet exactly once."
    )
    direction: Literal["ltr", "rtl"] = Field(
        description="Writing direction of words and board rows (ltr for every game language)."
    )
    multi_letter_tiles: list[str] = Field(
        description="Tiles written with more than one character (Uzbek oʻ gʻ sh ch): each fills "
        "one cell and gets one mark. A word splits into tiles left to right, a multi-letter "
        "tile taken before its first letter alone. Empty for most languages."
    )


class Standing(BaseModel):
    """One player's line in the standings."""

    model_config = _CONFIG

    player_id: str = Field(description=_PLAYER_ID)
    nickname: str = Field(description="Display name.")
    lives: int = Field(ge=0, le=3, description="Lives left (3 at the start).")
    eliminated: bool = Field(description="Out of the tournament (no lives, or left).")
    left: bool = Field(description="Left or missed the reconnect deadline (ruling 3).")
    connected: bool = Field(description="Has a live connection right now.")
    place: int | None = Field(
        default=None,
        ge=1,
        le=8,
        description="Final place, shared by players out in the same round (ruling 2); "
        "null until fixed.",
    )
    rating_change: int | None = Field(
        default=None, description="Rating change once the place is fixed (ruling 1); else null."
    )


class Row(BaseModel):
    """One row of a duel board: a scored guess, or a skipped (timed-out) turn."""

    model_config = _CONFIG

    player: str = Field(description="Player id of the duelist whose turn it was.")
    word: str | None = Field(
        default=None, description="The guess as normalised by the server; null when skipped."
    )
    tiles: list[str] | None = Field(
        default=None,
        description="The guess split into tiles (one per letter of the language's alphabet); "
        "null when skipped.",
    )
    marks: list[Mark] | None = Field(
        default=None, description="One mark per tile, left to right; null when skipped."
    )
    skipped: bool = Field(default=False, description="The turn clock ran out: the turn is used up.")

    @model_validator(mode="after")
    def _guess_or_skip(self) -> Self:
        if self.skipped:
            if self.word is not None or self.tiles is not None or self.marks is not None:
                raise ValueError("a skipped row has no word, tiles or marks")
        else:
            if self.word is None or self.marks is None:
                raise ValueError("a guessed row has a word and marks")
            if self.tiles is not None and len(self.tiles) != len(self.marks):
                raise ValueError("tiles and marks differ in length")
        return self


class DuelBoard(BaseModel):
    """A duel's board as a (re)connecting player or a spectator sees it."""

    model_config = _CONFIG

    duel_id: str = Field(description=_DUEL_ID)
    players: list[str] = Field(
        min_length=2, max_length=2, description="The two duelists' player ids."
    )
    length: int = Field(ge=4, le=6, description="Letters in the secret word (4, 5 or 6).")
    rows: list[Row] = Field(max_length=12, description="Rows so far, oldest first.")
    next_player: str | None = Field(
        default=None, description="Player id to move; null when the duel is over or not started."
    )
    deadline_ms: int | None = Field(
        default=None, description="Current turn's deadline (absolute UTC ms); null when none runs."
    )
    over: bool = Field(default=False, description="The duel has ended.")
    result: Literal["win", "draw"] | None = Field(default=None, description="Only when over.")
    winner: str | None = Field(default=None, description="Winner's player id; only when over.")
    word: str | None = Field(
        default=None, description="The secret word; only when over (ruling 6)."
    )
    display: str | None = Field(
        default=None,
        description="The secret word as it should be displayed, when it differs from word "
        "(as in duel_end); only when over.",
    )

    @model_validator(mode="after")
    def _secret_only_when_over(self) -> Self:
        if not self.over and (
            self.result is not None
            or self.winner is not None
            or self.word is not None
            or self.display is not None
        ):
            raise ValueError("result, winner and word are sent only once the duel is over")
        return self


# --- events ---------------------------------------------------------------------------------
class _Event(BaseModel):
    model_config = _CONFIG

    request_id: str | None = Field(
        default=None, description="The request_id of the inbound message this answers; else null."
    )


class LobbyEvent(_Event):
    """The player's lobby changed (seat taken or freed, started, left)."""

    type: Literal["lobby"] = Field(default="lobby", description="Discriminator.")
    lobby_id: str = Field(description="Lobby id.")
    language: str = Field(description="Game language code.")
    seats: int = Field(
        default=8, description="Seats in a lobby; the tournament starts when all fill."
    )
    players: list[PlayerView] = Field(description="Seated players, in joining order.")
    party_id: str | None = Field(default=None, description="The party this lobby was opened for.")
    status: Literal["waiting", "started", "left"] = Field(
        description="waiting: filling; started: the tournament began (see tournament_id); "
        "left: you are no longer in it."
    )
    tournament_id: str | None = Field(default=None, description="Set once status is started.")
    alphabet: list[str] = Field(description="The language's letters (tiles), in order.")
    keyboard: list[list[str]] = Field(description="On-screen keyboard rows for the language.")


class RoundEvent(_Event):
    """A round was paired; its duels start at the end of the intro (6 s)."""

    type: Literal["round"] = Field(default="round", description="Discriminator.")
    tournament_id: str = Field(description=_TOURNAMENT_ID)
    round: int = Field(ge=1, description="Round number, from 1.")
    pairs: list[Pair] = Field(description="The round's duels (ruling 4).")
    bye: str | None = Field(
        default=None, description="Player id with the bye, when the count is odd."
    )
    intro_deadline_ms: int = Field(description="When the duels start (absolute UTC ms).")
    standings: list[Standing] = Field(description="Standings at the start of the round.")


class StandingsEvent(_Event):
    """Lives, eliminations, connections or places changed."""

    type: Literal["standings"] = Field(default="standings", description="Discriminator.")
    tournament_id: str = Field(description=_TOURNAMENT_ID)
    round: int = Field(ge=0, description="Current round number (0 before the first pairing).")
    players: list[Standing] = Field(description="Every player of the tournament.")


class PartyEvent(_Event):
    """The player's party changed (created, joined, left, queued, playing)."""

    type: Literal["party"] = Field(default="party", description="Discriminator.")
    party_id: str | None = Field(description="Party id; null once you left.")
    invite: str | None = Field(
        default=None, description="Invite token to share (ruling 10); null once you left."
    )
    leader: str | None = Field(default=None, description="Leader's player id.")
    members: list[PlayerView] = Field(description="Members, longest-standing first.")
    status: Literal["open", "queued", "playing", "left"] = Field(
        description="open: idle; queued: in a lobby; playing: in a tournament; "
        "left: you are no longer in it."
    )


class PlayerEvent(_Event):
    """Reply to ``nickname``: the player as now seen by others."""

    type: Literal["player"] = Field(default="player", description="Discriminator.")
    player: PlayerView = Field(description="You, updated.")


class DuelStartEvent(_Event):
    """A duel started: sent to both duelists and to spectators."""

    type: Literal["duel_start"] = Field(default="duel_start", description="Discriminator.")
    tournament_id: str = Field(description=_TOURNAMENT_ID)
    round: int = Field(ge=1, description="Round number.")
    duel_id: str = Field(description=_DUEL_ID)
    players: list[str] = Field(
        min_length=2, max_length=2, description="The two duelists' player ids."
    )
    opponent: str | None = Field(
        default=None, description="For a duelist, the other duelist's id; null for spectators."
    )
    length: int = Field(ge=4, le=6, description="Letters in the secret word (4, 5 or 6).")
    first: str = Field(description="Player id moving first (drawn at random, ruling 5).")
    turn: int = Field(default=1, ge=1, le=12, description="Row number about to be played (1).")
    next_player: str = Field(description="Player id to move.")
    deadline_ms: int = Field(description="First turn's deadline (absolute UTC ms).")


class TurnEvent(_Event):
    """A turn was played (a guess) or used up (a skip); the clock moved on."""

    type: Literal["turn"] = Field(default="turn", description="Discriminator.")
    tournament_id: str = Field(description=_TOURNAMENT_ID)
    duel_id: str = Field(description=_DUEL_ID)
    turn: int = Field(ge=1, le=12, description="Row number of this row, 1 to 12.")
    row: Row = Field(description="The row played.")
    next_player: str | None = Field(
        default=None, description="Player id to move; null if it ended."
    )
    deadline_ms: int | None = Field(
        default=None, description="Next turn's deadline (absolute UTC ms); null if the duel ended."
    )


class DuelEndEvent(_Event):
    """A duel ended; the secret word is revealed (ruling 6)."""

    type: Literal["duel_end"] = Field(default="duel_end", description="Discriminator.")
    tournament_id: str = Field(description=_TOURNAMENT_ID)
    duel_id: str = Field(description=_DUEL_ID)
    result: Literal["win", "draw"] = Field(description="win, or draw after 12 rows.")
    winner: str | None = Field(default=None, description="Winner's player id; null on a draw.")
    reason: Literal["solved", "turns_used", "left", "timeout"] = Field(
        description='solved: a correct guess (rules page "Turns and the clock"); '
        "turns_used: both used 6 turns, a draw (ruling 5); "
        'left: a duelist left, the opponent wins (rules page "Leaving and disconnects"; '
        "ruling 3); timeout: a duelist missed the 60 s reconnect deadline — after a "
        "disconnect or 60 s of silence (rulings 9 and 14) — treated as having left (ruling 3)."
    )
    word: str = Field(description="The secret word (normalised form).")
    display: str | None = Field(
        default=None, description="The secret word as it should be displayed, when it differs."
    )
    spectating: list[DuelBoard] = Field(
        default_factory=list,
        description="For this duel's duelists, who now spectate (ruling 7): the round's other "
        "duels as they stand, rows and marks (a secret only for a duel that is over, ruling 6); "
        "later rows arrive as turn messages, a row already on a board is not repeated. Empty "
        "for everyone else, and when this duel closed the round.",
    )

    @model_validator(mode="after")
    def _winner_matches_result(self) -> Self:
        if (self.result == "win") != (self.winner is not None):
            raise ValueError("a win has a winner and a draw has none")
        return self


class EliminatedEvent(_Event):
    """A player lost their last life, left, or missed the reconnect deadline."""

    type: Literal["eliminated"] = Field(default="eliminated", description="Discriminator.")
    tournament_id: str = Field(description=_TOURNAMENT_ID)
    round: int = Field(ge=1, description="Round of the elimination.")
    player_id: str = Field(description=_PLAYER_ID)
    reason: Literal["lives", "left", "timeout"] = Field(
        description='lives: the last life went (rules page "Lives and elimination"; ruling 2); '
        "left: left the tournament (ruling 3); timeout: missed the 60 s reconnect deadline — "
        "after a disconnect or 60 s of silence (rulings 9 and 14) — treated as having left "
        "(ruling 3)."
    )


class RatingEvent(_Event):
    """Your place is fixed and your rating changed (rulings 1 and 2)."""

    type: Literal["rating"] = Field(default="rating", description="Discriminator.")
    tournament_id: str = Field(description=_TOURNAMENT_ID)
    place: int = Field(ge=1, le=8, description="Final place (shared places possible).")
    change: int = Field(description="Rating change, e.g. +25 or -11.")
    rating: int = Field(description="New rating (previous + change).")
    previous: int = Field(
        description="Rating before this tournament's change: the rating snapshotted when the "
        "tournament started (ruling 1)."
    )


class TournamentEndEvent(_Event):
    """The tournament ended."""

    type: Literal["tournament_end"] = Field(default="tournament_end", description="Discriminator.")
    tournament_id: str = Field(description=_TOURNAMENT_ID)
    places: list[Standing] = Field(description="Final standings, best place first.")
    winners: list[str] = Field(description="Player ids on place 1 (more than one if shared).")


class PlayerStatusEvent(_Event):
    """A player in your lobby or tournament disconnected or reconnected."""

    type: Literal["player_status"] = Field(default="player_status", description="Discriminator.")
    tournament_id: str | None = Field(default=None, description="Set when in a tournament.")
    lobby_id: str | None = Field(default=None, description="Set when in a lobby.")
    player_id: str = Field(description=_PLAYER_ID)
    status: Literal["connected", "disconnected"] = Field(description="Connection state.")
    reconnect_deadline_ms: int | None = Field(
        default=None,
        description="When disconnected: the seat is lost / the player is out at this time "
        "(absolute UTC ms, 60 s, ruling 9).",
    )


class Snapshot(BaseModel):
    """Everything a resuming client needs to draw its screen from nothing (ruling 15), sent in
    ``session``: each part is what the latest messages of its kind would have said.

    Shapes by where the player is: idle — only ``party`` (and ``tournament_end`` once, below);
    in a lobby — ``language``, ``lobby``, ``statuses``; in a tournament — ``language``,
    ``round``, ``standings``, ``duel`` (own duel of the round), ``spectating`` (ruling 7),
    ``statuses``, and once out ``eliminated`` and, when the place is fixed, ``rating``; a
    player who left keeps only ``language``, ``eliminated`` and ``rating`` (they receive no
    more of the tournament's messages). After the tournament ended: ``tournament_end`` and
    ``rating``, in one resume only. No part ever holds the secret of a running duel (ruling 6).
    """

    model_config = _CONFIG

    language: LanguageInfo | None = Field(
        default=None,
        description="The game language of the lobby or tournament shown (tiles, keyboard, "
        "direction); null when neither is.",
    )
    lobby: LobbyEvent | None = Field(default=None, description="The lobby the player waits in.")
    round: RoundEvent | None = Field(
        default=None,
        description="The current round of the tournament (pairs, bye, intro deadline).",
    )
    duel: DuelBoard | None = Field(
        default=None,
        description="The player's own duel this round; during the intro its next_player and "
        "deadline_ms are null.",
    )
    standings: StandingsEvent | None = Field(default=None, description="Current standings.")
    party: PartyEvent | None = Field(default=None, description="The player's party.")
    spectating: list[DuelBoard] = Field(
        default_factory=list,
        description="The round's other duels when the player spectates (ruling 7: their duel "
        "is over, they have the bye, or they are out): rows and marks, the secret only once a "
        "duel is over (ruling 6).",
    )
    statuses: list[PlayerStatusEvent] = Field(
        default_factory=list,
        description="Other players of the lobby or tournament shown who are disconnected now, "
        "each as its latest player_status said (with the reconnect deadline, absolute UTC ms, "
        "while one runs).",
    )
    eliminated: EliminatedEvent | None = Field(
        default=None,
        description="Set once the player is out of the tournament shown: the round and the "
        "reason (lives, left or timeout), as the eliminated message said.",
    )
    rating: RatingEvent | None = Field(
        default=None,
        description="The player's place and rating change in the tournament shown, once the "
        "place is fixed (rulings 1 and 2), as its rating message said.",
    )
    tournament_end: TournamentEndEvent | None = Field(
        default=None,
        description="The final standings of the player's tournament that ended since: sent in "
        "one resume only (the next one shows the player idle).",
    )


class SessionEvent(_Event):
    """Reply to ``session``: who you are, and a snapshot when resuming."""

    type: Literal["session"] = Field(default="session", description="Discriminator.")
    player: PlayerView = Field(description="You.")
    token: str | None = Field(
        default=None,
        description="Secret session token, only when the player was just created: store it and "
        "send it in later session messages (ruling 11). Null otherwise.",
    )
    resumed: bool = Field(description="True when an existing player was resumed by token.")
    protocol: int = Field(default=PROTOCOL_VERSION, description="Server protocol version.")
    snapshot: Snapshot | None = Field(default=None, description="Current state when resuming.")


class PongEvent(_Event):
    """Reply to ``ping``."""

    type: Literal["pong"] = Field(default="pong", description="Discriminator.")
    server_time_ms: int = Field(description="Server time (absolute UTC ms), for clock offset.")


class ErrorEvent(_Event):
    """A request was refused or failed; nothing changed."""

    type: Literal["error"] = Field(default="error", description="Discriminator.")
    code: ErrorCode = Field(description="Stable error code; branch on this, not on message.")
    message: str = Field(description="English, for people (may change).")


class BatchEvent(_Event):
    """Several events for this connection from one change, in order, as one WebSocket message
    (one post per recipient per change). Handle each of ``events`` in turn exactly as if it had
    come alone; the event answering a request carries that ``request_id`` (the batch's own is
    always null). A change with one event for a connection sends it alone, unwrapped; a batch
    never nests and never holds fewer than two events. A change whose events would pass the
    message limit (128 KB) sends them in several batches, still in order."""

    type: Literal["batch"] = Field(default="batch", description="Discriminator.")
    events: "list[OutboundEvent]" = Field(
        min_length=2, description="The events, in the order they happened (never a batch)."
    )

    @model_validator(mode="after")
    def _flat(self) -> Self:
        if any(e.type == "batch" for e in self.events):
            raise ValueError("a batch never holds a batch")
        return self


OutboundEvent: TypeAlias = Annotated[
    SessionEvent
    | PlayerEvent
    | LobbyEvent
    | RoundEvent
    | DuelStartEvent
    | TurnEvent
    | DuelEndEvent
    | StandingsEvent
    | EliminatedEvent
    | RatingEvent
    | TournamentEndEvent
    | PartyEvent
    | PlayerStatusEvent
    | PongEvent
    | ErrorEvent
    | BatchEvent,
    Field(discriminator="type"),
]
"""Any outbound event; pydantic picks the model by ``type``."""


def _members() -> tuple[type[_Event], ...]:
    return tuple(get_args(get_args(OutboundEvent)[0]))


def _type_of(model: type[BaseModel]) -> str:
    (value,) = get_args(model.model_fields["type"].annotation)
    return str(value)


# Annotations are evaluated with each class (no ``from __future__ import annotations``): a string
# annotation is compiled by pydantic when the class is created, which cost about 6 ms of this
# module's import on every cold start. So each model comes after the models it names; only
# ``BatchEvent.events`` stays a string, since it names the union that holds ``BatchEvent``
# (pydantic resolves it from this module when it builds the model, on first use).

EVENT_BY_TYPE: Final[dict[str, type[_Event]]] = {_type_of(m): m for m in _members()}
"""Event type → model, derived from ``OutboundEvent``."""

TYPES: Final[tuple[str, ...]] = tuple(EVENT_BY_TYPE)
"""Every outbound event type, in union order."""

_adapter: TypeAdapter[OutboundEvent] | None = None


def parse_outbound(raw: str | bytes) -> OutboundEvent:
    """Parse a server event (for clients, bots and tests); raises ``pydantic.ValidationError``."""
    global _adapter
    if _adapter is None:
        _adapter = TypeAdapter(OutboundEvent)
    return _adapter.validate_json(raw)


def dump_event(event: OutboundEvent) -> str:
    """The event as compact JSON text, every field present (``null`` included), non-ASCII kept
    as UTF-8. This is what the notifier posts to a connection."""
    return event.model_dump_json()


def error_event(
    code: ErrorCode | str, message: str | None = None, request_id: str | None = None
) -> ErrorEvent:
    """An ``error`` event; ``message`` defaults to ``describe(code)``.

    ``code`` may be a ``DomainError.code`` string; it must be an ``ErrorCode`` value
    (``ValueError`` otherwise: add the code to ``ErrorCode``).
    """
    error_code = ErrorCode(code)
    return ErrorEvent(
        code=error_code, message=message or describe(error_code), request_id=request_id
    )


_BATCH_OPEN = '{"type":"batch","request_id":null,"events":['
_BATCH_CLOSE = "]}"


def frames(texts: Sequence[str], limit: int = MAX_MESSAGE_BYTES) -> list[str]:
    """The messages that carry ``texts`` (dumped events for one connection, in order): the one
    text alone, or ``batch`` messages of at most ``limit`` bytes (UTF-8) each, in order. A single
    text over the limit goes alone (it is the event's own size, not the batch's).

    Source: API Gateway's WebSocket message quota (128 KB,
    https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html)."""
    if len(texts) <= 1:
        return list(texts)
    overhead = len(_BATCH_OPEN) + len(_BATCH_CLOSE)
    groups: list[list[str]] = [[]]
    size = overhead
    for text in texts:
        n = len(text.encode("utf-8")) + (1 if groups[-1] else 0)
        if groups[-1] and size + n > limit:
            groups.append([])
            size = overhead
            n = len(text.encode("utf-8"))
        groups[-1].append(text)
        size += n
    return [g[0] if len(g) == 1 else _BATCH_OPEN + ",".join(g) + _BATCH_CLOSE for g in groups]


def unpack(raw: str | bytes) -> list[dict[str, Any]]:
    """The events a server message carries, in order, as JSON objects: a ``batch``'s events, or
    the message itself (for clients that read JSON without the models). Raises ValueError for
    text that is not JSON."""
    message = json.loads(raw)
    if isinstance(message, dict) and message.get("type") == "batch":
        return list(message.get("events") or [])
    return [message]
