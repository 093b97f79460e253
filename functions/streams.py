"""Entrypoints: the table's stream -> the functions that read it (Lambda event source mappings),
written down once: CDK deploys :data:`STREAMS` (``infra.cdk.constructs.streams``) and the local
runtime's poller (``infra.emulator.streams``) delivers the same records with the same settings.
Plain data: no CDK, boto3 or handler import.

AWS: "Using AWS Lambda with Amazon DynamoDB",
https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html; "Control which events Lambda sends
to your function" (filter syntax),
https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from shared.adapters.dynamo.schema import PK, SK

Pattern = dict[str, Any]
"""One Lambda filter pattern (a JSON object: nested keys, leaves are lists of conditions)."""


@dataclass(frozen=True)
class StreamSource:
    """One DynamoDB-stream event source mapping.

    ``target``: the handler (``"module:attr"``); ``filters``: Lambda filter patterns, a record
    goes to the function when ANY matches (the others are dropped and checkpointed as done);
    ``batch_size``: records per invocation at most (``BatchSize``); ``batching_window_s``: how
    long a batch may gather (``MaximumBatchingWindowInSeconds``); ``retry_attempts``: retries
    of a failing batch before its metadata goes to the failure destination
    (``MaximumRetryAttempts``); ``max_record_age_s``: a record older than this goes there too
    (``MaximumRecordAgeInSeconds``); ``bisect``: split a failing batch in two
    (``BisectBatchOnFunctionError``); ``report_batch_item_failures``: the function answers
    ``{"batchItemFailures": [{"itemIdentifier": <SequenceNumber>}]}``
    (``FunctionResponseTypes``); ``starting_position``: where a new mapping begins."""

    target: str
    filters: tuple[Pattern, ...]
    batch_size: int = 100
    batching_window_s: int = 2
    retry_attempts: int = 5
    max_record_age_s: int = 24 * 3600
    bisect: bool = True
    report_batch_item_failures: bool = True
    starting_position: str = "TRIM_HORIZON"
    description: str = field(default="", compare=False)

    def filter_json(self) -> list[str]:
        """The patterns as the ``FilterCriteria.Filters[].Pattern`` strings AWS takes."""
        return [json.dumps(p, separators=(",", ":"), sort_keys=True) for p in self.filters]


TOURNAMENT_CLOSED_ROUND: Pattern = {
    "dynamodb": {
        "Keys": {PK: {"S": [{"prefix": "TOURN#"}]}, SK: {"S": ["STATE"]}},
        "NewImage": {"hist": {"N": [{"exists": True}]}},
    }
}
"""A tournament's ``STATE`` item written with ``hist`` (a closed round, or the tournament over):
``exists`` matches leaves only, hence ``hist.N``."""

PLAYER_PROFILE: Pattern = {
    "dynamodb": {"Keys": {PK: {"S": [{"prefix": "PLAYER#"}]}, SK: {"S": ["PROFILE"]}}}
}
"""A player's ``PROFILE`` item, any event (INSERT, MODIFY, REMOVE)."""

HISTORY = StreamSource(
    target="functions.history:handler",
    filters=(TOURNAMENT_CLOSED_ROUND, PLAYER_PROFILE),
    description="the table's stream: round records, tournament records, boards (issue 38)",
)
"""The history function's mapping: off the play path, at-least-once, idempotent."""

STREAMS: dict[str, StreamSource] = {"history": HISTORY}
"""Function module -> its stream source (``functions.routes.function_name`` of the target)."""
