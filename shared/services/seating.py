"""Service layer (building block): lobby seats — seating players (and starting the tournament
when the 8th seat fills), freeing a seat, and a seat holder's connection (rulings 8 and 9).

Seat taking is atomic: the lobby item is saved on its ``version`` together with the player
item on its ``version`` (status ``idle`` -> ``queued``) in one transaction, so no lobby ever holds
9 players and no player sits in two lobbies, whatever the interleaving. The 8th seat's commit
also creates the tournament and moves all 8 players to ``playing`` — unless a holder is absent
at that moment (disconnected, or silent for the heartbeat timeout: rulings 9 and 14): their
seats are released in that same commit and the lobby waits for more.

Imports no use case: ``matchmaking``, ``parties``, ``sessions`` and ``deadlines`` build on it.
"""

from __future__ import annotations

from dataclasses import replace

from shared.domain import matchmaking as mm
from shared.domain.matchmaking import LobbyStatus
from shared.protocol import outbound as out
from shared.services import repeats
from shared.services.change import Change, Done, run
from shared.services.deps import Deps
from shared.services.model import LobbyRecord, Player, PlayerStatus, Write
from shared.services.outbox import Gone, Outbox, Request
from shared.services.presenter import lobby_event, party_event, present
from shared.services.snapshot import lobby_statuses
from shared.services.tournament_change import new_tournament


def seat_players(
    deps: Deps,
    rec: LobbyRecord,
    newcomers: list[Player],
    box: Outbox,
    *,
    actor_id: str | None = None,
) -> list[Write]:
    """Seat ``newcomers``, whose seats ``rec.lobby`` already holds (``mm.with_seat`` for a solo
    player, ``mm.party_lobby`` for a party); if the lobby is now full, start the tournament —
    unless a seat's holder is absent at that moment (ruling 9): disconnected, or not heard
    from for the heartbeat timeout (ruling 14; ``actor_id``, who sent the message being
    handled, is alive by definition). Absent holders are released (idle, told on resume: not
    queued any more; a silent one's connection is closed) and the lobby waits for more.
    Returns the writes to commit; queues the messages (and closes) in ``box``."""
    now = deps.clock.now_ms()
    lobby = rec.lobby
    for p in newcomers:
        rec.connections[p.player_id] = p.connection_id if p.connected else None
        p.status = PlayerStatus.QUEUED
        p.lobby_id = lobby.lobby_id
        p.language = lobby.language
    writes: list[Write] = [rec, *newcomers]
    language = deps.lexicon.language(lobby.language)
    if not mm.is_full(lobby):
        box.add(rec.connections.values(), lobby_event(lobby, language))
        for p in newcomers:
            # who is away in the lobby, as the others were told when it happened (ruling 9)
            for status in lobby_statuses(deps, rec, p.player_id):
                box.add([rec.connections.get(p.player_id)], status)
        return writes
    # The 8th seat: start (ruling 8). Everyone seated becomes a tournament player.
    seated_ids = [s.player_id for s in lobby.seats]
    others = deps.store.get_players(
        [i for i in seated_ids if i not in {p.player_id for p in newcomers}]
    )
    players = {**others, **{p.player_id: p for p in newcomers}}
    absent = _absent(deps, players, actor_id, now)
    if absent:
        released = _release(rec, players, absent, box)
        deps.metrics("SeatsReleased", len(released))
        box.add(rec.connections.values(), lobby_event(rec.lobby, language))
        return [rec, *{p.player_id: p for p in [*newcomers, *released]}.values()]
    tournament, events = new_tournament(deps, rec, players, now)
    tid = tournament.tournament.tournament_id
    rec.lobby = mm.started(lobby, tid)
    for pid in seated_ids:
        p = players[pid]
        if p.status is not PlayerStatus.QUEUED or p.lobby_id != lobby.lobby_id:
            # a seat whose player moved on: the transaction's version check fails anyway
            continue
        p.status = PlayerStatus.PLAYING
        p.tournament_id = tid
        p.lobby_id = None
    box.add(rec.connections.values(), lobby_event(rec.lobby, language))
    present(tournament, events, box, deps.lexicon, now_ms=deps.clock.now_ms())
    return [rec, *players.values(), tournament]


def seat_of(player: Player, party_id: str | None = None) -> mm.Seat:
    """The seat ``player`` takes: their id, nickname and rating now (ruling 8's snapshot)."""
    return mm.Seat(player.player_id, player.rating, party_id, player.nickname)


def _absent(
    deps: Deps, players: dict[str, Player], actor_id: str | None, now: int
) -> dict[str, bool]:
    """Seat holders who are not there now (ruling 9), each mapped to whether their connection
    is still open but silent (ruling 14: to be closed). Liveness costs one GetConnection
    (``Notifier.last_active_ms``) per connected holder but the actor, only when the 8th seat
    fills; a connection found gone counts as silent (closing it again is harmless)."""
    absent = {
        pid: False for pid, p in players.items() if not p.connected or p.connection_id is None
    }
    heartbeat = deps.timing.heartbeat_ms
    if heartbeat is None:
        return absent
    for pid, p in players.items():
        if pid in absent or pid == actor_id or p.connection_id is None:
            continue
        active = deps.notifier.last_active_ms(p.connection_id)
        if active is None or now - active >= heartbeat:
            absent[pid] = True
    return absent


def _release(
    rec: LobbyRecord, players: dict[str, Player], absent: dict[str, bool], box: Outbox
) -> list[Player]:
    """Free the seats of ``absent`` holders (ruling 9): each goes back to idle with no
    reconnect deadline (a pending one is made stale); a silent one (``True``) is treated as
    disconnected from now on and its connection closed after the commit (ruling 14)."""
    released = []
    for pid, silent in absent.items():
        p = players[pid]
        rec.lobby = mm.without_player(rec.lobby, pid)
        rec.connections.pop(pid, None)
        p.status = PlayerStatus.IDLE
        p.lobby_id = None
        p.reconnect_deadline_ms = None
        p.disconnect_seq += 1
        if silent and p.connection_id is not None:
            box.closes.append(p.connection_id)
            p.connected = False
            p.connection_id = None
        released.append(p)
    return released


def party_plays(deps: Deps, party_id: str, writes: list[Write], box: Outbox) -> None:
    """A solo player's seat started a party's lobby: the party now plays (ruling 10), and
    its members' party screens say so (``party_start`` told them ``queued``). One read."""
    rec = deps.store.get_party(party_id)
    if rec is None:
        return
    seated = {w.player_id: w for w in writes if isinstance(w, Player)}
    members = {m: seated[m] for m in rec.party.members if m in seated}
    event = party_event(rec, members, "playing")
    box.add([p.connection_id for p in members.values()], event)


def free_seat(
    deps: Deps,
    player_id: str,
    *,
    only_if_disconnect_seq: int | None = None,
    reply_to: Request | None = None,
) -> Done[bool]:
    """Free the player's lobby seat (leave, or the reconnect deadline of ruling 9); the
    others get the new ``lobby``, the leaver the lobby with status ``left``. The value is False
    when the player was not waiting in a lobby (or, with ``only_if_disconnect_seq``, has
    reconnected since): nothing changed."""

    def step() -> Change[bool]:
        player = deps.store.get_player(player_id)
        if player is None or player.status is not PlayerStatus.QUEUED or player.lobby_id is None:
            return Change(False)
        if only_if_disconnect_seq is not None and (
            player.connected or player.disconnect_seq != only_if_disconnect_seq
        ):
            return Change(False)
        rec = deps.store.get_lobby(player.lobby_id)
        repeats.remember(player, reply_to, "leave", repeats.LOBBY + player.lobby_id)
        player.status = PlayerStatus.IDLE
        player.lobby_id = None
        if only_if_disconnect_seq is not None:
            player.reconnect_deadline_ms = None
        writes: list[Write] = [player]
        box = Outbox(reply_to=reply_to)
        if (
            rec is not None
            and rec.lobby.status is LobbyStatus.WAITING
            and any(s.player_id == player_id for s in rec.lobby.seats)
        ):
            rec.lobby = mm.without_player(rec.lobby, player_id)
            cid = rec.connections.pop(player_id, None)
            writes.append(rec)
            language = deps.lexicon.language(rec.lobby.language)
            box.add(rec.connections.values(), lobby_event(rec.lobby, language))
            left = replace(lobby_event(rec.lobby, language), status="left")
            box.add([cid or player.connection_id], left)
        return Change(True, writes, box)

    return run(deps, step)


def lobby_connection(
    deps: Deps, player: Player, connection_id: str | None, *, closed: str | None = None
) -> Gone:
    """Record the player's connection in their lobby and tell the others (``player_status``).
    ``closed``: as in ``tournament_change.set_connection`` (a disconnect changes nothing once
    a resume replaced it)."""

    def step() -> Change[None]:
        if player.lobby_id is None:
            return Change(None)
        rec = deps.store.get_lobby(player.lobby_id)
        if rec is None or player.player_id not in rec.connections:
            return Change(None)
        if closed is not None and rec.connections.get(player.player_id) != closed:
            return Change(None)
        rec.connections[player.player_id] = connection_id
        others = [c for pid, c in rec.connections.items() if pid != player.player_id]
        box = Outbox()
        box.add(
            others,
            out.PlayerStatusEvent(
                lobby_id=rec.lobby.lobby_id,
                player_id=player.player_id,
                status="connected" if connection_id else "disconnected",
                reconnect_deadline_ms=player.reconnect_deadline_ms if not connection_id else None,
            ),
        )
        return Change(None, [rec], box)

    return run(deps, step).gone
