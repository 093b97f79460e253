"""Entrypoint: the party routes (`party_create`, `party_join`, `party_leave`, `party_start`)
share one small function."""

from __future__ import annotations

from typing import Any

from functions._actions import dispatch
from functions._handler import handle_message
from shared.runtime.observability import logger, metrics


@metrics.log_metrics
@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return handle_message(event, dispatch)
