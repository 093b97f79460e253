"""Service layer (building block): changing a tournament item — the one write path of a
running tournament, and the changes other use cases make to it (leave, connection, start).

Every change follows one path (``change_tournament``): read the tournament item (strongly
consistent), let a decision function decide (the domain's rules), commit with a condition on
the item's ``version`` (plus the rating writes when places were fixed), then push and
schedule (``shared.services.change.run``). Two concurrent changes — a guess and its turn
deadline, two duels ending together, a leave — cannot both commit on the same version: the
loser re-reads and re-decides (so the round closes exactly once, and a turn has exactly one
outcome).

Imports no use case. Reactions in other aggregates (the party screens after places are fixed,
``parties_back``; disconnecting connections found gone) are the caller's, after the commit.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from shared.domain import events as ev
from shared.domain import fair_play
from shared.domain.errors import DomainError, NotInTournamentError, NotQueuedError
from shared.domain.tournament import Dealer, Entrant, Tournament
from shared.services import repeats
from shared.services.change import Change, run
from shared.services.deps import Deps
from shared.services.errors import NotFoundError
from shared.services.model import (
    LobbyRecord,
    Player,
    PlayerStatus,
    RatingApplied,
    TournamentRecord,
    Write,
)
from shared.services.outbox import Gone, Outbox, Request
from shared.services.presenter import present
from shared.services.snapshot import party_snapshot

logger = logging.getLogger(__name__)


@dataclass
class Decision:
    """What a decision function decided for a tournament it was handed (with ``now`` and a
    ``Dealer``): the new ``tournament`` and its ``events``; other records saved in the same
    commit (``writes``, e.g. a leaver's player item); ``personal`` connections of players the
    tournament no longer holds but who still get what is about them alone (a leaver's
    ``eliminated`` and ``rating``); and the ``refusal`` of the player's action, if any
    (committed changes are still pushed; the caller reports the refusal)."""

    tournament: Tournament
    events: Sequence[ev.Event] = ()
    writes: Sequence[Write] = ()
    personal: Mapping[str, str | None] = field(default_factory=dict)
    refusal: DomainError | None = None


Decide = Callable[[TournamentRecord, int, Dealer], Decision]
"""``(record, now_ms, dealer) -> Decision``; may change ``record.connections``."""


@dataclass(frozen=True)
class Committed:
    """A tournament change as committed: the ``record`` (as read, when nothing ``changed``),
    its ``events``, the ``personal`` connections it pushed to, the ``refusal`` of the decision,
    and the connections the pushes found ``gone``."""

    record: TournamentRecord
    events: tuple[ev.Event, ...]
    changed: bool
    personal: Mapping[str, str | None] = field(default_factory=dict)
    refusal: DomainError | None = None
    gone: Gone = ()


def change_tournament(
    deps: Deps, tournament_id: str, decide: Decide, *, reply_to: Request | None = None
) -> Committed:
    """Load, decide, commit (retrying on conflicts), then push and schedule.

    ``reply_to``: the request this change answers (its ``request_id`` is echoed in the first
    message to its connection). Raises NotFoundError when there is no such tournament, and
    what the store raises past the retries (``TryAgainError``); a refusal of the decision is
    returned in ``Committed.refusal``, never raised here.
    """

    def step() -> Change[Committed]:
        rec = deps.store.get_tournament(tournament_id)
        if rec is None:
            raise NotFoundError("no such tournament")
        before = rec.tournament
        connections_before = dict(rec.connections)
        now = deps.clock.now_ms()
        decision = decide(rec, now, deps.dealer(before.language))
        events = tuple(decision.events)
        if decision.tournament is before and not events and rec.connections == connections_before:
            # nothing changed (the decision's other writes go only with a change)
            return Change(Committed(rec, (), changed=False, refusal=decision.refusal))
        rec.tournament = decision.tournament
        _watch_fresh(deps, rec, events)
        loaded = {w.player_id: w for w in decision.writes if isinstance(w, Player)}
        personal = dict(decision.personal)
        rating = _rating_writes(deps, rec, events, now, loaded, personal)
        if any(isinstance(e, ev.TournamentEnded) for e in events):
            _away_connections(deps, rec, loaded, personal)
        writes: list[Write] = [rec, *decision.writes]
        writes += [w for w in rating if not (isinstance(w, Player) and w.player_id in loaded)]
        box = Outbox(reply_to=reply_to)
        present(rec, list(events), box, deps.lexicon, personal, now_ms=now)
        committed = Committed(rec, events, True, personal, decision.refusal)
        return Change(committed, writes, box)

    done = run(deps, step)
    _count(deps, done.value.events)
    if done.value.record.flagged and any(
        isinstance(e, ev.TournamentEnded) for e in done.value.events
    ):
        deps.metrics("FlaggedTournaments", 1)
        logger.warning(
            "tournament flagged: most seats were fresh players who never played (ruling 17)",
            extra={"tournament_id": tournament_id, "fresh_unplayed": len(done.value.record.fresh)},
        )
    return dataclasses.replace(done.value, gone=done.gone)


def _watch_fresh(deps: Deps, rec: TournamentRecord, events: Sequence[ev.Event]) -> None:
    """Ruling 17, in the write the change makes anyway (no extra read or write): a fresh
    player's own guess takes them off ``rec.fresh``; when the tournament ends, it is flagged
    if at least ``FairPlay.flag_seats`` of the players out (everyone but the winners) are
    fresh players who never played."""
    if not rec.fresh:
        return
    played = {e.row.player for e in events if isinstance(e, ev.TurnPlayed) and not e.row.skipped}
    if played & rec.fresh:
        rec.fresh = rec.fresh - played
    for e in events:
        if isinstance(e, ev.TournamentEnded):
            t = rec.tournament
            out = [p.player_id for p in t.players if p.place != 1]
            rec.flagged = fair_play.farmed(rec.fresh, out, deps.fair_play.flag_seats)


def _count(deps: Deps, events: Sequence[ev.Event]) -> None:
    """Operational metrics of what a committed change did."""
    for e in events:
        if isinstance(e, ev.TurnPlayed):
            deps.metrics("Skips" if e.row.skipped else "Guesses", 1)
        elif isinstance(e, ev.DuelEnded):
            deps.metrics("DuelsEnded", 1)
        elif isinstance(e, ev.RoundEnded):
            deps.metrics("RoundsClosed", 1)
        elif isinstance(e, ev.TournamentEnded):
            deps.metrics("TournamentsEnded", 1)
        elif isinstance(e, ev.PlayerEliminated):
            deps.metrics("Eliminations", 1)


def parties_back(deps: Deps, committed: Committed) -> Gone:
    """Ruling 10, after a committed change: when it fixed the place (and rating) of party
    members, each such party's members get its ``party`` message — with their new ratings,
    and status ``open`` again once nobody of the party plays (after the tournament the members
    are back in their party). Reads each such party and its members; pushes."""
    rec = committed.record
    placed = [
        p.player_id
        for e in committed.events
        if isinstance(e, ev.RoundEnded | ev.TournamentEnded)
        for p in e.placed
    ]
    party_ids = sorted({rec.party_ids[pid] for pid in placed if pid in rec.party_ids})
    if not party_ids:
        return ()
    box = Outbox()
    for party_id in party_ids:
        event = party_snapshot(deps, party_id)
        if event is None:
            continue
        members = [pid for pid, party in rec.party_ids.items() if party == party_id]
        box.add([rec.connections.get(m) or committed.personal.get(m) for m in members], event)
    return box.flush(deps.clock, deps.notifier)


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
    events: Sequence[ev.Event],
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


# ------------------------------------------------------------------ changes other use cases make
def leave_tournament(
    deps: Deps,
    player: Player,
    reason: Literal["left", "timeout"] = "left",
    *,
    only_if_disconnect_seq: int | None = None,
    reply_to: Request | None = None,
) -> Committed | None:
    """Ruling 3: leaving after the start (or a missed reconnect deadline, ``reason="timeout"``
    with the deadline's ``seq``) eliminates at once and loses the current duel. The player is
    released (idle) in the same commit — which is conditional on the player's version too, so a
    resume racing the deadline makes one of the two lose and re-decide. None when the player
    has no tournament.

    With ``reply_to`` (the player's own ``leave``) every outcome can be answered: a tournament
    over, or one the player is not in, gives ``Committed.refusal`` ``not_queued`` and changes
    nothing; for a player already out (a spectator, ruling 7, or a leaver still due the end,
    ruling 15) the change has no events, and the caller answers it."""
    tid = player.tournament_id
    if tid is None:
        return None

    def decide(rec: TournamentRecord, now: int, dealer: Dealer) -> Decision:
        p = deps.store.get_player(player.player_id)
        if reply_to is not None and (p is None or p.tournament_id != tid or rec.tournament.over):
            refusal = NotQueuedError("you are not in a lobby or a running tournament")
            return Decision(rec.tournament, refusal=refusal)
        if p is None or p.tournament_id != tid:
            return Decision(rec.tournament)
        if only_if_disconnect_seq is not None and (
            p.connected or p.disconnect_seq != only_if_disconnect_seq
        ):
            return Decision(rec.tournament)
        t, events = rec.tournament.expire(now, dealer)
        t2, more = t.leave(player.player_id, now, dealer, reason=reason)
        # the leaver stops receiving this tournament's messages, except their own
        # ``eliminated`` now and their ``rating`` when the round ends
        rec.connections[player.player_id] = None
        if p.status is PlayerStatus.PLAYING:
            p.status = PlayerStatus.IDLE
        p.reconnect_deadline_ms = None
        if reason == "left":
            repeats.remember(p, reply_to, "leave", repeats.TOURNAMENT + tid)
        return Decision(
            t2,
            [*events, *more],
            writes=[p],
            personal={player.player_id: p.connection_id if p.connected else None},
        )

    return change_tournament(deps, tid, decide, reply_to=reply_to)


def set_connection(
    deps: Deps,
    player: Player,
    connection_id: str | None,
    reconnect_deadline_ms: int | None,
    *,
    closed: str | None = None,
) -> Gone:
    """Record a player's connection in their tournament (disconnect, or resume) and tell the
    others (``player_status``).

    ``closed``: for a disconnect (``connection_id`` None), the connection that closed —
    nothing changes unless the tournament still holds that one (a resume may have bound a new
    connection between the disconnect's player write and this one)."""
    tid = player.tournament_id
    if tid is None:
        return ()

    def decide(rec: TournamentRecord, now: int, dealer: Dealer) -> Decision:
        t = rec.tournament
        p = t.player(player.player_id)
        if p.left or t.over:
            # nothing left to push: the 8 disconnects that follow a tournament's end need not
            # contend for its item
            return Decision(t)
        if closed is not None and rec.connections.get(player.player_id) != closed:
            return Decision(t)  # already replaced by a resume: the player is here
        rec.connections[player.player_id] = connection_id
        t2, events = t.set_connected(
            player.player_id, connection_id is not None, reconnect_deadline_ms
        )
        return Decision(t2, events)

    try:
        return change_tournament(deps, tid, decide).gone
    except (NotFoundError, NotInTournamentError):
        return ()


def new_tournament(
    deps: Deps, rec: LobbyRecord, players: dict[str, Player], now: int
) -> tuple[TournamentRecord, list[ev.Event]]:
    """Ruling 8: the lobby's 8th seat filled. Builds the tournament record (ratings
    snapshotted, ruling 1) for the caller to commit with the seats. Every seat's holder is
    connected and alive (``seating.seat_players`` released the absent ones first, ruling 9)."""
    lobby = rec.lobby
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
    tid = deps.ids()
    t, events = Tournament.start(tid, lobby.language, entrants, now, deps.dealer(lobby.language))
    created = {s.player_id: players[s.player_id].created_ms for s in lobby.seats}
    record = TournamentRecord(
        tournament=t,
        connections={s.player_id: rec.connections.get(s.player_id) for s in lobby.seats},
        party_ids={s.player_id: s.party_id for s in lobby.seats if s.party_id},
        fresh=fair_play.fresh_seats(created, now, deps.fair_play.fresh_ms),
    )
    return record, events
