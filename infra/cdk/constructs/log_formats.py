"""Infrastructure: the API Gateway stage's access log format, kept free of CDK imports so the
cost benchmark can size its lines (``infra.benchmarks.cost``) without starting jsii.

API Gateway writes one line per WebSocket event the stage handles (``$connect``,
``$disconnect``, every message, the MOCK-answered ``ping`` included) with these
``$context`` variables; AWS, "Logging WebSocket API access" (the ``$context`` variables for
access logging):
https://docs.aws.amazon.com/apigateway/latest/developerguide/websocket-api-logging.html
"""

from __future__ import annotations

from typing import Final

ACCESS_LOG_FORMAT: Final[dict[str, str]] = {
    "requestId": "$context.requestId",
    "requestTime": "$context.requestTimeEpoch",
    "stage": "$context.stage",
    "connectionId": "$context.connectionId",
    "sourceIp": "$context.identity.sourceIp",
    "eventType": "$context.eventType",
    "routeKey": "$context.routeKey",
    "status": "$context.status",
    "integrationStatus": "$context.integration.status",
    "integrationLatency": "$context.integration.latency",
    "error": "$context.error.message",
    "integrationError": "$context.integration.error",
}
"""No query string, no body: players are anonymous (ruling 11). The source address is there so
that an operator can find who created too many players or farmed a rating (ruling 17,
``infra/RUNBOOK.md``); the logs keep it only for the log group's retention. The stage's status
metric filters (``infra.cdk.constructs.monitoring.STATUS_FILTERS``) read ``status``."""
