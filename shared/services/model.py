"""Service layer: the records the services load and save through the ``Store`` port.

Each record carries the integer ``version`` it was loaded with (0 = new); saving it is
conditional on that version (optimistic concurrency, RULINGS.md, "Persistence").
Domain values (``Tournament``, ``Party``) sit inside; the rest is bookkeeping of connections
and who-is-where that the rules do not care about.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.domain.matchmaking import Lobby
    from shared.domain.party import Party
    from shared.domain.tournament import Tournament


class PlayerStatus(StrEnum):
    """Where a player is: a player is in at most one lobby or tournament (ruling 8)."""

    IDLE = "idle"
    QUEUED = "queued"  # seated in a waiting lobby (lobby_id)
    PLAYING = "playing"  # alive in a running tournament (tournament_id)


@dataclass
class Player:
    """A player profile (ruling 11: anonymous, generated nickname, rating from 1000)."""

    player_id: str
    nickname: str
    rating: int
    created_ms: int
    status: PlayerStatus = PlayerStatus.IDLE
    lobby_id: str | None = None
    tournament_id: str | None = None
    """The running tournament, or the last one (kept for spectating while idle)."""
    party_id: str | None = None
    connection_id: str | None = None
    connected: bool = False
    disconnect_seq: int = 0
    """Bumped on every disconnect and resume: the reconnect timer's ``seq``."""
    reconnect_deadline_ms: int | None = None
    language: str = "en"
    version: int = 0
    token_used_ms: int | None = None
    """When the current session token was issued (or, before tokens rotated, last presented;
    UTC ms); None on a record written before this was kept (then ``created_ms`` counts). A
    token unused for ``Deps.token_idle_ms`` is refused (``shared.services.sessions``)."""
    token_generation: int = 0
    """The generation of the player's current token (ruling 11): each resume issues the next
    one; only a token of this generation resumes, or of the one before until
    ``token_grace_until_ms``."""
    token_grace_until_ms: int | None = None
    """Until when (UTC ms) the token of the previous generation still resumes (a lost reply);
    None: it does not (a new player, or every older token revoked by
    ``sign_out_everywhere``)."""
    recent_requests: tuple[tuple[str, str, str], ...] = ()
    """The last applied ``join`` / ``leave`` / ``party_start`` requests: (request_id, action,
    what the outcome was about), oldest first, at most ``repeats.RECENT_REQUESTS`` (ruling 18;
    ``shared.services.repeats``)."""


@dataclass
class Connection:
    """An API Gateway WebSocket connection and the player bound to it by ``session``."""

    connection_id: str
    connected_ms: int
    player_id: str | None = None
    version: int = 0
    source: str | None = None
    """The ``$connect`` event's source address (``requestContext.identity.sourceIp``), kept only
    here: never sent to a client, never logged in clear (ruling 17); None when unknown."""
    strikes: int = 0
    """Flood strikes recorded by the message functions' containers (``Store.add_strike``)."""
    closed_ms: int | None = None
    """When the connection closed (UTC ms; ``$disconnect``): the item is then a tombstone, kept
    ``CONNECTION_TOMBSTONE_SECONDS`` so that a message received before the close and run after
    ``$disconnect`` still finds its player (ruling 13; RULINGS.md, "Connection tombstones").
    None while open."""


@dataclass
class LobbyRecord:
    """A lobby (``shared.domain.matchmaking.Lobby``: seats, status) with the connection of each
    seat's holder."""

    lobby: Lobby
    connections: dict[str, str | None] = field(default_factory=dict)
    """Connection id by player id (None while disconnected)."""
    version: int = 0
    streak: int = 0
    """Its opener's ``LobbyOpener.streak`` when it was opened: a sign of sustained load that
    joiners contending for it read with the lobby (``services.matchmaking``), at no extra
    read."""


@dataclass
class LobbyOpener:
    """Which lobby new solo players of a language, rating bucket and lane open into.

    Two players who find no waiting lobby at the same moment would each open their own and
    wait apart; both instead try to claim this one item (conditional on its version), so the
    loser re-reads it and sits down in the winner's lobby (ruling 8 matchmaking). Openers of
    the two neighbouring buckets are checked unchanged in the same commit
    (``OpenerUnchanged``), so two openers within 200 of each other meet across a bucket
    boundary too. Lanes (0 at low load) let joiners that keep conflicting open further
    lobbies in parallel (``services.matchmaking``)."""

    language: str
    bucket: int
    """``rating // 200``: everyone in a bucket is within the 200-point window of each other."""
    lobby_id: str
    version: int = 0
    lane: int = 0
    """0 for a first opening; a joiner that kept conflicting opens in a random further lane."""
    opened_ms: int = 0
    """When the lobby it points to was opened (epoch ms; 0: before this field existed)."""
    streak: int = 0
    """Lobbies opened in a row in this bucket and lane, each within
    ``services.matchmaking.FAST_FILL_MS`` of the one before (the previous one filled, or
    stopped admitting, that fast): a sign of sustained load rather than a burst of a few
    joiners, so that contended joins open lobbies sooner (ruling 8)."""


@dataclass(frozen=True)
class OpenerUnchanged:
    """A commit condition without a write: the opener of ``(language, bucket, lane)`` is still
    at ``version`` (0: it does not exist). A DynamoDB ``ConditionCheck``."""

    language: str
    bucket: int
    lane: int
    version: int


@dataclass
class TournamentRecord:
    """A tournament aggregate with the connection of each of its players."""

    tournament: Tournament
    connections: dict[str, str | None] = field(default_factory=dict)
    party_ids: dict[str, str] = field(default_factory=dict)
    version: int = 0
    fresh: frozenset[str] = frozenset()
    """Ruling 17: the players created shortly before the start (``FairPlay.fresh_ms``) who
    have not played a turn of their own yet (each one's first guess removes them)."""
    flagged: bool = False
    """Ruling 17: set when the ratings were applied, if most seats were fresh players who
    never played (``shared.domain.fair_play.farmed``); an operator may void its ratings
    (``infra.operations.void_ratings``)."""
    seqs: dict[str, int] = field(default_factory=dict)
    """Each player's last event sequence number in this tournament (player id to ``seq``; a
    player not in it has received none): the presenter numbers every event it queues for a
    player 1, 2, 3... and the change's own write saves the counters (RULINGS.md, "Event
    sequence numbers")."""


@dataclass
class PartyRecord:
    """A party (ruling 10)."""

    party: Party
    language: str | None = None
    lobby_id: str | None = None
    version: int = 0


@dataclass(frozen=True)
class RatingApplied:
    """A rating change to apply exactly once per (player, tournament) (rulings 1, 2)."""

    player_id: str
    tournament_id: str
    place: int
    change: int
    rating_before: int
    update_player: bool = True
    """False when the same commit saves the player record with the new rating itself."""
    at_ms: int = 0


@dataclass(frozen=True)
class IssuedToken:
    """What a session token's lookup item says: whose it is, of which generation."""

    player_id: str
    generation: int = 0


@dataclass(frozen=True)
class TokenIssued:
    """A rotated session token's lookup item (create-only), of ``generation``, kept until
    ``expires_ms`` (TTL: an old token is still recognised, and refused, that long)."""

    token_hash: str
    player_id: str
    generation: int
    expires_ms: int


@dataclass(frozen=True)
class InviteCreated:
    invite: str
    party_id: str


@dataclass(frozen=True)
class InviteDeleted:
    invite: str


@dataclass(frozen=True)
class PartyDeleted:
    """A party's last member went out (ruling 10): its item is deleted on the ``version`` it was
    loaded with, so a ``party_join`` that resolved the invite just before cannot still save
    itself into the closed party (its versioned save finds no item)."""

    party_id: str
    version: int


Write = (
    Player
    | Connection
    | LobbyRecord
    | LobbyOpener
    | OpenerUnchanged
    | TournamentRecord
    | PartyRecord
    | RatingApplied
    | TokenIssued
    | InviteCreated
    | InviteDeleted
    | PartyDeleted
)
"""One element of an atomic ``Store.commit``: a versioned record save, or a named change."""
