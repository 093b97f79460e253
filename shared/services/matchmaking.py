"""Use cases: matchmaking — ``join`` (take a seat in a waiting lobby, or open one; the 8th
seat starts the tournament) and ``leave`` (a lobby seat, a running tournament, or spectating)
(rules page; rulings 3, 7, 8 and 9)."""

from __future__ import annotations

import itertools

from shared.domain import matchmaking as mm
from shared.domain.errors import (
    AlreadyInPartyError,
    AlreadyPlayingError,
    AlreadyQueuedError,
    DomainError,
    NotQueuedError,
)
from shared.domain.matchmaking import LobbyStatus
from shared.domain.tournament import Dealer
from shared.services.change import Change, run
from shared.services.deps import Deps
from shared.services.errors import NoSessionError
from shared.services.model import (
    LobbyOpener,
    LobbyRecord,
    PlayerStatus,
    TournamentRecord,
    Write,
)
from shared.services.outbox import Gone, Outbox, Request
from shared.services.presence import drop
from shared.services.seating import free_seat, party_plays, seat_of, seat_players
from shared.services.tournament_change import (
    Decision,
    change_tournament,
    leave_tournament,
    parties_back,
)


def join(deps: Deps, req: Request, player_id: str, language_code: str) -> None:
    """``join {language}``: take a seat in a waiting lobby that admits the player (ruling 8),
    or open a new one; everyone seated gets ``lobby`` (and the 8th seat's commit starts the
    tournament). Raises UnknownLanguageError, AlreadyQueuedError, AlreadyPlayingError,
    AlreadyInPartyError (party members start together with ``party_start``), NoSessionError
    (the connection closed meanwhile)."""
    deps.lexicon.language(language_code)
    tries = itertools.count(1)

    def seat() -> Change[str | None]:
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
        if player.party_id is not None:
            raise AlreadyInPartyError("you are in a party: the leader starts the game")
        entrant = seat_of(player)
        candidates = deps.store.waiting_lobbies(language_code)
        found = _pick(deps, candidates, entrant, language_code, consistent=retry)
        opener: list[Write] = []
        if found is None:
            rec, opener = _open_lobby(deps, language_code, entrant)
        else:
            rec = found
        rec.lobby = mm.with_seat(rec.lobby, entrant)  # admission checked (ruling 8)
        watched = player.tournament_id
        player.tournament_id = None  # stops spectating an earlier tournament
        box = Outbox(reply_to=req)
        writes = seat_players(deps, rec, [player], box, actor_id=player_id)
        lobby = rec.lobby
        if lobby.party_id is not None and lobby.status is LobbyStatus.STARTED:
            party_plays(deps, lobby.party_id, writes, box)
        return Change(watched, [*writes, *opener], box)

    done = run(deps, seat)
    gone = done.gone
    if done.value:
        # a spectator of an earlier tournament stops receiving its messages
        gone += _stop_watching(deps, player_id, done.value)
    drop(deps, gone)


def _stop_watching(deps: Deps, player_id: str, tournament_id: str) -> Gone:
    """Drop a spectator's connection from a tournament they no longer watch (ruling 7)."""

    def decide(rec: TournamentRecord, now: int, dealer: Dealer) -> Decision:
        if (
            rec.connections.get(player_id) is not None
            and not rec.tournament.player(player_id).alive
        ):
            rec.connections[player_id] = None
        return Decision(rec.tournament)

    try:
        return change_tournament(deps, tournament_id, decide).gone
    except DomainError:
        return ()


def _open_lobby(deps: Deps, language: str, entrant: mm.Seat) -> tuple[LobbyRecord, list[Write]]:
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
            and current.lobby.status is LobbyStatus.WAITING
            and current.lobby.party_id is None
            and mm.admits(current.lobby, entrant)
        ):
            return current, []
    lobby = mm.Lobby(
        lobby_id=deps.ids(), language=language, seats=(), created_ms=deps.clock.now_ms()
    )
    if opener is None:
        opener = LobbyOpener(language, bucket, lobby.lobby_id)
    else:
        opener.lobby_id = lobby.lobby_id
    return LobbyRecord(lobby), [opener]


def _pick(
    deps: Deps,
    candidates: list[LobbyRecord],
    entrant: mm.Seat,
    language: str,
    *,
    consistent: bool,
) -> LobbyRecord | None:
    """The waiting lobby to seat ``entrant`` in (ruling 8), or None to open one.

    The candidates come from gsi_waiting, which is eventually consistent: a lobby there may
    be older than the table (a seat taken, started). Saving on such a stale version conflicts,
    and so would every retry while the index lags, ending in ``try_again``. So after a
    conflict (``consistent``) each choice is re-read with a strongly consistent GetItem and
    re-checked, falling back to the next best candidate. The first attempt trusts the index
    (one Query, no extra read); the conditional save keeps it safe either way."""
    pool = {c.lobby.lobby_id: c for c in candidates}
    while True:
        chosen = mm.choose_lobby([c.lobby for c in pool.values()], entrant, language=language)
        if chosen is None:
            return None
        rec = pool.pop(chosen.lobby_id)
        if not consistent:
            return rec
        fresh = deps.store.get_lobby(chosen.lobby_id)
        if (
            fresh is not None
            and fresh.lobby.status is LobbyStatus.WAITING
            and mm.admits(fresh.lobby, entrant)
        ):
            return fresh


def leave(deps: Deps, req: Request, player_id: str) -> None:
    """``leave``: before the start, free the seat at no cost (rules page); after the start,
    ruling 3 (``tournament_change.leave_tournament``); a spectator stops watching.
    Raises NotQueuedError when the player is neither waiting, playing nor watching, and
    AlreadyPlayingError when the tournament started before the leave arrived."""
    player = deps.store.get_player(player_id)
    assert player is not None
    if player.status is PlayerStatus.PLAYING or (
        player.status is PlayerStatus.IDLE and player.tournament_id is not None
    ):
        committed = leave_tournament(deps, player, reply_to=req)
        gone = () if committed is None else committed.gone + parties_back(deps, committed)
        if player.status is PlayerStatus.IDLE:
            run(deps, lambda: _unwatch(deps, player_id))
        drop(deps, gone)
        return
    if player.status is not PlayerStatus.QUEUED:
        raise NotQueuedError("you are not in a lobby or tournament")
    freed = free_seat(deps, player_id, reply_to=req)
    drop(deps, freed.gone)
    if not freed.value:
        # The seat changed between the first read and the save (the 8th seat started the
        # tournament, or the seat was already freed): say so rather than answer nothing.
        now = deps.store.get_player(player_id)
        if now is not None and now.status is PlayerStatus.PLAYING:
            raise AlreadyPlayingError(
                "the tournament started before your leave arrived; send leave again to leave it"
            )
        raise NotQueuedError("you are not in a lobby or tournament")


def _unwatch(deps: Deps, player_id: str) -> Change[None]:
    """A spectator's player item forgets the tournament it watched."""
    p = deps.store.get_player(player_id)
    if p is None or p.tournament_id is None or p.status is not PlayerStatus.IDLE:
        return Change(None)
    p.tournament_id = None
    return Change(None, [p])
