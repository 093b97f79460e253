"""Use cases: matchmaking — ``join`` (take a seat in a waiting lobby, or open one; the 8th
seat starts the tournament) and ``leave`` (a lobby seat, a running tournament, or spectating)
(rules page; rulings 3, 7, 8 and 9)."""

from __future__ import annotations

import itertools
import random
from typing import Literal

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
from shared.protocol import outbound as out
from shared.services import repeats
from shared.services.change import Change, run
from shared.services.deps import Deps
from shared.services.errors import NoSessionError
from shared.services.model import (
    LobbyOpener,
    LobbyRecord,
    OpenerUnchanged,
    Player,
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

SPREAD_FROM_ATTEMPT = 2
"""From this try on (after a conflict), a joiner picks uniformly at random among the lobbies
that admit them instead of the preferred one, so racers spread over the waiting lobbies."""
OPEN_FROM_ATTEMPT = mm.LOBBY_SEATS + 1
"""From this try on (after 8 conflicts), a joiner opens a lobby in a random lane (or sits in
that lane's newest lobby): contention itself adds lobbies filling in parallel. Not sooner,
unless the load is sustained (``SUSTAINED_OPEN_FROM_ATTEMPT``): a burst of up to 8 joiners (8
players pressing join at once, and nobody after them) costs any one of them at most 7
conflicts (each conflict is another joiner's seat taken), so it never splits into lobbies that
wait forever (ruling 8: compatible players never wait apart). Found by the every-language
end-to-end test, which split such a burst (6 + 2 seats) when lanes opened after 2 conflicts."""
SUSTAINED_OPEN_FROM_ATTEMPT = SPREAD_FROM_ATTEMPT + 1
"""From this try on (after 2 conflicts), a joiner opens in a lane when the lobby it would
take was opened under sustained load (``_sustained``): lobbies keep filling in well under a
second, one after another, so the lobby a lane leaves short will fill from the joiners still
arriving, and 8 conflicts per join would flood the waiting-lobby index with re-reads (issue
17: at 1,000 joins/s, over a partition's read limit)."""
FAST_FILL_MS = 1_000
"""A lobby opened within this long (ms) of the one before in its bucket and lane extends the
opener's streak (``LobbyOpener.streak``): the previous one filled at 8 or more joins a second."""
SUSTAINED_STREAK = 3
"""Fast openings in a row for load to count as sustained: the 3 lobbies before the current one
each filled within a second (24 players or more back to back), so a burst of up to 24 joiners
never opens lanes early."""
SUSTAINED_FRESH_MS = 10_000
"""A lobby's streak counts only while the lobby is this young (ms): a rush that ended minutes
ago says nothing about the burst arriving now."""
MAX_LANES = 64
"""Lanes a joiner may open in; the range doubles with each further conflict up to this."""
CHECKED_CANDIDATES = 3
"""Candidates re-read (strongly consistent GetItem) before giving up on the index and opening:
an index entry may lag its lobby (started, or its range narrowed by a seat)."""


def join(deps: Deps, req: Request, player_id: str, language_code: str) -> None:
    """``join {language}``: take a seat in a waiting lobby that admits the player (ruling 8),
    or open a new one; everyone seated gets ``lobby`` (and the 8th seat's commit starts the
    tournament). Raises UnknownLanguageError, AlreadyQueuedError, AlreadyPlayingError,
    AlreadyInPartyError (party members start together with ``party_start``), NoSessionError
    (the connection closed meanwhile). How a lobby is chosen under contention: RULINGS.md."""
    deps.lexicon.language(language_code)
    tries = itertools.count(1)
    open_from = OPEN_FROM_ATTEMPT
    carried = 0  # the streak of the lobby that showed sustained load, for the lane opened
    pool: list[mm.WaitingLobby] | None = None  # the index's answer, minus lobbies found taken

    def seat() -> Change[str | None]:
        nonlocal open_from, carried, pool
        attempt = next(tries)
        player = deps.store.get_player(player_id)
        assert player is not None
        first = repeats.repeated(player, req, "join")
        if first is not None:
            again.append((player, first))
            return Change(None)  # ruling 18: answered again (below), nothing written
        if player.status is PlayerStatus.QUEUED:
            raise AlreadyQueuedError("you are already waiting in a lobby")
        if player.status is PlayerStatus.PLAYING:
            raise AlreadyPlayingError("you are already in a tournament")
        if not player.connected and req.closed_ms is None:
            # the connection that asked closed meanwhile (a retry after $disconnect): an idle
            # player gets no reconnect deadline, so a seat taken now would never be freed. A
            # join received before the close (``req.closed_ms``) is seated: the entrypoint then
            # gives the player the reconnect deadline (``presence.hold_closed``, ruling 9)
            raise NoSessionError("your connection closed; send session again")
        if player.party_id is not None:
            raise AlreadyInPartyError("you are in a party: the leader starts the game")
        entrant = seat_of(player)
        # chance only after a conflict: an uncontended join draws nothing (same seed, same game)
        rng = deps.rng() if attempt >= SPREAD_FROM_ATTEMPT else None
        fresh = pool is None
        if pool is None:
            # the lanes too open only once an index read succeeded: an index that keeps failing
            # answers try_again, never a lobby opened blind (ruling 8: no blind spot)
            pool = _listed(deps, language_code, entrant)
        found = None
        if attempt < open_from:
            found = _pick(deps, language_code, entrant, rng, pool)
            if found is None and not fresh:
                pool = _listed(deps, language_code, entrant)
                found = _pick(deps, language_code, entrant, rng, pool)
            if (
                found is not None
                and attempt >= SUSTAINED_OPEN_FROM_ATTEMPT
                and _sustained(found, deps.clock.now_ms())
            ):
                open_from, carried, found = attempt, found.streak, None
        opener: list[Write] = []
        if found is None:
            lane = _lane(attempt - open_from, rng)
            rec, opener = _open_lobby(deps, language_code, entrant, lane, carried)
        else:
            rec = found
        rec.lobby = mm.with_seat(rec.lobby, entrant)  # admission checked (ruling 8)
        repeats.remember(player, req, "join", repeats.LOBBY + rec.lobby.lobby_id)
        watched = player.tournament_id
        player.tournament_id = None  # stops spectating an earlier tournament
        box = Outbox(reply_to=req)
        writes = seat_players(deps, rec, [player], box, actor_id=player_id)
        lobby = rec.lobby
        if lobby.party_id is not None and lobby.status is LobbyStatus.STARTED:
            party_plays(deps, lobby.party_id, writes, box)
        return Change(watched, [*writes, *opener], box)

    again: list[tuple[Player, str]] = []
    done = run(deps, seat)
    gone = done.gone
    if again:
        player, ref = again[-1]
        drop(deps, gone + repeats.answer_again(deps, req, player, "join", ref))
        return
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


def _lane(past_open: int, rng: random.Random | None) -> int:
    """The opener lane of a try ``past_open`` tries after the first that opens (negative: not
    opening, lane 0): uniform in ``[0, 2**(past_open + 1))``, capped at ``MAX_LANES``."""
    if past_open < 0 or rng is None:
        return 0
    return rng.randrange(min(2 ** (past_open + 1), MAX_LANES))


def _sustained(rec: LobbyRecord, now_ms: int) -> bool:
    """Whether a lobby was opened under sustained load: its opener had opened
    ``SUSTAINED_STREAK`` lobbies in a row, each within ``FAST_FILL_MS`` of the one before
    (``LobbyRecord.streak``), and it was opened within ``SUSTAINED_FRESH_MS`` (ruling 8)."""
    return rec.streak >= SUSTAINED_STREAK and now_ms - rec.lobby.created_ms <= SUSTAINED_FRESH_MS


def _admitting(deps: Deps, lobby_id: str, language: str, entrant: mm.Seat) -> LobbyRecord | None:
    """The lobby, read strongly consistent, if it still waits in ``language`` and admits the
    entrant (ruling 8); else None."""
    rec = deps.store.get_lobby(lobby_id)
    if (
        rec is not None
        and rec.lobby.status is LobbyStatus.WAITING
        and rec.lobby.language == language
        and mm.admits(rec.lobby, entrant)
    ):
        return rec
    return None


def _listed(deps: Deps, language: str, entrant: mm.Seat) -> list[mm.WaitingLobby]:
    """The waiting lobbies the index says admit the entrant's rating (every one: no blind
    spot; ``Store.waiting_lobbies``)."""
    return [
        w for w in deps.store.waiting_lobbies(language, entrant.rating) if w.admits(entrant.rating)
    ]


def _pick(
    deps: Deps,
    language: str,
    entrant: mm.Seat,
    rng: random.Random | None,
    pool: list[mm.WaitingLobby],
) -> LobbyRecord | None:
    """The waiting lobby to seat ``entrant`` in (ruling 8), or None to open one.

    Candidates: ``pool``, the lobbies an index read of this join listed (``_listed``); the
    preferred first (``mm.preference``), or in random order when given ``rng`` (after a
    conflict). The index is eventually consistent and the pool may be a few tries old, so each
    choice is re-read (GetItem) and re-checked, at most ``CHECKED_CANDIDATES`` reads; a lobby
    that no longer admits the entrant leaves the pool. A retry after a conflict thus re-reads
    the lobbies it knows instead of the index (whose partitions every join of a language
    shares), and ``join`` lists again only when they are all taken. The conditional save keeps
    it safe either way."""
    candidates = list(pool)
    if rng is not None:
        rng.shuffle(candidates)
    else:
        candidates.sort(key=mm.preference)
    for w in candidates[:CHECKED_CANDIDATES]:
        rec = _admitting(deps, w.lobby_id, language, entrant)
        if rec is not None:
            return rec
        pool.remove(w)
    return None


def _open_lobby(
    deps: Deps, language: str, entrant: mm.Seat, lane: int, carried: int = 0
) -> tuple[LobbyRecord, list[Write]]:
    """No waiting lobby was taken: sit in the lobby that an opener of the entrant's rating
    bucket (``rating // 200``) or of a neighbouring bucket, in ``lane``, points to, if it
    still waits and admits them; else open a new lobby and point the bucket's opener at it,
    saved with the seat on the opener's version, with the two neighbouring openers checked
    unchanged. Concurrent openers within 200 of each other (same bucket or adjacent ones, one
    lane) thus conflict, and the loser's retry sits in the winner's lobby instead of each
    waiting alone. The opener records when it opened and its streak of fast openings
    (``LobbyOpener.streak``, copied onto the lobby for ``_sustained``); a lane opened because
    a lobby showed sustained load carries that lobby's streak (``carried``), so joiners
    spreading over the lanes keep reading the signal. One BatchGetItem, plus a GetItem per
    opener found."""
    bucket = entrant.rating // mm.RATING_WINDOW
    neighbours = (bucket - 1, bucket + 1)
    openers = deps.store.get_openers(language, lane, (bucket, *neighbours))
    for b in (bucket, *neighbours):
        o = openers.get(b)
        if o is not None:
            current = _admitting(deps, o.lobby_id, language, entrant)
            if current is not None and current.lobby.party_id is None:
                return current, []
    now = deps.clock.now_ms()
    lobby = mm.Lobby(lobby_id=deps.ids(), language=language, seats=(), created_ms=now)
    before = openers.get(bucket)
    own = before or LobbyOpener(language, bucket, lobby.lobby_id, lane=lane)
    fast = before is not None and now - before.opened_ms <= FAST_FILL_MS
    own.streak = max(own.streak + 1 if fast else 0, carried)
    own.opened_ms = now
    own.lobby_id = lobby.lobby_id
    checks: list[Write] = [
        OpenerUnchanged(language, b, lane, openers[b].version if b in openers else 0)
        for b in neighbours
    ]
    return LobbyRecord(lobby, streak=own.streak), [own, *checks]


def leave(deps: Deps, req: Request, player_id: str) -> None:
    """``leave``: before the start, free the seat at no cost (rules page); after the start,
    ruling 3 (``tournament_change.leave_tournament``); a spectator stops watching.
    Raises NotQueuedError when the player is neither waiting, playing nor watching, and
    AlreadyPlayingError when the tournament started before the leave arrived."""
    player = deps.store.get_player(player_id)
    assert player is not None
    first = repeats.repeated(player, req, "leave")
    if first is not None:
        drop(deps, repeats.answer_again(deps, req, player, "leave", first))
        return
    if player.status is PlayerStatus.PLAYING or (
        player.status is PlayerStatus.IDLE and player.tournament_id is not None
    ):
        committed = leave_tournament(deps, player, reply_to=req)
        if committed is None:
            raise NotQueuedError("you are not in a lobby or tournament")
        if committed.refusal is not None:
            raise committed.refusal
        gone = committed.gone + parties_back(deps, committed)
        if not committed.events:  # already out: they stop watching
            gone += _stopped_watching(deps, req, committed.record, player_id)
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


def _stopped_watching(deps: Deps, req: Request, rec: TournamentRecord, player_id: str) -> Gone:
    """The answer to the ``leave`` of a player already out of a running tournament (a
    spectator, ruling 7, or a leaver still due its end, ruling 15): their own ``eliminated``
    again (round and reason as first sent), after which none of the tournament's messages
    come, ``tournament_end`` included."""
    me = rec.tournament.player(player_id)
    reason: Literal["lives", "left", "timeout"] = (
        "timeout" if me.timed_out else "left" if me.left else "lives"
    )
    box = Outbox(reply_to=req)
    box.add(
        [req.connection_id],
        out.EliminatedEvent(
            tournament_id=rec.tournament.tournament_id,
            round=me.out_round or rec.tournament.round_no,
            player_id=player_id,
            reason=reason,
        ),
    )
    return box.flush(deps.clock, deps.notifier)


def _unwatch(deps: Deps, player_id: str) -> Change[None]:
    """A spectator's player item forgets the tournament it watched."""
    p = deps.store.get_player(player_id)
    if p is None or p.tournament_id is None or p.status is not PlayerStatus.IDLE:
        return Change(None)
    p.tournament_id = None
    return Change(None, [p])
