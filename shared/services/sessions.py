"""Use cases: connections and sessions — ``$connect``, ``session`` (new or resumed),
``nickname`` and ``$disconnect`` (rulings 9, 11, 14 and 15).

Liveness (ruling 14): ``$disconnect`` is best effort, so it is not the only way to learn of a
drop. Clients send a message at least every 20 s; ``ping`` is answered by API Gateway itself
(a MOCK route, ``functions.routes.MOCK_ROUTES``: no function, no write), so nothing here stamps
a sign of life. The connection's ``LastActiveAt`` (``Notifier.last_active_ms``, the Management
API's GetConnection) is read only when silence matters — a turn of the player's ran out
(``deadlines.check_heard``) or a lobby's 8th seat fills (``seating.seat_players``) — and a
player silent for the heartbeat timeout is then treated as disconnected from the moment it
passed, and their connection closed.

Identity (ruling 11): the first ``session`` creates an anonymous player and returns a secret
token (256 bits) that is stored only as its SHA-256; a later ``session`` with the token binds
the new connection (an older open one gets ``session_replaced`` and is closed) and rotates the
token: the reply carries the next generation's token, and the one presented still resumes for
``FairPlay.token_grace_ms`` (a reply lost on the way never locks the player out). A token of an
older generation — rotated out past its grace, or revoked — is refused ``invalid_token`` and
counted (``TokenReuse``, a WARN line with the player id): someone holds a copy of a token its
owner has moved on from. The family is not revoked then: an anonymous player has no other way
back to the profile, so the owner's current token keeps working, and the copy is useless.
``sign_out_everywhere`` revokes every token of the player at once and answers this connection
with a new one (the connection stays bound). A connection belongs to one player for its whole
life: another ``session`` on a bound connection, tokenless or for another player, is refused
``session_bound`` and changes nothing.

New players are limited per source address and window (ruling 17, ``_count_new_player``).
"""

from __future__ import annotations

import hashlib
import logging
import random
from typing import TYPE_CHECKING, Any

from shared.domain import fair_play
from shared.domain.rating import INITIAL_RATING
from shared.lazy import lazy_module
from shared.protocol import outbound as out
from shared.protocol.errors import ErrorCode
from shared.protocol.limits import HEARTBEAT_TIMEOUT_SECONDS
from shared.protocol.version import PROTOCOL, PROTOCOL_MIN, supported
from shared.services.change import Change, push, run
from shared.services.connections import connect as connect  # ``$connect``, re-exported
from shared.services.deps import Deps
from shared.services.errors import (
    InvalidTokenError,
    NoSessionError,
    SessionBoundError,
    TooManyNewPlayersError,
    UnsupportedProtocolError,
)
from shared.services.model import (
    Connection,
    IssuedToken,
    Player,
    PlayerStatus,
    TokenIssued,
    TournamentRecord,
)
from shared.services.outbox import Outbox, Request
from shared.services.presence import disconnect as _disconnect
from shared.services.presence import drop
from shared.services.presenter import player_view
from shared.services.seating import lobby_connection
from shared.services.snapshot import finished_tournament, snapshot
from shared.services.tournament_change import set_connection

if TYPE_CHECKING:
    from shared.domain import nicknames
else:
    # Only a new session (a generated name) and ``nickname`` use it: ``$disconnect`` never
    # runs its word lists and offensive-word patterns.
    nicknames = lazy_module("shared.domain.nicknames")

logger = logging.getLogger(__name__)


def _session_event(deps: Deps, **fields: Any) -> out.SessionEvent:
    """The ``session`` reply with the intervals a client keeps (ms): the heartbeat timeout and
    the reconnect window from the settings (``deps.timing``; with the heartbeat check off,
    the protocol's default), the ping interval from ``shared.protocol.limits``."""
    return out.SessionEvent(
        **fields,
        heartbeat_timeout_ms=deps.timing.heartbeat_ms or HEARTBEAT_TIMEOUT_SECONDS * 1000,
        reconnect_window_ms=deps.timing.reconnect_ms,
    )


def hash_token(token: str) -> str:
    """SHA-256 hex of a session token: what is stored (ruling 11)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def session(deps: Deps, req: Request, token: str | None, protocol: str | None = None) -> None:
    """``session {token?}``: create a player, or resume one by token; the reply is
    ``session`` with a token: the new player's, or the resumed player's next one (with the
    resume snapshot).

    Raises SessionBoundError when the connection already belongs to a player and this is a
    new player or another one; InvalidTokenError for an unknown token, one unused for longer
    than ``Deps.token_idle_ms`` (30 days; each resume issues a new one), or one of an older
    generation; TooManyNewPlayersError (ruling 17); UnsupportedProtocolError when the client
    declares a ``protocol`` of another major (``shared.protocol.version.supported``). Nothing
    changes on a refusal.
    """
    if protocol is not None and not supported(protocol):
        raise UnsupportedProtocolError(
            f"This server speaks protocol {PROTOCOL_MIN} to {PROTOCOL}, not {protocol}; "
            "update the app."
        )
    if token is None:
        _create(deps, req)
    else:
        _resume(deps, req, token)


def source_digest(source: str) -> str:
    """A short digest of a source address, for logs (never the address itself: ruling 17)."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


def _count_new_player(deps: Deps, source: str | None, now: int) -> None:
    """Ruling 17: count a new player against its source's limit (one conditional write), or
    raise TooManyNewPlayersError (nothing written). A connection without a known source, or a
    limit of 0, is not counted."""
    limit = deps.fair_play.new_players_per_source
    if source is None or limit <= 0:
        return
    window = deps.fair_play.new_players_window_ms
    key = fair_play.source_key(source)
    start = fair_play.window_start(now, window)
    if deps.store.count_new_player(key, start, limit, start + window):
        return
    deps.metrics("NewPlayersRefused", 1)
    logger.warning(
        "new player refused: source over its limit",
        extra={"source_digest": source_digest(key), "limit": limit, "window_ms": window},
    )
    minutes = -(-(start + window - now) // 60_000)
    raise TooManyNewPlayersError(
        f"At most {limit} new players per {_duration(window)} come from one network: resume "
        f"your player with its token, or try again in {minutes} min."
    )


def _duration(ms: int) -> str:
    """``3600000`` -> ``"hour"``, ``5400000`` -> ``"90 min"``: a window, for people."""
    if ms == 3_600_000:
        return "hour"
    if ms % 3_600_000 == 0:
        return f"{ms // 3_600_000} h"
    return f"{-(-ms // 60_000)} min"


def _create(deps: Deps, req: Request) -> None:
    now = deps.clock.now_ms()
    conn = deps.store.get_connection(req.connection_id) or Connection(req.connection_id, now)
    if conn.closed_ms is not None:
        # received before the close, run after it: a token nobody can receive makes no player
        raise NoSessionError("this connection is closed")
    if conn.player_id is not None:
        # a connection belongs to one player for its whole life (ruling 11)
        raise SessionBoundError("this connection already belongs to a player")
    _count_new_player(deps, conn.source, now)

    def create() -> Change[None]:
        # a fresh id and token per try: a create that lost (or was cancelled) is never
        # repeated on a key that might now exist
        token = deps.secrets()
        player = Player(
            player_id=deps.ids(),
            nickname=nicknames.generate_nickname(random.Random(deps.secrets())),
            rating=INITIAL_RATING,
            created_ms=now,
            connection_id=req.connection_id,
            connected=True,
            token_used_ms=now,
        )
        # the player, its token and the connection's binding in one transaction: a refused
        # bind leaves no player behind that nobody holds the token of
        bound = _bound(deps, req.connection_id, conn.connected_ms, player.player_id)
        deps.store.create_player(player, hash_token(token), bound)
        box = Outbox(reply_to=req)
        box.add(
            [req.connection_id],
            _session_event(deps, player=player_view(player), token=token, resumed=False),
        )
        return Change(None, outbox=box)

    drop(deps, run(deps, create).gone)


def _bound(deps: Deps, connection_id: str, connected_ms: int, player_id: str | None) -> Connection:
    """The connection item as read now (or new, ``connected_ms``), bound to ``player_id``."""
    fresh = deps.store.get_connection(connection_id)
    if fresh is None:
        fresh = Connection(connection_id, connected_ms)
    fresh.player_id = player_id
    return fresh


def _bind(deps: Deps, conn: Connection, box: Outbox | None = None) -> Change[None]:
    """Bind the connection item to its player (then push ``box``, the reply)."""
    return Change(
        None, [_bound(deps, conn.connection_id, conn.connected_ms, conn.player_id)], box or Outbox()
    )


def _resume(deps: Deps, req: Request, token: str) -> None:
    """Bind the request's connection to the token's player and answer with the full snapshot
    (``shared.services.snapshot``, ruling 15). A tournament that ended since is shown once:
    the same player write clears ``tournament_id``, so the next resume finds the player idle."""
    connection_id = req.connection_id
    issued = deps.store.get_token(hash_token(token))
    if issued is None:
        raise InvalidTokenError("unknown session token")
    player_id = issued.player_id
    bound = deps.store.get_connection(connection_id)
    if bound is not None and bound.closed_ms is not None:
        # never bind a closed connection (the next token would go nowhere; nothing rotates)
        raise NoSessionError("this connection is closed")
    if bound is not None and bound.player_id not in (None, player_id):
        raise SessionBoundError("this connection already belongs to another player")

    def rebind() -> Change[tuple[Player, str | None, TournamentRecord | None, str]]:
        p = deps.store.get_player(player_id)
        if p is None:
            # TTL removed the idle player before its token's item (DynamoDB deletes expired
            # items one by one, within days): the token's lifetime is over
            raise InvalidTokenError("session token expired")
        now = deps.clock.now_ms()
        used = p.token_used_ms if p.token_used_ms is not None else p.created_ms
        if now - used > deps.token_idle_ms:
            raise InvalidTokenError("session token expired")
        _check_generation(deps, p, issued, now)
        fresh, issue = _rotate(deps, p, now)
        p.token_grace_until_ms = now + deps.fair_play.token_grace_ms
        old = p.connection_id if p.connection_id != connection_id else None
        p.connection_id = connection_id
        p.connected = True
        p.disconnect_seq += 1  # any pending reconnect deadline is now stale
        p.reconnect_deadline_ms = None
        ended = finished_tournament(deps, p)
        if ended is not None:
            # its end is shown by this resume, once (ruling 15); from now on the player is idle
            p.tournament_id = None
        return Change((p, old, ended, fresh), [p, issue])

    player, old_connection, ended, fresh = run(deps, rebind).value
    conn = Connection(connection_id, deps.clock.now_ms(), player_id)
    gone = run(deps, lambda: _bind(deps, conn)).gone
    if old_connection:
        notice = Outbox(closes=[old_connection])
        notice.add([old_connection], out.error_event(ErrorCode.SESSION_REPLACED))
        gone += push(deps, notice)
    # tell the lobby / tournament where the player is now
    if player.status is PlayerStatus.QUEUED and player.lobby_id:
        gone += lobby_connection(deps, player, connection_id)
    elif player.tournament_id:
        gone += set_connection(deps, player, connection_id, None)
    reply = Outbox(reply_to=req)
    reply.add(
        [connection_id],
        _session_event(
            deps,
            player=player_view(player),
            token=fresh,
            resumed=True,
            snapshot=snapshot(deps, player, ended=ended),
        ),
    )
    drop(deps, gone + push(deps, reply))


def _check_generation(deps: Deps, p: Player, issued: IssuedToken, now: int) -> None:
    """Ruling 11: the current generation resumes, the previous one until its grace ends; an
    older one (or the previous past its grace, or any revoked one) is refused and flagged."""
    if issued.generation == p.token_generation:
        return
    grace = p.token_grace_until_ms
    if issued.generation == p.token_generation - 1 and grace is not None and now <= grace:
        return
    deps.metrics("TokenReuse", 1)
    logger.warning(
        "an old session token was presented after its owner moved on",
        extra={
            "player_id": p.player_id,
            "token_generation": issued.generation,
            "current_generation": p.token_generation,
        },
    )
    raise InvalidTokenError("session token replaced")


def _rotate(deps: Deps, p: Player, now: int) -> tuple[str, TokenIssued]:
    """The player's next token (returned raw, for the reply only) and its lookup item; the
    player record now names its generation and its issue time (the idle lifetime runs from
    there). The caller sets the grace of the generation before."""
    token = deps.secrets()
    p.token_generation += 1
    p.token_used_ms = now
    issue = TokenIssued(
        hash_token(token), p.player_id, p.token_generation, now + deps.token_idle_ms
    )
    return token, issue


def sign_out_everywhere(deps: Deps, req: Request, player_id: str) -> None:
    """``sign_out_everywhere``: revoke every token of the player (ruling 11) — every later
    resume with any of them is refused — and answer this connection, which stays bound, with
    ``session``: a new token (the only one that resumes now) and the snapshot."""

    def revoke() -> Change[tuple[Player, str]]:
        p = deps.store.get_player(player_id)
        assert p is not None
        fresh, issue = _rotate(deps, p, deps.clock.now_ms())
        p.token_grace_until_ms = None  # no grace: the token before is revoked as well
        return Change((p, fresh), [p, issue])

    player, fresh = run(deps, revoke).value
    deps.metrics("SignOutEverywhere", 1)
    logger.info("every session token of the player revoked", extra={"player_id": player_id})
    reply = Outbox(reply_to=req)
    reply.add(
        [req.connection_id],
        _session_event(
            deps,
            player=player_view(player),
            token=fresh,
            resumed=True,
            snapshot=snapshot(deps, player),
        ),
    )
    drop(deps, push(deps, reply))


def nickname(deps: Deps, req: Request, player_id: str, raw: str) -> None:
    """``nickname``: validate (``shared.domain.nicknames``) and save; the reply is ``player``.
    Raises InvalidNicknameError, or LookalikeNicknameError when the name looks like another
    player's in the sender's lobby or running tournament (ruling 16: as shown there or as it
    is now); nothing changes. A look-alike chosen while idle is seated in another lobby
    (``shared.domain.matchmaking.check_admission``)."""
    clean = nicknames.validate_nickname(raw)
    me = deps.store.get_player(player_id)
    assert me is not None
    nicknames.check_not_lookalike(clean, _names_beside(deps, me))

    def rename() -> Change[None]:
        p = deps.store.get_player(player_id)
        assert p is not None
        p.nickname = clean
        box = Outbox(reply_to=req)
        box.add([p.connection_id], out.PlayerEvent(player=player_view(p)))
        return Change(None, [p], box)

    drop(deps, run(deps, rename).gone)


def _names_beside(deps: Deps, player: Player) -> list[str]:
    """The nicknames of the other players in ``player``'s lobby or running tournament: the
    snapshots shown there and their current ones."""
    shown: dict[str, str] = {}
    lobby = deps.store.get_lobby(player.lobby_id) if player.lobby_id else None
    shown.update((s.player_id, s.nickname) for s in (lobby.lobby.seats if lobby else ()))
    if player.status is PlayerStatus.PLAYING and player.tournament_id:
        rec = deps.store.get_tournament(player.tournament_id)
        shown.update((p.player_id, p.nickname) for p in (rec.tournament.players if rec else ()))
    shown.pop(player.player_id, None)
    now = deps.store.get_players(shown) if shown else {}
    return [*shown.values(), *(p.nickname for p in now.values())]


def disconnect(deps: Deps, connection_id: str, at_ms: int | None = None) -> None:
    """``$disconnect``: the connection closed at ``at_ms`` (UTC ms, the event's
    ``requestTimeEpoch``; None: now) (``presence.disconnect``: its tombstone, and the reconnect
    deadline of ruling 9 for a player in a lobby or tournament)."""
    drop(deps, _disconnect(deps, connection_id, at_ms=at_ms))


__all__ = [
    "connect",
    "disconnect",
    "hash_token",
    "nickname",
    "session",
    "sign_out_everywhere",
]
