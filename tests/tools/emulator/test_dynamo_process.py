"""Local runtime: the embedded DynamoDB in its own process (``infra.emulator.dynamo_process``).

The handlers' clients reach it over a pipe (``DynamoTransport`` with the process's ``answer``),
outside clients over HTTP: one database, moto's answers and error codes unchanged, requests
serialised, and a child that never outlives its parent's pipe.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from infra.emulator.dynamo_process import DynamoProcess
from infra.emulator.inprocess import DynamoTransport, register

from .echo import make_key_table, session

pytestmark = pytest.mark.enable_socket

TABLE = "process-test"


@pytest.fixture
def process() -> Iterator[DynamoProcess]:
    with DynamoProcess() as p:
        yield p


def over_http(p: DynamoProcess) -> Any:
    return session().client("dynamodb", endpoint_url=p.endpoint)


def over_pipe(p: DynamoProcess) -> Any:
    """A client whose calls reach moto through the pipe (the handlers' path)."""
    s = session()
    register(s, dynamo=DynamoTransport(p.endpoint, answer=p.answer))
    return s.client("dynamodb", endpoint_url=p.endpoint)


def make_table(ddb: Any) -> None:
    make_key_table(ddb, TABLE)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is not serving
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def wait_until_gone(pid: int, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_moto_runs_in_another_process(process: DynamoProcess) -> None:
    assert process.pid is not None
    assert process.pid != os.getpid()
    assert alive(process.pid)


def test_the_pipe_and_http_see_one_database_with_moto_s_error_codes(
    process: DynamoProcess,
) -> None:
    http, pipe = over_http(process), over_pipe(process)
    make_table(pipe)
    pipe.put_item(TableName=TABLE, Item={"pk": {"S": "a"}, "v": {"N": "1"}})

    assert http.get_item(TableName=TABLE, Key={"pk": {"S": "a"}}, ConsistentRead=True)["Item"][
        "v"
    ] == {"N": "1"}
    with pytest.raises(pipe.exceptions.ConditionalCheckFailedException) as raised:
        pipe.put_item(
            TableName=TABLE,
            Item={"pk": {"S": "a"}, "v": {"N": "2"}},
            ConditionExpression="attribute_not_exists(pk)",
        )
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    with pytest.raises(pipe.exceptions.ResourceNotFoundException):
        pipe.get_item(TableName="no-such-table", Key={"pk": {"S": "a"}})
    item = http.get_item(TableName=TABLE, Key={"pk": {"S": "a"}}, ConsistentRead=True)["Item"]
    assert item["v"] == {"N": "1"}  # the refused write changed nothing


def test_a_cancelled_transaction_over_the_pipe_names_its_reasons(process: DynamoProcess) -> None:
    pipe = over_pipe(process)
    make_table(pipe)
    pipe.put_item(TableName=TABLE, Item={"pk": {"S": "guard"}, "n": {"N": "3"}})
    with pytest.raises(pipe.exceptions.TransactionCanceledException) as raised:
        pipe.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "new"}}}},
                {
                    "ConditionCheck": {
                        "TableName": TABLE,
                        "Key": {"pk": {"S": "guard"}},
                        "ConditionExpression": "n = :four",
                        "ExpressionAttributeValues": {":four": {"N": "4"}},
                    }
                },
            ]
        )
    assert [r["Code"] for r in raised.value.response["CancellationReasons"]] == [
        "None",
        "ConditionalCheckFailed",
    ]
    keys = {i["pk"]["S"] for i in pipe.scan(TableName=TABLE, ConsistentRead=True)["Items"]}
    assert keys == {"guard"}


def test_calls_from_many_threads_are_each_applied_once(process: DynamoProcess) -> None:
    """Eight threads share the one pipe: every ADD lands exactly once (no lost or crossed
    answers: each thread's client sees its own results)."""
    pipe = over_pipe(process)
    make_table(pipe)
    key = {"pk": {"S": "adds"}}

    def add_many(worker: int) -> list[int]:
        local = over_pipe(process)
        seen = []
        for _ in range(10):
            answer = local.update_item(
                TableName=TABLE,
                Key=key,
                UpdateExpression="ADD n :one SET writer = :me",
                ExpressionAttributeValues={":one": {"N": "1"}, ":me": {"N": str(worker)}},
                ReturnValues="ALL_NEW",
            )
            assert answer["Attributes"]["writer"] == {"N": str(worker)}
            seen.append(int(answer["Attributes"]["n"]["N"]))
        return seen

    pool = ThreadPoolExecutor(8)
    try:  # a crossed pipe hangs its readers: fail after a minute (teardown then frees them)
        futures = [pool.submit(add_many, w) for w in range(8)]
        counts = [c for f in futures for c in f.result(timeout=60)]
    finally:
        pool.shutdown(wait=False)
    assert sorted(counts) == list(range(1, 81))
    item = pipe.get_item(TableName=TABLE, Key=key, ConsistentRead=True)["Item"]
    assert item["n"] == {"N": "80"}


def test_each_start_begins_with_an_empty_database() -> None:
    with DynamoProcess() as first:
        make_table(over_pipe(first))
    with DynamoProcess() as second:
        assert over_pipe(second).list_tables()["TableNames"] == []


def test_stop_ends_the_child_and_later_calls_fail_clearly() -> None:
    p = DynamoProcess().start()
    pid = p.pid
    assert pid is not None
    url = p.endpoint
    p.stop()
    assert wait_until_gone(pid)
    with pytest.raises(ConnectionError, match="not running"):
        p.answer("POST", url, {}, b"{}")
    p.stop()  # idempotent


def test_a_child_that_died_is_reported_not_waited_for(process: DynamoProcess) -> None:
    pid = process.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert wait_until_gone(pid)
    with pytest.raises(ConnectionError, match="gone"):
        process.answer("POST", process.endpoint, {}, b"{}")


def test_ctrl_c_reaches_the_parent_only(process: DynamoProcess) -> None:
    """SIGINT (Ctrl-C goes to the whole process group) leaves the child serving: the parent
    stops it, in order, by closing the pipe."""
    pipe = over_pipe(process)
    assert process.pid is not None
    os.kill(process.pid, signal.SIGINT)
    time.sleep(0.2)
    make_table(pipe)
    assert pipe.list_tables()["TableNames"] == [TABLE]


def test_moto_raising_is_an_error_in_the_caller_and_the_child_goes_on(
    process: DynamoProcess,
) -> None:
    """moto raises (rather than answers) on an operation it does not know; in this process the
    exception would reach the caller from botocore's ``before-send``: so it does from the child,
    which keeps serving."""
    with pytest.raises(RuntimeError, match="OperationNotFoundError"):
        process.answer(
            "POST",
            process.endpoint + "/",
            {"X-Amz-Target": "DynamoDB_20120810.NoSuchOperation"},
            b"{}",
        )
    make_table(over_pipe(process))  # still serving


def test_a_child_that_dies_is_reported_once_with_its_exit_code() -> None:
    exits: list[int | None] = []
    told = threading.Event()

    def on_exit(code: int | None) -> None:
        exits.append(code)
        told.set()

    with DynamoProcess(on_exit=on_exit) as p:
        assert p.pid is not None
        os.kill(p.pid, signal.SIGKILL)
        assert told.wait(10)
    assert exits == [-signal.SIGKILL]


def test_a_child_stopped_by_its_parent_is_not_reported() -> None:
    exits: list[int | None] = []
    p = DynamoProcess(on_exit=exits.append).start()
    pid = p.pid
    assert pid is not None
    p.stop()
    assert wait_until_gone(pid)
    time.sleep(0.2)  # the watcher thread has seen the exit
    assert exits == []
