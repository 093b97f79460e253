"""Entrypoint: ``$disconnect`` — starts the disconnect flow (ruling 9, reconnect deadline)."""

from __future__ import annotations

from typing import Any

from functions._entry import Entrypoint, SocketEvent
from shared.runtime.observability import logger, metrics
from shared.services import sessions
from shared.services.deps import Deps


def handle(event: dict[str, Any], deps: Deps) -> dict[str, Any]:
    context = SocketEvent(event)
    connection_id = context.connection_id
    logger.append_keys(connection_id=connection_id, api_request_id=context.request_id)
    metrics.add_metric(name="Disconnects", unit="Count", value=1)
    if deps.limiter is not None:
        deps.limiter.forget(connection_id)
    closed = event["requestContext"].get("requestTimeEpoch")
    sessions.disconnect(deps, connection_id, closed if isinstance(closed, int) else None)
    return {"statusCode": 200}


handler = Entrypoint(handle)
