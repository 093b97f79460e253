"""Use case: a duelist's ``guess`` (rules page "Turns and the clock"; ruling 5) — the hot path:
one read and one conditional write of the tournament item, then the pushes."""

from __future__ import annotations

from dataclasses import replace

from shared.domain.duel import DuelId
from shared.domain.errors import NotInDuelError, NotInTournamentError
from shared.domain.tournament import Dealer
from shared.protocol.outbound import TurnEvent
from shared.services.change import push
from shared.services.deps import Deps
from shared.services.errors import NotFoundError
from shared.services.model import TournamentRecord
from shared.services.outbox import Gone, Outbox, Request
from shared.services.presence import drop, player_for_connection, sender
from shared.services.presenter import row_view
from shared.services.tournament_change import (
    Committed,
    Decision,
    change_tournament,
    parties_back,
)


def guess(deps: Deps, req: Request, duel_id: str, raw_word: str) -> None:
    """Play ``raw_word`` in the duel ``duel_id`` for the player behind ``req.connection_id``, judged
    by ``req.received_ms`` (API Gateway's receipt, None: now; ruling 13). Raises NoSessionError,
    NotInDuelError (also for a forged duel id), NotInTournamentError, TurnOverError (received at or
    after the deadline, or the turn already skipped), the duel's refusals and the word checks
    (InvalidLettersError, WrongLengthError, NotInWordListError); none changes anything, but
    deadlines already due are applied (and pushed) first. Cost and grace:
    ``shared/domain/RULINGS.md``, Design notes, "Message functions".
    """
    repeats: list[TurnEvent] = []  # a repeated request_id's first turn (ruling 18)
    try:
        tournament_id = DuelId.parse(duel_id).tournament_id
        committed = _play(deps, req, tournament_id, duel_id, raw_word, None, repeats)
    except NotFoundError as err:  # a forged duel id naming no tournament: same as any other
        player_for_connection(deps, req.connection_id, req.received_ms)  # raises NoSessionError
        raise NotInDuelError("no such duel") from err
    except NotInTournamentError:
        # the connection is no longer the player's in the tournament: a guess received before
        # its close but run after $disconnect still counts (ruling 13; presence.sender)
        player, closed_ms = sender(deps, req.connection_id, req.received_ms)
        if closed_ms is None:
            raise
        req = replace(req, closed_ms=closed_ms)
        committed = _play(deps, req, tournament_id, duel_id, raw_word, player.player_id, repeats)
    except NotInDuelError:
        player_for_connection(deps, req.connection_id, req.received_ms)
        raise
    gone = committed.gone + parties_back(deps, committed)
    if repeats and not committed.changed:
        gone += _answer_again(deps, req, repeats[-1])
        drop(deps, gone)
        return
    drop(deps, gone)
    if committed.refusal is not None:
        if isinstance(committed.refusal, NotInDuelError | NotInTournamentError):
            player_for_connection(deps, req.connection_id, req.received_ms)
        raise committed.refusal


def _play(
    deps: Deps,
    req: Request,
    tournament_id: str,
    duel_id: str,
    raw_word: str,
    player_id: str | None,
    repeats: list[TurnEvent],
) -> Committed:
    """One try of the guess: ``player_id`` None finds the player by the request's connection
    in the tournament item (no extra read: the honest path)."""
    return change_tournament(
        deps,
        tournament_id,
        lambda rec, now, dealer: _decide(
            deps, req, rec, now, dealer, duel_id, raw_word, player_id, repeats
        ),
        reply_to=req,
    )


def _decide(
    deps: Deps,
    req: Request,
    rec: TournamentRecord,
    now: int,
    dealer: Dealer,
    duel_id: str,
    raw_word: str,
    player_id: str | None,
    repeats: list[TurnEvent],
) -> Decision:
    if player_id is None:
        player_id = _player_by_connection(rec, req.connection_id)
    t = rec.tournament
    if req.request_id is not None:
        repeat = _repeat(rec, player_id, duel_id, req.request_id, deps.timing.turn_ms, now)
        if repeat is not None:
            repeats.append(repeat)  # nothing changes: the first outcome is answered again
            return Decision(t, ())
        repeats.clear()  # an earlier try's find is stale
    outcome = t.play(
        player_id,
        duel_id,
        raw_word,
        deps.lexicon.allowed_words(t.language),  # the lexicon, read once: the domain judges
        received_ms=now if req.received_ms is None else req.received_ms,
        now_ms=now,
        dealer=dealer,
        request_id=req.request_id,
    )
    return Decision(outcome.tournament, outcome.events, refusal=outcome.refusal)


def _repeat(
    rec: TournamentRecord,
    player_id: str,
    duel_id: str,
    request_id: str,
    turn_ms: int,
    now_ms: int,
) -> TurnEvent | None:
    """The row a guess with ``request_id`` by ``player_id`` already played in ``duel_id``, as
    its ``turn`` event then (next player and deadline as that row left them; ``remaining_ms``
    counted from ``now_ms``, UTC ms, as every turn's is from when it is sent), or None. Looks
    only at the current round's duels (the tournament item keeps no older boards)."""
    t = rec.tournament
    duel = next((d for d in t.duels if d.duel_id == duel_id), None)
    turn = duel.played(player_id, request_id) if duel is not None else None
    if duel is None or turn is None:
        return None
    row = duel.rows[turn - 1]
    ended = turn == len(duel.rows) and duel.over
    return TurnEvent(
        tournament_id=t.tournament_id,
        duel_id=duel_id,
        turn=turn,
        row=row_view(row),
        next_player=None if ended else duel.opponent_of(player_id),
        deadline_ms=None if ended else row.at_ms + turn_ms,
        remaining_ms=None if ended else max(0, row.at_ms + turn_ms - now_ms),
    )


def _answer_again(deps: Deps, req: Request, event: TurnEvent) -> Gone:
    """Send the first outcome's ``turn`` again, to the caller only (``request_id`` echoed)."""
    deps.metrics("RepeatedRequests", 1)
    box = Outbox(reply_to=req)
    box.add([req.connection_id], event)
    return push(deps, box)


def _player_by_connection(rec: TournamentRecord, connection_id: str) -> str:
    for pid, cid in rec.connections.items():
        if cid == connection_id:
            return pid
    raise NotInTournamentError("you are not playing in this tournament")
