"""Adapters layer: ``ApiGatewayNotifier`` pushes through the API Gateway Management API (endpoint
``CALLBACK_URL``) and reads a connection's ``LastActiveAt`` when liveness matters (ruling 14). A
gone connection is reported back so the disconnect flow runs; any other failure of one recipient
is logged and counted (``PostGone``, ``PostFailed``), never stops the others and is not retried.
Which failures and why: ``shared/domain/RULINGS.md``, Design notes, "Message functions".
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from shared.adapters.lazy_client import LazyClient

logger = logging.getLogger(__name__)


class ApiGatewayNotifier(LazyClient):
    """Args: client — a boto3 ``apigatewaymanagementapi`` client for the stage's callback URL,
    or None with ``client_factory``, which builds it on the first post, close or read (the
    ``$connect`` function never pushes, so its cold start does not build the client); metrics —
    counts ``(name, value)`` (``PostGone``, ``PostFailed``); none: not counted."""

    def __init__(
        self,
        client: Any,
        metrics: Callable[[str, float], None] | None = None,
        *,
        client_factory: Callable[[], Any] | None = None,
    ) -> None:
        self._hold(client, client_factory)
        self._metrics = metrics or _no_metric

    def _failed(self, operation: str, connection_id: str, reason: str) -> None:
        self._metrics("PostFailed", 1)
        logger.warning(
            "%s failed: %s",
            operation,
            reason,
            extra={"target_connection_id": connection_id, "reason": reason},
        )

    def send(self, messages: list[tuple[str, str]]) -> list[str]:
        gone: list[str] = []
        for connection_id, text in messages:
            if connection_id in gone:
                continue
            try:
                self.client.post_to_connection(
                    ConnectionId=connection_id, Data=text.encode("utf-8")
                )
            except self.client.exceptions.GoneException:
                self._metrics("PostGone", 1)
                gone.append(connection_id)
            except ClientError as err:
                self._failed("post_to_connection", connection_id, _code(err))
            except BotoCoreError as err:
                self._failed("post_to_connection", connection_id, type(err).__name__)
        return gone

    def close(self, connection_id: str) -> None:
        try:
            self.client.delete_connection(ConnectionId=connection_id)
        except self.client.exceptions.GoneException:
            pass
        except ClientError as err:
            self._failed("delete_connection", connection_id, _code(err))
        except BotoCoreError as err:
            self._failed("delete_connection", connection_id, type(err).__name__)

    def last_active_ms(self, connection_id: str) -> int | None:
        """``LastActiveAt`` of the connection (UTC ms), or None when it is gone (410
        ``GoneException``). One GetConnection, whose answer is ``ConnectedAt``, ``Identity``
        and ``LastActiveAt`` ("the time in ISO 8601 format for when the connection was last
        active"); AWS, GetConnection in the API Gateway Management API reference:
        https://docs.aws.amazon.com/apigateway/latest/api/API_GetConnection.html

        Any other failure (throttled past botocore's retries, forbidden, transport) is logged,
        counted (``PostFailed``) and read as "active now": a connection is never closed on a
        failed read. AWS does not document whether the server's own posts move
        ``LastActiveAt``; if they do, a silent client that is posted to looks active longer
        (never the other way round: a client that sends is never taken for silent)."""
        try:
            info = self.client.get_connection(ConnectionId=connection_id)
        except self.client.exceptions.GoneException:
            return None
        except ClientError as err:
            self._failed("get_connection", connection_id, _code(err))
            return _now_ms()
        except BotoCoreError as err:
            self._failed("get_connection", connection_id, type(err).__name__)
            return _now_ms()
        active: datetime | None = info.get("LastActiveAt") or info.get("ConnectedAt")
        if active is None:
            return _now_ms()
        return round(active.timestamp() * 1000)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _code(err: ClientError) -> str:
    return str(err.response.get("Error", {}).get("Code"))


def _no_metric(name: str, value: float) -> None:
    """The sink when nobody counts."""
