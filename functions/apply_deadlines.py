"""Entrypoint: the clock function — the Task of the deadline state machine
(``shared.adapters.step_functions``), on AWS and in ``infra.emulator.states``.

Input ``{"state": {kind, ref, seq, due_ms, due, loop_started_ms}, "machine": <ARN>}`` (a bare
state too; ``due_ms`` UTC ms, ``due`` ISO-8601). Applies what is due, never early
(``shared.services.deadlines.fire_round``), returns the next state (``loop``, ``handover``,
``applied``, ``name``). A busy table (``TryAgainError`` past the store's retries) is a designed
retry, not an error: the wake answers the same loop again ``BUSY_RETRY_MS`` later and counts
``ClockRetried`` (Lambda's ``Errors``, which the alarms read, stay for what nobody designed). Other
errors propagate (the Task retries; the watchdog recovers a dead loop).
"""

from __future__ import annotations

from typing import Any

from functions._entry import Entrypoint
from shared.adapters.step_functions import loop_state
from shared.runtime.observability import logger, metrics
from shared.services.deadlines import fire_round
from shared.services.deps import Deps
from shared.services.errors import TryAgainError
from shared.services.ports import Timer

BUSY_RETRY_MS = 1_000
"""A wake that found the table busy wakes again this much later (the Task's first retry)."""


def loop_state_of(event: dict[str, Any]) -> dict[str, Any]:
    """The loop's state in the event (``{"state": ..., "machine": ...}`` or a bare state)."""
    state = event.get("state")
    return state if isinstance(state, dict) else event


def machine_of(event: dict[str, Any]) -> dict[str, str]:
    """The settings the execution context supplies: ``state_machine_arn`` (when present)."""
    machine = event.get("machine")
    return {"state_machine_arn": machine} if isinstance(machine, str) and machine else {}


def handle(event: dict[str, Any], deps: Deps) -> dict[str, Any]:
    """One wake: apply what is due, answer the loop's next state (see the module docstring)."""
    event = loop_state_of(event)
    logger.append_keys(timer_kind=event.get("kind"), ref=event.get("ref"), seq=event.get("seq"))
    timer = Timer.from_event(event)
    late_ms = deps.clock.now_ms() - timer.due_ms
    metrics.add_metric(name="TimerLateMs", unit="Milliseconds", value=max(0, late_ms))
    try:
        fired = fire_round(deps, timer)
    except TryAgainError:
        metrics.add_metric(name="ClockRetried", unit="Count", value=1)
        now = deps.clock.now_ms()
        state = loop_state(event, max(timer.due_ms, now + BUSY_RETRY_MS), now)
        return {**state, "applied": False, "name": timer.name}
    if fired.applied is False:  # early, late, duplicate or stale: only read
        metrics.add_metric(name="TimerNoop", unit="Count", value=1)
    state = loop_state(event, fired.next_due_ms, deps.clock.now_ms())
    if state["handover"]:
        metrics.add_metric(name="ClockHandovers", unit="Count", value=1)
    return {**state, "applied": fired.applied, "name": timer.name}


handler = Entrypoint(handle, settings_from_event=machine_of)
