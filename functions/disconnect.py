"""Entrypoint: `$disconnect` — starts the disconnect flow (ruling 9, reconnect deadline)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.models import (
    APIGatewayWebSocketDisconnectEventModel,
)

from shared.runtime.bootstrap import get_deps
from shared.runtime.observability import logger, metrics
from shared.services.players import disconnect


@metrics.log_metrics
@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    request = parse(event=event, model=APIGatewayWebSocketDisconnectEventModel)
    metrics.add_metric(name="Disconnects", unit="Count", value=1)
    disconnect(get_deps(), request.request_context.connection_id)
    return {"statusCode": 200}
