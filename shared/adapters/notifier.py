"""Adapters layer: ``ApiGatewayNotifier`` — pushes through the API Gateway Management API.

The endpoint comes from settings (``CALLBACK_URL``), so the local gateway can stand in.
``GoneException`` is caught *before* ``ClientError`` (it is a subclass) and reported back so the
disconnect flow runs; any other failure of one recipient is logged and never stops the others:
``LimitExceededException`` (the connection's own outbound throttle; botocore's standard mode has
already retried it), ``ForbiddenException``, and transport errors (``BotoCoreError``: connection
reset, read timeout) alike. A message lost that way is not retried later: every client redraws
from the ``session`` snapshot on resume.
"""

from __future__ import annotations

import logging
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

logger = logging.getLogger(__name__)


class ApiGatewayNotifier:
    """Args: client — a boto3 ``apigatewaymanagementapi`` client for the stage's callback URL."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def send(self, messages: list[tuple[str, str]]) -> list[str]:
        gone: list[str] = []
        for connection_id, text in messages:
            if connection_id in gone:
                continue
            try:
                self._client.post_to_connection(
                    ConnectionId=connection_id, Data=text.encode("utf-8")
                )
            except self._client.exceptions.GoneException:
                gone.append(connection_id)
            except ClientError as err:
                logger.warning(
                    "post_to_connection failed: %s", err.response.get("Error", {}).get("Code")
                )
            except BotoCoreError as err:
                logger.warning("post_to_connection failed: %s", type(err).__name__)
        return gone

    def close(self, connection_id: str) -> None:
        try:
            self._client.delete_connection(ConnectionId=connection_id)
        except self._client.exceptions.GoneException:
            pass
        except ClientError as err:
            logger.warning(
                "delete_connection failed: %s", err.response.get("Error", {}).get("Code")
            )
        except BotoCoreError as err:
            logger.warning("delete_connection failed: %s", type(err).__name__)
