"""Entrypoint: the history function on the table's stream (``functions.streams.HISTORY``).

Placeholder for the stream plumbing: takes the Lambda DynamoDB-stream event
(https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html) and reports every record done
(``{"batchItemFailures": []}``, ReportBatchItemFailures). The history use case replaces it."""

from __future__ import annotations

from typing import Any


def handler(event: dict[str, Any], context: Any) -> dict[str, list[dict[str, str]]]:
    """Every record of ``event["Records"]`` done: no batch item failures."""
    return {"batchItemFailures": []}
