"""Use case: a duelist's ``guess`` (rules page "Turns and the clock"; ruling 5) — the hot path:
one read and one conditional write of the tournament item, then the pushes."""

from __future__ import annotations

from shared.domain.duel import DuelId
from shared.domain.errors import NotInDuelError, NotInTournamentError
from shared.domain.tournament import Dealer
from shared.services.deps import Deps
from shared.services.errors import NotFoundError
from shared.services.model import TournamentRecord
from shared.services.outbox import Request
from shared.services.presence import drop, player_for_connection
from shared.services.tournament_change import Decision, change_tournament, parties_back


def guess(deps: Deps, req: Request, duel_id: str, raw_word: str) -> None:
    """Play ``raw_word`` in the duel ``duel_id`` for the player behind ``req.connection_id``, judged
    by ``req.received_ms`` (API Gateway's receipt, None: now; ruling 13). Raises NoSessionError,
    NotInDuelError (also for a forged duel id), NotInTournamentError, TurnOverError (received at or
    after the deadline, or the turn already skipped), the duel's refusals and the word checks
    (InvalidLettersError, WrongLengthError, NotInWordListError); none changes anything, but
    deadlines already due are applied (and pushed) first. Cost and grace:
    ``shared/domain/RULINGS.md``, Design notes, "Message functions".
    """
    try:
        tournament_id = DuelId.parse(duel_id).tournament_id
        committed = change_tournament(
            deps,
            tournament_id,
            lambda rec, now, dealer: _decide(deps, req, rec, now, dealer, duel_id, raw_word),
            reply_to=req,
        )
    except NotFoundError as err:  # a forged duel id naming no tournament: same as any other
        player_for_connection(deps, req.connection_id)  # raises NoSessionError
        raise NotInDuelError("no such duel") from err
    except (NotInDuelError, NotInTournamentError):
        player_for_connection(deps, req.connection_id)
        raise
    drop(deps, committed.gone + parties_back(deps, committed))
    if committed.refusal is not None:
        if isinstance(committed.refusal, NotInDuelError | NotInTournamentError):
            player_for_connection(deps, req.connection_id)
        raise committed.refusal


def _decide(
    deps: Deps,
    req: Request,
    rec: TournamentRecord,
    now: int,
    dealer: Dealer,
    duel_id: str,
    raw_word: str,
) -> Decision:
    player_id = _player_by_connection(rec, req.connection_id)
    t = rec.tournament
    outcome = t.play(
        player_id,
        duel_id,
        raw_word,
        deps.lexicon.allowed_words(t.language),  # the lexicon, read once: the domain judges
        received_ms=now if req.received_ms is None else req.received_ms,
        now_ms=now,
        dealer=dealer,
    )
    return Decision(outcome.tournament, outcome.events, refusal=outcome.refusal)


def _player_by_connection(rec: TournamentRecord, connection_id: str) -> str:
    for pid, cid in rec.connections.items():
        if cid == connection_id:
            return pid
    raise NotInTournamentError("you are not playing in this tournament")
