"""Hardening fixtures: faults injected at the adapter boundary, never inside the services.

- ``dynamo_faults``: the backend's store is swapped for a ``DynamoStore`` on a client built
  exactly like production's (``shared.runtime.bootstrap.client``: botocore *standard* retry
  mode, 3 tries). Its requests are tagged (``request-created`` hook) and moto's in-process
  endpoint (the ``before-send`` stubber) answers chosen calls with an error response *instead
  of* applying them. So botocore's own retry machinery really runs (its backoff delays are
  recorded, not slept) and the adapter's error mapping is the real one.
- ``retry_sleeps``: the services' retry backoff (``Deps.sleep``) recorded instead of slept.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body

    def read(self, *_: Any) -> bytes:
        return self._body


def dynamo_error(code: str, message: str = "injected", **extra: Any) -> dict[str, Any]:
    """A DynamoDB JSON-1.0 error body (``__type`` is how botocore reads the code)."""
    return {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message, **extra}


def cancelled(*reasons: str) -> dict[str, Any]:
    """A ``TransactionCanceledException`` with these cancellation reason codes."""
    return dynamo_error(
        "TransactionCanceledException",
        "Transaction cancelled",
        CancellationReasons=[{"Code": r, "Message": r} for r in reasons],
    )


WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"})
READS = frozenset({"GetItem", "BatchGetItem", "Query"})


@dataclass
class Fault:
    operations: frozenset[str]
    body: dict[str, Any] | Callable[[str], dict[str, Any]]
    times: int | None  # None: forever
    status: int = 400
    hits: int = 0


@dataclass
class DynamoFaults:
    """Inject DynamoDB error responses per operation name (``PutItem``, ``GetItem``...)."""

    calls: list[str] = field(default_factory=list)
    """Every DynamoDB call the store sent (retries included), by operation name."""
    backoffs: list[float] = field(default_factory=list)
    """botocore's standard-mode backoff delays (seconds), recorded instead of slept."""
    _faults: list[Fault] = field(default_factory=list)

    def fail(
        self,
        operations: frozenset[str] | set[str] | str,
        body: dict[str, Any] | Callable[[str], dict[str, Any]],
        *,
        times: int | None = 1,
        status: int = 400,
    ) -> Fault:
        ops = frozenset({operations} if isinstance(operations, str) else operations)
        fault = Fault(ops, body, times, status)
        self._faults.append(fault)
        return fault

    def clear(self) -> None:
        self._faults.clear()

    def count(self, *operations: str) -> int:
        return sum(1 for c in self.calls if c in operations)

    def _answer(self, request: Any) -> AWSResponse | None:
        target = request.headers.get("X-Amz-Target", b"")
        if isinstance(target, bytes):
            target = target.decode()
        operation = target.rpartition(".")[2]
        self.calls.append(operation)
        for fault in self._faults:
            if operation in fault.operations and (fault.times is None or fault.hits < fault.times):
                fault.hits += 1
                body = fault.body(operation) if callable(fault.body) else fault.body
                raw = _Raw(json.dumps(body).encode())
                headers = {"Content-Type": "application/x-amz-json-1.0"}
                return AWSResponse(request.url, fault.status, headers, raw)
        return None  # moto answers


_PROBE = "X-Hardening-Fault-Probe"


@pytest.fixture
def dynamo_faults(backend: Any, monkeypatch: pytest.MonkeyPatch) -> DynamoFaults:
    from botocore.retries import standard
    from moto.core.botocore_stubber import BotocoreStubber

    from shared.adapters.dynamo.store import DynamoStore
    from shared.runtime.bootstrap import client as _client
    from shared.runtime.settings import Settings

    faults = DynamoFaults()
    original = standard.ExponentialBackoff.delay_amount

    def recorded(self: Any, context: Any) -> float:
        faults.backoffs.append(original(self, context))
        return 0.0

    monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", recorded)
    moto_answer = BotocoreStubber.__call__

    def answer(self: Any, event_name: str, request: Any, **kwargs: Any) -> Any:
        if request.headers.get(_PROBE):
            injected = faults._answer(request)
            if injected is not None:
                return injected
        return moto_answer(self, event_name, request, **kwargs)

    monkeypatch.setattr(BotocoreStubber, "__call__", answer)

    def tag(request: Any, **_: Any) -> None:
        request.headers[_PROBE] = "1"

    client = _client("dynamodb", Settings())
    client.meta.events.register("request-created.dynamodb", tag)
    backend.deps = dataclasses.replace(
        backend.deps, store=DynamoStore(client, backend.table_name, backend.clock.now_ms)
    )
    return faults


@pytest.fixture
def retry_sleeps(backend: Any) -> list[float]:
    sleeps: list[float] = []
    backend.deps = dataclasses.replace(backend.deps, sleep=sleeps.append)
    return sleeps


@pytest.fixture
def limited_backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A harness backend with the production rate limit (5/s, burst 20)."""
    from infra.emulator.testing import running_backend
    from shared.runtime.settings import Settings

    production = Settings()
    yield from running_backend(
        monkeypatch,
        rate_limit_per_second=production.rate_limit_per_second,
        rate_limit_burst=production.rate_limit_burst,
    )
