"""Use cases: deadlines — what the clock function does at each wake of a round's clock loop,
a player's reconnect deadline, and the watchdog (RULINGS.md, Clocks; rulings 3, 9, 10 and 14).

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared.domain.errors import PausedError
from shared.lazy import lazy_module
from shared.services.deps import Deps
from shared.services.errors import NotFoundError
from shared.services.ports import Timer, TimerKind

if TYPE_CHECKING:
    from shared.domain import events as ev
    from shared.domain.tournament import Dealer, Tournament
    from shared.services import change, membership, model, presence, seating, tournament_change
    from shared.services.change import Change
    from shared.services.model import TournamentRecord
    from shared.services.outbox import Gone
    from shared.services.tournament_change import Decision
else:
    # The apply path — the rules, the records, the tournament's write path and what it pushes —
    # is imported when a deadline is applied: the watchdog's usual run finds nothing overdue
    # and needs only the due-time index query (``Store.overdue``).
    ev = lazy_module("shared.domain.events")
    change, membership, model, presence, seating, tournament_change = (
        lazy_module(f"shared.services.{name}")
        for name in (
            "change",
            "membership",
            "model",
            "presence",
            "seating",
            "tournament_change",
        )
    )


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
        return Fired(None, reconnect_deadline(deps, timer.ref, timer.seq))
    tid, round_no = timer.ref, timer.seq
    applied, t = _apply(deps, tid)
    if t is None or t.over or t.round_no != round_no:
        return Fired(applied)
    return Fired(applied, t.next_due(deps.timing.skip_grace_ms))


def _apply(deps: Deps, tournament_id: str) -> tuple[bool, Tournament | None]:
    """Apply what is due now (``Tournament.expire``); also return the tournament as committed
    (or as read, when nothing was due). ``(False, None)`` when the tournament is gone.

    A player whose turn just ran out is checked for liveness (ruling 14, ``check_heard``): a
    skip is when silence matters, and it costs one read then."""

    def decide(rec: TournamentRecord, now: int, dealer: Dealer) -> Decision:
        t, events = rec.tournament.expire(now, dealer)
        return tournament_change.Decision(t, events)

    try:
        committed = tournament_change.change_tournament(deps, tournament_id, decide)
    except NotFoundError:
        return False, None
    gone = committed.gone + tournament_change.parties_back(deps, committed)
    rec = committed.record
    skipped = [
        e.row.player for e in committed.events if isinstance(e, ev.TurnPlayed) and e.row.skipped
    ]
    for pid in dict.fromkeys(skipped):
        # a disconnect changes no deadline of the round: the committed tournament still
        # answers the loop's next due time (a stale answer only costs an idempotent wake)
        gone += check_heard(deps, pid, rec.connections.get(pid))
    presence.drop(deps, gone)
    return committed.changed, rec.tournament


def check_heard(deps: Deps, player_id: str, connection_id: str | None) -> Gone:
    """Ruling 14, read when it matters (a turn of the player's ran out): if ``connection_id``
    was not active for ``Timing.heartbeat_ms`` (API Gateway's ``LastActiveAt``: the client's
    last message, ``ping`` included; ``Notifier.last_active_ms``) — or it is gone —, the player
    is treated as disconnected from the moment the heartbeat timeout passed (``disconnect``
    with that ``at_ms``: ``player_status`` to the others, the reconnect window, then "left")
    and the connection is closed (DeleteConnection). One GetConnection; nothing read with
    liveness off (``heartbeat_ms`` None) or no connection."""
    heartbeat = deps.timing.heartbeat_ms
    if heartbeat is None or connection_id is None:
        return ()
    active = deps.notifier.last_active_ms(connection_id)
    now = deps.clock.now_ms()
    if active is not None and now - active < heartbeat:
        return ()
    since = now if active is None else min(now, active + heartbeat)
    gone = presence.disconnect(deps, connection_id, at_ms=since, player_id=player_id)
    deps.notifier.close(connection_id)
    deps.metrics("SilentConnectionsClosed", 1)
    return gone


def reconnect_deadline(deps: Deps, player_id: str, seq: int) -> int | None:
    """The 60 s reconnect deadline fired: if the player is still away with the same
    ``seq``, free their lobby seat (ruling 9) or treat them as having left (ruling 3); then,
    if they are in a party, they leave it (ruling 10: nobody blocks its start).

    Returns None when handled (or stale: resumed, another ``seq``), or the deadline (UTC ms)
    when the wake came before it: nothing is applied early, the clock waits again.
    """
    player = deps.store.get_player(player_id)
    if player is None or player.connected or player.disconnect_seq != seq:
        return None  # resumed (or stale firing): nothing to do
    deadline = player.reconnect_deadline_ms
    if deadline is not None and deps.clock.now_ms() < deadline:
        return deadline
    if player.status is model.PlayerStatus.QUEUED:
        presence.drop(deps, seating.free_seat(deps, player_id, only_if_disconnect_seq=seq).gone)
    elif player.status is model.PlayerStatus.PLAYING:
        try:
            committed = tournament_change.leave_tournament(
                deps, player, reason="timeout", only_if_disconnect_seq=seq
            )
        except PausedError:
            return None  # kept: resuming moves the deadline and starts its timer again
        if committed is not None:
            presence.drop(deps, committed.gone + tournament_change.parties_back(deps, committed))
    elif player.party_id is None:
        change.run(deps, lambda: _forget_deadline(deps, player_id, seq))
    if player.party_id is not None:
        presence.drop(deps, membership.leave_when_away(deps, player_id, seq))
    return None


def _forget_deadline(deps: Deps, player_id: str, seq: int) -> Change[None]:
    p = deps.store.get_player(player_id)
    if p is None or p.connected or p.disconnect_seq != seq:
        return change.Change(None)
    p.reconnect_deadline_ms = None
    return change.Change(None, [p])


def watchdog(deps: Deps, grace_ms: int, budget_ms: int | None = None) -> int:
    """Apply every deadline overdue by more than ``grace_ms`` whose timer never fired
    (found through the due-time index, never a scan). Returns how many deadlines it applied:
    an index entry where nothing was due (stale: the loop applied it meanwhile, the entry
    lags its item, or another entry's deadline applied it) is not counted.

    The entries are recovered in parallel (``Deps.fan_out``); an entry not started within
    ``budget_ms`` (default ``Deps.watchdog_budget_ms``) of the run's start is left for the next
    run, so a run ends (and counts its heartbeat) before the function's time-out however many
    loops died at once (``infra/simulation/RESULTS.md``, "clock outage").

    A tournament's deadline applied overdue means its round's clock is not running (its start
    failed, or the loop died): the round's clock is scheduled again (``recover``: an intro
    timer of the current round due at its next due time: a new round loop — a duplicate of a
    loop that was merely late is harmless, the clock function applying only what is due;
    Express does not deduplicate by name, on AWS as in the local interpreter). While the game
    is paused (``Deps.switch``, read only when something is overdue) it does nothing: resuming
    restarts the clock."""
    start = deps.clock.now_ms()
    budget = deps.watchdog_budget_ms if budget_ms is None else budget_ms

    def job(kind: str, ref: str) -> Callable[[], int]:
        def run() -> int:
            if deps.clock.now_ms() - start > budget:
                return 0  # found again by the next run
            return recover(deps, kind, ref)

        return run

    entries = deps.store.overdue(start - grace_ms)
    if entries and deps.switch is not None and deps.switch.paused_since_ms() is not None:
        return 0  # read only when something is overdue: the usual run stays one query
    return sum(deps.fan_out([job(kind, ref) for kind, ref in entries]))


def recover(deps: Deps, kind: str, ref: str) -> int:
    """One overdue index entry (``Store.overdue``): apply what is due; restart the clock of a
    tournament where something was applied (an entry where nothing was — stale — starts no
    duplicate loop). Returns 1 when a deadline was applied.

    A player's reconnect deadline that makes them leave a running tournament may apply that
    round's due turns too (the tournament's own entry then finds nothing left): its clock is
    restarted here."""
    if kind == "tournament":
        applied, t = _apply(deps, ref)
        if applied and t is not None:
            _restart(deps, t)
        return 1 if applied else 0
    player = deps.store.get_player(ref)
    if player is None or player.connected or player.reconnect_deadline_ms is None:
        return 0
    playing = player.tournament_id if player.status is model.PlayerStatus.PLAYING else None
    if reconnect_deadline(deps, ref, player.disconnect_seq) is not None:
        return 0  # not yet due (an early entry): nothing applied
    if playing is not None:
        rec = deps.store.get_tournament(playing)
        if rec is not None:
            _restart(deps, rec.tournament)
    return 1


def _restart(deps: Deps, t: Tournament) -> None:
    """Start a loop for the tournament's current round, due at its next due time (none when
    the tournament is over)."""
    due = t.next_due(deps.timing.skip_grace_ms)
    if not t.over and due is not None:
        deps.clock.schedule(Timer(TimerKind.INTRO, t.tournament_id, t.round_no, due))
