"""Service layer: changing a running tournament — guess, leave, deadlines, connections.

Every change follows one path (``change_tournament``): read the tournament item (strongly
consistent), let the domain decide, commit with a condition on the item's ``version`` (plus the
rating writes when places were fixed), then push and schedule. Two concurrent changes — a guess
and its turn deadline, two duels ending together, a leave — cannot both commit on the same
version: the loser re-reads and re-decides (so the round closes exactly once, and a turn has
exactly one outcome).
"""

from __future__ import annotations

from collections.abc import Callable

from shared.domain import events as ev
from shared.domain.duel import Duel
from shared.domain.errors import (
    AlreadyEliminatedError,
    DomainError,
    DuelNotStartedError,
    DuelOverError,
    NotInDuelError,
    NotInTournamentError,
    NotYourTurnError,
    TournamentOverError,
    TurnOverError,
)
from shared.domain.tournament import Dealer, Entrant, Phase, Tournament
from shared.domain.words import check_guess
from shared.services.base import Deps, Outbox, retrying
from shared.services.errors import NotFoundError
from shared.services.model import (
    Lobby,
    Player,
    PlayerStatus,
    RatingApplied,
    TournamentRecord,
    Write,
)
from shared.services.presenter import present
from shared.services.snapshot import party_snapshot

Decision = Callable[[TournamentRecord, int, Dealer], tuple[Tournament, list[ev.Event]]]


class RefusedWithChangesError(Exception):
    """Internal: the domain refused the action, but time had moved the tournament on (skips
    applied by ``expire``) — commit those, then report the refusal."""

    def __init__(self, error: DomainError) -> None:
        self.error = error


def tournament_id_of_duel(duel_id: str) -> str:
    """Duel ids are ``{tournament_id}.{round}.{index}``; raises NotInDuelError otherwise."""
    tid, sep, rest = duel_id.partition(".")
    if not sep or not tid or rest.count(".") != 1:
        raise NotInDuelError("no such duel")
    return tid


def change_tournament(
    deps: Deps,
    tournament_id: str,
    decide: Decision,
    *,
    extra: Callable[[TournamentRecord], list[Write]] | None = None,
    personal: dict[str, str | None] | None = None,
) -> TournamentRecord | None:
    """Load, decide, commit (retrying on conflicts), then push and schedule.

    ``decide(record, now_ms, dealer)`` returns the new tournament and its events; it may
    mutate ``record.connections``. Returns the committed record, or None when nothing changed.
    Raises the domain's refusal (after committing any deadline that ``expire`` applied).
    """
    box = Outbox()
    refusal: list[DomainError] = []

    def attempt() -> TournamentRecord | None:
        box.messages.clear()
        box.timers.clear()
        refusal.clear()
        rec = deps.store.get_tournament(tournament_id)
        if rec is None:
            raise NotFoundError("no such tournament")
        before = rec.tournament
        conns_before = dict(rec.connections)
        now = deps.clock.now_ms()
        dealer = deps.dealer(before.language)
        try:
            after, events = decide(rec, now, dealer)
        except RefusedWithChangesError as r:
            refusal.append(r.error)
            after, events = before.expire(now, dealer)
        if after is before and not events and rec.connections == conns_before:
            return None
        rec.tournament = after
        extra_writes = extra(rec) if extra is not None else []
        loaded = {w.player_id: w for w in extra_writes if isinstance(w, Player)}
        own = dict(personal or {})
        rating = _rating_writes(deps, rec, events, now, loaded, own)
        if any(isinstance(e, ev.TournamentEnded) for e in events):
            _away_connections(deps, rec, loaded, own)
        writes: list[Write] = [rec, *extra_writes]
        writes += [w for w in rating if not (isinstance(w, Player) and w.player_id in loaded)]
        deps.store.commit(writes)
        present(rec, events, box, deps.lexicon, own)
        committed[:] = events
        parties[:] = _parties_placed(rec, events)
        ended[:] = [own] if parties else []
        return rec

    ended: list[dict[str, str | None]] = []
    parties: list[str] = []
    committed: list[ev.Event] = []
    rec = retrying(deps, attempt)
    _count(deps, committed)
    if rec is not None and ended:
        _back_to_parties(deps, rec, ended[0], box, parties)
    box.flush(deps)
    if refusal:
        raise refusal[0]
    return rec


def _count(deps: Deps, events: list[ev.Event]) -> None:
    """Operational metrics of what a committed change did (issue 5 item 6)."""
    for e in events:
        if isinstance(e, ev.TurnPlayed):
            deps.metric("Skips" if e.row.skipped else "Guesses", 1)
        elif isinstance(e, ev.DuelEnded):
            deps.metric("DuelsEnded", 1)
        elif isinstance(e, ev.RoundEnded):
            deps.metric("RoundsClosed", 1)
        elif isinstance(e, ev.TournamentEnded):
            deps.metric("TournamentsEnded", 1)
        elif isinstance(e, ev.PlayerEliminated):
            deps.metric("Eliminations", 1)


def _parties_placed(rec: TournamentRecord, events: list[ev.Event]) -> list[str]:
    """The parties with a member whose place (and rating) the events fixed."""
    placed = [
        p.player_id
        for e in events
        if isinstance(e, ev.RoundEnded | ev.TournamentEnded)
        for p in e.placed
    ]
    return sorted({rec.party_ids[pid] for pid in placed if pid in rec.party_ids})


def _back_to_parties(
    deps: Deps,
    rec: TournamentRecord,
    personal: dict[str, str | None],
    box: Outbox,
    party_ids: list[str],
) -> None:
    """Ruling 10: after the tournament the members are back in their party — each party's
    members get its ``party`` message (status ``open`` now that nobody plays). Earlier, when a
    round fixes a member's place, the party's message carries that member's new rating."""
    for party_id in party_ids:
        event = party_snapshot(deps, party_id)
        if event is None:
            continue
        members = [pid for pid, party in rec.party_ids.items() if party == party_id]
        box.add([rec.connections.get(m) or personal.get(m) for m in members], event)


def _away_connections(
    deps: Deps, rec: TournamentRecord, loaded: dict[str, Player], personal: dict[str, str | None]
) -> None:
    """Ruling 15: ``tournament_end`` reaches every player of the tournament still connected —
    also those whose connection the tournament no longer holds (leavers, timed-out players
    who came back, spectators who stopped watching) — unless they sit in another lobby or
    tournament by now. Their current connections go into ``personal``; one BatchGetItem at
    the end, only when some connection is missing."""
    away = [pid for pid, cid in rec.connections.items() if not cid and not personal.get(pid)]
    if not away:
        return
    unread = [pid for pid in away if pid not in loaded]
    found = {**(deps.store.get_players(unread) if unread else {}), **loaded}
    for pid in away:
        p = found.get(pid)
        if p is not None and p.connected and p.status is PlayerStatus.IDLE:
            personal[pid] = p.connection_id


def _rating_writes(
    deps: Deps,
    rec: TournamentRecord,
    events: list[ev.Event],
    now: int,
    loaded: dict[str, Player],
    personal: dict[str, str | None],
) -> list[Write]:
    """Rulings 1-2: each placed player's rating changes exactly once; players still seated in
    this tournament (out by lives, or the winners) go back to idle in the same commit.
    Leavers' current connections go into ``personal`` so they still get their ``rating``."""
    placed: list[ev.Placed] = []
    for e in events:
        if isinstance(e, ev.RoundEnded):
            placed += e.placed
        elif isinstance(e, ev.TournamentEnded):
            already = {p.player_id for p in placed}
            placed += [
                p
                for p in e.placed
                if p.player_id not in already
                and rec.tournament.player(p.player_id).out_round is None
            ]
    if not placed:
        return []
    tid = rec.tournament.tournament_id
    missing = [p.player_id for p in placed if p.player_id not in loaded]
    players = {**(deps.store.get_players(missing) if missing else {}), **loaded}
    writes: list[Write] = []
    for p in placed:
        snapshot = rec.tournament.player(p.player_id).rating
        player = players.get(p.player_id)
        if player is not None and player.connected and not rec.connections.get(p.player_id):
            personal.setdefault(p.player_id, player.connection_id)
        seated = (
            player is not None
            and player.tournament_id == tid
            and (player.status is PlayerStatus.PLAYING or p.player_id in loaded)
        )
        if seated and player is not None:
            player.status = PlayerStatus.IDLE
            player.rating += p.change
            writes.append(player)
        writes.append(
            RatingApplied(
                p.player_id, tid, p.place, p.change, snapshot, update_player=not seated, at_ms=now
            )
        )
    return writes


# ------------------------------------------------------------------------------ use cases
def guess(
    deps: Deps,
    connection_id: str,
    duel_id: str,
    raw_word: str,
    received_ms: int | None = None,
) -> None:
    """A duelist's guess (rules page "Turns and the clock"; ruling 5).

    The player is identified by the connection id inside the tournament item, so a guess costs
    one read and one conditional write (plus pushes).

    The turn is judged by ``received_ms``, when API Gateway received the message
    (``requestContext.requestTimeEpoch``, set by the gateway, never by the client; None: now):
    a guess received before the turn deadline counts even when it is handled after it — the
    skip waits ``Timing.skip_grace_ms`` for it —, one received at or after the deadline is
    refused ``TurnOverError`` (``turn_over``), as is one whose turn was already skipped. The
    next turn's deadline starts when the guess is applied (now), so the opponent's 30 s start
    when they can see the row.

    Raises NotInDuelError, NotInTournamentError, TurnOverError, the duel's refusals, and the
    word checks (InvalidLettersError, WrongLengthError, NotInWordListError) — none changes
    anything, except that deadlines already due are applied first.
    """
    tid = tournament_id_of_duel(duel_id)

    def decide(
        rec: TournamentRecord, now: int, dealer: Dealer
    ) -> tuple[Tournament, list[ev.Event]]:
        player_id = _player_by_connection(rec, connection_id)
        received = now if received_ms is None else min(received_ms, now)
        # What was due when the guess arrived, at the latest (a later skip waits for it).
        t, events = rec.tournament.expire(min(now, received + dealer.skip_grace_ms), dealer)
        try:
            # State and turn checks first: an out-of-turn player learns that, not "not a word".
            duel = _precheck(t, player_id, duel_id, now, received)
            language = deps.lexicon.language(t.language)
            word, tiles = check_guess(
                language, deps.lexicon.allowed(t.language, duel.length), raw_word, duel.length
            )
            t2, more = t.guess(player_id, duel_id, word, tiles, now, dealer)
        except DomainError as err:
            if events:
                raise RefusedWithChangesError(err) from err
            raise
        return t2, events + more

    try:
        change_tournament(deps, tid, decide)
    except NotFoundError as err:  # a forged duel id naming no tournament: same as any other
        raise NotInDuelError("no such duel") from err


def _precheck(t: Tournament, player_id: str, duel_id: str, now: int, received: int) -> Duel:
    """The refusals that do not depend on the word, most telling first: the tournament is
    over, the player is out, the duel is not theirs (or not this round's), it is over, it has
    not started, the player's turn ran out (received at or after its deadline, or already
    skipped), it is the opponent's turn. Returns the duel."""
    if t.over:
        raise TournamentOverError("the tournament is over")
    if not t.player(player_id).alive:
        raise AlreadyEliminatedError("you are out of this tournament")
    d = t.duel(duel_id)
    if player_id not in d.players:
        raise NotInDuelError("this is not your duel")
    if d.over:
        raise DuelOverError("the duel is over")
    if not d.started(received) or t.phase is Phase.INTRO:
        raise DuelNotStartedError("the round intro is still running")
    if d.next_player == player_id and received >= d.turn_deadline_ms:
        raise TurnOverError("your time for this turn ran out")
    if d.next_player != player_id:
        if d.rows and d.rows[-1].player == player_id and d.rows[-1].skipped:
            raise TurnOverError("your turn was skipped: the time ran out")
        raise NotYourTurnError("it is your opponent's turn")
    return d


def _player_by_connection(rec: TournamentRecord, connection_id: str) -> str:
    for pid, cid in rec.connections.items():
        if cid == connection_id:
            return pid
    raise NotInTournamentError("you are not playing in this tournament")


def leave_tournament(
    deps: Deps, player: Player, reason: str = "left", *, only_if_disconnect_seq: int | None = None
) -> None:
    """Ruling 3: leaving after the start (or a missed reconnect deadline, ``reason="timeout"``
    with the deadline's ``seq``) eliminates at once and loses the current duel. The player is
    released (idle) in the same commit — which is conditional on the player's version too, so a
    resume racing the deadline makes one of the two lose and re-decide."""
    tid = player.tournament_id
    if tid is None:
        return
    fresh: list[Player] = []
    personal: dict[str, str | None] = {}

    def decide(
        rec: TournamentRecord, now: int, dealer: Dealer
    ) -> tuple[Tournament, list[ev.Event]]:
        fresh.clear()
        p = deps.store.get_player(player.player_id)
        if p is None or p.tournament_id != tid:
            return rec.tournament, []
        if only_if_disconnect_seq is not None and (
            p.connected or p.disconnect_seq != only_if_disconnect_seq
        ):
            return rec.tournament, []
        fresh.append(p)
        t, events = rec.tournament.expire(now, dealer)
        t2, more = t.leave(player.player_id, now, dealer, reason=reason)
        # the leaver stops receiving this tournament's messages, except their own
        # ``eliminated`` now and their ``rating`` when the round ends
        rec.connections[player.player_id] = None
        personal[player.player_id] = p.connection_id if p.connected else None
        return t2, events + more

    def release(rec: TournamentRecord) -> list[Write]:
        if not fresh:
            return []
        p = fresh[0]
        if p.status is PlayerStatus.PLAYING:
            p.status = PlayerStatus.IDLE
        p.reconnect_deadline_ms = None
        return [p]

    change_tournament(deps, tid, decide, extra=release, personal=personal)


def set_connection(
    deps: Deps,
    player: Player,
    connection_id: str | None,
    reconnect_deadline_ms: int | None,
    *,
    closed: str | None = None,
) -> None:
    """Record a player's connection in their tournament (disconnect, or resume).

    ``closed``: for a disconnect (``connection_id`` None), the connection that closed —
    nothing changes unless the tournament still holds that one (a resume may have bound a new
    connection between the disconnect's player write and this one)."""
    tid = player.tournament_id
    if tid is None:
        return

    def decide(
        rec: TournamentRecord, now: int, dealer: Dealer
    ) -> tuple[Tournament, list[ev.Event]]:
        t = rec.tournament
        p = t.player(player.player_id)
        if p.left or t.over:
            # nothing left to push: the 8 disconnects that follow a tournament's end need not
            # contend for its item
            return t, []
        if closed is not None and rec.connections.get(player.player_id) != closed:
            return t, []  # already replaced by a resume: the player is here
        rec.connections[player.player_id] = connection_id
        return t.set_connected(player.player_id, connection_id is not None, reconnect_deadline_ms)

    try:
        change_tournament(deps, tid, decide)
    except (NotFoundError, NotInTournamentError):
        return


def start_tournament(
    deps: Deps, lobby: Lobby, players: dict[str, Player], now: int
) -> tuple[TournamentRecord, list[ev.Event]]:
    """Ruling 8: the lobby's 8th seat filled. Builds the tournament (ratings snapshotted,
    ruling 1). Every seat's holder is connected and alive (``lobbies.seat_players`` released
    the absent ones first, ruling 9)."""
    entrants = []
    for s in lobby.seats:
        p = players[s.player_id]
        entrants.append(
            Entrant(
                s.player_id,
                p.nickname,
                p.rating,
                connected=p.connected,
                reconnect_deadline_ms=None if p.connected else p.reconnect_deadline_ms,
            )
        )
    tid = deps.new_id()
    t, events = Tournament.start(tid, lobby.language, entrants, now, deps.dealer(lobby.language))
    rec = TournamentRecord(
        tournament=t,
        connections={s.player_id: lobby.connections.get(s.player_id) for s in lobby.seats},
        party_ids={s.player_id: s.party_id for s in lobby.seats if s.party_id},
    )
    return rec, events
