"""Local runtime: the stream poller (``infra.emulator.streams.StreamPoller``) delivers a stream
as Lambda's event source mapping does — every matching record once when the function
succeeds, in order per shard; a failing record retried, isolated by bisection and given up to
the failure destination without holding back the records after it; partial batch responses
resume from the reported record; throttles retried without counting; children after their
parent. Driven by :meth:`StreamPoller.poll` over an in-memory stream: no thread, no sleep."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from functions.streams import HISTORY
from infra.emulator.pool import OTHER, WorkerPool
from infra.emulator.streams import StreamPoller, limited_invoker
from infra.emulator.throttles import (
    Concurrency,
    FunctionTimeoutError,
    TooManyRequestsError,
    TwinLimits,
)

ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-12-05T00:00:00.000"
SOURCE = dataclasses.replace(HISTORY, batching_window_s=0, batch_size=10, retry_attempts=2)


class FakeStreams:
    """A ``dynamodbstreams`` client over shards given as lists of records (boto3's parsed
    shape); a shard is open until :meth:`close`."""

    def __init__(self) -> None:
        self.shards: dict[str, list[dict[str, Any]]] = {}
        self.parents: dict[str, str | None] = {}
        self.closed: set[str] = set()
        self._seq = 100

    def shard(self, shard_id: str, parent: str | None = None) -> None:
        self.shards[shard_id] = []
        self.parents[shard_id] = parent

    def write(self, shard_id: str, pk: str, sk: str, **attrs: Any) -> str:
        self._seq += 1
        image = {"pk": {"S": pk}, "sk": {"S": sk}, **attrs}
        self.shards[shard_id].append(
            {
                "eventID": f"e{self._seq}",
                "eventName": "MODIFY",
                "eventVersion": "1.1",
                "eventSource": "aws:dynamodb",
                "awsRegion": "us-east-1",
                "dynamodb": {
                    "Keys": {"pk": {"S": pk}, "sk": {"S": sk}},
                    "NewImage": image,
                    "SequenceNumber": str(self._seq),
                    "SizeBytes": 10,
                    "StreamViewType": "NEW_AND_OLD_IMAGES",
                },
            }
        )
        return str(self._seq)

    def profile(self, shard_id: str = "s1") -> str:
        return self.write(shard_id, f"PLAYER#p{self._seq}", "PROFILE", rating={"N": "1500"})

    def close(self, shard_id: str) -> None:
        self.closed.add(shard_id)

    # the client's calls
    def describe_stream(self, **call: Any) -> dict[str, Any]:
        shards = []
        for shard_id, parent in self.parents.items():
            shards.append({"ShardId": shard_id, **({"ParentShardId": parent} if parent else {})})
        return {"StreamDescription": {"StreamArn": call["StreamArn"], "Shards": shards}}

    def get_shard_iterator(self, **call: Any) -> Any:
        assert call["ShardIteratorType"] == "TRIM_HORIZON"
        return {"ShardIterator": f"{call['ShardId']}|0"}

    def get_records(self, **call: Any) -> dict[str, Any]:
        shard_id, _, at = call["ShardIterator"].partition("|")
        records = self.shards[shard_id][int(at) : int(at) + call["Limit"]]
        end = int(at) + len(records)
        done = shard_id in self.closed and end == len(self.shards[shard_id])
        answer: dict[str, Any] = {"Records": records}
        if not done:
            answer["NextShardIterator"] = f"{shard_id}|{end}"
        return answer


class Function:
    """The function: records each batch's sequence numbers; ``behave(batch)`` may raise or
    return a response (default: every record done)."""

    def __init__(self, behave: Callable[[list[str]], Any] | None = None) -> None:
        self.batches: list[list[str]] = []
        self.behave = behave

    def __call__(self, event: dict[str, Any]) -> Any:
        seqs = [r["dynamodb"]["SequenceNumber"] for r in event["Records"]]
        self.batches.append(seqs)
        if self.behave is not None:
            return self.behave(seqs)
        return {"batchItemFailures": []}


def _poller(stream: FakeStreams, fn: Any, **changes: Any) -> StreamPoller:
    source = dataclasses.replace(SOURCE, **changes)
    return StreamPoller(stream, ARN, source, fn, region="us-east-1", now=lambda: 2_000_000_000.0)


def test_every_matching_record_once_in_order_in_batches_of_the_batch_size() -> None:
    stream = FakeStreams()
    stream.shard("s1")
    wanted = [stream.profile() for _ in range(25)]
    stream.write("s1", "TOURN#t", "STATE", seq={"N": "4"})  # no hist: filtered out
    wanted.append(stream.write("s1", "TOURN#t", "STATE", hist={"N": "1"}))
    fn = Function()
    poller = _poller(stream, fn)
    poller.poll()
    poller.poll()  # nothing new: nothing again
    assert [s for b in fn.batches for s in b] == wanted
    assert [len(b) for b in fn.batches] == [10, 10, 6]
    assert poller.delivered == 26
    assert poller.filtered_out == 1
    assert poller.failures == []


def test_records_wait_for_the_batching_window_unless_the_batch_is_full() -> None:
    stream = FakeStreams()
    stream.shard("s1")
    stream.profile()
    clock = [1000.0]
    fn = Function()
    poller = StreamPoller(
        stream,
        ARN,
        dataclasses.replace(SOURCE, batching_window_s=2),
        fn,
        region="us-east-1",
        now=lambda: clock[0],
    )
    poller.poll()
    assert fn.batches == []
    clock[0] += 2
    poller.poll()
    assert len(fn.batches) == 1


def test_a_failing_record_is_isolated_and_given_up_without_holding_back_the_shard() -> None:
    stream = FakeStreams()
    stream.shard("s1")
    seqs = [stream.profile() for _ in range(10)]
    poison = seqs[6]

    def behave(batch: list[str]) -> Any:
        if poison in batch:
            raise RuntimeError("cannot apply this record")
        return {"batchItemFailures": []}

    fn = Function(behave)
    poller = _poller(stream, fn)
    poller.poll()
    later = [stream.profile() for _ in range(3)]
    poller.poll()
    succeeded = Counter(s for b in fn.batches if poison not in b for s in b)
    assert set(succeeded) == set(seqs + later) - {poison}
    assert set(succeeded.values()) == {1}, "each other record exactly once"
    # alone, it was tried 1 + retry_attempts times, then given up
    assert [b for b in fn.batches if b == [poison]] == [[poison]] * (1 + SOURCE.retry_attempts)
    (failure,) = poller.failures
    info = failure["DDBStreamBatchInfo"]
    assert (info["startSequenceNumber"], info["endSequenceNumber"]) == (poison, poison)
    assert info["batchSize"] == 1
    assert info["shardId"] == "s1"
    assert info["streamArn"] == ARN
    assert failure["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert failure["requestContext"]["approximateInvokeCount"] == 1 + SOURCE.retry_attempts
    # the records after it came after it (order per shard)
    flat = [s for b in fn.batches for s in b]
    assert flat.index(later[0]) > max(i for i, s in enumerate(flat) if s == poison)


def test_without_bisect_the_whole_batch_is_retried_then_given_up() -> None:
    stream = FakeStreams()
    stream.shard("s1")
    seqs = [stream.profile() for _ in range(4)]

    def behave(batch: list[str]) -> Any:
        raise RuntimeError("down")

    fn = Function(behave)
    poller = _poller(stream, fn, bisect=False)
    poller.poll()
    assert fn.batches == [seqs] * (1 + SOURCE.retry_attempts)
    (failure,) = poller.failures
    assert failure["DDBStreamBatchInfo"]["batchSize"] == 4


def test_a_partial_batch_response_resumes_from_the_first_failed_record() -> None:
    stream = FakeStreams()
    stream.shard("s1")
    seqs = [stream.profile() for _ in range(6)]
    failed_once: set[str] = set()

    def behave(batch: list[str]) -> Any:
        # records 2 and 4 fail the first time they are seen: 2 is the checkpoint
        out = [s for s in batch if s in (seqs[2], seqs[4]) and s not in failed_once]
        failed_once.update(out)
        return {"batchItemFailures": [{"itemIdentifier": s} for s in out]}

    fn = Function(behave)
    poller = _poller(stream, fn)
    poller.poll()
    assert fn.batches[0] == seqs
    assert fn.batches[1] == seqs[2:]  # retried from the lowest failed sequence number
    assert seqs[4] in fn.batches[1]
    assert poller.failures == []
    assert poller.delivered == 6


def test_an_unknown_or_empty_item_identifier_fails_the_whole_batch() -> None:
    stream = FakeStreams()
    stream.shard("s1")
    seqs = [stream.profile() for _ in range(2)]
    answers = iter([{"batchItemFailures": [{"itemIdentifier": ""}]}, None, None, None])

    fn = Function(lambda batch: next(answers))
    poller = _poller(stream, fn, bisect=False)
    poller.poll()
    assert fn.batches == [seqs, seqs]  # the empty identifier failed all; the retry took all


def test_throttles_are_retried_without_counting_as_retries() -> None:
    stream = FakeStreams()
    stream.shard("s1")
    seqs = [stream.profile()]
    throttles = iter([True] * 5)

    def behave(batch: list[str]) -> Any:
        if next(throttles, False):
            raise TooManyRequestsError("reserved concurrency")
        return None

    fn = Function(behave)
    poller = _poller(stream, fn)
    poller._stop.wait = lambda timeout=None: False  # type: ignore[method-assign]  # no backoff
    poller.poll()
    assert fn.batches == [seqs] * 6
    assert poller.failures == []
    assert poller.delivered == 1


def test_records_past_their_maximum_age_go_to_the_failure_destination() -> None:
    stream = FakeStreams()
    stream.shard("s1")
    seq = stream.profile()
    old = datetime.fromtimestamp(2_000_000_000 - SOURCE.max_record_age_s - 1, UTC)
    stream.shards["s1"][0]["dynamodb"]["ApproximateCreationDateTime"] = old
    fn = Function()
    poller = _poller(stream, fn)
    poller.poll()
    assert fn.batches == []
    (failure,) = poller.failures
    assert failure["requestContext"]["condition"] == "RecordAgeExceeded"
    assert failure["DDBStreamBatchInfo"]["startSequenceNumber"] == seq


def test_a_child_shard_is_read_after_its_parent_is_done() -> None:
    stream = FakeStreams()
    stream.shard("parent")
    stream.shard("child", parent="parent")
    first = stream.profile("parent")
    second = stream.profile("child")
    fn = Function()
    poller = _poller(stream, fn)
    poller.poll()
    assert [s for b in fn.batches for s in b] == [first]
    stream.close("parent")
    poller.poll()
    poller.poll()
    assert [s for b in fn.batches for s in b] == [first, second]


def test_the_function_gets_lambdas_event_shape() -> None:
    stream = FakeStreams()
    stream.shard("s1")
    stream.write("s1", "TOURN#t", "STATE", hist={"N": "2"}, state={"B": b"\x78\x9c"})
    events: list[dict[str, Any]] = []
    poller = StreamPoller(
        stream, ARN, SOURCE, lambda e: events.append(e), region="eu-west-1", now=lambda: 0.0
    )
    poller.poll()
    ((record,),) = [e["Records"] for e in events]
    assert record["eventSourceARN"] == ARN
    assert record["awsRegion"] == "eu-west-1"
    assert record["eventSource"] == "aws:dynamodb"
    assert record["dynamodb"]["NewImage"]["state"] == {"B": "eJw="}  # base64, as Lambda sends


# -- the invocation: through the pool, with the function's limits ----------------------------


def test_the_invoker_applies_the_functions_timeout_and_reservation() -> None:
    """A stream invocation runs as a route's does: stopped at its function's timeout
    (``FunctionTimeoutError``: an error to the poller, retried), refused beyond its
    reservation (``TooManyRequestsError``: a throttle, retried without counting)."""
    pool = WorkerPool(2, thread_name_prefix="test")
    release = threading.Event()
    stopped_late: list[bool] = []

    def slow(event: dict[str, Any], context: Any) -> Any:
        if event.get("hold"):
            release.wait(5)
            return {"batchItemFailures": []}
        time.sleep(2)
        stopped_late.append(True)  # never reached: stopped at the timeout
        return None

    limits = TwinLimits(concurrency=Concurrency({"history": 1}), timeouts={"history": 0.2})
    invoke = limited_invoker(
        slow, "history", executor=pool, limits=limits, region="us-east-1", priority=OTHER
    )
    try:
        with pytest.raises(FunctionTimeoutError):
            invoke({"Records": []})
        time.sleep(0.1)
        assert stopped_late == []
        held = threading.Thread(target=invoke, args=({"hold": True},))
        held.start()
        deadline = time.monotonic() + 5
        while limits.concurrency is not None and limits.concurrency.running("history") < 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        with pytest.raises(TooManyRequestsError):
            invoke({"Records": []})
        release.set()
        held.join(5)
    finally:
        release.set()
        pool.shutdown(wait=True)
