"""Entrypoint: the clock function — the Task of the deadline state machine
(``shared.adapters.step_functions``; DESIGN.md §3 Clocks), on AWS and in the local interpreter
of the same definition (``infra.emulator.states``).

Input: the loop's state ``{"kind", "ref", "seq", "due_ms", "due", "loop_started_ms"}``
(``due_ms`` UTC ms, ``due`` the Wait's ISO-8601 timestamp). It applies what is due now
(``shared.services.deadlines.fire_round``: never early — an early wake only reads) and returns
the next state (``loop_state``): ``loop`` (wait until the new ``due`` and call again),
``handover`` (continue in a successor execution before Express's 5 minutes), plus ``applied``
and ``name``. Errors (e.g. ``TryAgainError`` when the table stays busy) propagate: the Task's
Retry runs it again, and the watchdog recovers a loop that dies.
"""

from __future__ import annotations

from typing import Any

from functions._entry import Entrypoint
from shared.adapters.step_functions import loop_state
from shared.runtime.observability import logger, metrics
from shared.services.deadlines import fire_round
from shared.services.deps import Deps
from shared.services.ports import Timer


def handle(event: dict[str, Any], deps: Deps) -> dict[str, Any]:
    """One wake: apply what is due, answer the loop's next state (see the module docstring)."""
    logger.append_keys(timer_kind=event.get("kind"), ref=event.get("ref"), seq=event.get("seq"))
    timer = Timer.from_event(event)
    late_ms = deps.clock.now_ms() - timer.due_ms
    metrics.add_metric(name="TimerLateMs", unit="Milliseconds", value=max(0, late_ms))
    fired = fire_round(deps, timer)
    if fired.applied is False:  # early, late, duplicate or stale: only read
        metrics.add_metric(name="TimerNoop", unit="Count", value=1)
    state = loop_state(event, fired.next_due_ms, deps.clock.now_ms())
    if state["handover"]:
        metrics.add_metric(name="ClockHandovers", unit="Count", value=1)
    return {**state, "applied": fired.applied, "name": timer.name}


handler = Entrypoint(handle)
