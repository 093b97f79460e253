"""Infrastructure: the table's stream delivered to the functions that read it, one event source
mapping per ``functions.streams.STREAMS`` entry (its settings and filter patterns exactly as
written there: the local runtime's poller, ``infra.emulator.streams``, reads the same), on the
function's ``live`` alias, with an encrypted SQS queue as its on-failure destination.

AWS: "Using AWS Lambda with Amazon DynamoDB" (batching, retries, bisect, on-failure
destinations), https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html; "Control which
events Lambda sends to your function",
https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from functions.routes import function_name
from functions.streams import StreamSource
from infra.cdk.constructs.nag import acknowledge

FAILURE_RETENTION = Duration.days(14)
"""A failed batch's record (its shard and sequence numbers, not the records) is kept this long
in the failure queue: SQS's maximum, time to redrive it (``infra/RUNBOOK.md``,
HistoryFailureQueue). The stream itself keeps records 24 hours."""

_STARTING_POSITIONS = {
    "TRIM_HORIZON": lambda_.StartingPosition.TRIM_HORIZON,
    "LATEST": lambda_.StartingPosition.LATEST,
}


def filter_criteria(source: StreamSource) -> list[dict[str, object]]:
    """``source``'s patterns as CDK's ``filters`` (one ``{"pattern": <JSON text>}`` each)."""
    return [{"pattern": text} for text in source.filter_json()]


class StreamSources(Construct):
    """Attributes: ``failure_queues`` (function module -> its on-failure queue) and
    ``mappings`` (function module -> its ``DynamoEventSource``).

    Args: table — the table with a stream; aliases — function module -> the ``live`` alias the
    mapping invokes; streams — ``functions.streams.STREAMS``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        table: dynamodb.ITable,
        aliases: Mapping[str, lambda_.IFunction],
        streams: Mapping[str, StreamSource],
    ) -> None:
        super().__init__(scope, construct_id)
        self.failure_queues: dict[str, sqs.Queue] = {}
        self.mappings: dict[str, sources.DynamoEventSource] = {}
        for module, source in streams.items():
            if function_name(source.target) != module:
                raise KeyError(f"STREAMS[{module!r}] names {source.target}")
            logical = "".join(part.capitalize() for part in module.split("_"))
            queue = sqs.Queue(
                self,
                f"{logical}Failures",
                encryption=sqs.QueueEncryption.SQS_MANAGED,
                enforce_ssl=True,
                retention_period=FAILURE_RETENTION,
            )
            acknowledge(
                queue,
                "AwsSolutions-SQS3",
                "This queue is itself the dead-letter destination of the stream's event "
                "source mapping: it holds failed batches' metadata for a redrive.",
            )
            mapping = sources.DynamoEventSource(
                table,
                starting_position=_STARTING_POSITIONS[source.starting_position],
                batch_size=source.batch_size,
                max_batching_window=Duration.seconds(source.batching_window_s),
                retry_attempts=source.retry_attempts,
                max_record_age=Duration.seconds(source.max_record_age_s),
                bisect_batch_on_error=source.bisect,
                report_batch_item_failures=source.report_batch_item_failures,
                on_failure=sources.SqsDlq(queue),
                filters=[
                    lambda_.FilterCriteria.filter(json.loads(text)) for text in source.filter_json()
                ],
            )
            # Lambda's poller reads the stream with the function's role: CDK grants
            # DescribeStream, GetRecords and GetShardIterator on the stream's ARN, and
            # ListStreams, which has no resource type (Resource "*": the role's IAM5
            # acknowledgement, ``infra.cdk.constructs.functions``).
            aliases[module].add_event_source(mapping)
            self.failure_queues[module] = queue
            self.mappings[module] = mapping
