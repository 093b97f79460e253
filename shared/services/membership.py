"""Service layer (building block): a player going out of their party (ruling 10) — by
``party_leave``, removed by the leader, or away past the reconnect window — and the party's
``party`` message to its members.

Imports no use case: ``parties`` (leave, remove, start) and ``deadlines`` (a reconnect deadline
that passed) build on it.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.domain import party as rules
from shared.protocol import outbound as out
from shared.services.change import Change, run
from shared.services.deps import Deps
from shared.services.model import (
    InviteDeleted,
    PartyDeleted,
    PartyRecord,
    Player,
    PlayerStatus,
    Write,
)
from shared.services.outbox import Gone, Outbox
from shared.services.presenter import party_event
from shared.services.snapshot import party_status

LEFT = out.PartyEvent(party_id=None, invite=None, leader=None, members=[], status="left")
"""What a player who is no longer in their party receives (left, removed, or away too long)."""


def broadcast(deps: Deps, rec: PartyRecord, box: Outbox, extra: Sequence[Player] = ()) -> None:
    """Queue the party's ``party`` message for every member (one BatchGetItem of them;
    ``extra``: members as this change saves them)."""
    members = deps.store.get_players(rec.party.members)
    for p in extra:
        members[p.player_id] = p
    event = party_event(rec, members, party_status(members))
    box.add([members[m].connection_id for m in rec.party.members if m in members], event)


def departure(deps: Deps, rec: PartyRecord | None, p: Player, box: Outbox) -> list[Write]:
    """``p`` goes out of ``rec``, their party (None: it is already gone): the writes to commit
    together, and the pushes queued in ``box`` — ``p`` gets ``party`` status ``left``, the
    members left the party as it is now (leadership passes to the longest-standing one).

    ``p.party_id`` is cleared; the party is saved without ``p`` on its version, or, when ``p``
    was its last member, deleted with its invite item: a closed party is nobody's, and
    deleting it (versioned, like the save it replaces: a ``party_join`` that resolved the invite
    just before finds no party to save into) keeps closed parties out of the table. Raises
    NotInPartyError if ``rec`` does not list ``p``."""
    p.party_id = None
    writes: list[Write] = [p]
    remaining = rules.leave(rec.party, p.player_id) if rec is not None else None
    if rec is not None and remaining is None:
        writes += [InviteDeleted(rec.party.invite), PartyDeleted(rec.party.party_id, rec.version)]
    box.add([p.connection_id], LEFT)
    if rec is not None and remaining is not None:
        rec.party = remaining
        writes.append(rec)
        broadcast(deps, rec, box)
    return writes


def leave_when_away(deps: Deps, player_id: str, seq: int) -> Gone:
    """Ruling 10: the reconnect window of the player's disconnect ``seq`` passed and they are
    still away: they go out of their party as ``party_leave`` would, so nobody blocks its
    start; their reconnect deadline is done with in the same commit. Nothing when they came
    back (or disconnected again: another ``seq``), or are in no party. A lobby seat or a
    tournament is the caller's to settle first (rulings 9 and 3); a player still seated is
    left there (a running tournament is not affected by a party, and a party lobby's seats are
    freed by ruling 9's own deadline). Returns the connections the pushes found gone."""

    def step() -> Change[None]:
        p = deps.store.get_player(player_id)
        if p is None or p.connected or p.disconnect_seq != seq or p.party_id is None:
            return Change(None)
        if p.status is PlayerStatus.IDLE:
            p.reconnect_deadline_ms = None
        rec = deps.store.get_party(p.party_id)
        if rec is not None and player_id not in rec.party.members:
            rec = None  # a stale reference: only the player's side to clear
        box = Outbox()
        return Change(None, departure(deps, rec, p, box), box)

    return run(deps, step).gone
