"""Local runtime: the table's stream as DynamoDB Streams writes it (moto patched:
``infra.emulator.moto_speedups.ItemRollback`` and ``StreamRecords``), and the emulator
delivering it to the stream functions (``functions.streams.STREAMS``) eventually, through its
poller, over the moto process's endpoint."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from infra.emulator import Emulator
from infra.emulator.dynamo import EmbeddedDynamo
from shared.adapters.dynamo.schema import create_tables

from .echo import session
from .test_emulator_dynamo import in_process_client

pytestmark = pytest.mark.enable_socket

TABLE = "stream-test"


@pytest.fixture
def dynamo() -> Iterator[EmbeddedDynamo]:
    with EmbeddedDynamo() as db:
        yield db


def _stream(dynamo: EmbeddedDynamo) -> list[dict[str, Any]]:
    """Every record of the table's stream so far (its one shard, from the start)."""
    ddb = session().client("dynamodb", endpoint_url=dynamo.endpoint)
    arn = ddb.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
    streams = session().client("dynamodbstreams", endpoint_url=dynamo.endpoint)
    records = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        records += streams.get_records(ShardIterator=iterator)["Records"]
    return records


def _key(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": "STATE"}}


@pytest.mark.parametrize("path", ["http", "in-process"])
def test_a_cancelled_transaction_writes_no_stream_record(dynamo: EmbeddedDynamo, path: str) -> None:
    ddb = in_process_client(dynamo) if path == "in-process" else None
    ddb = ddb or session().client("dynamodb", endpoint_url=dynamo.endpoint)
    create_tables(ddb, TABLE)
    ddb.put_item(TableName=TABLE, Item={**_key("TOURN#a"), "n": {"N": "1"}})
    ddb.put_item(TableName=TABLE, Item={**_key("TOURN#guard")})
    before = len(_stream(dynamo))
    with pytest.raises(ddb.exceptions.TransactionCanceledException):
        ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": {**_key("TOURN#new"), "hist": {"N": "1"}}}},
                {
                    "Update": {
                        "TableName": TABLE,
                        "Key": _key("TOURN#a"),
                        "UpdateExpression": "SET hist = :r",
                        "ExpressionAttributeValues": {":r": {"N": "2"}},
                    }
                },
                {
                    "ConditionCheck": {
                        "TableName": TABLE,
                        "Key": _key("TOURN#guard"),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )
    assert len(_stream(dynamo)) == before
    ddb.put_item(TableName=TABLE, Item={**_key("TOURN#b")})
    records = _stream(dynamo)
    assert [r["eventName"] for r in records[before:]] == ["INSERT"]
    numbers = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert numbers == sorted(set(numbers))


def test_a_write_that_changes_nothing_writes_no_stream_record(dynamo: EmbeddedDynamo) -> None:
    ddb = session().client("dynamodb", endpoint_url=dynamo.endpoint)
    create_tables(ddb, TABLE)
    item = {**_key("TOURN#a"), "n": {"N": "1"}}
    ddb.put_item(TableName=TABLE, Item=item)
    ddb.put_item(TableName=TABLE, Item=item)
    ddb.update_item(
        TableName=TABLE,
        Key=_key("TOURN#a"),
        UpdateExpression="SET n = :n",
        ExpressionAttributeValues={":n": {"N": "1"}},
    )
    assert [r["eventName"] for r in _stream(dynamo)] == ["INSERT"]


def test_an_update_that_creates_its_item_writes_one_insert(dynamo: EmbeddedDynamo) -> None:
    ddb = session().client("dynamodb", endpoint_url=dynamo.endpoint)
    create_tables(ddb, TABLE)
    ddb.update_item(
        TableName=TABLE,
        Key=_key("PLAYER#p"),
        UpdateExpression="ADD tournaments :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )
    ddb.update_item(
        TableName=TABLE,
        Key=_key("PLAYER#p"),
        UpdateExpression="ADD tournaments :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )
    records = _stream(dynamo)
    assert [r["eventName"] for r in records] == ["INSERT", "MODIFY"]
    assert records[0]["dynamodb"]["NewImage"]["tournaments"] == {"N": "1"}
    assert "OldImage" not in records[0]["dynamodb"]
    assert records[1]["dynamodb"]["OldImage"]["tournaments"] == {"N": "1"}
    assert int(records[1]["dynamodb"]["SequenceNumber"]) > int(
        records[0]["dynamodb"]["SequenceNumber"]
    )


def test_a_shard_keeps_its_newest_records_and_refuses_a_trimmed_position(
    dynamo: EmbeddedDynamo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory stays bounded (moto would keep every record for ever): past ``MAX_RECORDS`` the
    oldest go, sequence numbers run on unchanged, and an iterator at a trimmed position is
    refused ``TrimmedDataAccessException`` as AWS refuses a record past its retention."""
    from infra.emulator.moto_speedups import StreamRecords

    monkeypatch.setattr(StreamRecords, "MAX_RECORDS", 5)
    dynamo.stream_records.uninstall()
    dynamo.stream_records.install()  # the new bound
    ddb = session().client("dynamodb", endpoint_url=dynamo.endpoint)
    create_tables(ddb, TABLE)
    ddb.put_item(TableName=TABLE, Item={**_key("TOURN#0")})
    arn = ddb.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
    streams = session().client("dynamodbstreams", endpoint_url=dynamo.endpoint)
    (shard,) = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    first = streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    for n in range(1, 8):
        ddb.put_item(TableName=TABLE, Item={**_key(f"TOURN#{n}")})
    records = _stream(dynamo)
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in records] == [
        f"TOURN#{n}" for n in range(3, 8)
    ]
    numbers = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert numbers == list(range(numbers[0], numbers[0] + 5))
    with pytest.raises(streams.exceptions.ClientError) as refused:
        streams.get_records(ShardIterator=first)
    assert refused.value.response["Error"]["Code"] == "TrimmedDataAccessException"


# -- the emulator delivers the stream ----------------------------------------------------------


class Recording:
    """A stream function: every record it got, in order; a test may await a count."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        with self.lock:
            self.records.extend(event["Records"])
        return {"batchItemFailures": []}

    def keys(self) -> list[tuple[str, str]]:
        with self.lock:
            return [(r["dynamodb"]["Keys"]["pk"]["S"], r["eventName"]) for r in self.records]


@pytest.mark.usefixtures("clean_env")
def test_a_write_to_the_table_reaches_the_stream_function_eventually() -> None:
    """On the moto process's endpoint (the default): a closed round and a profile arrive, the
    tournament's other writes and other items do not, and nothing arrives twice."""
    from .echo import EchoApp  # noqa: F401  (the stand-in routes' module)
    from .test_emulator_runtime import spec

    history = Recording()

    async def scenario() -> None:
        routes = {"$connect": spec("connect_handler"), "$disconnect": spec("disconnect_handler")}
        async with Emulator(
            routes=routes,
            watchdog_seconds=None,
            stream_handlers={"history": history},
            stream_poll_seconds=0.1,
        ) as emu:
            ddb = emu.dynamodb_client()
            table = emu.table_name
            ddb.put_item(TableName=table, Item={**_key("TOURN#t1"), "seq": {"N": "1"}})
            ddb.put_item(TableName=table, Item={**_key("TOURN#t1"), "hist": {"N": "1"}})
            ddb.put_item(
                TableName=table,
                Item={"pk": {"S": "PLAYER#p1"}, "sk": {"S": "PROFILE"}, "rating": {"N": "1500"}},
            )
            ddb.put_item(TableName=table, Item={"pk": {"S": "PLAYER#p1"}, "sk": {"S": "STATS"}})
            assert history.keys() == []  # never inside the write
            wanted = [("TOURN#t1", "MODIFY"), ("PLAYER#p1", "INSERT")]
            deadline = time.monotonic() + 20
            while history.keys() != wanted and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert history.keys() == wanted
            await asyncio.sleep(0.5)  # a few more polls: nothing again
            assert history.keys() == wanted
            poller = emu.streams["history"]
            assert poller.failures == []
            assert poller.delivered == 2
        assert emu.streams == {}

    asyncio.run(asyncio.wait_for(scenario(), timeout=90))


# -- the harness delivers the stream when a test says so --------------------------------------


def test_the_harness_delivers_the_stream_once_when_asked(backend: Any) -> None:
    history = Recording()
    player = backend.player("ada")
    assert history.keys() == []
    (poller,) = backend.deliver_streams({"history": history}).values()
    assert history.keys() == [(f"PLAYER#{player.id}", "INSERT")]
    backend.deliver_streams()
    assert history.keys() == [(f"PLAYER#{player.id}", "INSERT")]  # each record once
    player.send("nickname", nickname="Grace")
    backend.deliver_streams()
    assert history.keys()[1:] == [(f"PLAYER#{player.id}", "MODIFY")]
    record = history.records[-1]["dynamodb"]
    assert record["NewImage"] != record["OldImage"]
    assert poller.failures == []
