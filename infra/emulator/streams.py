"""Local runtime: the table's stream delivered to the functions that read it, as Lambda's event
source mapping does on AWS, from the one definition both read (``functions.streams.STREAMS``).

:class:`StreamPoller` reads the table's stream through ``dynamodbstreams`` (DescribeStream,
GetShardIterator from ``TRIM_HORIZON`` for every shard it finds, children after their parent,
GetRecords every ``poll_seconds``), keeps the records :func:`matches_any` of the mapping's
filter patterns, gathers batches of up to ``batch_size`` within the batching window, and
invokes the function (``invoke``: through the twin's pool and limits,
:func:`limited_invoker`). Per shard, in order: a failing batch is retried — bisected first
(``bisect``), from the reported sequence number on a partial batch response
(``report_batch_item_failures``) — and a batch that cannot be split further and failed its
``retry_attempts`` retries, or holds a record past ``max_record_age_s``, goes to the failure
destination (:attr:`StreamPoller.failures`, and the log), and the shard goes on. A throttled
invocation is retried without counting. Records reach the function eventually, never inside
the write that made them.

AWS: "Using AWS Lambda with Amazon DynamoDB" (polling, batching window, retries, bisect,
on-failure destinations and their record), https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html;
"Configuring partial batch response with DynamoDB and Lambda",
https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html;
"Control which events Lambda sends to your function",
https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html.
The twin's reading where the docs say less: bisecting does not count as a retry (each half
starts afresh; the retries are counted on a batch that cannot be split), so a failing record is
isolated before it is given up and the records around it are delivered; a partial response
checkpoints before the first failed record and retries from it ("bisected at the returned
sequence number"), and one that fails the batch's first record made no progress: it is handled
as an error (bisected, or counted as a retry).
"""

from __future__ import annotations

import base64
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from functions.streams import Pattern, StreamSource

log = logging.getLogger(__name__)

Record = dict[str, Any]
"""One stream record as the Lambda event carries it (``Records[i]``)."""
Invoke = Callable[[dict[str, Any]], Any]
"""``invoke(event) -> the function's result``; raises when the invocation failed
(:class:`~infra.emulator.throttles.TooManyRequestsError` when throttled)."""

POLL_SECONDS = 0.5
"""How often each shard is read (Lambda polls a DynamoDB stream's shards about 4 times a
second; the twin's DynamoDB is one process every handler also uses)."""
THROTTLE_BACKOFF_SECONDS = 0.2
"""A throttled invocation is tried again this much later (not counted as a retry)."""


# -- filters ---------------------------------------------------------------------------------


def _leaf(conditions: Sequence[Any], present: bool, value: Any) -> bool:
    """Whether a leaf's conditions (any of them) hold for ``value`` (``present``: the key is
    there). Supported: exact values (strings, numbers, null), ``{"prefix": s}``,
    ``{"exists": bool}``, ``{"anything-but": [...]}``. A list value matches when an element
    does."""
    values = value if isinstance(value, list) else [value]
    present = present and not isinstance(value, dict)  # "exists" works on leaf nodes only
    for condition in conditions:
        if isinstance(condition, dict):
            if "exists" in condition:
                if bool(condition["exists"]) == present:
                    return True
                continue
            if not present:
                continue
            if "prefix" in condition:
                if any(isinstance(v, str) and v.startswith(condition["prefix"]) for v in values):
                    return True
            elif "anything-but" in condition:
                excluded = condition["anything-but"]
                excluded = excluded if isinstance(excluded, list) else [excluded]
                if all(v not in excluded for v in values):
                    return True
            else:
                raise ValueError(f"filter condition not supported by the twin: {condition}")
        elif present and any(v == condition and type(v) is type(condition) for v in values):
            return True
    return False


def matches(pattern: Pattern, event: Any) -> bool:
    """Whether ``event`` (a JSON object) matches one Lambda filter pattern: every key of the
    pattern holds (AND); a nested object descends; a list is the leaf's conditions (OR). The
    subset of the syntax ``functions.streams`` uses (and ``anything-but``); anything else
    raises ValueError rather than guess. AWS, "Lambda event filtering",
    https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html#filtering-syntax
    """
    if not isinstance(pattern, dict):
        raise ValueError(f"a filter pattern is an object, got {pattern!r}")
    for key, expected in pattern.items():
        present = isinstance(event, dict) and key in event
        value = event.get(key) if isinstance(event, dict) else None
        if isinstance(expected, dict):
            if not present or not matches(expected, value):
                return False
        elif isinstance(expected, list):
            if not _leaf(expected, present, value):
                return False
        else:
            raise ValueError(f"a pattern's leaf is a list of conditions, got {expected!r}")
    return True


def matches_any(filters: Sequence[Pattern], record: Record) -> bool:
    """Whether ``record`` goes to the function: no filters, or any pattern matches (AWS: the
    filters of one mapping are ORed)."""
    return not filters or any(matches(p, record) for p in filters)


# -- records ---------------------------------------------------------------------------------


def _json_value(value: Any) -> Any:
    """boto3's parsed stream record back to the JSON Lambda hands the function: Binary
    (``B``, ``BS``) as base64 text, the creation time as epoch seconds."""
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, datetime):
        return int(value.timestamp())
    return value


def lambda_record(record: Mapping[str, Any], stream_arn: str, region: str) -> Record:
    """A GetRecords record (boto3-parsed) as one ``Records[i]`` of the Lambda event."""
    out: Record = _json_value(dict(record))
    out.setdefault("eventSource", "aws:dynamodb")
    out["awsRegion"] = region
    out["eventSourceARN"] = stream_arn
    return out


def _sequence(record: Record) -> str:
    return str(record["dynamodb"]["SequenceNumber"])


def _created_s(record: Record) -> float:
    return float(record["dynamodb"].get("ApproximateCreationDateTime") or 0)


# -- invocation ------------------------------------------------------------------------------


def limited_invoker(
    handler: Callable[[dict[str, Any], Any], Any],
    function: str,
    *,
    executor: Executor,
    limits: Any = None,
    region: str,
    default_timeout_s: float = 60.0,
    priority: int | None = None,
) -> Invoke:
    """``invoke(event)`` running ``handler`` on ``executor`` (the twin's worker pool, at
    ``priority`` when it is a ``WorkerPool``) like the gateway's routes: with ``limits``
    (``TwinLimits``), the function's reserved concurrency (``TooManyRequestsError`` beyond it),
    cold start and timeout (``FunctionTimeoutError``; the handler is stopped there). Blocks
    until the invocation ends (the poller's thread waits, as Lambda's poller waits for the
    function)."""
    from infra.emulator.lambda_context import make_context
    from infra.emulator.pool import WorkerPool
    from infra.emulator.throttles import FunctionTimeoutError, Invocation, TooManyRequestsError

    def invoke(event: dict[str, Any]) -> Any:
        timeout = (
            limits.timeout_for(function, default_timeout_s)
            if limits is not None
            else default_timeout_s
        )
        concurrency = limits.concurrency if limits is not None else None
        if concurrency is not None and not concurrency.acquire(function):
            raise TooManyRequestsError(f"Rate Exceeded: {function} is at its reserved concurrency")
        cold = limits.cold_starts if limits is not None else None
        try:
            invocation = Invocation(
                handler,
                event,
                lambda: make_context(function, region=region, timeout_seconds=timeout),
                cold.start(function) if cold is not None else 0.0,
            )
            if isinstance(executor, WorkerPool) and priority is not None:
                future = executor.submit_at(priority, invocation.run)
            else:
                future = executor.submit(invocation.run)
            if not invocation.started.wait(timeout=max(timeout, 1.0) * 10):
                future.cancel()
                raise FunctionTimeoutError(f"{function} never started")
            try:
                return future.result(timeout=timeout + invocation.cold_seconds)
            except FutureTimeout:
                if invocation.stop():
                    raise FunctionTimeoutError(
                        f"Task timed out after {timeout:.2f} seconds"
                    ) from None
                return future.result()
        finally:
            if cold is not None:
                cold.end(function)
            if concurrency is not None:
                concurrency.release(function)

    return invoke


# -- the poller ------------------------------------------------------------------------------


@dataclass
class _Shard:
    shard_id: str
    parent: str | None
    iterator: str | None = None
    closed: bool = False
    """GetRecords returned no next iterator: nothing more will come."""
    pending: list[Record] = field(default_factory=list)
    first_pending_s: float | None = None
    """When the oldest pending record was read (the batching window counts from it)."""
    done: bool = False
    """Closed and every record delivered (its children may start)."""


class StreamPoller:
    """Delivers a table's stream to one function (module docstring).

    ``client``: a boto3 ``dynamodbstreams`` client; ``stream_arn``: the table's
    ``LatestStreamArn``; ``source``: the mapping's settings; ``invoke``: the function.
    :meth:`start` / :meth:`stop` a background thread; :meth:`poll` once (tests drive it).
    ``failures``: the on-failure destination's records, in the format Lambda sends for a
    DynamoDB stream (``requestContext``, ``responseContext``, ``DDBStreamBatchInfo``)."""

    def __init__(
        self,
        client: Any,
        stream_arn: str,
        source: StreamSource,
        invoke: Invoke,
        *,
        region: str,
        function_arn: str = "",
        poll_seconds: float = POLL_SECONDS,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.stream_arn = stream_arn
        self.source = source
        self.invoke = invoke
        self.region = region
        self.function_arn = function_arn
        self.poll_seconds = poll_seconds
        self.now = now
        self.failures: list[dict[str, Any]] = []
        self.invocations = 0
        """Invocations of the function made (retries included)."""
        self.delivered = 0
        """Records the function took (a batch it reported done)."""
        self.filtered_out = 0
        self.trimmed = 0
        """Reads refused past the shard's retention (``TrimmedDataAccessException``)."""
        self._shards: dict[str, _Shard] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> StreamPoller:
        """Poll in a background thread until :meth:`stop`."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="stream-poller", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop polling (a batch being delivered finishes its current invocation first)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll()
            except Exception:  # the poller goes on, as Lambda's does
                log.exception("stream poller: reading %s failed", self.stream_arn)
            self._stop.wait(self.poll_seconds)

    # -- one poll ----------------------------------------------------------------------------

    def poll(self, *, flush: bool = False) -> int:
        """Read every readable shard once and deliver the batches that are due (``flush``:
        every pending record now, the batching window ignored). Returns the records taken
        from the stream."""
        with self._lock:
            self._discover()
            read = 0
            for shard in list(self._shards.values()):
                if shard.done or not self._readable(shard):
                    continue
                read += self._read(shard)
                self._deliver_due(shard, flush)
                if shard.closed and not shard.pending:
                    shard.done = True
            return read

    def _discover(self) -> None:
        description = self.client.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]
        for raw in description.get("Shards", []):
            shard_id = raw["ShardId"]
            if shard_id not in self._shards:
                self._shards[shard_id] = _Shard(shard_id, raw.get("ParentShardId"))

    def _readable(self, shard: _Shard) -> bool:
        """A child shard is read once its parent is done (records of a key stay in order)."""
        parent = self._shards.get(shard.parent) if shard.parent else None
        return parent is None or parent.done

    def _read(self, shard: _Shard) -> int:
        if shard.closed:
            return 0
        if shard.iterator is None:
            shard.iterator = self.client.get_shard_iterator(
                StreamArn=self.stream_arn,
                ShardId=shard.shard_id,
                ShardIteratorType=self.source.starting_position,
            )["ShardIterator"]
        try:
            answer = self.client.get_records(ShardIterator=shard.iterator, Limit=1000)
        except self.client.exceptions.TrimmedDataAccessException:
            # behind the retention: carry on from the oldest record kept (the rest is lost,
            # as for Lambda's mapping on AWS; counted and logged)
            self.trimmed += 1
            log.error(
                "stream shard %s: position trimmed; reading on from the oldest record",
                shard.shard_id,
            )
            shard.iterator = self.client.get_shard_iterator(
                StreamArn=self.stream_arn, ShardId=shard.shard_id, ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
            return 0
        shard.iterator = answer.get("NextShardIterator")
        if shard.iterator is None:
            shard.closed = True
        records = [lambda_record(r, self.stream_arn, self.region) for r in answer["Records"]]
        kept = [r for r in records if matches_any(self.source.filters, r)]
        self.filtered_out += len(records) - len(kept)
        if kept and not shard.pending:
            shard.first_pending_s = self.now()
        shard.pending.extend(kept)
        return len(records)

    def _deliver_due(self, shard: _Shard, flush: bool) -> None:
        size = self.source.batch_size
        while shard.pending:
            waited = self.now() - (shard.first_pending_s or self.now())
            full = len(shard.pending) >= size
            if not (flush or full or shard.closed or waited >= self.source.batching_window_s):
                return
            batch, shard.pending = shard.pending[:size], shard.pending[size:]
            self._deliver(shard, batch)
            shard.first_pending_s = self.now() if shard.pending else None
            if self._stop.is_set():
                return

    # -- delivery ----------------------------------------------------------------------------

    def _deliver(self, shard: _Shard, batch: list[Record]) -> None:
        """``batch`` to the function until each record is done or given up (module
        docstring), in order."""
        queue: list[list[Record]] = [batch]
        while queue:
            current = queue.pop(0)
            failed_tries = 0
            while current:
                if self._too_old(current):
                    self._give_up(shard, current, "RecordAgeExceeded", failed_tries + 1)
                    break
                outcome, at = self._attempt(current)
                if outcome == "throttled":
                    if self._stop.wait(THROTTLE_BACKOFF_SECONDS):
                        return
                    continue
                if outcome == "ok":
                    self.delivered += len(current)
                    break
                if outcome == "partial" and at > 0:  # done up to ``at``: retry from there
                    self.delivered += at
                    current, failed_tries = current[at:], 0
                    continue
                if self.source.bisect and len(current) > 1:
                    half = len(current) // 2
                    queue.insert(0, current[half:])
                    current, failed_tries = current[:half], 0
                    continue
                failed_tries += 1
                if failed_tries > self.source.retry_attempts:
                    self._give_up(shard, current, "RetryAttemptsExhausted", failed_tries)
                    break

    def _attempt(self, batch: list[Record]) -> tuple[str, int]:
        """One invocation: ``("ok", 0)``, ``("partial", index of the first failed record)``,
        ``("error", 0)`` (raised, timed out, or a failure the batch does not name) or
        ``("throttled", 0)``."""
        from infra.emulator.throttles import TooManyRequestsError

        self.invocations += 1
        try:
            result = self.invoke({"Records": batch})
        except TooManyRequestsError:
            return "throttled", 0
        except Exception as exc:
            log.warning("stream function failed on %d records: %s", len(batch), exc)
            return "error", 0
        if not self.source.report_batch_item_failures:
            return "ok", 0
        failures = (result or {}).get("batchItemFailures") if isinstance(result, dict) else None
        if not failures:
            return "ok", 0
        positions = {_sequence(r): i for i, r in enumerate(batch)}
        found = []
        for failure in failures:
            ident = failure.get("itemIdentifier") if isinstance(failure, dict) else None
            if not isinstance(ident, str) or ident not in positions:
                return "error", 0  # null, empty or unknown: the whole batch failed
            found.append(positions[ident])
        return "partial", min(found)

    def _too_old(self, batch: list[Record]) -> bool:
        oldest = min(_created_s(r) for r in batch)
        return oldest > 0 and self.now() - oldest > self.source.max_record_age_s

    def _give_up(self, shard: _Shard, batch: list[Record], condition: str, tries: int) -> None:
        """The on-failure destination's record of ``batch`` (metadata, not the records)."""
        first, last = batch[0], batch[-1]
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

        def arrival(record: Record) -> str:
            created = datetime.fromtimestamp(_created_s(record), UTC)
            return created.isoformat(timespec="milliseconds").replace("+00:00", "Z")

        failure = {
            "requestContext": {
                "requestId": str(uuid.uuid4()),
                "functionArn": self.function_arn,
                "condition": condition,
                "approximateInvokeCount": tries,
            },
            "responseContext": {
                "statusCode": 200,
                "executedVersion": "$LATEST",
                "functionError": "Unhandled",
            },
            "version": "1.0",
            "timestamp": stamp,
            "DDBStreamBatchInfo": {
                "shardId": shard.shard_id,
                "startSequenceNumber": _sequence(first),
                "endSequenceNumber": _sequence(last),
                "approximateArrivalOfFirstRecord": arrival(first),
                "approximateArrivalOfLastRecord": arrival(last),
                "batchSize": len(batch),
                "streamArn": self.stream_arn,
            },
        }
        self.failures.append(failure)
        log.error(
            "stream batch given up (%s after %d tries): shard %s, sequence numbers %s..%s",
            condition,
            tries,
            shard.shard_id,
            _sequence(first),
            _sequence(last),
        )
