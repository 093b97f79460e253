"""Protocol layer: outbound events (server → client), discriminated by ``type``.

Every event is a JSON object with a ``type`` and a ``request_id`` (the id of the inbound message
it answers, else ``null``). ``dump_event`` (``shared.protocol.framing``) writes every field,
``null`` included, so clients can rely on each key being present (the AsyncAPI schemas mark them
all required).

Conventions: ids are opaque strings; deadlines are absolute UTC milliseconds (``*_ms``, ints) and
clients count down from them; ``round`` numbers start at 1; a duel's ``turn`` is its row number,
1 to 12 (6 per duelist, rules page). The secret word never appears before its duel is over
(ruling 6): ``DuelBoard`` refuses a ``word`` unless ``over``, and ``Row`` has no secret field.
The client guide names the events.

Each message is a frozen stdlib dataclass: building one runs its own checks (``__post_init__``:
a row is a guess or a skip, a secret only once a duel is over, a win has a winner, a batch never
nests; ``ValueError``), and ``dump_event`` writes it with ``json``, so a function that pushes
events never imports pydantic (about 100 ms of every cold start, issue 16). The same classes
are the contract: pydantic validates them (``parse_outbound``: types, the constraints in each
field's metadata, extra keys refused, those checks) and builds their JSON schema (the AsyncAPI
document), which is how clients, bots and every test read what the server sends.
"""

from collections.abc import Callable
from typing import Annotated, Final, Literal, TypeAlias, get_args

from shared.protocol.errors import RETRY_AFTER_CODES, ErrorCode, describe
from shared.protocol.framing import Event as _Event
from shared.protocol.framing import TaggedByType
from shared.protocol.framing import message_class as _message
from shared.protocol.framing import message_field as _f
from shared.protocol.limits import (
    HEARTBEAT_TIMEOUT_SECONDS,
    PAUSED_RETRY_AFTER_MS,
    PING_INTERVAL_SECONDS,
    RECONNECT_SECONDS,
    TRY_AGAIN_AFTER_MS,
)
from shared.protocol.version import PROTOCOL, PROTOCOL_MIN, PROTOCOL_VERSION

__all__ = [
    "EVENT_BY_TYPE",
    "TYPES",
    "BatchEvent",
    "BoardEntry",
    "DuelBoard",
    "DuelEndEvent",
    "DuelStartEvent",
    "EliminatedEvent",
    "ErrorEvent",
    "HistoryEntry",
    "HistoryEvent",
    "LanguageInfo",
    "LanguageStats",
    "LeaderboardEvent",
    "LobbyEvent",
    "Mark",
    "Opponent",
    "OutboundEvent",
    "Pair",
    "PartyEvent",
    "PartyStatus",
    "PlayerEvent",
    "PlayerStatusEvent",
    "PlayerView",
    "PongEvent",
    "Profile",
    "ProfileEvent",
    "RatingEvent",
    "RatingPoint",
    "RecordDuel",
    "RecordPlayer",
    "RecordRound",
    "RecordRow",
    "ReplayEvent",
    "RoundEvent",
    "Row",
    "SessionEvent",
    "Snapshot",
    "Standing",
    "StandingsEvent",
    "TournamentEndEvent",
    "TournamentRecord",
    "TurnEvent",
    "error_event",
    "parse_outbound",
]

Mark: TypeAlias = Literal["correct", "present", "absent"]
"""A tile's colour: green, yellow, grey (ruling 12: greens first, then yellows left to right)."""

PartyStatus: TypeAlias = Literal["open", "queued", "playing", "left"]
"""A party's state as its ``party`` message says it (see ``PartyEvent.status``)."""

_PLAYER_ID = "Player id."
_TOURNAMENT_ID = "Tournament id."
_DUEL_ID = "Duel id."
_LENGTH = (
    "Tiles in the secret word (4, 5 or 6), not characters: a multi-letter tile (Uzbek oʻ gʻ sh "
    "ch, LanguageInfo.multi_letter_tiles) is one cell and counts once."
)
_ORDER = (
    "Order: players without a fixed place first, most lives first (so players still in come "
    "before those out in the current round); then players with a place, best place first; "
    "ties by nickname (code point order)."
)


# --- building blocks ------------------------------------------------------------------------
@_message
class PlayerView:
    """What everybody may see of a player."""

    id: str = _f(description=_PLAYER_ID)
    nickname: str = _f(description="Display name (3–20 characters).")
    rating: int = _f(description="Current rating (integer Elo, starts at 1000, ruling 1).")


@_message
class Pair:
    """One duel of a round."""

    duel_id: str = _f(description=_DUEL_ID)
    players: list[str] = _f(min_length=2, max_length=2, description="The two duelists' player ids.")


@_message
class LanguageInfo:
    """A game language as a client draws it: its tiles, keyboard and writing direction."""

    code: str = _f(description="Game language code (ISO 639-1), e.g. uz.")
    name: str = _f(description="English name, e.g. Uzbek.")
    native_name: str = _f(description="The language's own name for itself, e.g. Oʻzbekcha.")
    alphabet: list[str] = _f(
        description="Every tile a word may use, in the language's alphabetical order: one "
        "letter, or one of multi_letter_tiles."
    )
    keyboard: list[list[str]] = _f(
        description="On-screen keyboard rows in the native layout, top first; each tile of "
        "the alphabet exactly once."
    )
    direction: Literal["ltr", "rtl"] = _f(
        description="Writing direction of words and board rows (ltr for every game language)."
    )
    multi_letter_tiles: list[str] = _f(
        description="Tiles written with more than one character (Uzbek oʻ gʻ sh ch): each fills "
        "one cell and gets one mark. A word splits into tiles left to right, a multi-letter "
        "tile taken before its first letter alone. Empty for most languages."
    )


@_message
class Standing:
    """One player's line in the standings."""

    player_id: str = _f(description=_PLAYER_ID)
    nickname: str = _f(description="Display name.")
    lives: int = _f(ge=0, le=3, description="Lives left (3 at the start).")
    eliminated: bool = _f(description="Out of the tournament (no lives, or left).")
    left: bool = _f(description="Left or missed the reconnect deadline (ruling 3).")
    connected: bool = _f(description="Has a live connection right now.")
    place: int | None = _f(
        default=None,
        ge=1,
        le=8,
        description="Final place, shared by players out in the same round (ruling 2); "
        "null until fixed.",
    )
    rating_change: int | None = _f(
        default=None, description="Rating change once the place is fixed (ruling 1); else null."
    )


@_message
class Row:
    """One row of a duel board: a scored guess, or a skipped (timed-out) turn."""

    player: str = _f(description="Player id of the duelist whose turn it was.")
    word: str | None = _f(
        default=None, description="The guess as normalised by the server; null when skipped."
    )
    tiles: list[str] | None = _f(
        default=None,
        description="The guess split into tiles (one per letter of the language's alphabet); "
        "null when skipped.",
    )
    marks: list[Mark] | None = _f(
        default=None, description="One mark per tile, left to right; null when skipped."
    )
    skipped: bool = _f(default=False, description="The turn clock ran out: the turn is used up.")

    def __post_init__(self) -> None:
        if self.skipped:
            if self.word is not None or self.tiles is not None or self.marks is not None:
                raise ValueError("a skipped row has no word, tiles or marks")
        else:
            if self.word is None or self.marks is None:
                raise ValueError("a guessed row has a word and marks")
            if self.tiles is not None and len(self.tiles) != len(self.marks):
                raise ValueError("tiles and marks differ in length")


@_message
class DuelBoard:
    """A duel's board as a (re)connecting player or a spectator sees it."""

    duel_id: str = _f(description=_DUEL_ID)
    players: list[str] = _f(min_length=2, max_length=2, description="The two duelists' player ids.")
    length: int = _f(ge=4, le=6, description=_LENGTH)
    rows: list[Row] = _f(max_length=12, description="Rows so far, oldest first.")
    next_player: str | None = _f(
        default=None, description="Player id to move; null when the duel is over or not started."
    )
    deadline_ms: int | None = _f(
        default=None, description="Current turn's deadline (absolute UTC ms); null when none runs."
    )
    over: bool = _f(default=False, description="The duel has ended.")
    result: Literal["win", "draw"] | None = _f(default=None, description="Only when over.")
    winner: str | None = _f(default=None, description="Winner's player id; only when over.")
    word: str | None = _f(default=None, description="The secret word; only when over (ruling 6).")
    display: str | None = _f(
        default=None,
        description="The secret word as it should be displayed, when it differs from word "
        "(as in duel_end); only when over.",
    )

    def __post_init__(self) -> None:
        if not self.over and (
            self.result is not None
            or self.winner is not None
            or self.word is not None
            or self.display is not None
        ):
            raise ValueError("result, winner and word are sent only once the duel is over")


# --- events ---------------------------------------------------------------------------------
@_message
class LobbyEvent(_Event):
    """The player's lobby changed (seat taken or freed, started, left)."""

    type: Literal["lobby"] = _f(default="lobby", description="Discriminator.")
    lobby_id: str = _f(description="Lobby id.")
    language: str = _f(description="Game language code.")
    seats: int = _f(default=8, description="Seats in a lobby; the tournament starts when all fill.")
    players: list[PlayerView] = _f(description="Seated players, in joining order.")
    party_id: str | None = _f(default=None, description="The party this lobby was opened for.")
    status: Literal["waiting", "started", "left"] = _f(
        description="waiting: filling; started: the tournament began (see tournament_id); "
        "left: you are no longer in it."
    )
    tournament_id: str | None = _f(default=None, description="Set once status is started.")
    alphabet: list[str] = _f(description="The language's letters (tiles), in order.")
    keyboard: list[list[str]] = _f(description="On-screen keyboard rows for the language.")
    language_info: LanguageInfo = _f(
        description="The game language as a client draws it, as in a resume's snapshot: "
        "tiles, keyboard, multi-letter tiles and writing direction."
    )


@_message
class RoundEvent(_Event):
    """A round was paired; its duels start at the end of the intro (6 s)."""

    type: Literal["round"] = _f(default="round", description="Discriminator.")
    tournament_id: str = _f(description=_TOURNAMENT_ID)
    round: int = _f(ge=1, description="Round number, from 1.")
    pairs: list[Pair] = _f(description="The round's duels (ruling 4).")
    bye: str | None = _f(default=None, description="Player id with the bye, when the count is odd.")
    intro_deadline_ms: int = _f(description="When the duels start (absolute UTC ms).")
    standings: list[Standing] = _f(
        description="In a round message, the standings when the round was paired; in a "
        "snapshot's round, the current standings (the same as the snapshot's standings). " + _ORDER
    )


@_message
class StandingsEvent(_Event):
    """Lives, eliminations, connections or places changed."""

    type: Literal["standings"] = _f(default="standings", description="Discriminator.")
    tournament_id: str = _f(description=_TOURNAMENT_ID)
    round: int = _f(ge=0, description="Current round number (0 before the first pairing).")
    players: list[Standing] = _f(description="Every player of the tournament. " + _ORDER)


@_message
class PartyEvent(_Event):
    """The player's party changed (created, joined, left, queued, playing)."""

    type: Literal["party"] = _f(default="party", description="Discriminator.")
    party_id: str | None = _f(description="Party id; null once you left.")
    invite: str | None = _f(
        default=None, description="Invite token to share (ruling 10); null once you left."
    )
    leader: str | None = _f(default=None, description="Leader's player id.")
    members: list[PlayerView] = _f(description="Members, longest-standing first.")
    status: PartyStatus = _f(
        description="open: idle; queued: in a lobby; playing: in a tournament; "
        "left: you are no longer in it."
    )


@_message
class PlayerEvent(_Event):
    """Reply to ``nickname``: the player as now seen by others."""

    type: Literal["player"] = _f(default="player", description="Discriminator.")
    player: PlayerView = _f(description="You, updated.")


@_message
class DuelStartEvent(_Event):
    """A duel started: sent to both duelists and to spectators."""

    type: Literal["duel_start"] = _f(default="duel_start", description="Discriminator.")
    tournament_id: str = _f(description=_TOURNAMENT_ID)
    round: int = _f(ge=1, description="Round number.")
    duel_id: str = _f(description=_DUEL_ID)
    players: list[str] = _f(min_length=2, max_length=2, description="The two duelists' player ids.")
    opponent: str | None = _f(
        default=None, description="For a duelist, the other duelist's id; null for spectators."
    )
    length: int = _f(ge=4, le=6, description=_LENGTH)
    first: str = _f(description="Player id moving first (drawn at random, ruling 5).")
    turn: int = _f(default=1, ge=1, le=12, description="Row number about to be played (1).")
    next_player: str = _f(description="Player id to move.")
    deadline_ms: int = _f(description="First turn's deadline (absolute UTC ms).")
    remaining_ms: int = _f(
        default=0,
        ge=0,
        description="Time left until deadline_ms when the server sent this (ms, a duration): "
        "count down from arrival when the device clock is not to be trusted.",
    )


@_message
class TurnEvent(_Event):
    """A turn was played (a guess) or used up (a skip); the clock moved on."""

    type: Literal["turn"] = _f(default="turn", description="Discriminator.")
    tournament_id: str = _f(description=_TOURNAMENT_ID)
    duel_id: str = _f(description=_DUEL_ID)
    turn: int = _f(ge=1, le=12, description="Row number of this row, 1 to 12.")
    row: Row = _f(description="The row played.")
    next_player: str | None = _f(default=None, description="Player id to move; null if it ended.")
    deadline_ms: int | None = _f(
        default=None, description="Next turn's deadline (absolute UTC ms); null if the duel ended."
    )
    remaining_ms: int | None = _f(
        default=None,
        ge=0,
        description="Time left until deadline_ms when the server sent this (ms, a duration); "
        "null if the duel ended.",
    )


@_message
class DuelEndEvent(_Event):
    """A duel ended; the secret word is revealed (ruling 6)."""

    type: Literal["duel_end"] = _f(default="duel_end", description="Discriminator.")
    tournament_id: str = _f(description=_TOURNAMENT_ID)
    duel_id: str = _f(description=_DUEL_ID)
    result: Literal["win", "draw"] = _f(description="win, or draw after 12 rows.")
    winner: str | None = _f(default=None, description="Winner's player id; null on a draw.")
    reason: Literal["solved", "turns_used", "left", "timeout"] = _f(
        description='solved: a correct guess (rules page "Turns and the clock"); '
        "turns_used: both used 6 turns, a draw (ruling 5); "
        'left: a duelist left, the opponent wins (rules page "Leaving and disconnects"; '
        "ruling 3); timeout: a duelist missed the 60 s reconnect deadline — after a "
        "disconnect or 60 s of silence (rulings 9 and 14) — treated as having left (ruling 3)."
    )
    word: str = _f(description="The secret word (normalised form).")
    display: str | None = _f(
        default=None, description="The secret word as it should be displayed, when it differs."
    )
    spectating: list[DuelBoard] = _f(
        default_factory=list,
        description="For this duel's duelists, who now spectate (ruling 7): the round's other "
        "duels as they stand, rows and marks (a secret only for a duel that is over, ruling 6); "
        "later rows arrive as turn messages, a row already on a board is not repeated. Empty "
        "for everyone else, and when this duel closed the round.",
    )

    def __post_init__(self) -> None:
        if (self.result == "win") != (self.winner is not None):
            raise ValueError("a win has a winner and a draw has none")


@_message
class EliminatedEvent(_Event):
    """A player lost their last life, left, or missed the reconnect deadline."""

    type: Literal["eliminated"] = _f(default="eliminated", description="Discriminator.")
    tournament_id: str = _f(description=_TOURNAMENT_ID)
    round: int = _f(ge=1, description="Round of the elimination.")
    player_id: str = _f(description=_PLAYER_ID)
    reason: Literal["lives", "left", "timeout"] = _f(
        description='lives: the last life went (rules page "Lives and elimination"; ruling 2); '
        "left: left the tournament (ruling 3); timeout: missed the 60 s reconnect deadline — "
        "after a disconnect or 60 s of silence (rulings 9 and 14) — treated as having left "
        "(ruling 3)."
    )


@_message
class RatingEvent(_Event):
    """Your place is fixed and your rating changed (rulings 1 and 2)."""

    type: Literal["rating"] = _f(default="rating", description="Discriminator.")
    tournament_id: str = _f(description=_TOURNAMENT_ID)
    place: int = _f(ge=1, le=8, description="Final place (shared places possible).")
    change: int = _f(description="Rating change, e.g. +25 or -11.")
    rating: int = _f(description="New rating (previous + change).")
    previous: int = _f(
        description="Rating before this tournament's change: the rating snapshotted when the "
        "tournament started (ruling 1)."
    )


@_message
class TournamentEndEvent(_Event):
    """The tournament ended."""

    type: Literal["tournament_end"] = _f(default="tournament_end", description="Discriminator.")
    tournament_id: str = _f(description=_TOURNAMENT_ID)
    places: list[Standing] = _f(description="Final standings, best place first. " + _ORDER)
    winners: list[str] = _f(description="Player ids on place 1 (more than one if shared).")


@_message
class PlayerStatusEvent(_Event):
    """A player in your lobby or tournament disconnected or reconnected."""

    type: Literal["player_status"] = _f(default="player_status", description="Discriminator.")
    tournament_id: str | None = _f(default=None, description="Set when in a tournament.")
    lobby_id: str | None = _f(default=None, description="Set when in a lobby.")
    player_id: str = _f(description=_PLAYER_ID)
    status: Literal["connected", "disconnected"] = _f(description="Connection state.")
    reconnect_deadline_ms: int | None = _f(
        default=None,
        description="When disconnected: the seat is lost / the player is out at this time "
        "(absolute UTC ms, 60 s, ruling 9).",
    )


@_message
class Snapshot:
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

    language: LanguageInfo | None = _f(
        default=None,
        description="The game language of the lobby or tournament shown (tiles, keyboard, "
        "direction); null when neither is.",
    )
    lobby: LobbyEvent | None = _f(default=None, description="The lobby the player waits in.")
    round: RoundEvent | None = _f(
        default=None,
        description="The current round of the tournament (pairs, bye, intro deadline); its "
        "standings are the current ones, not those when the round was paired.",
    )
    duel: DuelBoard | None = _f(
        default=None,
        description="The player's own duel this round; during the intro its next_player and "
        "deadline_ms are null.",
    )
    standings: StandingsEvent | None = _f(default=None, description="Current standings.")
    party: PartyEvent | None = _f(default=None, description="The player's party.")
    spectating: list[DuelBoard] = _f(
        default_factory=list,
        description="The round's other duels when the player spectates (ruling 7: their duel "
        "is over, they have the bye, or they are out): rows and marks, the secret only once a "
        "duel is over (ruling 6).",
    )
    statuses: list[PlayerStatusEvent] = _f(
        default_factory=list,
        description="Other players of the lobby or tournament shown who are disconnected now, "
        "each as its latest player_status said (with the reconnect deadline, absolute UTC ms, "
        "while one runs).",
    )
    eliminated: EliminatedEvent | None = _f(
        default=None,
        description="Set once the player is out of the tournament shown: the round and the "
        "reason (lives, left or timeout), as the eliminated message said.",
    )
    rating: RatingEvent | None = _f(
        default=None,
        description="The player's place and rating change in the tournament shown, once the "
        "place is fixed (rulings 1 and 2), as its rating message said.",
    )
    tournament_end: TournamentEndEvent | None = _f(
        default=None,
        description="The final standings of the player's tournament that ended since: sent in "
        "one resume only (the next one shows the player idle).",
    )
    seq: int | None = _f(
        default=None,
        ge=0,
        description="Since 1.2. The seq of the last event the server sent the player about the "
        "tournament shown (0: none yet): the next one is seq + 1. Null when no tournament is "
        "shown.",
    )


@_message
class SessionEvent(_Event):
    """Reply to ``session``: who you are, and a snapshot when resuming."""

    type: Literal["session"] = _f(default="session", description="Discriminator.")
    player: PlayerView = _f(description="You.")
    token: str | None = _f(
        default=None,
        description="Secret session token: the new player's, or after a resume or "
        "sign_out_everywhere the next one (tokens rotate, ruling 11). Store it in place of the "
        "one you had and send it in the next session message; the previous token still resumes "
        "for a short grace (a reply lost on the way), an older one never.",
    )
    resumed: bool = _f(description="True when an existing player was resumed by token.")
    protocol: int = _f(default=PROTOCOL_VERSION, description="Server protocol major version.")
    protocol_version: str = _f(
        default=PROTOCOL,
        description="The protocol version in use, MAJOR.MINOR: what the server speaks (every "
        "client of the same major reads it, ignoring what it does not know).",
    )
    protocol_min: str = _f(
        default=PROTOCOL_MIN,
        description="The oldest version the server accepts in session.protocol, MAJOR.MINOR "
        "(the supported range is protocol_min to protocol_version).",
    )
    snapshot: Snapshot | None = _f(default=None, description="Current state when resuming.")
    ping_interval_ms: int = _f(
        default=PING_INTERVAL_SECONDS * 1000,
        ge=1,
        description="Send a message (ping) at least this often (ms, a duration; ruling 14).",
    )
    heartbeat_timeout_ms: int = _f(
        default=HEARTBEAT_TIMEOUT_SECONDS * 1000,
        ge=1,
        description="A player in a lobby or tournament silent this long is treated as "
        "disconnected and the connection closed (ms, a duration; ruling 14).",
    )
    reconnect_window_ms: int = _f(
        default=RECONNECT_SECONDS * 1000,
        ge=1,
        description="Time to resume after a disconnect before the lobby seat is lost or the "
        "player is out of the tournament (ms, a duration; ruling 9).",
    )


@_message
class PongEvent(_Event):
    """Reply to ``ping``."""

    type: Literal["pong"] = _f(default="pong", description="Discriminator.")
    server_time_ms: int = _f(description="Server time (absolute UTC ms), for clock offset.")


@_message
class ErrorEvent(_Event):
    """A request was refused or failed; nothing changed."""

    type: Literal["error"] = _f(default="error", description="Discriminator.")
    code: ErrorCode = _f(description="Stable error code; branch on this, not on message.")
    message: str = _f(description="English, for people (may change).")
    retry_after_ms: int | None = _f(
        default=None,
        ge=0,
        description="For rate_limited and try_again (recovery retry): wait this many "
        "milliseconds (a duration), then send the same message with the same request_id. "
        "Null for every other code.",
    )


# --- progression (since 1.3): profiles, leaderboards, history, replays ----------------------
_AVERAGE_PLACE = "Mean final place over those tournaments (1 is best); null before the first."


@_message
class LanguageStats:
    """A player's tournaments in one game language."""

    language: str = _f(description="Game language code.")
    tournaments: int = _f(ge=0, description="Finished tournaments in this language.")
    average_place: float | None = _f(default=None, description=_AVERAGE_PLACE)


@_message
class RatingPoint:
    """One point of a rating chart: the rating after one finished tournament."""

    tournament_id: str = _f(description=_TOURNAMENT_ID)
    ended_ms: int = _f(description="When the tournament ended (absolute UTC ms).")
    language: str = _f(description="Game language code.")
    place: int = _f(ge=1, le=8, description="Final place.")
    rating_before: int = _f(description="Rating when the tournament started (ruling 1).")
    rating_after: int = _f(description="Rating after its change.")


@_message
class Profile:
    """A player's public profile (no token, connection or party: ruling 11)."""

    player_id: str = _f(description=_PLAYER_ID)
    nickname: str = _f(description="Current display name.")
    rating: int = _f(description="Current rating (ruling 1).")
    tournaments: int = _f(ge=0, description="Finished tournaments.")
    wins: int = _f(ge=0, description="Tournaments finished on place 1.")
    podiums: int = _f(ge=0, description="Tournaments finished on places 1 to 3.")
    average_place: float | None = _f(default=None, description=_AVERAGE_PLACE)
    best_rating: int | None = _f(
        default=None, description="Highest rating after a tournament; null before the first."
    )
    languages: list[LanguageStats] = _f(description="Per game language, by language code.")
    rating_history: list[RatingPoint] = _f(
        max_length=100, description="The last 100 tournaments' points, oldest first."
    )


@_message
class ProfileEvent(_Event):
    """Reply to ``profile``: a player's public profile."""

    type: Literal["profile"] = _f(default="profile", description="Discriminator.")
    player: Profile = _f(description="The player asked for.")


@_message
class BoardEntry:
    """One line of a leaderboard."""

    rank: int | None = _f(
        ge=1,
        description="1 + the number of players with a higher score (ties share a rank); null "
        "for your own line on a weekly board when you are not in its top 100.",
    )
    player_id: str = _f(description=_PLAYER_ID)
    nickname: str = _f(description="Display name.")
    score: int = _f(description="Rating (rating board) or rating points gained (weekly board).")


@_message
class LeaderboardEvent(_Event):
    """Reply to ``leaderboard``: the top 100, your line, and (rating board) the players just
    above and below you. Ties are ordered by player id."""

    type: Literal["leaderboard"] = _f(default="leaderboard", description="Discriminator.")
    board: Literal["rating", "weekly"] = _f(description="Which board.")
    language: str | None = _f(default=None, description="Weekly board: its language; else null.")
    week: str | None = _f(
        default=None,
        description="Weekly board: the week's Monday (UTC), YYYY-MM-DD; else null.",
    )
    entries: list[BoardEntry] = _f(max_length=100, description="The top 100, best first.")
    me: BoardEntry | None = _f(
        default=None,
        description="Your line: on the rating board null until your first rated tournament; "
        "on a weekly board your points (0 when none), rank null outside the top 100.",
    )
    around: list[BoardEntry] = _f(
        max_length=11,
        description="Rating board: up to 5 players just above you, you, up to 5 just below, "
        "best first; empty when me is null, and on a weekly board.",
    )


@_message
class Opponent:
    """A player met in a tournament, as named there."""

    player_id: str = _f(description=_PLAYER_ID)
    nickname: str = _f(description="Display name in that tournament.")


@_message
class HistoryEntry:
    """One finished tournament of a player."""

    tournament_id: str = _f(description=_TOURNAMENT_ID)
    ended_ms: int = _f(description="When it ended (absolute UTC ms).")
    language: str = _f(description="Game language code.")
    place: int = _f(ge=1, le=8, description="Final place.")
    players: int = _f(ge=2, le=8, description="Players in it.")
    rating_before: int = _f(description="Rating when it started (ruling 1).")
    rating_after: int = _f(description="Rating after its change.")
    opponents: list[Opponent] = _f(description="Opponents met, in round order.")


@_message
class HistoryEvent(_Event):
    """Reply to ``history``: one page of a player's finished tournaments, newest first."""

    type: Literal["history"] = _f(default="history", description="Discriminator.")
    player_id: str = _f(description=_PLAYER_ID)
    tournaments: list[HistoryEntry] = _f(max_length=50, description="This page, newest first.")
    next_cursor: str | None = _f(
        default=None,
        description="Send as history.cursor for the next (older) page; null on the last page.",
    )


@_message
class RecordRow:
    """One row of a recorded duel: a scored guess or a skipped turn."""

    player_id: str = _f(description="Player id of the duelist whose turn it was.")
    word: str | None = _f(default=None, description="The guess as normalised; null when skipped.")
    tiles: list[str] | None = _f(
        default=None, description="The guess split into tiles; null when skipped."
    )
    marks: list[Mark] | None = _f(
        default=None, description="One mark per tile, left to right; null when skipped."
    )
    skipped: bool = _f(description="The turn clock ran out.")
    at_ms: int = _f(description="When the row was played (absolute UTC ms).")


@_message
class RecordDuel:
    """One recorded duel, the secret revealed (ruling 6: it is over)."""

    duel_id: str = _f(description=_DUEL_ID)
    players: list[str] = _f(min_length=2, max_length=2, description="The two duelists' ids.")
    first: str = _f(description="Player id that moved first (ruling 5).")
    word: str = _f(description="The secret word (normalised form).")
    length: int = _f(ge=4, le=6, description=_LENGTH)
    result: Literal["win", "draw"] = _f(description="win, or draw after 12 rows.")
    winner: str | None = _f(default=None, description="Winner's player id; null on a draw.")
    reason: Literal["solved", "turns_used", "left", "timeout"] = _f(
        description="Why it ended, as in duel_end."
    )
    rows: list[RecordRow] = _f(max_length=12, description="Every row, oldest first.")


@_message
class RecordRound:
    """One recorded round: its duels and bye."""

    round_no: int = _f(ge=1, description="Round number, from 1.")
    bye: str | None = _f(default=None, description="Player id with the bye, if any.")
    duels: list[RecordDuel] = _f(description="The round's duels, in pairing order.")


@_message
class RecordPlayer:
    """A player's result in a recorded tournament."""

    player_id: str = _f(description=_PLAYER_ID)
    nickname: str = _f(
        description="The current nickname while the player exists, else the one in the record."
    )
    place: int = _f(ge=1, le=8, description="Final place.")
    rating_before: int = _f(description="Rating when it started (ruling 1).")
    rating_change: int = _f(description="Rating change.")
    rating_after: int = _f(description="Rating after the change.")


@_message
class TournamentRecord:
    """A finished tournament, whole: the export format (``wordle-tournament-record`` version
    1; JSON Schema: ``shared/protocol/tournament-record.schema.json``)."""

    format: Literal["wordle-tournament-record"] = _f(
        default="wordle-tournament-record", description="Always wordle-tournament-record."
    )
    version: int = _f(
        default=1,
        ge=1,
        le=1,
        description="Format version: 1 (a new key or a changed meaning is a new version).",
    )
    tournament_id: str = _f(description=_TOURNAMENT_ID)
    language: str = _f(description="Game language code.")
    started_ms: int = _f(description="When it started (absolute UTC ms).")
    ended_ms: int = _f(description="When it ended (absolute UTC ms).")
    players: list[RecordPlayer] = _f(description="Every player, best place first, then by id.")
    rounds: list[RecordRound] = _f(description="Every round, in order.")


@_message
class ReplayEvent(_Event):
    """Reply to ``replay``: a finished tournament's record."""

    type: Literal["replay"] = _f(default="replay", description="Discriminator.")
    record: TournamentRecord = _f(description="The tournament, whole.")


@_message
class BatchEvent(_Event):
    """Several events for this connection from one change, in order, as one WebSocket message
    (one post per recipient per change). Handle each of ``events`` in turn exactly as if it had
    come alone; the event answering a request carries that ``request_id`` (the batch's own is
    always null). A change with one event for a connection sends it alone, unwrapped; a batch
    never nests and never holds fewer than two events; its own ``seq`` is null (each numbered
    event inside carries its own). A change whose events would pass the
    message limit (128 KB) sends them in several batches, still in order."""

    type: Literal["batch"] = _f(default="batch", description="Discriminator.")
    events: "list[OutboundEvent]" = _f(
        min_length=2, description="The events, in the order they happened (never a batch)."
    )

    def __post_init__(self) -> None:
        if any(e.type == "batch" for e in self.events):
            raise ValueError("a batch never holds a batch")
        if self.seq is not None:
            raise ValueError("a batch has no seq: each event inside carries its own")


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
    | ProfileEvent
    | LeaderboardEvent
    | HistoryEvent
    | ReplayEvent
    | BatchEvent,
    TaggedByType(),
]
"""Any outbound event; pydantic picks the class by ``type``."""


def _members() -> tuple[type[_Event], ...]:
    return tuple(get_args(get_args(OutboundEvent)[0]))


def _type_of(cls: type[_Event]) -> str:
    return str(cls.__dataclass_fields__["type"].default)


EVENT_BY_TYPE: Final[dict[str, type[_Event]]] = {_type_of(m): m for m in _members()}
"""Event type → class, derived from ``OutboundEvent``."""

TYPES: Final[tuple[str, ...]] = tuple(EVENT_BY_TYPE)
"""Every outbound event type, in union order."""

_parse: Callable[[str | bytes], OutboundEvent] | None = None


def parse_outbound(raw: str | bytes) -> OutboundEvent:
    """Parse and validate a server event (JSON text) into its class, every type, constraint and
    check of this module applied; raises ``pydantic.ValidationError``.

    For clients, bots and tests, which check every message the server sends with it: the
    server builds its events and never parses them, so pydantic is imported here, on the first
    call, and never on a function's path."""
    global _parse
    if _parse is None:
        from pydantic import TypeAdapter

        _parse = TypeAdapter[OutboundEvent](OutboundEvent).validate_json
    return _parse(raw)


def error_event(
    code: ErrorCode | str,
    message: str | None = None,
    request_id: str | None = None,
    *,
    retry_after_ms: int | None = None,
) -> ErrorEvent:
    """An ``error`` event; ``message`` defaults to ``describe(code)``.

    ``code`` may be a ``DomainError.code`` string; it must be an ``ErrorCode`` value
    (``ValueError`` otherwise: add the code to ``ErrorCode``). ``retry_after_ms`` (ms, a
    duration) is kept only for ``RETRY_AFTER_CODES``, where it defaults to
    ``TRY_AGAIN_AFTER_MS`` (``PAUSED_RETRY_AFTER_MS`` for ``paused``); every other code carries
    null.
    """
    error_code = ErrorCode(code)
    after = None
    if error_code in RETRY_AFTER_CODES:
        default = PAUSED_RETRY_AFTER_MS if error_code is ErrorCode.PAUSED else TRY_AGAIN_AFTER_MS
        after = default if retry_after_ms is None else retry_after_ms
    return ErrorEvent(
        code=error_code,
        message=message or describe(error_code),
        request_id=request_id,
        retry_after_ms=after,
    )
