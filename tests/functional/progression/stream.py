"""Test support: the table's DynamoDB stream as the history function receives it.

Reads moto's stream with boto3's ``dynamodbstreams`` client (DescribeStream, GetShardIterator,
GetRecords) and wraps records in the Lambda event shape (``Records``, each with ``eventID``,
``eventName``, ``eventSource`` ``aws:dynamodb``, ``dynamodb`` holding ``Keys``, ``NewImage``,
``OldImage``, ``SequenceNumber``; https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html).
"""

from __future__ import annotations

from typing import Any

import boto3

STREAMS_ENDPOINT = "https://streams.dynamodb.us-east-1.amazonaws.com/"


class StreamReader:
    """Every record of the table's stream since the reader was made (each read continues where
    the last one stopped)."""

    def __init__(self, client: Any, table_name: str) -> None:
        # the endpoint's trailing slash: moto 5.2 routes DynamoDB Streams calls only on the
        # path "/", and this botocore sends an empty path
        self.streams = boto3.client(
            "dynamodbstreams", region_name="us-east-1", endpoint_url=STREAMS_ENDPOINT
        )
        arn = client.describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
        self.arn = arn
        self._iterators: dict[str, str | None] = {}

    def read(self) -> list[dict[str, Any]]:
        """The records added since the last read, in stream order per shard."""
        shards = self.streams.describe_stream(StreamArn=self.arn)["StreamDescription"]["Shards"]
        out: list[dict[str, Any]] = []
        for shard in shards:
            sid = shard["ShardId"]
            if sid not in self._iterators:
                self._iterators[sid] = self.streams.get_shard_iterator(
                    StreamArn=self.arn, ShardId=sid, ShardIteratorType="TRIM_HORIZON"
                )["ShardIterator"]
            while self._iterators[sid]:
                resp = self.streams.get_records(ShardIterator=self._iterators[sid], Limit=1000)
                self._iterators[sid] = resp.get("NextShardIterator")
                out += resp["Records"]
                if not resp["Records"]:
                    break
        return out


def lambda_event(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The Lambda event of a batch of stream records (as the event source mapping sends it:
    ``eventSourceARN`` added, the rest as GetRecords returns it, dates as epoch seconds)."""
    out = []
    for r in records:
        data = dict(r["dynamodb"])
        created = data.get("ApproximateCreationDateTime")
        if created is not None and hasattr(created, "timestamp"):
            data["ApproximateCreationDateTime"] = int(created.timestamp())
        out.append({**r, "dynamodb": data, "eventSourceARN": "arn:aws:dynamodb:stream"})
    return {"Records": out}
