"""Entrypoint: `$connect` — records the connection. The session token is never in the URL
(ruling 11); it arrives in the `session` message."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.models import APIGatewayWebSocketConnectEventModel

from shared.runtime.bootstrap import get_deps
from shared.runtime.observability import logger, metrics
from shared.services.players import connect


@metrics.log_metrics
@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    request = parse(event=event, model=APIGatewayWebSocketConnectEventModel)
    connect(get_deps(), request.request_context.connection_id)
    return {"statusCode": 200}
