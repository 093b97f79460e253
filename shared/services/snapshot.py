"""Service layer (building block): the resume snapshot, a read model. ``snapshot(deps, player)``
answers what the player's screen shows now, in the live messages' shapes, so a client that knows
only its token draws everything and plays on (ruling 15); a board carries its duel's word only
once the duel is over (ruling 6). Imports only ``deps``, ``model`` and ``presenter``; never
writes. What it holds: ``shared/domain/RULINGS.md``, Design notes, "Message functions".
"""

from __future__ import annotations

from typing import Any

from shared.domain.tournament import PlayerState, Tournament
from shared.protocol import outbound as out
from shared.services.deps import Deps
from shared.services.model import LobbyRecord, Player, PlayerStatus, TournamentRecord
from shared.services.presenter import (
    board,
    language_info,
    lobby_event,
    party_event,
    round_event,
    standings,
    standings_event,
)

__all__ = [
    "finished_tournament",
    "language_info",
    "lobby_statuses",
    "party_snapshot",
    "party_status",
    "rating_event",
    "snapshot",
]


def snapshot(deps: Deps, player: Player, *, ended: TournamentRecord | None = None) -> out.Snapshot:
    """The screen of ``player`` (as just saved by the resume) as one ``Snapshot``.

    ``ended``: the player's tournament that is over and whose end this resume shows
    (``finished_tournament``); its final standings go in ``tournament_end`` with the player's
    own ``rating``. A tournament that is over is otherwise not shown: the player is idle.

    ``seq``: the player's last event sequence number in the tournament shown, from the same
    read as the tournament's parts (RULINGS.md, "Event sequence numbers").

    Reads (strongly consistent): the lobby while queued (plus the profiles of its disconnected
    seats, one batch, only when there are some); the tournament while in one; the party and
    its members' profiles. Raises what the store raises (``BusyError``...).
    """
    parts: dict[str, Any] = {}
    if player.status is PlayerStatus.QUEUED and player.lobby_id:
        seat = deps.store.get_lobby(player.lobby_id)
        if seat is not None and any(s.player_id == player.player_id for s in seat.lobby.seats):
            language = deps.lexicon.language(seat.lobby.language)
            parts["language"] = language_info(language)
            parts["lobby"] = lobby_event(seat.lobby, language)
            parts["statuses"] = lobby_statuses(deps, seat, player.player_id)
    if ended is not None:
        parts.update(_ended(ended.tournament, player.player_id))
        parts["seq"] = ended.seqs.get(player.player_id, 0)
    elif player.tournament_id:
        rec = deps.store.get_tournament(player.tournament_id)
        if rec is not None and not rec.tournament.over:
            parts.update(_tournament(deps, rec.tournament, player.player_id))
            parts["seq"] = rec.seqs.get(player.player_id, 0)
    if player.party_id:
        parts["party"] = party_snapshot(deps, player.party_id)
    return out.Snapshot(**parts)


def finished_tournament(deps: Deps, player: Player) -> TournamentRecord | None:
    """The player's tournament when it is over: its end is still to be shown to them once
    (ruling 15), after which the resume clears ``player.tournament_id`` (the player is idle).
    None when the player has no tournament, or it still runs. One read."""
    if player.tournament_id is None:
        return None
    rec = deps.store.get_tournament(player.tournament_id)
    return rec if rec is not None and rec.tournament.over else None


def rating_event(t: Tournament, p: PlayerState) -> out.RatingEvent | None:
    """The ``rating`` message of a player whose place is fixed (rulings 1 and 2): place,
    change, the previous rating (snapshotted at the start) and the new one; None while the
    place is open."""
    if p.place is None:
        return None
    change = p.rating_change or 0
    return out.RatingEvent(
        tournament_id=t.tournament_id,
        place=p.place,
        change=change,
        rating=p.rating + change,
        previous=p.rating,
    )


def party_status(members: dict[str, Player]) -> out.PartyStatus:
    """A party's status from its members' (ruling 10): playing while anyone is in a
    tournament, queued while anyone waits in a lobby, else open."""
    if any(m.status is PlayerStatus.PLAYING for m in members.values()):
        return "playing"
    if any(m.status is PlayerStatus.QUEUED for m in members.values()):
        return "queued"
    return "open"


def party_snapshot(deps: Deps, party_id: str) -> out.PartyEvent | None:
    """The party as its ``party`` message shows it now; None when it is gone. Reads the party
    and its members' profiles."""
    rec = deps.store.get_party(party_id)
    if rec is None:
        return None
    members = deps.store.get_players(rec.party.members)
    return party_event(rec, members, party_status(members))


# ---------------------------------------------------------------------------- parts
def _tournament(deps: Deps, t: Tournament, player_id: str) -> dict[str, Any]:
    """A running tournament as ``player_id`` sees it. A player who left receives none of its
    messages any more (ruling 3), so only their own result is drawn: ``eliminated`` and, once
    the round fixed their place, ``rating``."""
    me = t.player(player_id)
    parts: dict[str, Any] = {"language": language_info(deps.lexicon.language(t.language))}
    if not me.alive:
        parts["eliminated"] = out.EliminatedEvent(
            tournament_id=t.tournament_id,
            round=me.out_round or t.round_no,
            player_id=player_id,
            reason="timeout" if me.timed_out else "left" if me.left else "lives",
        )
    parts["rating"] = rating_event(t, me)
    if me.left:
        return parts
    parts["round"] = round_event(t)
    parts["standings"] = standings_event(t)
    parts["statuses"] = [
        out.PlayerStatusEvent(
            tournament_id=t.tournament_id,
            player_id=p.player_id,
            status="disconnected",
            reconnect_deadline_ms=p.reconnect_deadline_ms,
        )
        for p in t.players
        if p.player_id != player_id and not p.connected and not p.left
    ]
    own = t.duel_of(player_id)
    if own is not None:
        parts["duel"] = board(t, own, deps.lexicon)
    if t.is_spectator(player_id):
        parts["spectating"] = [
            board(t, d, deps.lexicon) for d in t.duels if player_id not in d.players
        ]
    return parts


def _ended(t: Tournament, player_id: str) -> dict[str, Any]:
    """A tournament that is over: the final standings as its ``tournament_end`` said, and
    the player's own ``rating``."""
    winners = sorted(p.player_id for p in t.players if p.place == 1)
    return {
        "tournament_end": out.TournamentEndEvent(
            tournament_id=t.tournament_id, places=standings(t), winners=winners
        ),
        "rating": rating_event(t, t.player(player_id)),
    }


def lobby_statuses(deps: Deps, rec: LobbyRecord, player_id: str) -> list[out.PlayerStatusEvent]:
    """The lobby's other seats whose holder is disconnected (ruling 9), with the time their
    seat is released (the holder's reconnect deadline, absolute UTC ms)."""
    away = [pid for pid, cid in rec.connections.items() if cid is None and pid != player_id]
    if not away:
        return []
    profiles = deps.store.get_players(away)
    return [
        out.PlayerStatusEvent(
            lobby_id=rec.lobby.lobby_id,
            player_id=pid,
            status="disconnected",
            reconnect_deadline_ms=profiles[pid].reconnect_deadline_ms if pid in profiles else None,
        )
        for pid in away
    ]
