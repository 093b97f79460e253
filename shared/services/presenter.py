"""Service layer: domain state and events -> outbound protocol messages and their recipients.

Ruling 6: the secret appears only in ``duel_end`` and in boards of duels that are over.
Ruling 7: spectators (out, bye, or done with their duel) get the other duels' rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from shared.domain import events as ev
from shared.domain.duel import Duel, DuelId, Row
from shared.domain.matchmaking import Lobby, LobbyStatus
from shared.domain.tournament import PlayerState, Tournament
from shared.protocol import outbound as out
from shared.services.model import PartyRecord, Player, TournamentRecord
from shared.services.outbox import Outbox
from shared.services.ports import Lexicon, Timer, TimerKind

if TYPE_CHECKING:
    from shared.domain.languages import Language  # the lexicon's: run by its first lookup


def player_view(p: Player) -> out.PlayerView:
    return out.PlayerView(id=p.player_id, nickname=p.nickname, rating=p.rating)


def standings(t: Tournament) -> list[out.Standing]:
    def key(p: PlayerState) -> tuple[int, int, str]:
        return (p.place or 0, -p.lives, p.nickname)

    rows = []
    for p in sorted(t.players, key=key):
        rows.append(
            out.Standing(
                player_id=p.player_id,
                nickname=p.nickname,
                lives=p.lives,
                eliminated=not p.alive,
                left=p.left,
                connected=p.connected,
                place=p.place,
                rating_change=p.rating_change,
            )
        )
    return rows


def standings_event(t: Tournament) -> out.StandingsEvent:
    return out.StandingsEvent(tournament_id=t.tournament_id, round=t.round_no, players=standings(t))


def round_event(t: Tournament) -> out.RoundEvent:
    return out.RoundEvent(
        tournament_id=t.tournament_id,
        round=t.round_no,
        pairs=[out.Pair(duel_id=d.duel_id, players=list(d.players)) for d in t.duels],
        bye=t.bye,
        intro_deadline_ms=t.intro_deadline_ms,
        standings=standings(t),
    )


def row_view(r: Row) -> out.Row:
    if r.skipped:
        return out.Row(player=r.player, skipped=True)
    return out.Row(
        player=r.player,
        word=r.word,
        tiles=list(r.tiles or ()),
        marks=[m.value for m in r.marks or ()],
        skipped=False,
    )


def board(t: Tournament, d: Duel, lexicon: Lexicon) -> out.DuelBoard:
    """A duel of ``t``'s current round as a duelist or a spectator sees it now: rows and marks,
    whose turn and its deadline (absolute UTC ms; both null during the intro), and the secret
    with its display form only once the duel is over (ruling 6)."""
    started = t.phase.value != "intro"
    return out.DuelBoard(
        duel_id=d.duel_id,
        players=list(d.players),
        length=d.length,
        rows=[row_view(r) for r in d.rows],
        next_player=d.next_player if started else None,
        deadline_ms=(d.turn_deadline_ms if started and not d.over else None),
        over=d.over,
        result=d.result.value if d.result else None,
        winner=d.winner if d.over else None,
        word=d.word if d.over else None,
        display=lexicon.display(t.language, d.word) if d.over else None,
    )


def language_info(language: Language) -> out.LanguageInfo:
    """The client's view of a game language (tiles, keyboard, direction)."""
    return out.LanguageInfo(
        code=language.code,
        name=language.name,
        native_name=language.native_name,
        alphabet=list(language.alphabet),
        keyboard=[list(row) for row in language.keyboard],
        direction="rtl" if language.direction == "rtl" else "ltr",
        multi_letter_tiles=[tile for tile in language.alphabet if len(tile) > 1],
    )


def lobby_event(lobby: Lobby, language: Language) -> out.LobbyEvent:
    """The ``lobby`` message: seats, status and the language as a client draws it (tiles,
    keyboard, multi-letter tiles, direction)."""
    return out.LobbyEvent(
        lobby_id=lobby.lobby_id,
        language=lobby.language,
        seats=8,
        players=[
            out.PlayerView(id=s.player_id, nickname=s.nickname, rating=s.rating)
            for s in lobby.seats
        ],
        party_id=lobby.party_id,
        status="started" if lobby.status is LobbyStatus.STARTED else "waiting",
        tournament_id=lobby.tournament_id,
        alphabet=list(language.alphabet),
        keyboard=[list(row) for row in language.keyboard],
        language_info=language_info(language),
    )


def party_event(
    rec: PartyRecord,
    members: dict[str, Player],
    status: out.PartyStatus,
) -> out.PartyEvent:
    p = rec.party
    return out.PartyEvent(
        party_id=p.party_id,
        invite=p.invite,
        leader=p.leader,
        members=[
            player_view(members[m])
            if m in members
            else out.PlayerView(id=m, nickname="?", rating=0)
            for m in p.members
        ],
        status=status,
    )


# ------------------------------------------------------------------------ recipients
def everyone(rec: TournamentRecord) -> list[str | None]:
    return list(rec.connections.values())


def duelists_and_spectators(rec: TournamentRecord, duel: Duel) -> list[str | None]:
    t = rec.tournament
    ids = [
        p.player_id for p in t.players if p.player_id in duel.players or t.is_spectator(p.player_id)
    ]
    return [rec.connections.get(i) for i in ids]


def _watchers_of(rec: TournamentRecord, duel_id: str) -> list[str | None]:
    """Ruling 7 recipients of a duel's row or end: its duelists and the spectators.

    The events of one change may run past the end of the duel's round (its last duel ended, or
    ``expire`` applied a late intro and every turn after it): the duel is then no longer in the
    committed state, and at the moment of the event every other duel of its round was over —
    so everyone in the tournament was a duelist of it or a spectator.
    """
    t = rec.tournament
    for d in t.duels:
        if d.duel_id == duel_id:
            return duelists_and_spectators(rec, d)
    return everyone(rec)


def round_of_duel(duel_id: str) -> int:
    """The round a duel belongs to (``DuelId``)."""
    return DuelId.parse(duel_id).round_no


def present(
    rec: TournamentRecord,
    events: list[ev.Event],
    box: Outbox,
    lexicon: Lexicon,
    personal: Mapping[str, str | None] | None = None,
    *,
    now_ms: int,
) -> None:
    """Queue the messages and timers for ``events`` (already committed in ``rec``) as of
    ``now_ms`` (UTC ms: the turn clocks' ``remaining_ms`` count from it).

    The only timer a round needs is its intro's: it starts the round's clock loop, which then
    applies every turn deadline of the round (RULINGS.md, Clocks); turns schedule nothing.

    ``personal``: connections of players who no longer receive the tournament's messages
    (they left) but still get what is about them alone — their ``eliminated`` and, when the
    round fixes their place, their ``rating`` (ruling 2: "applied and sent").

    Every message queued here is numbered per player (``seq``, from ``rec.seqs``, which the
    change's own write saves: RULINGS.md, "Event sequence numbers").
    """
    t = rec.tournament
    tid = t.tournament_id
    conns = rec.connections
    own = personal or {}
    box.number(
        rec.seqs, {cid: pid for pid, cid in [*own.items(), *conns.items()] if cid is not None}
    )

    def mine(pid: str) -> str | None:
        return conns.get(pid) or own.get(pid)

    for e in events:
        if isinstance(e, ev.RoundStarted):
            box.add(everyone(rec), _round_started(t, e))
            box.timers.append(Timer(TimerKind.INTRO, tid, e.round_no, e.intro_deadline_ms))
        elif isinstance(e, ev.DuelStarted):
            for pid in e.players:
                box.add([conns.get(pid)], _duel_start(t, e, _other(e.players, pid), now_ms))
            watchers = [
                conns.get(p.player_id)
                for p in t.players
                if p.player_id not in e.players and t.is_spectator(p.player_id)
            ]
            box.add(watchers, _duel_start(t, e, None, now_ms))
        elif isinstance(e, ev.TurnPlayed):
            box.add(
                _watchers_of(rec, e.duel_id),
                out.TurnEvent(
                    tournament_id=tid,
                    duel_id=e.duel_id,
                    turn=e.turn,
                    row=row_view(e.row),
                    next_player=e.next_player,
                    deadline_ms=e.deadline_ms,
                    remaining_ms=None if e.deadline_ms is None else max(0, e.deadline_ms - now_ms),
                ),
            )
        elif isinstance(e, ev.DuelEnded):
            end = out.DuelEndEvent(
                tournament_id=tid,
                duel_id=e.duel_id,
                result=e.result.value,
                winner=e.winner,
                reason=e.reason.value,
                word=e.word,
                display=lexicon.display(t.language, e.word),
            )
            same_round = any(d.duel_id == e.duel_id for d in t.duels)
            # its duelists spectate from now on (ruling 7): they get the other boards whole
            duelists = [conns.get(p) for p in e.players] if same_round else []
            boards = [board(t, d, lexicon) for d in t.duels if d.duel_id != e.duel_id]
            box.add(duelists, replace(end, spectating=boards))
            box.add([c for c in _watchers_of(rec, e.duel_id) if c not in duelists], end)
            if same_round:
                # lives changed: everyone's standings (a round-closing end sends them anyway)
                box.add(everyone(rec), standings_event(t))
        elif isinstance(e, ev.PlayerEliminated):
            box.add(
                [*everyone(rec), mine(e.player_id)],
                out.EliminatedEvent(
                    tournament_id=tid,
                    round=e.round_no,
                    player_id=e.player_id,
                    reason=e.reason,
                ),
            )
        elif isinstance(e, ev.RoundEnded):
            for placed in e.placed:
                box.add(
                    [mine(placed.player_id)],
                    out.RatingEvent(
                        tournament_id=tid,
                        place=placed.place,
                        change=placed.change,
                        rating=placed.rating,
                        previous=placed.rating - placed.change,
                    ),
                )
            box.add(everyone(rec), standings_event(t))
        elif isinstance(e, ev.TournamentEnded):
            for placed in e.placed:
                if placed.place == 1 and placed.player_id in e.winners:
                    p = t.player(placed.player_id)
                    if p.out_round is None:  # a sole survivor: rated at the end
                        box.add(
                            [conns.get(placed.player_id)],
                            out.RatingEvent(
                                tournament_id=tid,
                                place=1,
                                change=placed.change,
                                rating=placed.rating,
                                previous=placed.rating - placed.change,
                            ),
                        )
            # everyone still connected, leavers and timed-out players included (ruling 15):
            # their current connections come in ``personal``
            box.add(
                [*everyone(rec), *own.values()],
                out.TournamentEndEvent(
                    tournament_id=tid, places=standings(t), winners=list(e.winners)
                ),
            )
        elif isinstance(e, ev.ConnectionChanged):
            others = [c for pid, c in conns.items() if pid != e.player_id]
            box.add(
                others,
                out.PlayerStatusEvent(
                    tournament_id=tid,
                    player_id=e.player_id,
                    status="connected" if e.connected else "disconnected",
                    reconnect_deadline_ms=e.reconnect_deadline_ms,
                ),
            )


def _round_started(t: Tournament, e: ev.RoundStarted) -> out.RoundEvent:
    """The round as it was opened. One change can run past it (a very late watchdog applies
    its intro, every turn and the next rounds' too), so build it from the event then."""
    if e.round_no == t.round_no:
        return round_event(t)
    return out.RoundEvent(
        tournament_id=t.tournament_id,
        round=e.round_no,
        pairs=[out.Pair(duel_id=d, players=[a, b]) for d, a, b in e.pairs],
        bye=e.bye,
        intro_deadline_ms=e.intro_deadline_ms,
        standings=standings(t),
    )


def _other(players: tuple[str, str], pid: str) -> str:
    return players[1] if players[0] == pid else players[0]


def _duel_start(
    t: Tournament, e: ev.DuelStarted, opponent: str | None, now_ms: int
) -> out.DuelStartEvent:
    return out.DuelStartEvent(
        tournament_id=t.tournament_id,
        round=round_of_duel(e.duel_id),
        duel_id=e.duel_id,
        players=list(e.players),
        opponent=opponent,
        length=e.length,
        first=e.first,
        turn=1,
        next_player=e.first,
        deadline_ms=e.deadline_ms,
        remaining_ms=max(0, e.deadline_ms - now_ms),
    )
