"""Service layer: deadlines — the clock function's input and the watchdog (DESIGN.md §3
"Clocks"; issue 5 items 3 and 5).

A firing is ``Timer(kind, ref, seq, due_ms)``. It is applied only if the referenced state is
still there to be applied: a turn/intro deadline applies what the tournament has due (nothing,
for a stale or duplicate firing), a reconnect deadline only if the player's disconnect ``seq``
is unchanged. So late, duplicate and stale firings change nothing.
"""

from __future__ import annotations

from shared.services.base import Deps
from shared.services.players import reconnect_deadline
from shared.services.ports import Timer, TimerKind
from shared.services.tournaments import apply_deadline, tournament_id_of_duel


def fire(deps: Deps, timer: Timer) -> bool | None:
    """Apply one deadline (the clock function's job).

    Turn and intro deadlines are idempotent by time: the tournament applies whatever is due
    at ``due_ms`` (earliest first), so a late, duplicate or stale firing finds nothing due —
    returns False, having only read. Returns True when it changed the tournament, None for a
    reconnect deadline (decided by ``players.reconnect_deadline`` on the player's seq).
    """
    if timer.kind is TimerKind.RECONNECT:
        reconnect_deadline(deps, timer.ref, timer.seq, timer.due_ms)
        return None
    if timer.kind is TimerKind.TURN:
        return apply_deadline(deps, tournament_id_of_duel(timer.ref), timer.due_ms)
    return apply_deadline(deps, timer.ref, timer.due_ms)


def watchdog(deps: Deps, grace_ms: int) -> int:
    """Apply every deadline overdue by more than ``grace_ms`` whose timer never fired
    (found through the due-time index, never a scan). Returns how many items were handled."""
    now = deps.clock.now_ms()
    count = 0
    for kind, ref in deps.store.overdue(now - grace_ms):
        count += 1
        if kind == "tournament":
            apply_deadline(deps, ref)
        else:
            player = deps.store.get_player(ref)
            if player is not None and player.reconnect_deadline_ms is not None:
                reconnect_deadline(deps, ref, player.disconnect_seq)
    return count
