"""Entrypoint: the clock function — invoked by the deadline state machine (or the local
clock) with `{"kind", "ref", "seq", "due_ms"}` (DESIGN.md §3 Clocks)."""

from __future__ import annotations

from typing import Any

from shared.runtime.bootstrap import get_deps
from shared.runtime.observability import logger, metrics
from shared.services.clock import fire
from shared.services.ports import Timer


@metrics.log_metrics
@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    timer = Timer.from_event(event)
    deps = get_deps()
    late_ms = deps.clock.now_ms() - timer.due_ms
    logger.append_keys(timer_kind=timer.kind.value, ref=timer.ref, seq=timer.seq)
    metrics.add_metric(name="TimerLateMs", unit="Milliseconds", value=max(0, late_ms))
    applied = fire(deps, timer)
    if applied is False:  # late, duplicate or stale: only read
        metrics.add_metric(name="TimerNoop", unit="Count", value=1)
    return {"applied": applied, "name": timer.name}
