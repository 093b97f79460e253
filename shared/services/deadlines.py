"""Service layer: deadlines — the clock function's input and the watchdog (DESIGN.md §3
"Clocks"; issue 5 items 3 and 5).

A firing is ``Timer(kind, ref, seq, due_ms)``. It is applied only if the referenced state is
still there to be applied: a turn/intro deadline applies what the tournament has due (nothing,
for a stale or duplicate firing), a reconnect deadline only if the player's disconnect ``seq``
is unchanged. So late, duplicate and stale firings change nothing.

On AWS one looping execution serves a whole round (``shared.adapters.step_functions``): after
applying,
the clock function tells it the round's next deadline (``Fired.next_due_ms``), read from the
same item the firing read or wrote — no extra read.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.domain import events as ev
from shared.domain.tournament import Dealer, Tournament
from shared.services.base import Deps
from shared.services.errors import NotFoundError
from shared.services.model import TournamentRecord
from shared.services.players import reconnect_deadline
from shared.services.ports import Timer, TimerKind
from shared.services.tournaments import change_tournament, tournament_id_of_duel


@dataclass(frozen=True, slots=True)
class Fired:
    """What a firing did, and when the round's loop must wake next.

    ``applied``: True when it changed the tournament, False when it only read (late, duplicate,
    stale), None for a reconnect deadline. ``next_due_ms``: the earliest pending deadline of the
    firing's round when the tournament is still in that round and not over; None otherwise
    (reconnect deadlines, a round that closed, a tournament that ended or is gone).
    """

    applied: bool | None
    next_due_ms: int | None = None


def round_of(timer: Timer) -> tuple[str, int] | None:
    """``(tournament id, round number)`` an intro or turn timer belongs to; None for a
    reconnect timer. An intro names them (``ref``, ``seq``); a turn's duel id is
    ``{tid}.{round}.{i}`` (raises NotInDuelError when it is not)."""
    if timer.kind is TimerKind.RECONNECT:
        return None
    if timer.kind is TimerKind.INTRO:
        return timer.ref, timer.seq
    tid = tournament_id_of_duel(timer.ref)
    round_text = timer.ref.split(".")[1]
    return tid, int(round_text) if round_text.isdigit() else -1


def fire_round(deps: Deps, timer: Timer) -> Fired:
    """Apply one deadline and report the round's next one (the looping clock's step).

    Turn and intro deadlines are idempotent by time: the tournament applies whatever is due
    at ``due_ms`` (earliest first), so a late, duplicate or stale firing finds nothing due and
    only reads. A reconnect deadline is decided by ``players.reconnect_deadline`` on the
    player's seq and never loops.
    """
    where = round_of(timer)
    if where is None:
        reconnect_deadline(deps, timer.ref, timer.seq, timer.due_ms)
        return Fired(None)
    tid, round_no = where
    applied, t = _apply(deps, tid, timer.due_ms)
    if t is None or t.over or t.round_no != round_no:
        return Fired(applied)
    return Fired(applied, t.next_deadline())


def fire(deps: Deps, timer: Timer) -> bool | None:
    """Apply one deadline (the clock function's job); ``Fired.applied`` of ``fire_round``."""
    return fire_round(deps, timer).applied


def _apply(deps: Deps, tournament_id: str, due_ms: int | None) -> tuple[bool, Tournament | None]:
    """``tournaments.apply_deadline``, also returning the tournament as committed (or as read,
    when nothing was due). ``due_ms`` counts as "now" when the local clock reads a little
    earlier (Step Functions' wait and Lambda's clock differ)."""
    seen: list[Tournament] = []

    def decide(
        rec: TournamentRecord, now: int, dealer: Dealer
    ) -> tuple[Tournament, list[ev.Event]]:
        seen[:] = [rec.tournament]  # the last attempt's read: current when nothing is due
        return rec.tournament.expire(max(now, due_ms or 0), dealer)

    try:
        rec = change_tournament(deps, tournament_id, decide)
    except NotFoundError:
        return False, None
    if rec is not None:
        return True, rec.tournament
    return False, seen[-1] if seen else None


def watchdog(deps: Deps, grace_ms: int) -> int:
    """Apply every deadline overdue by more than ``grace_ms`` whose timer never fired
    (found through the due-time index, never a scan). Returns how many items were handled.

    A tournament's overdue deadline means its round's clock is not running (its start failed,
    or the loop died): after applying, the round's clock is scheduled again (an intro timer
    of the current round due at its next deadline; on AWS that starts a new round loop — a
    duplicate of a loop that was merely late is harmless, the clock function being idempotent;
    the local clock ignores the name it already fired)."""
    now = deps.clock.now_ms()
    count = 0
    for kind, ref in deps.store.overdue(now - grace_ms):
        count += 1
        if kind == "tournament":
            _, t = _apply(deps, ref, None)
            due = None if t is None else t.next_deadline()
            if t is not None and due is not None:
                deps.clock.schedule(Timer(TimerKind.INTRO, ref, t.round_no, due))
        else:
            player = deps.store.get_player(ref)
            if player is not None and player.reconnect_deadline_ms is not None:
                reconnect_deadline(deps, ref, player.disconnect_seq)
    return count
