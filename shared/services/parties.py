"""Use cases: parties (ruling 10) — create, join by invite, leave, start.

The party item and each member's player item are saved together on their versions, so two
players racing for the 8th place cannot both get it.
"""

from __future__ import annotations

from collections.abc import Sequence

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
from shared.protocol import outbound as out
from shared.services.change import Change, run
from shared.services.deps import Deps
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
from shared.services.snapshot import party_status


def _broadcast(deps: Deps, rec: PartyRecord, box: Outbox, extra: Sequence[Player] = ()) -> None:
    """Queue the party's ``party`` message for every member (one BatchGetItem of them;
    ``extra``: members as this change saves them)."""
    members = deps.store.get_players(rec.party.members)
    for p in extra:
        members[p.player_id] = p
    event = party_event(rec, members, party_status(members))
    box.add([members[m].connection_id for m in rec.party.members if m in members], event)


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
    closes the party. A member waiting in the party's lobby also gives up that seat (a party
    lobby seats party members and solo fillers only); a running tournament is not affected.
    Raises NotInPartyError."""

    def step() -> Change[str | None]:
        p = deps.store.get_player(player_id)
        assert p is not None
        if p.party_id is None:
            raise NotInPartyError("you are not in a party")
        rec = deps.store.get_party(p.party_id)
        p.party_id = None
        writes: list[Write] = [p]
        if rec is not None:
            remaining = rules.leave(rec.party, player_id)
            if remaining is None:
                # The party closes: its invite goes. The item itself stays (nobody refers to
                # it any more) but is saved on its version all the same, so a party_join that
                # resolved the invite just before cannot still add itself to a closed party.
                writes += [InviteDeleted(rec.party.invite), rec]
            else:
                rec.party = remaining
                writes.append(rec)
        box = Outbox(reply_to=req)
        box.add(
            [p.connection_id],
            out.PartyEvent(party_id=None, invite=None, leader=None, members=[], status="left"),
        )
        if rec is not None and p.player_id not in rec.party.members:
            _broadcast(deps, rec, box)
        seated = p.lobby_id if p.status is PlayerStatus.QUEUED and p.lobby_id else None
        return Change(seated, writes, box)

    done = run(deps, step)
    gone = done.gone
    if done.value:
        lobby = deps.store.get_lobby(done.value)
        if lobby is not None and lobby.lobby.party_id is not None:
            gone += free_seat(deps, player_id).gone
    drop(deps, gone)


def start(deps: Deps, req: Request, player_id: str, language_code: str) -> None:
    """``party_start {language}``: the leader seats the whole party in a new lobby that solo
    players then fill (ruling 8, 10). Raises NotInPartyError, NotPartyLeaderError,
    PartyMemberPlayingError (a member still in a lobby or tournament),
    PartyMemberOfflineError, UnknownLanguageError."""
    deps.lexicon.language(language_code)

    def step() -> Change[None]:
        p = deps.store.get_player(player_id)
        assert p is not None
        if p.party_id is None:
            raise NotInPartyError("you are not in a party")
        rec = deps.store.get_party(p.party_id)
        if rec is None:
            raise NotInPartyError("you are not in a party")
        members = deps.store.get_players(rec.party.members)
        busy = [m for m, x in members.items() if x.status is not PlayerStatus.IDLE]
        rules.check_start(rec.party, player_id, busy)
        if any(not x.connected for x in members.values()):
            # an offline member would hold a seat and skip every turn with no deadline to
            # free it (idle players get none): start when everyone is back
            raise PartyMemberOfflineError("a party member is not connected")
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
        rec.language = language_code
        rec.lobby_id = lobby.lobby.lobby_id
        box = Outbox(reply_to=req)
        writes = [rec, *seat_players(deps, lobby, seated, box, actor_id=player_id)]
        _broadcast(deps, rec, box, seated)
        return Change(None, writes, box)

    drop(deps, run(deps, step).gone)
