"""Entrypoint: the watchdog — a scheduled rule applies deadlines whose timer never started or
failed, found through the due-time index (``shared.services.deadlines.watchdog``: in parallel,
within a budget per run). Counts ``OverdueDeadlines`` (the deadlines it applied) and
``WatchdogHeartbeat`` (1 per completed run)."""

from __future__ import annotations

from typing import Any

from functions._entry import Entrypoint
from shared.runtime.observability import metrics
from shared.services.deadlines import watchdog
from shared.services.deps import Deps


def handle(event: dict[str, Any], deps: Deps) -> dict[str, Any]:
    handled = watchdog(deps, deps.watchdog_grace_ms)
    metrics.add_metric(name="OverdueDeadlines", unit="Count", value=handled)
    # One per completed run: the heartbeat alarm fires when these stop (missing data breaches).
    metrics.add_metric(name="WatchdogHeartbeat", unit="Count", value=1)
    return {"handled": handled}


handler = Entrypoint(handle)
