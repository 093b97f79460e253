"""Service layer: connections and sessions — ``$connect``, ``session`` (new or resumed),
``nickname``, ``$disconnect``, liveness and the reconnect deadline (rulings 9, 11 and 14).

Liveness (ruling 14): ``$disconnect`` is best effort, so it is not the only way to learn of a
drop. Every ``ping`` stamps its receipt on the connection item (``heard``: one UpdateItem,
no read); the stamp is read only when silence matters — a turn of the player's ran out
(``check_heard``, from the clock) or a lobby's 8th seat fills (``lobbies.seat_players``) — and
a player silent for the heartbeat timeout is then treated as disconnected from the moment it
passed, and their connection closed. (API Gateway's own ``LastActiveAt`` is not used: its
documentation — "the time ... when the connection was last active", GetConnection in the API
Gateway Management API reference — does not say whether the server's own posts count, and
during a tournament the server posts to everyone every few seconds.)

Identity (ruling 11): the first ``session`` creates an anonymous player and returns a secret
token (256 bits from ``secrets``) that is stored only as its SHA-256; a later ``session`` with
the token binds the new connection (an older open one gets ``session_replaced`` and is closed).
"""

from __future__ import annotations

import hashlib
import random

from shared.domain.nicknames import generate_nickname, validate_nickname
from shared.domain.rating import INITIAL_RATING
from shared.protocol import outbound as out
from shared.protocol.errors import ErrorCode
from shared.services.base import Deps, Outbox, retrying
from shared.services.errors import (
    ConflictError,
    InvalidTokenError,
    NoSessionError,
    TryAgainError,
)
from shared.services.lobbies import leave_lobby
from shared.services.model import Connection, Player, PlayerStatus, TournamentRecord
from shared.services.ports import Timer, TimerKind
from shared.services.presenter import player_view
from shared.services.snapshot import finished_tournament, snapshot
from shared.services.tournaments import leave_tournament, set_connection


def hash_token(token: str) -> str:
    """SHA-256 hex of a session token: what is stored (ruling 11)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def connect(deps: Deps, connection_id: str) -> None:
    """``$connect``: remember the connection (no player yet: the token comes in ``session``).

    Idempotent: a second delivery of the same ``$connect`` finds the item there (its
    conditional create fails) and leaves it as it is — possibly already bound by ``session``."""
    try:
        deps.store.commit([Connection(connection_id, deps.clock.now_ms())])
    except ConflictError:
        return


def player_for_connection(deps: Deps, connection_id: str) -> Player:
    """The player bound to this connection. Raises NoSessionError."""
    conn = deps.store.get_connection(connection_id)
    if conn is None or conn.player_id is None:
        raise NoSessionError("send a session message first")
    player = deps.store.get_player(conn.player_id)
    if player is None or player.connection_id != connection_id:
        raise NoSessionError("this connection's session was replaced")
    return player


def session(
    deps: Deps, connection_id: str, token: str | None, request_id: str | None = None
) -> None:
    """``session {token?}``: create a player, or resume one by token.

    Raises InvalidTokenError for an unknown token (nothing changes).
    """
    if token is None:
        _create(deps, connection_id, request_id)
    else:
        _resume(deps, connection_id, token, request_id)


def _create(deps: Deps, connection_id: str, request_id: str | None) -> None:
    now = deps.clock.now_ms()
    conn = deps.store.get_connection(connection_id) or Connection(connection_id, now)
    if conn.player_id is not None:
        # this connection already has a session: a second create would orphan it
        old = deps.store.get_player(conn.player_id)
        if old is not None and old.connection_id == connection_id:
            _detach(deps, old)

    def attempt() -> tuple[Player, str]:
        # a fresh id and token per try: a create that lost (or was cancelled) is never
        # repeated on a key that might now exist
        token = deps.new_secret()
        player = Player(
            player_id=deps.new_id(),
            nickname=generate_nickname(random.Random(deps.new_secret())),
            rating=INITIAL_RATING,
            created_ms=now,
            connection_id=connection_id,
            connected=True,
        )
        deps.store.create_player(player, hash_token(token))
        return player, token

    player, token = retrying(deps, attempt)
    conn.player_id = player.player_id
    retrying(deps, lambda: _bind(deps, conn))
    box = Outbox()
    box.add(
        [connection_id],
        out.SessionEvent(
            player=player_view(player), token=token, resumed=False, request_id=request_id
        ),
    )
    box.flush(deps)


def _detach(deps: Deps, old: Player) -> None:
    def attempt() -> None:
        p = deps.store.get_player(old.player_id)
        if p is None:
            return
        p.connection_id = None
        p.connected = False
        deps.store.commit([p])

    retrying(deps, attempt)


def _bind(deps: Deps, conn: Connection) -> None:
    fresh = deps.store.get_connection(conn.connection_id)
    if fresh is None:
        fresh = Connection(conn.connection_id, conn.connected_ms)
    fresh.player_id = conn.player_id
    # a ``session`` is a sign of life too (ruling 14), stamped in the write it costs anyway
    fresh.heard_ms = max(fresh.heard_ms or 0, deps.clock.now_ms())
    deps.store.commit([fresh])


def _resume(deps: Deps, connection_id: str, token: str, request_id: str | None) -> None:
    """Bind ``connection_id`` to the token's player and answer with the full snapshot
    (``shared.services.snapshot``, ruling 15). A tournament that ended since is shown once:
    the same player write clears ``tournament_id``, so the next resume finds the player idle."""
    player_id = deps.store.player_id_for_token(hash_token(token))
    if player_id is None:
        raise InvalidTokenError("unknown session token")

    def attempt() -> tuple[Player, str | None, TournamentRecord | None]:
        p = deps.store.get_player(player_id)
        assert p is not None
        old = p.connection_id if p.connection_id != connection_id else None
        p.connection_id = connection_id
        p.connected = True
        p.disconnect_seq += 1  # any pending reconnect deadline is now stale
        p.reconnect_deadline_ms = None
        ended = finished_tournament(deps, p)
        if ended is not None:
            # its end is shown by this resume, once (ruling 15); from now on the player is idle
            p.tournament_id = None
        deps.store.commit([p])
        return p, old, ended

    player, old_connection, ended = retrying(deps, attempt)
    conn = Connection(connection_id, deps.clock.now_ms(), player_id)
    retrying(deps, lambda: _bind(deps, conn))
    if old_connection:
        box = Outbox()
        box.add([old_connection], out.error_event(ErrorCode.SESSION_REPLACED))
        box.flush(deps)
        deps.notifier.close(old_connection)
    # tell the lobby / tournament where the player is now
    if player.status is PlayerStatus.QUEUED and player.lobby_id:
        _lobby_connection(deps, player, connection_id)
    elif player.tournament_id:
        set_connection(deps, player, connection_id, None)
    box = Outbox()
    box.add(
        [connection_id],
        out.SessionEvent(
            player=player_view(player),
            token=None,
            resumed=True,
            snapshot=snapshot(deps, player, ended=ended),
            request_id=request_id,
        ),
    )
    box.flush(deps)


def _lobby_connection(
    deps: Deps, player: Player, connection_id: str | None, *, closed: str | None = None
) -> None:
    """Record the player's connection in their lobby and tell the others. ``closed``: as in
    ``tournaments.set_connection`` (a disconnect changes nothing once a resume replaced it)."""
    box = Outbox()

    def attempt() -> None:
        box.messages.clear()
        if player.lobby_id is None:
            return
        lobby = deps.store.get_lobby(player.lobby_id)
        if lobby is None or player.player_id not in lobby.connections:
            return
        if closed is not None and lobby.connections.get(player.player_id) != closed:
            return
        lobby.connections[player.player_id] = connection_id
        deps.store.commit([lobby])
        others = [c for pid, c in lobby.connections.items() if pid != player.player_id]
        box.add(
            others,
            out.PlayerStatusEvent(
                lobby_id=lobby.lobby_id,
                player_id=player.player_id,
                status="connected" if connection_id else "disconnected",
                reconnect_deadline_ms=player.reconnect_deadline_ms if not connection_id else None,
            ),
        )

    retrying(deps, attempt)
    box.flush(deps)


def nickname(deps: Deps, player_id: str, raw: str, request_id: str | None = None) -> None:
    """``nickname``: validate (nicknames module) and save. Raises InvalidNicknameError."""
    clean = validate_nickname(raw)

    def attempt() -> Player:
        p = deps.store.get_player(player_id)
        assert p is not None
        p.nickname = clean
        deps.store.commit([p])
        return p

    p = retrying(deps, attempt)
    box = Outbox()
    box.add([p.connection_id], out.PlayerEvent(player=player_view(p), request_id=request_id))
    box.flush(deps)


def disconnect(
    deps: Deps, connection_id: str, *, at_ms: int | None = None, player_id: str | None = None
) -> None:
    """``$disconnect`` (or a GoneException on push, or ruling 14's silence): forget the
    connection; if it was the player's current one, mark them disconnected and start the 60 s
    reconnect deadline (ruling 9; issue 5 item 4). Their turns keep running out as skips
    meanwhile.

    ``at_ms`` (UTC ms, default now): when the player went away — the reconnect deadline is
    ``at_ms + reconnect_ms``. ``player_id``: whose connection it was, when the caller knows
    (the connection item may already be gone: a ``$disconnect`` whose delete landed but whose
    answer was lost)."""
    # a busy table is retried like any use case (``retrying``); deleting twice is harmless
    conn = retrying(deps, lambda: deps.store.delete_connection(connection_id))
    owner = conn.player_id if conn is not None else None
    owner = owner or player_id
    if owner is None:
        return
    deadline = (deps.clock.now_ms() if at_ms is None else at_ms) + deps.timing.reconnect_ms

    def attempt() -> Player | None:
        p = deps.store.get_player(owner)
        if p is None or p.connection_id != connection_id:
            return None  # an older connection of a resumed player: nothing to do
        p.connected = False
        p.connection_id = None
        p.disconnect_seq += 1
        busy = p.status is not PlayerStatus.IDLE
        p.reconnect_deadline_ms = deadline if busy else None
        deps.store.commit([p])
        return p

    player = retrying(deps, attempt)
    if player is None:
        return
    if player.status is PlayerStatus.IDLE and player.tournament_id:
        set_connection(deps, player, None, None, closed=connection_id)  # a spectator stops
        return
    if player.reconnect_deadline_ms is None:
        return
    deps.clock.schedule(
        Timer(
            TimerKind.RECONNECT,
            player.player_id,
            player.disconnect_seq,
            player.reconnect_deadline_ms,
        )
    )
    try:
        if player.status is PlayerStatus.QUEUED:
            _lobby_connection(deps, player, None, closed=connection_id)
        elif player.status is PlayerStatus.PLAYING:
            set_connection(deps, player, None, player.reconnect_deadline_ms, closed=connection_id)
    except TryAgainError:
        # The player item and the reconnect deadline are saved: ruling 9 holds. Only the
        # others' "disconnected" badge is lost to contention; the deadline settles the rest.
        deps.metric("DisconnectNoticeLost", 1)


def heard(deps: Deps, connection_id: str, received_ms: int | None) -> None:
    """A ``ping`` arrived (ruling 14): stamp its receipt (API Gateway's
    ``requestTimeEpoch``, UTC ms; None: now) on the connection — one conditional UpdateItem,
    no read, whatever the player is doing."""
    deps.store.touch_connection(
        connection_id, deps.clock.now_ms() if received_ms is None else received_ms
    )


def check_heard(deps: Deps, player_id: str, connection_id: str | None) -> bool:
    """Ruling 14, read when it matters (a turn of the player's ran out): if nothing was heard
    from ``connection_id`` for ``Timing.heartbeat_ms`` — or its item is gone —, the player is
    treated as disconnected from the moment the heartbeat timeout passed (``disconnect`` with
    that ``at_ms``: ``player_status`` to the others, the reconnect window, then "left") and
    the connection is closed (DeleteConnection). One GetItem when alive.

    Returns True when the player was found silent. Liveness off (``heartbeat_ms`` None) or no
    connection: False, nothing read."""
    heartbeat = deps.timing.heartbeat_ms
    if heartbeat is None or connection_id is None:
        return False
    conn = deps.store.get_connection(connection_id)
    now = deps.clock.now_ms()
    if conn is not None and not conn.silent(now, heartbeat):
        return False
    since = now if conn is None else min(now, conn.last_heard_ms() + heartbeat)
    disconnect(deps, connection_id, at_ms=since, player_id=player_id)
    deps.notifier.close(connection_id)
    deps.metric("SilentConnectionsClosed", 1)
    return True


def reconnect_deadline(deps: Deps, player_id: str, seq: int) -> int | None:
    """The 60 s reconnect deadline fired: if the player is still away with the same
    ``seq``, free their lobby seat (ruling 9) or treat them as having left (ruling 3).

    Returns None when handled (or stale: resumed, another ``seq``), or the deadline (UTC ms)
    when the wake came before it: nothing is applied early, the clock waits again.
    """
    player = deps.store.get_player(player_id)
    if player is None or player.connected or player.disconnect_seq != seq:
        return None  # resumed (or stale firing): nothing to do
    deadline = player.reconnect_deadline_ms
    if deadline is not None and deps.clock.now_ms() < deadline:
        return deadline
    if player.status is PlayerStatus.QUEUED:
        leave_lobby(deps, player_id, only_if_disconnect_seq=seq)
    elif player.status is PlayerStatus.PLAYING:
        leave_tournament(deps, player, reason="timeout", only_if_disconnect_seq=seq)
    else:

        def attempt() -> None:
            p = deps.store.get_player(player_id)
            if p is None or p.connected or p.disconnect_seq != seq:
                return
            p.reconnect_deadline_ms = None
            deps.store.commit([p])

        retrying(deps, attempt)
    return None
