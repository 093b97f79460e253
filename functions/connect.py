"""Entrypoint: ``$connect`` — records the connection. The session token is never in the URL
(ruling 11); it arrives in the ``session`` message."""

from __future__ import annotations

from typing import Any

from functions._entry import Entrypoint, SocketEvent
from shared.runtime.observability import logger
from shared.services.connections import connect
from shared.services.deps import Deps


def handle(event: dict[str, Any], deps: Deps) -> dict[str, Any]:
    context = SocketEvent(event)
    logger.append_keys(connection_id=context.connection_id, api_request_id=context.request_id)
    connect(deps, context.connection_id, context.source_ip)
    return {"statusCode": 200}


handler = Entrypoint(handle)
