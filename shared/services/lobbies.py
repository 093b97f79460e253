"""Service layer: matchmaking — joining and leaving lobbies, and starting a tournament when
the 8th seat fills (ruling 8; ruling 9 for disconnected seats; issue 4 "Matchmaking").

Seat taking is atomic: the lobby item is saved on its ``version`` together with the player
item on its ``version`` (status ``idle`` -> ``queued``) in one transaction, so no lobby ever holds
9 players and no player sits in two lobbies, whatever the interleaving. The 8th seat's commit
also creates the tournament and moves all 8 players to ``playing`` — unless a holder is absent
at that moment (disconnected, or silent for the heartbeat timeout: rulings 9 and 14): their
seats are released in that same commit and the lobby waits for more.
"""

from __future__ import annotations

import itertools

from shared.domain import matchmaking as mm
from shared.domain.errors import (
    AlreadyPlayingError,
    AlreadyQueuedError,
    DomainError,
    NotQueuedError,
)
from shared.domain.events import Event
from shared.domain.tournament import Dealer, Tournament
from shared.services.base import Deps, Outbox, retrying
from shared.services.errors import NoSessionError
from shared.services.model import (
    Lobby,
    LobbyOpener,
    LobbyStatus,
    Player,
    PlayerStatus,
    Seat,
    TournamentRecord,
    Write,
)
from shared.services.presenter import lobby_event, party_event, present
from shared.services.snapshot import lobby_statuses
from shared.services.tournaments import change_tournament, leave_tournament, start_tournament


def _view(lobby: Lobby) -> mm.LobbyView:
    return mm.LobbyView(
        lobby_id=lobby.lobby_id,
        language=lobby.language,
        seats=tuple(mm.Seat(s.player_id, s.rating, s.party_id) for s in lobby.seats),
        party_id=lobby.party_id,
        created_ms=lobby.created_ms,
    )


def seat_players(
    deps: Deps,
    lobby: Lobby,
    newcomers: list[Player],
    box: Outbox,
    *,
    actor_id: str | None = None,
) -> list[Write]:
    """Seat ``newcomers`` (already checked) in ``lobby``; if it is now full, start the
    tournament — unless a seat's holder is absent at that moment (ruling 9): disconnected,
    or not heard from for the heartbeat timeout (ruling 14; ``actor_id``, who sent the message
    being handled, is alive by definition). Absent holders are released (idle, told on
    resume: not queued any more; a silent one's connection is closed) and the lobby waits for
    more. Returns the writes to commit; queues the messages (and closes) in ``box``."""
    now = deps.clock.now_ms()
    for p in newcomers:
        lobby.seats.append(
            Seat(p.player_id, p.nickname, p.rating, p.party_id if lobby.party_id else None)
        )
        lobby.connections[p.player_id] = p.connection_id if p.connected else None
        p.status = PlayerStatus.QUEUED
        p.lobby_id = lobby.lobby_id
        p.language = lobby.language
    writes: list[Write] = [lobby, *newcomers]
    language = deps.lexicon.language(lobby.language)
    if len(lobby.seats) < mm.LOBBY_SEATS:
        box.add(lobby.connections.values(), lobby_event(lobby, language))
        for p in newcomers:
            # who is away in the lobby, as the others were told when it happened (ruling 9)
            for status in lobby_statuses(deps, lobby, p.player_id):
                box.add([lobby.connections.get(p.player_id)], status)
        return writes
    # The 8th seat: start (ruling 8). Everyone seated becomes a tournament player.
    seated_ids = [s.player_id for s in lobby.seats]
    others = deps.store.get_players(
        [i for i in seated_ids if i not in {p.player_id for p in newcomers}]
    )
    players = {**others, **{p.player_id: p for p in newcomers}}
    absent = _absent(deps, players, actor_id, now)
    if absent:
        released = _release(lobby, players, absent, box)
        deps.metric("SeatsReleased", len(released))
        box.add(lobby.connections.values(), lobby_event(lobby, language))
        return [lobby, *{p.player_id: p for p in [*newcomers, *released]}.values()]
    rec, events = start_tournament(deps, lobby, players, now)
    lobby.status = LobbyStatus.STARTED
    lobby.tournament_id = rec.tournament.tournament_id
    for pid in seated_ids:
        p = players[pid]
        if p.status is not PlayerStatus.QUEUED or p.lobby_id != lobby.lobby_id:
            # a seat whose player moved on: the transaction's version check fails anyway
            continue
        p.status = PlayerStatus.PLAYING
        p.tournament_id = rec.tournament.tournament_id
        p.lobby_id = None
    writes = [lobby, *players.values(), rec]
    box.add(lobby.connections.values(), lobby_event(lobby, language))
    present(rec, events, box, deps.lexicon)
    return writes


def _absent(
    deps: Deps, players: dict[str, Player], actor_id: str | None, now: int
) -> dict[str, bool]:
    """Seat holders who are not there now (ruling 9), each mapped to whether their connection
    is still open but silent (ruling 14: to be closed). Liveness costs one BatchGetItem of the
    connected holders' connection items, only when the 8th seat fills."""
    absent = {
        pid: False for pid, p in players.items() if not p.connected or p.connection_id is None
    }
    heartbeat = deps.timing.heartbeat_ms
    if heartbeat is None:
        return absent
    check = {
        p.connection_id: pid
        for pid, p in players.items()
        if pid not in absent and pid != actor_id and p.connection_id is not None
    }
    conns = deps.store.get_connections(check) if check else {}
    for cid, pid in check.items():
        c = conns.get(cid)
        if c is None or c.silent(now, heartbeat):
            absent[pid] = True
    return absent


def _release(
    lobby: Lobby, players: dict[str, Player], absent: dict[str, bool], box: Outbox
) -> list[Player]:
    """Free the seats of ``absent`` holders (ruling 9): each goes back to idle with no
    reconnect deadline (a pending one is made stale); a silent one (``True``) is treated as
    disconnected from now on and its connection closed after the commit (ruling 14)."""
    released = []
    for pid, silent in absent.items():
        p = players[pid]
        lobby.seats = [s for s in lobby.seats if s.player_id != pid]
        lobby.connections.pop(pid, None)
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


def join(deps: Deps, player_id: str, language_code: str) -> None:
    """``join {language}``: take a seat in a waiting lobby that admits the player (ruling 8),
    or open a new one. Raises UnknownLanguageError, AlreadyQueuedError, AlreadyPlayingError,
    AlreadyInPartyError (party members start together with ``party_start``)."""
    deps.lexicon.language(language_code)
    box = Outbox()
    tries = itertools.count(1)

    def attempt() -> None:
        box.messages.clear()
        box.timers.clear()
        box.closes.clear()
        retry = next(tries) > 1
        player = deps.store.get_player(player_id)
        assert player is not None
        if player.status is PlayerStatus.QUEUED:
            raise AlreadyQueuedError("you are already waiting in a lobby")
        if player.status is PlayerStatus.PLAYING:
            raise AlreadyPlayingError("you are already in a tournament")
        if not player.connected:
            # the connection that asked closed meanwhile (a retry after $disconnect): an idle
            # player gets no reconnect deadline, so a seat taken now would never be freed
            raise NoSessionError("your connection closed; send session again")
        entrant = mm.Seat(player.player_id, player.rating, player.party_id)
        if player.party_id is not None:
            from shared.domain.errors import AlreadyInPartyError

            raise AlreadyInPartyError("you are in a party: the leader starts the game")
        candidates = deps.store.waiting_lobbies(language_code)
        found = _pick(deps, candidates, entrant, language_code, consistent=retry)
        opener: list[Write] = []
        if found is None:
            lobby, opener = _open_lobby(deps, language_code, entrant)
        else:
            lobby = found
            mm.check_admission(_view(lobby), entrant)
        watched = player.tournament_id
        player.tournament_id = None  # stops spectating an earlier tournament
        seat = seat_players(deps, lobby, [player], box, actor_id=player_id)
        if lobby.party_id is not None and lobby.status is LobbyStatus.STARTED:
            _party_plays(deps, lobby.party_id, seat, box)
        deps.store.commit([*seat, *opener])
        watching.clear()
        if watched:
            watching.append(watched)

    watching: list[str] = []
    retrying(deps, attempt)
    box.flush(deps)
    if watching:
        # a spectator of an earlier tournament stops receiving its messages
        stop_watching(deps, player_id, watching[0])


def _party_plays(deps: Deps, party_id: str, writes: list[Write], box: Outbox) -> None:
    """A solo player's seat started the party's lobby: the party now plays (ruling 10), and
    its members' party screens say so (``party_start`` told them ``queued``). One read."""
    rec = deps.store.get_party(party_id)
    if rec is None:
        return
    seated = {w.player_id: w for w in writes if isinstance(w, Player)}
    members = {m: seated[m] for m in rec.party.members if m in seated}
    event = party_event(rec, members, "playing")
    box.add([p.connection_id for p in members.values()], event)


def stop_watching(deps: Deps, player_id: str, tournament_id: str) -> None:
    """Drop a spectator's connection from a tournament they no longer watch (ruling 7)."""

    def decide(rec: TournamentRecord, now: int, dealer: Dealer) -> tuple[Tournament, list[Event]]:
        if (
            rec.connections.get(player_id) is not None
            and not rec.tournament.player(player_id).alive
        ):
            rec.connections[player_id] = None
        return rec.tournament, []

    try:
        change_tournament(deps, tournament_id, decide)
    except DomainError:
        return


def _open_lobby(deps: Deps, language: str, entrant: mm.Seat) -> tuple[Lobby, list[Write]]:
    """No waiting lobby admits the entrant: sit in the lobby that the language and rating
    bucket's opener points to, if it still waits and admits them, else open a new one and
    point the opener at it (saved with the seat, on the opener's version). Concurrent openers
    thus meet in one lobby instead of each waiting alone."""
    bucket = entrant.rating // mm.RATING_WINDOW
    opener = deps.store.get_opener(language, bucket)
    if opener is not None:
        current = deps.store.get_lobby(opener.lobby_id)
        if (
            current is not None
            and current.status is LobbyStatus.WAITING
            and current.party_id is None
            and mm.admits(_view(current), entrant)
        ):
            return current, []
    lobby = Lobby(lobby_id=deps.new_id(), language=language, created_ms=deps.clock.now_ms())
    if opener is None:
        opener = LobbyOpener(language, bucket, lobby.lobby_id)
    else:
        opener.lobby_id = lobby.lobby_id
    return lobby, [opener]


def _pick(
    deps: Deps, candidates: list[Lobby], entrant: mm.Seat, language: str, *, consistent: bool
) -> Lobby | None:
    """The waiting lobby to seat ``entrant`` in (ruling 8), or None to open one.

    The candidates come from gsi_waiting, which is eventually consistent: a lobby there may
    be older than the table (a seat taken, started). Saving on such a stale version conflicts,
    and so would every retry while the index lags, ending in ``try_again``. So after a
    conflict (``consistent``) each choice is re-read with a strongly consistent GetItem and
    re-checked, falling back to the next best candidate. The first attempt trusts the index
    (one Query, no extra read); the conditional save keeps it safe either way."""
    pool = {c.lobby_id: c for c in candidates}
    while True:
        chosen = mm.choose_lobby([_view(c) for c in pool.values()], entrant, language=language)
        if chosen is None:
            return None
        lobby = pool.pop(chosen.lobby_id)
        if not consistent:
            return lobby
        fresh = deps.store.get_lobby(lobby.lobby_id)
        if (
            fresh is not None
            and fresh.status is LobbyStatus.WAITING
            and mm.admits(_view(fresh), entrant)
        ):
            return fresh


def leave(deps: Deps, player_id: str) -> None:
    """``leave``: before the start, free the seat at no cost (rules page); after the start,
    ruling 3 (see ``tournaments.leave_tournament``); a spectator stops watching.
    Raises NotQueuedError when the player is neither waiting, playing nor watching."""
    player = deps.store.get_player(player_id)
    assert player is not None
    if player.status is PlayerStatus.PLAYING or (
        player.status is PlayerStatus.IDLE and player.tournament_id is not None
    ):
        leave_tournament(deps, player)
        if player.status is PlayerStatus.IDLE:
            _stop_watching(deps, player_id)
        return
    if player.status is not PlayerStatus.QUEUED:
        raise NotQueuedError("you are not in a lobby or tournament")
    if not leave_lobby(deps, player_id):
        # The seat changed between the first read and the save (the 8th seat started the
        # tournament, or the seat was already freed): say so rather than answer nothing.
        now = deps.store.get_player(player_id)
        if now is not None and now.status is PlayerStatus.PLAYING:
            raise AlreadyPlayingError(
                "the tournament started before your leave arrived; send leave again to leave it"
            )
        raise NotQueuedError("you are not in a lobby or tournament")


def _stop_watching(deps: Deps, player_id: str) -> None:
    def attempt() -> None:
        p = deps.store.get_player(player_id)
        if p is None or p.tournament_id is None or p.status is not PlayerStatus.IDLE:
            return
        p.tournament_id = None
        deps.store.commit([p])

    retrying(deps, attempt)


def leave_lobby(deps: Deps, player_id: str, *, only_if_disconnect_seq: int | None = None) -> bool:
    """Free the player's lobby seat (leave, or the reconnect deadline of ruling 9).
    Returns False when the player was not waiting in a lobby (or, with
    ``only_if_disconnect_seq``, has reconnected since)."""
    box = Outbox()

    def attempt() -> bool:
        box.messages.clear()
        player = deps.store.get_player(player_id)
        if player is None or player.status is not PlayerStatus.QUEUED or player.lobby_id is None:
            return False
        if only_if_disconnect_seq is not None and (
            player.connected or player.disconnect_seq != only_if_disconnect_seq
        ):
            return False
        lobby = deps.store.get_lobby(player.lobby_id)
        player.status = PlayerStatus.IDLE
        player.lobby_id = None
        if only_if_disconnect_seq is not None:
            player.reconnect_deadline_ms = None
        writes: list[Write] = [player]
        if lobby is not None and lobby.status is LobbyStatus.WAITING:
            lobby.seats = [s for s in lobby.seats if s.player_id != player_id]
            cid = lobby.connections.pop(player_id, None)
            if not lobby.seats:
                lobby.status = LobbyStatus.EMPTY
            writes.append(lobby)
            language = deps.lexicon.language(lobby.language)
            box.add(lobby.connections.values(), lobby_event(lobby, language))
            left = lobby_event(lobby, language).model_copy(update={"status": "left"})
            box.add([cid or player.connection_id], left)
        deps.store.commit(writes)
        return True

    done = retrying(deps, attempt)
    box.flush(deps)
    return done
