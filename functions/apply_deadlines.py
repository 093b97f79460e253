"""Entrypoint: the clock function — invoked by the deadline state machine (or the local
clock) with `{"kind", "ref", "seq", "due_ms"}` (DESIGN.md §3 Clocks).

The state machine loops once per round (``shared.adapters.step_functions``): it hands in its whole
state (``due``, ``loop_started_ms`` too) and the result is the next state — ``loop`` (wait
until the new ``due`` and call again), ``handover`` (continue in a successor execution) —
plus ``applied`` and ``name``. A plain timer event (the local clock, tests) gets the same
result; the local clock ignores it.
"""

from __future__ import annotations

from typing import Any

from shared.adapters.step_functions import loop_state
from shared.runtime.bootstrap import get_deps
from shared.runtime.observability import logger, metrics
from shared.services.deadlines import fire_round
from shared.services.ports import Timer


@metrics.log_metrics
@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    timer = Timer.from_event(event)
    deps = get_deps()
    late_ms = deps.clock.now_ms() - timer.due_ms
    logger.append_keys(timer_kind=timer.kind.value, ref=timer.ref, seq=timer.seq)
    metrics.add_metric(name="TimerLateMs", unit="Milliseconds", value=max(0, late_ms))
    fired = fire_round(deps, timer)
    if fired.applied is False:  # late, duplicate or stale: only read
        metrics.add_metric(name="TimerNoop", unit="Count", value=1)
    state = loop_state(event, fired.next_due_ms, deps.clock.now_ms())
    if state["handover"]:
        metrics.add_metric(name="ClockHandovers", unit="Count", value=1)
    return {**state, "applied": fired.applied, "name": timer.name}
