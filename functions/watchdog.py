"""Entrypoint: the watchdog — a scheduled rule applies deadlines whose timer never started
or failed, found through the due-time index (issue 5 item 5)."""

from __future__ import annotations

from typing import Any

from shared.runtime.bootstrap import get_deps
from shared.runtime.observability import logger, metrics
from shared.runtime.settings import get_settings
from shared.services.deadlines import watchdog


@metrics.log_metrics
@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    handled = watchdog(get_deps(), round(get_settings().watchdog_grace_seconds * 1000))
    metrics.add_metric(name="OverdueDeadlines", unit="Count", value=handled)
    return {"handled": handled}
