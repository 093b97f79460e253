"""Service layer: deadlines — what the clock function does at each wake of a round's clock
loop, and the watchdog (DESIGN.md §3 Clocks).

A firing is ``Timer(kind, ref, seq, due_ms)``: INTRO names a round (``ref`` the tournament,
``seq`` the round number) and stands for all of that round's deadlines (the intro's, then every
turn's); RECONNECT names a player's disconnect (``ref`` the player, ``seq`` the disconnect
count). A wake applies exactly what is due at the clock's *now* — never early: turn skips
``Timing.skip_grace_ms`` after their deadline (``Tournament.expire``), a reconnect deadline at
or after it — so an early wake (Step Functions truncates a Wait to the whole second; clocks
differ), a late one, a duplicate (Express is at-least-once) or a stale one changes nothing it
should not, and answers when to wake next (``Fired.next_due_ms``), read from the same item the
wake read or wrote: no extra read.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.domain import events as ev
from shared.domain.tournament import Dealer, Tournament
from shared.services.base import Deps
from shared.services.errors import NotFoundError
from shared.services.model import TournamentRecord
from shared.services.players import check_heard, reconnect_deadline
from shared.services.ports import Timer, TimerKind
from shared.services.tournaments import change_tournament


@dataclass(frozen=True, slots=True)
class Fired:
    """What a wake did, and when the loop must wake next.

    ``applied``: True when it changed the tournament, False when it only read (early, late,
    duplicate, stale), None for a reconnect deadline. ``next_due_ms`` (UTC ms): for a round,
    its next due time (``Tournament.next_due``) while the tournament is still in that round
    and not over; for a reconnect deadline that was not yet due, the deadline itself; None
    when the loop ends.
    """

    applied: bool | None
    next_due_ms: int | None = None


def fire_round(deps: Deps, timer: Timer) -> Fired:
    """One wake of the clock loop: apply what is due now and report the next due time.

    Raises what the store raises past its retries (``TryAgainError``): the clock function
    then fails and Step Functions retries the task (``shared.adapters.step_functions``).
    """
    if timer.kind is TimerKind.RECONNECT:
        wait = reconnect_deadline(deps, timer.ref, timer.seq)
        return Fired(None, wait)
    tid, round_no = timer.ref, timer.seq
    applied, t = _apply(deps, tid)
    if t is None or t.over or t.round_no != round_no:
        return Fired(applied)
    return Fired(applied, t.next_due(deps.timing.skip_grace_ms))


def fire(deps: Deps, timer: Timer) -> bool | None:
    """Apply what is due for ``timer`` now; ``Fired.applied`` of ``fire_round``."""
    return fire_round(deps, timer).applied


def _apply(deps: Deps, tournament_id: str) -> tuple[bool, Tournament | None]:
    """Apply what is due now (``Tournament.expire``); also return the tournament as committed
    (or as read, when nothing was due). ``(False, None)`` when the tournament is gone.

    A player whose turn just ran out is checked for liveness (ruling 14,
    ``players.check_heard``): a skip is when silence matters, and it costs one read then."""
    seen: list[Tournament] = []
    skipped: list[str] = []

    def decide(
        rec: TournamentRecord, now: int, dealer: Dealer
    ) -> tuple[Tournament, list[ev.Event]]:
        seen[:] = [rec.tournament]  # the last attempt's read: current when nothing is due
        t, events = rec.tournament.expire(now, dealer)
        skipped[:] = [
            e.row.player for e in events if isinstance(e, ev.TurnPlayed) and e.row.skipped
        ]
        return t, events

    try:
        rec = change_tournament(deps, tournament_id, decide)
    except NotFoundError:
        return False, None
    if rec is None:
        return False, seen[-1] if seen else None
    for pid in dict.fromkeys(skipped):
        # a disconnect changes no deadline of the round: the committed tournament still
        # answers the loop's next due time (a stale answer only costs an idempotent wake)
        check_heard(deps, pid, rec.connections.get(pid))
    return True, rec.tournament


def watchdog(deps: Deps, grace_ms: int) -> int:
    """Apply every deadline overdue by more than ``grace_ms`` whose timer never fired
    (found through the due-time index, never a scan). Returns how many items were handled.

    A tournament's overdue deadline means its round's clock is not running (its start failed,
    or the loop died): after applying, the round's clock is scheduled again (an intro timer
    of the current round due at its next due time: a new round loop — a duplicate of a loop
    that was merely late is harmless, the clock function applying only what is due; Express
    does not deduplicate by name, on AWS as in the local interpreter)."""
    now = deps.clock.now_ms()
    count = 0
    for kind, ref in deps.store.overdue(now - grace_ms):
        count += 1
        if kind == "tournament":
            _, t = _apply(deps, ref)
            due = None if t is None else t.next_due(deps.timing.skip_grace_ms)
            if t is not None and due is not None:
                deps.clock.schedule(Timer(TimerKind.INTRO, ref, t.round_no, due))
        else:
            player = deps.store.get_player(ref)
            if player is not None and player.reconnect_deadline_ms is not None:
                reconnect_deadline(deps, ref, player.disconnect_seq)
    return count
