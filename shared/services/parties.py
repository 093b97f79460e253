"""Use cases: parties (ruling 10) — create, join by invite, leave, start, and the leader's
controls: remove a member, replace the invite.

The party item and each member's player item are saved together on their versions, so two
players racing for the 8th place cannot both get it.
"""

from __future__ import annotations

import math

from shared.domain import matchmaking as mm
from shared.domain import party as rules
from shared.domain.errors import (
    AlreadyInPartyError,
    AlreadyPlayingError,
    NotInPartyError,
    PartyMemberOfflineError,
    PartyMemberPlayingError,
    UnknownInviteError,
)
from shared.services import repeats
from shared.services.change import Change, run
from shared.services.deps import Deps
from shared.services.membership import broadcast as _broadcast
from shared.services.membership import departure
from shared.services.model import (
    InviteCreated,
    InviteDeleted,
    LobbyRecord,
    PartyRecord,
    Player,
    PlayerStatus,
    Write,
)
from shared.services.outbox import Outbox, Request
from shared.services.presence import drop
from shared.services.presenter import party_event
from shared.services.seating import free_seat, seat_of, seat_players


def create(deps: Deps, req: Request, player_id: str) -> None:
    """``party_create``: a new party led by the player, with an unguessable invite
    (256 bits); the reply is ``party``. Raises AlreadyInPartyError."""

    def step() -> Change[None]:
        p = deps.store.get_player(player_id)
        assert p is not None
        if p.party_id is not None:
            raise AlreadyInPartyError("you are already in a party")
        rec = PartyRecord(rules.create(deps.ids(), deps.secrets(), player_id))
        p.party_id = rec.party.party_id
        box = Outbox(reply_to=req)
        box.add([p.connection_id], party_event(rec, {player_id: p}, "open"))
        return Change(None, [rec, InviteCreated(rec.party.invite, rec.party.party_id), p], box)

    drop(deps, run(deps, step).gone)


def join(deps: Deps, req: Request, player_id: str, invite: str) -> None:
    """``party_join {invite}``: every member gets the new ``party``. Raises UnknownInviteError
    (also for malformed or forged invites), PartyFullError, AlreadyInPartyError,
    AlreadyPlayingError, and PartyMemberPlayingError while the party is in a lobby or
    tournament."""
    if not rules.is_well_formed_invite(invite):
        raise UnknownInviteError("no party has this invite")

    def step() -> Change[None]:
        party_id = deps.store.party_id_for_invite(invite)
        rec = deps.store.get_party(party_id) if party_id else None
        if rec is None:
            raise UnknownInviteError("no party has this invite")
        p = deps.store.get_player(player_id)
        assert p is not None
        if p.party_id == rec.party.party_id:
            raise AlreadyInPartyError("you are already in this party")
        if p.party_id is not None:
            raise AlreadyInPartyError("leave your party first")
        if p.status is not PlayerStatus.IDLE:
            raise AlreadyPlayingError("leave your lobby or tournament first")
        members = deps.store.get_players(rec.party.members)
        if any(m.status is not PlayerStatus.IDLE for m in members.values()):
            # The party sits in a lobby or tournament it started: a newcomer could not be
            # seated with it, so party and lobby would disagree. Join once it is back.
            raise PartyMemberPlayingError("the party is in a game; join when it is back")
        rec.party = rules.join(rec.party, player_id)
        p.party_id = rec.party.party_id
        box = Outbox(reply_to=req)
        _broadcast(deps, rec, box, [p])
        return Change(None, [rec, p], box)

    drop(deps, run(deps, step).gone)


def leave(deps: Deps, req: Request, player_id: str) -> None:
    """``party_leave``: leadership passes to the longest-standing member; the last one out
    closes the party (its items are deleted: ``membership.departure``). A member waiting in
    the party's lobby also gives up that seat (a party lobby seats party members and solo
    fillers only); a running tournament is not affected. Raises NotInPartyError."""

    def step() -> Change[str | None]:
        p = deps.store.get_player(player_id)
        assert p is not None
        if p.party_id is None:
            raise NotInPartyError("you are not in a party")
        rec = deps.store.get_party(p.party_id)
        seated = p.lobby_id if p.status is PlayerStatus.QUEUED and p.lobby_id else None
        box = Outbox(reply_to=req)
        return Change(seated, departure(deps, rec, p, box), box)

    done = run(deps, step)
    gone = done.gone
    if done.value:
        lobby = deps.store.get_lobby(done.value)
        if lobby is not None and lobby.lobby.party_id is not None:
            gone += free_seat(deps, player_id).gone
    drop(deps, gone)


def _own_party(deps: Deps, player_id: str) -> tuple[Player, PartyRecord]:
    """The player and their party, read. Raises NotInPartyError."""
    p = deps.store.get_player(player_id)
    assert p is not None
    rec = deps.store.get_party(p.party_id) if p.party_id is not None else None
    if rec is None:
        raise NotInPartyError("you are not in a party")
    return p, rec


def remove(deps: Deps, req: Request, player_id: str, member_id: str) -> None:
    """``party_remove {player_id}``: the leader removes a member (ruling 10), who gets
    ``party`` status ``left``; the others, the leader first (the reply), the party without
    them. Only while the party is idle: while it waits in a lobby or plays, every member holds
    a seat there. Raises NotInPartyError (the sender, or the named player, is not in the
    party), NotPartyLeaderError, PartyMemberPlayingError, and ``rule_violation`` when the
    leader names themselves (``party_leave`` is for that)."""

    def step() -> Change[None]:
        _, rec = _own_party(deps, player_id)
        members = deps.store.get_players(rec.party.members)
        busy = [m for m, x in members.items() if x.status is not PlayerStatus.IDLE]
        without = rules.remove(rec.party, player_id, member_id, busy)
        box = Outbox(reply_to=req)
        target = members.get(member_id)
        if target is None or target.party_id != rec.party.party_id:
            # a member whose profile is gone or points elsewhere: only the party to mend
            rec.party = without
            _broadcast(deps, rec, box)
            return Change(None, [rec], box)
        return Change(None, departure(deps, rec, target, box), box)

    drop(deps, run(deps, step).gone)


def reset_invite(deps: Deps, req: Request, player_id: str) -> None:
    """``party_reset_invite``: the leader replaces the party's invite with a new unguessable
    one (256 bits, like ``create``); the old token answers ``unknown_invite`` from then on: its
    invite item is deleted in the same transaction as the party's versioned save and the new
    invite item's create-only put. Every member gets ``party`` with the new invite (the leader
    first: the reply). Raises NotInPartyError, NotPartyLeaderError."""

    def step() -> Change[None]:
        _, rec = _own_party(deps, player_id)
        old = rec.party.invite
        rec.party = rules.reset_invite(rec.party, player_id, deps.secrets())
        box = Outbox(reply_to=req)
        _broadcast(deps, rec, box)
        writes: list[Write] = [
            rec,
            InviteDeleted(old),
            InviteCreated(rec.party.invite, rec.party.party_id),
        ]
        return Change(None, writes, box)

    drop(deps, run(deps, step).gone)


def _offline_refusal(away: list[Player], now_ms: int) -> PartyMemberOfflineError:
    """``party_member_offline``, saying when the start can happen: each offline member leaves
    the party at their reconnect deadline unless they come back (ruling 10)."""
    last = max(p.reconnect_deadline_ms or now_ms for p in away)
    seconds = max(1, math.ceil((last - now_ms) / 1000))
    who = "a party member is" if len(away) == 1 else f"{len(away)} party members are"
    return PartyMemberOfflineError(
        f"{who} not connected; unless they come back, they leave the party within {seconds} s "
        "and the party can start without them"
    )


def start(deps: Deps, req: Request, player_id: str, language_code: str) -> None:
    """``party_start {language}``: the leader seats the whole party in a new lobby that solo
    players then fill (ruling 8, 10). Raises NotInPartyError, NotPartyLeaderError,
    PartyMemberPlayingError (a member still in a lobby or tournament),
    PartyMemberOfflineError (a member offline within their reconnect window: the message says
    within how long they leave the party), UnknownLanguageError. A member offline past the
    window leaves the party with this start, as their window's end would have done."""
    deps.lexicon.language(language_code)

    def step() -> Change[None]:
        p = deps.store.get_player(player_id)
        assert p is not None
        first = repeats.repeated(p, req, "party_start")
        if first is not None:
            again.append((p, first))
            return Change(None)  # ruling 18: answered again (below), nothing written
        if p.party_id is None:
            raise NotInPartyError("you are not in a party")
        rec = deps.store.get_party(p.party_id)
        if rec is None:
            raise NotInPartyError("you are not in a party")
        members = deps.store.get_players(rec.party.members)
        busy = [m for m, x in members.items() if x.status is not PlayerStatus.IDLE]
        rules.check_start(rec.party, player_id, busy)
        now = deps.clock.now_ms()
        offline = [x for x in members.values() if not x.connected and x.player_id != player_id]
        away = [x for x in offline if (x.reconnect_deadline_ms or now) > now]
        if away:
            # an offline member would hold a seat and skip every turn: start when everyone
            # is back, or once their reconnect window closed and they left the party
            raise _offline_refusal(away, now)
        for x in offline:
            # Past their window (its timer not yet applied), or gone offline with no window
            # running (before one was kept for party members): out of the party now, as the
            # window's end would do (membership.leave_when_away).
            remaining = rules.leave(rec.party, x.player_id)
            assert remaining is not None  # the leader stays
            rec.party = remaining
            x.party_id = None
            x.reconnect_deadline_ms = None  # done with: they are idle and in no party now
        seated = [members[m] for m in rec.party.members]
        lobby = LobbyRecord(
            mm.party_lobby(
                deps.ids(),
                language_code,
                [seat_of(m, rec.party.party_id) for m in seated],
                rec.party.party_id,
                deps.clock.now_ms(),
            )
        )
        for m in seated:
            m.tournament_id = None
            if m.player_id == player_id:
                repeats.remember(m, req, "party_start", repeats.LOBBY + lobby.lobby.lobby_id)
        rec.language = language_code
        rec.lobby_id = lobby.lobby.lobby_id
        box = Outbox(reply_to=req)
        writes = [rec, *seat_players(deps, lobby, seated, box, actor_id=player_id), *offline]
        _broadcast(deps, rec, box, seated)
        return Change(None, writes, box)

    again: list[tuple[Player, str]] = []
    gone = run(deps, step).gone
    if again:
        player, ref = again[-1]
        gone += repeats.answer_again(deps, req, player, "party_start", ref)
    drop(deps, gone)
