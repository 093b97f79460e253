"""Use cases: the operators' kill switch — pause every running tournament, and resume them
with their deadlines shifted by the pause's length (RULINGS.md, design notes, "Kill switch").

Running tournaments and away players are found through the due-time index
(``Store.overdue``, never a scan): every running tournament has a pending deadline, every
player away from a lobby, tournament or party a reconnect deadline. A paused tournament keeps
its index entry (``Tournament.next_deadline``), so ``resume`` finds it again; its clock loop
ends at its next wake (``Tournament.next_due`` is None while paused).
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.services import change
from shared.services.deps import Deps
from shared.services.errors import NotFoundError
from shared.services.ports import Timer, TimerKind
from shared.services.tournament_change import Decision, change_tournament

EVERYTHING_MS = 2**62
"""A due time after every deadline: ``Store.overdue(EVERYTHING_MS)`` lists every entry."""


@dataclass(frozen=True)
class Swept:
    """What one sweep over the due-time index did: ``tournaments`` changed (paused or
    resumed), ``players`` whose reconnect deadline moved, ``loops`` of clock started."""

    tournaments: int = 0
    players: int = 0
    loops: int = 0


def pause_tournaments(deps: Deps) -> Swept:
    """Pause every running tournament not paused yet (``Tournament.pause`` at the time of its
    own write: each tournament is paused from the moment it stops). Idempotent: a second sweep
    pauses only tournaments started since. Raises what the store raises past its retries."""
    paused = 0
    for kind, ref in deps.store.overdue(EVERYTHING_MS):
        if kind != "tournament":
            continue
        try:
            done = change_tournament(
                deps, ref, lambda rec, now, dealer: Decision(rec.tournament.pause(now))
            )
        except NotFoundError:
            continue  # expired meanwhile
        paused += done.changed
    return Swept(tournaments=paused)


def resume_tournaments(deps: Deps, paused_since_ms: int) -> Swept:
    """Resume every paused tournament (``Tournament.resume``: its deadlines move later by how
    long it was paused) and start its round's clock loop at its next due time; move each away
    player's reconnect deadline later by ``now - paused_since_ms`` (the game's pause) and start
    its timer again. Tournaments resume idempotently; a second run moves reconnect deadlines
    again (a longer window, never a lost one). Raises what the store raises past its retries."""
    tournaments = players = loops = 0
    for kind, ref in deps.store.overdue(EVERYTHING_MS):
        if kind == "tournament":
            try:
                done = change_tournament(
                    deps, ref, lambda rec, now, dealer: Decision(rec.tournament.resume(now))
                )
            except NotFoundError:
                continue
            if not done.changed:
                continue
            tournaments += 1
            t = done.record.tournament
            due = t.next_due(deps.timing.skip_grace_ms)
            if due is not None:
                deps.clock.schedule(Timer(TimerKind.INTRO, ref, t.round_no, due))
                loops += 1
        else:
            timer = _extend_reconnect(deps, ref, deps.clock.now_ms() - paused_since_ms)
            if timer is not None:
                deps.clock.schedule(timer)
                players += 1
                loops += 1
    return Swept(tournaments, players, loops)


def _extend_reconnect(deps: Deps, player_id: str, shift_ms: int) -> Timer | None:
    """Move an away player's reconnect deadline ``shift_ms`` later (a conditional save on the
    player's version); returns its new timer, or None when the player is back or has none."""

    def step() -> change.Change[Timer | None]:
        p = deps.store.get_player(player_id)
        if p is None or p.connected or p.reconnect_deadline_ms is None:
            return change.Change(None)
        p.reconnect_deadline_ms += max(0, shift_ms)
        timer = Timer(TimerKind.RECONNECT, player_id, p.disconnect_seq, p.reconnect_deadline_ms)
        return change.Change(timer, [p])

    return change.run(deps, step).value


def start_loops(deps: Deps) -> Swept:
    """Start a clock loop for every running tournament that is not paused, at its next due
    time, and a timer for every away player's reconnect deadline (after the clock was stopped:
    ``infra.operations.pause`` ``start-loops``). A loop that was still running gets a
    duplicate: harmless, a wake applies only what is due (RULINGS.md, Clocks)."""
    loops = 0
    for kind, ref in deps.store.overdue(EVERYTHING_MS):
        if kind == "tournament":
            rec = deps.store.get_tournament(ref)
            t = None if rec is None else rec.tournament
            due = None if t is None else t.next_due(deps.timing.skip_grace_ms)
            if t is not None and due is not None:
                deps.clock.schedule(Timer(TimerKind.INTRO, ref, t.round_no, due))
                loops += 1
        else:
            p = deps.store.get_player(ref)
            if p is not None and not p.connected and p.reconnect_deadline_ms is not None:
                deps.clock.schedule(
                    Timer(TimerKind.RECONNECT, ref, p.disconnect_seq, p.reconnect_deadline_ms)
                )
                loops += 1
    return Swept(loops=loops)
