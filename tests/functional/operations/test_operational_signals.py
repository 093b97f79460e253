"""What the alarms count: a message route answers every failure itself and returns 200, so the
counts come from the code (``Deps.metrics``: Powertools Metrics on Lambda, flushed as EMF) —
``InternalError`` for a forced exception, ``TryAgain`` for a table that stays busy,
``RateLimited`` and ``AbusiveConnectionsClosed`` for a flood; the notifier's ``PostGone`` and
``PostFailed``; the adapters' log lines as Powertools JSON with the correlation keys; the
clock function's machine ARN from the execution context."""

from __future__ import annotations

import dataclasses
import io
import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from functions import _entry, apply_deadlines
from functions.messages import ENTRYPOINTS
from infra.emulator.events import ws_event
from infra.emulator.testing import LambdaContext
from shared.adapters.notifier import ApiGatewayNotifier
from shared.runtime.bootstrap import powertools_metric
from shared.runtime.observability import logger
from shared.runtime.rate_limit import RateLimiter
from shared.runtime.settings import Settings
from shared.services.errors import TryAgainError
from tests.fakes import fake_deps


class Counts:
    """A ``Deps.metrics`` sink that keeps every count."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, float]] = []

    def __call__(self, name: str, value: float) -> None:
        self.seen.append((name, value))

    def total(self, name: str) -> float:
        return sum(v for n, v in self.seen if n == name)


class FailingStore:
    """A store whose every call raises ``error`` (a bug, or AWS failing past its retries)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise self.error

        return fail


def _send(deps, route: str, connection_id: str, body: dict[str, Any]) -> Any:
    event = ws_event(route, connection_id, json.dumps(body), deps.clock.now_ms())
    return ENTRYPOINTS[route].invoke(event, LambdaContext(), deps)


def test_a_forced_exception_in_a_route_counts_internal_error():
    counts = Counts()
    base = fake_deps()
    deps = dataclasses.replace(base, store=FailingStore(RuntimeError("forced")), metrics=counts)

    response = _send(deps, "join", "c-1", {"action": "join", "language": "en", "request_id": "j1"})

    assert response == {"statusCode": 200}  # Lambda's Errors metric never sees it
    assert counts.total("InternalError") == 1
    (reply,) = base.notifier.sent["c-1"]
    assert (reply["type"], reply["code"], reply["request_id"]) == ("error", "internal_error", "j1")


def test_internal_error_reaches_powertools_metrics_as_emf(capsys):
    """On Lambda the sink is Powertools Metrics: the count is in the invocation's EMF blob, in
    the one namespace."""
    deps = dataclasses.replace(
        fake_deps(), store=FailingStore(RuntimeError("forced")), metrics=powertools_metric
    )

    _send(deps, "join", "c-1", {"action": "join", "language": "en"})

    blobs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    (blob,) = [b for b in blobs if "InternalError" in b]
    assert blob["InternalError"] == [1.0] or blob["InternalError"] == 1.0
    (directive,) = blob["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "WordleTournament"
    assert {"Name": "InternalError", "Unit": "Count"} in directive["Metrics"]


def test_a_busy_table_counts_try_again():
    counts = Counts()
    base = fake_deps()
    deps = dataclasses.replace(base, store=FailingStore(TryAgainError("busy")), metrics=counts)

    _send(deps, "join", "c-1", {"action": "join", "language": "en"})

    assert counts.total("TryAgain") == 1
    assert counts.total("InternalError") == 0
    assert base.notifier.sent["c-1"][-1]["code"] == "try_again"


def test_bad_input_is_counted_and_not_an_internal_error():
    counts = Counts()
    deps = dataclasses.replace(fake_deps(), metrics=counts)

    _send(deps, "join", "c-1", {"action": "join", "language": 7})

    assert counts.total("BadInput") == 1
    assert counts.total("InternalError") == 0


def _session_again(deps, connection_id: str, request_id: str) -> None:
    """``session`` on ``connection_id``: a new player first, then resumes of that player with
    the newest token (a connection belongs to one player; tokens rotate, ruling 11)."""
    sessions = [m for m in deps.notifier.sent[connection_id] if m["type"] == "session"]
    body = {"action": "session", "request_id": request_id}
    if sessions:
        body["token"] = sessions[-1]["token"]
    _send(deps, "session", connection_id, body)


def test_a_connection_that_ignores_rate_limited_is_closed_and_counted():
    counts = Counts()
    base = fake_deps()
    limiter = RateLimiter(per_second=1, burst=2, strike_every=1, close_after_strikes=3)
    deps = dataclasses.replace(base, metrics=counts, limiter=limiter)

    for i in range(5):  # the clock stands still: 2 allowed, then strikes 1, 2, 3 (closed)
        _session_again(deps, "c-1", f"p{i}")

    codes = [m.get("code") for m in base.notifier.sent["c-1"] if m["type"] == "error"]
    assert codes == ["rate_limited", "rate_limited"]
    assert base.notifier.closed == ["c-1"]
    assert counts.total("RateLimited") == 3
    assert counts.total("FloodStrikes") == 3
    assert counts.total("AbusiveConnectionsClosed") == 1


def test_with_the_production_limits_a_looping_client_is_closed_after_20_refusals():
    """``bootstrap.build``'s limiter from the deployed settings (5/s, burst 20, a strike every
    5 refusals, closed at 4): a client that loops without waiting gets 20 answers, then 19
    ``rate_limited``, then its connection is closed; another connection is untouched."""
    settings = Settings()
    counts = Counts()
    base = fake_deps()
    limiter = RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst)
    deps = dataclasses.replace(base, metrics=counts, limiter=limiter)

    for i in range(45):
        if "c-1" in base.notifier.closed:
            break
        _session_again(deps, "c-1", f"p{i}")
    _send(deps, "session", "c-2", {"action": "session"})

    replies = [m["type"] for m in base.notifier.sent["c-1"]]
    assert replies == ["session"] * 20 + ["error"] * 19
    assert base.notifier.closed == ["c-1"]
    assert counts.total("FloodStrikes") == 4
    assert counts.total("AbusiveConnectionsClosed") == 1
    assert [m["type"] for m in base.notifier.sent["c-2"]] == ["session"]


def _strikes_until_closed(limiter: RateLimiter, step_ms: int, limit_ms: int = 60_000) -> int:
    """Messages every ``step_ms`` until ``close_after_strikes`` strikes trip; the refusals."""
    now, refused, strikes = 0, 0, 0
    while strikes < limiter.close_after_strikes:
        refused += not limiter.allow("c", now)
        strikes += limiter.tripped("c")
        now += step_ms
        assert now < limit_ms, "never closed"
    return refused


def test_a_client_that_keeps_sending_just_over_the_rate_is_closed():
    """Twice the allowed rate: every other message is refused, a token trickles in between,
    but the bucket never refills to half: the refusals add up to strikes."""
    limiter = RateLimiter(per_second=1, burst=4, strike_every=5, close_after_strikes=1)
    assert _strikes_until_closed(limiter, 500) == 5


def test_a_client_that_pauses_after_rate_limited_is_forgiven():
    """Bursts of 7 (4 allowed, 3 refused) with a pause after each: without the pause the
    refusals of two bursts (6) would strike; the pause refills the bucket and forgives them."""
    limiter = RateLimiter(per_second=1, burst=4, strike_every=5)
    now = 0
    for _ in range(10):
        results = [limiter.allow("c", now) for _ in range(7)]
        assert results == [True] * 4 + [False] * 3
        assert limiter.tripped("c") is False
        now += 4_000  # it honours rate_limited: waits until the bucket is full again


def test_a_client_that_slows_down_is_never_struck():
    limiter = RateLimiter(per_second=1, burst=1, strike_every=3)
    now = 0
    for _ in range(10):
        assert limiter.allow("c", now) is True
        assert limiter.allow("c", now) is False  # one refusal, then it waits
        assert limiter.tripped("c") is False
        now += 1_000
    for _ in range(3):
        limiter.allow("c", now)
    assert limiter.tripped("c") is False  # 1 allowed + 2 refused
    limiter.allow("c", now)
    assert limiter.tripped("c") is True
    assert limiter.tripped("c") is False  # once per strike
    limiter.allow("c", now)
    limiter.forget("c")
    assert limiter.tripped("c") is False


def _management_client() -> Any:
    return boto3.client(
        "apigatewaymanagementapi",
        region_name="us-east-1",
        endpoint_url="https://example.execute-api.us-east-1.amazonaws.com/dev",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def test_the_notifier_counts_gone_and_failed_posts():
    client = _management_client()
    counts = Counts()
    with Stubber(client) as stub:
        stub.add_client_error("post_to_connection", "GoneException", http_status_code=410)
        stub.add_client_error("post_to_connection", "LimitExceededException", http_status_code=429)
        stub.add_response("post_to_connection", {})
        stub.add_client_error("delete_connection", "ForbiddenException", http_status_code=403)
        notifier = ApiGatewayNotifier(client, metrics=counts)
        gone = notifier.send([("a", "{}"), ("b", "{}"), ("c", "{}")])
        notifier.close("d")

    assert gone == ["a"]
    assert counts.total("PostGone") == 1
    assert counts.total("PostFailed") == 2


@pytest.fixture
def log_lines():
    """The Powertools handler's output (JSON lines) while a test runs."""
    handler = logger.registered_handler
    stream = io.StringIO()
    old = handler.setStream(stream)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines() if line]
    finally:
        handler.setStream(old)
        logger.remove_keys(["connection_id", "player_id"])


def test_adapter_logs_are_json_with_the_correlation_keys(log_lines):
    client = _management_client()
    logger.append_keys(connection_id="c-1", player_id="p-1")
    with Stubber(client) as stub:
        stub.add_client_error("post_to_connection", "LimitExceededException", http_status_code=429)
        ApiGatewayNotifier(client).send([("c-2", "{}")])

    (line,) = [entry for entry in log_lines() if "post_to_connection" in entry["message"]]
    assert line["level"] == "WARNING"
    assert line["connection_id"] == "c-1"
    assert line["player_id"] == "p-1"
    assert line["target_connection_id"] == "c-2"
    assert line["reason"] == "LimitExceededException"


def test_the_clock_function_takes_its_machine_from_the_execution_context(monkeypatch):
    """The machine invokes the clock function's alias, so the function cannot name the machine
    in its environment: the Task passes ``$$.StateMachine.Id`` and the container's settings
    take it where the environment has none (the environment wins where it has one)."""
    arn = "arn:aws:states:us-east-1:000000000000:stateMachine:Deadlines-abc"
    state = {"kind": "intro", "ref": "t1", "seq": 1, "due_ms": 1, "due": "x"}
    event = {"state": state, "machine": arn}
    assert apply_deadlines.loop_state_of(event) == state
    assert apply_deadlines.loop_state_of(state) == state  # a bare state too
    assert apply_deadlines.machine_of(event) == {"state_machine_arn": arn}
    assert apply_deadlines.machine_of(state) == {}

    built: list[Any] = []
    monkeypatch.setattr(_entry, "build", lambda settings: built.append(settings) or "deps")
    monkeypatch.delenv("STATE_MACHINE_ARN", raising=False)
    monkeypatch.setattr(_entry, "_container", None)
    assert _entry.container_deps(apply_deadlines.machine_of(event)) == "deps"
    assert built[-1].state_machine_arn == arn

    monkeypatch.setenv("STATE_MACHINE_ARN", "arn:from-env")
    monkeypatch.setattr(_entry, "_container", None)
    _entry.container_deps(apply_deadlines.machine_of(event))
    assert built[-1].state_machine_arn == "arn:from-env"
