"""Entrypoint: the history function, on the table's DynamoDB stream (issue 38).

Each record of the batch goes to ``shared.services.history.apply`` through Powertools' batch
utility, which answers with the failed records' sequence numbers (``batchItemFailures``): Lambda
retries from the first failed one, and the other records are not re-applied by design of the
use case (every write idempotent). AWS Lambda, "Configuring partial batch response with DynamoDB
and Lambda": https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html;
the event shape: https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html. Counts
``HistoryRecords`` (records in the batch) and ``HistoryFailures`` (records failed).
"""

from __future__ import annotations

from typing import Any

from functions._entry import Entrypoint
from shared.runtime.observability import metrics
from shared.services.deps import Deps


def handle(event: dict[str, Any], deps: Deps) -> dict[str, Any]:
    """The partial batch response ``{"batchItemFailures": [{"itemIdentifier": seq}, ...]}``.
    Raises ``BatchProcessingError`` when every record failed (Lambda retries the batch,
    bisecting it) and RuntimeError when ``deps`` keeps no history."""
    from aws_lambda_powertools.utilities.batch import (
        BatchProcessor,
        EventType,
        process_partial_response,
    )
    from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
        DynamoDBRecord,
    )

    from shared.adapters.dynamo.history import stream_change
    from shared.services.history import apply

    history = deps.history
    if history is None:
        raise RuntimeError("this function's Deps keep no history store")

    def record_handler(record: DynamoDBRecord) -> None:
        apply(history, stream_change(record.raw_event))

    processor = BatchProcessor(event_type=EventType.DynamoDBStreams)
    records = len(event.get("Records", []))
    metrics.add_metric(name="HistoryRecords", unit="Count", value=records)
    response = process_partial_response(
        event=event, record_handler=record_handler, processor=processor
    )
    failures = len(response.get("batchItemFailures", []))
    metrics.add_metric(name="HistoryFailures", unit="Count", value=failures)
    return dict(response)


handler = Entrypoint(handle)
