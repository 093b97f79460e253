"""Entrypoint: the watchdog — a scheduled rule applies deadlines whose timer never started or
failed, found through the due-time index (``shared.services.deadlines.watchdog``)."""

from __future__ import annotations

from typing import Any

from functions._entry import Entrypoint
from shared.runtime.observability import metrics
from shared.services.deadlines import watchdog
from shared.services.deps import Deps


def handle(event: dict[str, Any], deps: Deps) -> dict[str, Any]:
    handled = watchdog(deps, deps.watchdog_grace_ms)
    metrics.add_metric(name="OverdueDeadlines", unit="Count", value=handled)
    return {"handled": handled}


handler = Entrypoint(handle)
