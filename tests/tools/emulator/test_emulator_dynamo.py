"""Local runtime: the embedded moto DynamoDB is reachable over HTTP and serialises requests."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from infra.emulator.dynamo import EmbeddedDynamo, SerialisedApp, create_tables
from infra.emulator.inprocess import DynamoTransport, register

from .echo import make_key_table, session

pytestmark = pytest.mark.enable_socket

TABLE = "emulator-test"


@pytest.fixture
def dynamo() -> Iterator[EmbeddedDynamo]:
    with EmbeddedDynamo() as db:
        yield db


@pytest.fixture
def eager_thread_switching() -> Iterator[None]:
    """Switch threads every 50 µs instead of 5 ms, so unserialised moto races show up.

    With the default interval a lost update is rare; with this one the ADD test below fails
    within a run when the serialising middleware is bypassed (checked by hand).
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(5e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def client(endpoint: str) -> Any:
    return session().client("dynamodb", endpoint_url=endpoint)


def make_table(ddb: Any) -> None:
    make_key_table(ddb, TABLE)


def test_embedded_dynamodb_is_reachable_on_a_local_endpoint(dynamo: EmbeddedDynamo) -> None:
    assert dynamo.endpoint.startswith("http://127.0.0.1:")
    ddb = client(dynamo.endpoint)
    make_table(ddb)
    ddb.put_item(TableName=TABLE, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    item = ddb.get_item(TableName=TABLE, Key={"pk": {"S": "a"}}, ConsistentRead=True)["Item"]
    assert item["v"] == {"N": "1"}


@pytest.mark.usefixtures("eager_thread_switching")
def test_racing_conditional_increments_have_exactly_one_winner_each_round(
    dynamo: EmbeddedDynamo,
) -> None:
    """Optimistic concurrency: every thread reads n, then all write n+1 "if n is unchanged".

    moto evaluates a condition and applies the write in separate steps; unserialised, several
    racers could pass the same condition (a lost update AWS never allows). Serialised, each
    round has exactly one winner and the counter ends at the number of rounds.
    """
    ddb = client(dynamo.endpoint)
    make_table(ddb)
    key = {"pk": {"S": "counter"}}
    ddb.put_item(TableName=TABLE, Item={**key, "n": {"N": "0"}})
    racers, rounds = 8, 10
    clients = [client(dynamo.endpoint) for _ in range(racers)]
    read_done = threading.Barrier(racers)

    def race(local: Any) -> bool:
        item = local.get_item(TableName=TABLE, Key=key, ConsistentRead=True)["Item"]
        seen = item["n"]["N"]
        read_done.wait(30)  # everyone has read the same n before anyone writes
        try:
            local.put_item(
                TableName=TABLE,
                Item={**key, "n": {"N": str(int(seen) + 1)}},
                ConditionExpression="n = :seen",
                ExpressionAttributeValues={":seen": {"N": seen}},
            )
        except local.exceptions.ConditionalCheckFailedException:
            return False
        return True

    with ThreadPoolExecutor(racers) as pool:
        for _ in range(rounds):
            wins = [f.result() for f in [pool.submit(race, c) for c in clients]]
            assert wins.count(True) == 1
    item = ddb.get_item(TableName=TABLE, Key=key, ConsistentRead=True)["Item"]
    assert item["n"] == {"N": str(rounds)}


@pytest.mark.usefixtures("eager_thread_switching")
def test_atomic_add_from_many_threads_gives_the_exact_count(dynamo: EmbeddedDynamo) -> None:
    ddb = client(dynamo.endpoint)
    make_table(ddb)
    key = {"pk": {"S": "adds"}}

    def add_many() -> None:
        local = client(dynamo.endpoint)
        for _ in range(10):
            local.update_item(
                TableName=TABLE,
                Key=key,
                UpdateExpression="ADD n :one",
                ExpressionAttributeValues={":one": {"N": "1"}},
            )

    with ThreadPoolExecutor(8) as pool:
        for future in [pool.submit(add_many) for _ in range(8)]:
            future.result()
    item = ddb.get_item(TableName=TABLE, Key=key, ConsistentRead=True)["Item"]
    assert item["n"] == {"N": "80"}


def test_serialised_app_runs_one_request_at_a_time() -> None:
    inside = 0
    most = 0
    guard = threading.Lock()
    barrier = threading.Barrier(8)

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        nonlocal inside, most
        with guard:
            inside += 1
            most = max(most, inside)
        start_response("200 OK", [])
        with guard:
            inside -= 1
        return [b"o", b"k"]

    wrapped = SerialisedApp(app)

    def call() -> bytes:
        barrier.wait()
        return b"".join(wrapped({}, lambda *a: None))

    with ThreadPoolExecutor(8) as pool:
        results = [f.result() for f in [pool.submit(call) for _ in range(8)]]
    assert results == [b"ok"] * 8
    assert most == 1


def test_each_embedded_instance_starts_empty() -> None:
    with EmbeddedDynamo() as first:
        make_table(client(first.endpoint))
    with EmbeddedDynamo() as second:
        assert client(second.endpoint).list_tables()["TableNames"] == []


def test_create_tables_uses_the_schema_module_when_present(dynamo: EmbeddedDynamo) -> None:
    ddb = client(dynamo.endpoint)
    created = create_tables(ddb, "schema-table")
    if not created:
        pytest.skip("shared.adapters.dynamo.schema.create_tables not written yet")
    assert "schema-table" in ddb.list_tables()["TableNames"]
    assert create_tables(ddb, "schema-table")  # an existing table is not an error


def in_process_client(dynamo: EmbeddedDynamo) -> Any:
    """A client whose calls reach moto in-process (the handlers' path in the emulator)."""
    s = session()
    register(s, dynamo=DynamoTransport(dynamo.endpoint, dynamo.lock))
    return s.client("dynamodb", endpoint_url=dynamo.endpoint)


def test_the_in_process_path_and_http_see_one_database(dynamo: EmbeddedDynamo) -> None:
    over_http, in_process = client(dynamo.endpoint), in_process_client(dynamo)
    make_table(over_http)
    in_process.put_item(TableName=TABLE, Item={"pk": {"S": "a"}, "v": {"N": "1"}})

    item = over_http.get_item(TableName=TABLE, Key={"pk": {"S": "a"}}, ConsistentRead=True)
    assert item["Item"]["v"] == {"N": "1"}
    with pytest.raises(in_process.exceptions.ConditionalCheckFailedException):
        in_process.put_item(
            TableName=TABLE,
            Item={"pk": {"S": "a"}, "v": {"N": "2"}},
            ConditionExpression="attribute_not_exists(pk)",
        )


def test_the_in_process_path_waits_for_the_lock(dynamo: EmbeddedDynamo) -> None:
    """Held lock (a frozen database): an in-process call waits, as an HTTP one does."""
    ddb = in_process_client(dynamo)
    make_table(ddb)
    done = threading.Event()

    def read() -> None:
        ddb.get_item(TableName=TABLE, Key={"pk": {"S": "a"}}, ConsistentRead=True)
        done.set()

    with dynamo.lock:
        worker = threading.Thread(target=read)
        worker.start()
        assert not done.wait(0.3)
    worker.join(10)
    assert done.is_set()
