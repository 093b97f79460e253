"""Service layer (building block): who is connected — the session's player behind a
connection, and a connection going away (``$disconnect``, a push that found it gone, or
ruling 14's silence) with the reconnect deadline it starts (ruling 9).

Imports no use case: ``sessions`` (``$disconnect``), ``deadlines`` (a silent player) and every
entrypoint (``drop``: connections a push found gone) build on it.
"""

from __future__ import annotations

from shared.services.change import Change, run
from shared.services.deps import Deps
from shared.services.errors import NoSessionError, TryAgainError
from shared.services.model import Player, PlayerStatus
from shared.services.outbox import Gone
from shared.services.ports import Timer, TimerKind
from shared.services.seating import lobby_connection
from shared.services.tournament_change import set_connection


def player_for_connection(deps: Deps, connection_id: str, received_ms: int | None = None) -> Player:
    """The player bound to this connection by ``session`` (``sender``'s player). Two reads."""
    return sender(deps, connection_id, received_ms)[0]


def sender(deps: Deps, connection_id: str, received_ms: int | None) -> tuple[Player, int | None]:
    """The player who sent a message on ``connection_id`` received at ``received_ms`` (UTC ms,
    ``requestTimeEpoch``; None: now), and when that connection closed (None: still open).

    A message API Gateway received before the connection closed is the player's even when
    ``$disconnect`` ran first (its tombstone, ``Connection.closed_ms``, still names the player;
    ruling 13): the caller judges it on its own merits, but never marks the player connected
    or binds anything to the closed connection, and its reply cannot be delivered. Two reads.
    Raises NoSessionError: no session yet, replaced by a newer one (open connection), or
    received after the close (or with no receipt time) on a closed connection."""
    conn = deps.store.get_connection(connection_id)
    if conn is None or conn.player_id is None:
        raise NoSessionError("send a session message first")
    if conn.closed_ms is not None:
        if received_ms is None or received_ms > conn.closed_ms:
            raise NoSessionError("this connection is closed")
        player = deps.store.get_player(conn.player_id)
        if player is None:
            raise NoSessionError("this connection is closed")
        return player, conn.closed_ms
    player = deps.store.get_player(conn.player_id)
    if player is None or player.connection_id != connection_id:
        raise NoSessionError("this connection's session was replaced")
    return player, None


def hold_closed(deps: Deps, player_id: str, closed_ms: int) -> None:
    """After a message from a connection closed at ``closed_ms`` was applied: a player it left
    in a lobby, a tournament or a party while disconnected gets the reconnect deadline
    ``closed_ms + reconnect_ms`` (ruling 9), as if the message had run before ``$disconnect``.
    Nothing is written when the player is connected again or already has a deadline."""

    def mark() -> Change[Player | None]:
        p = deps.store.get_player(player_id)
        if p is None or p.connected or p.reconnect_deadline_ms is not None:
            return Change(None)
        if p.status is PlayerStatus.IDLE and p.party_id is None:
            return Change(None)
        p.disconnect_seq += 1
        p.reconnect_deadline_ms = closed_ms + deps.timing.reconnect_ms
        return Change(p, [p])

    player = run(deps, mark).value
    if player is not None and player.reconnect_deadline_ms is not None:
        deps.clock.schedule(
            Timer(
                TimerKind.RECONNECT,
                player.player_id,
                player.disconnect_seq,
                player.reconnect_deadline_ms,
            )
        )


def disconnect(
    deps: Deps, connection_id: str, *, at_ms: int | None = None, player_id: str | None = None
) -> Gone:
    """A connection went away: keep it as a tombstone closed at ``at_ms`` (``sender``); if it
    was the player's current one, mark them disconnected and start the 60 s reconnect deadline
    (ruling 9) when they are in a lobby, a tournament or a party (ruling 10: past it they
    leave the party, so nobody blocks its start). Their turns keep running out as skips
    meanwhile; the others get ``player_status``.

    ``at_ms`` (UTC ms, default now): when the player went away — the reconnect deadline is
    ``at_ms + reconnect_ms``. ``player_id``: whose connection it was, when the caller knows
    (the connection may already be closed: a ``$disconnect`` whose tombstone landed but whose
    answer was lost). Returns the connections the notices found gone (``drop`` them)."""

    closed = deps.clock.now_ms() if at_ms is None else at_ms

    def forget() -> Change[str | None]:
        # closing twice is harmless; a busy table is retried like any change
        conn = deps.store.close_connection(connection_id, closed)
        return Change(conn.player_id if conn is not None else None)

    owner = run(deps, forget).value or player_id
    if owner is None:
        return ()
    deadline = closed + deps.timing.reconnect_ms

    def mark() -> Change[Player | None]:
        p = deps.store.get_player(owner)
        if p is None or p.connection_id != connection_id:
            return Change(None)  # an older connection of a resumed player: nothing to do
        p.connected = False
        p.connection_id = None
        p.disconnect_seq += 1
        held = p.status is not PlayerStatus.IDLE or p.party_id is not None
        p.reconnect_deadline_ms = deadline if held else None
        return Change(p, [p])

    player = run(deps, mark).value
    if player is None:
        return ()
    if player.reconnect_deadline_ms is not None:
        deps.clock.schedule(
            Timer(
                TimerKind.RECONNECT,
                player.player_id,
                player.disconnect_seq,
                player.reconnect_deadline_ms,
            )
        )
    if player.status is PlayerStatus.IDLE:
        if player.tournament_id:
            return set_connection(deps, player, None, None, closed=connection_id)  # a spectator
        return ()
    try:
        if player.status is PlayerStatus.QUEUED:
            return lobby_connection(deps, player, None, closed=connection_id)
        if player.status is PlayerStatus.PLAYING:
            return set_connection(
                deps, player, None, player.reconnect_deadline_ms, closed=connection_id
            )
    except TryAgainError:
        # The player item and the reconnect deadline are saved: ruling 9 holds. Only the
        # others' "disconnected" badge is lost to contention; the deadline settles the rest.
        deps.metrics("DisconnectNoticeLost", 1)
    return ()


def drop(deps: Deps, gone: Gone) -> None:
    """Start the disconnect flow of every connection a push found gone (HTTP 410) — and of
    those its notices find gone in turn, each once. Called by each use case (or entrypoint)
    after its changes, never inside a write path."""
    queue = list(dict.fromkeys(gone))
    seen: set[str] = set()
    while queue:
        cid = queue.pop(0)
        if cid in seen:
            continue
        seen.add(cid)
        queue += disconnect(deps, cid)
