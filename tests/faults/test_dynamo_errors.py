"""DynamoDB's real error model, injected at the adapter boundary: every error code a read or a
write can return, on every kind of request the store makes, through the real ``DynamoStore``,
botocore's real retry machinery and the real handlers.

Sources for the codes and what each means: "Error handling with DynamoDB"
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html),
"Amazon DynamoDB Transactions: How it works" (transaction conflicts, idempotency:
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html) and the
``CancellationReasons`` of ``TransactWriteItems`` (API reference). The mapping under test is
documented in ``shared/domain/RULINGS.md`` ("Persistence").

Injection: the store runs on a client built exactly like production's
(``shared.runtime.bootstrap.client``: standard retry mode, 3 tries; its backoff delays
recorded, not slept); its requests are tagged and moto's in-process endpoint answers the
chosen ones with an error *instead of* applying them, or *after* applying them (the answer
lost: "outcome unknown"), or raises a transport error. Moto has no ``ClientRequestToken``
idempotency; the injector emulates DynamoDB's (a repeated token of an applied transaction
answers success, changing nothing) unless a test turns it off.

The write paths (one per kind of write request the store sends): a guess (one conditional
``PutItem``), a round-closing guess with ratings (``TransactWriteItems``: the tournament, a
rating history item, a rating ``Update`` of the leaver), a first join (``TransactWriteItems``:
player, lobby, opener), the 8th join starting the tournament (one large transaction), a new
session (``create_player``'s transaction, then the connection's ``PutItem``) and a disconnect
(``close_connection``'s ``PutItem``, the connection's tombstone, then ``PutItem``s). The store
sends no plain ``UpdateItem`` (its only update rides in transactions). Reads: ``GetItem``,
``Query``, ``BatchGetItem``.

Expectations, per code and path:

- transient, for more calls than botocore retries -> the use case is retried whole and the
  action happens exactly once: every player gets the same messages, and the table ends the
  same, as in a run without faults (generated ids compared up to renaming);
- persistent -> the player gets ``error`` ``try_again`` (its ``request_id`` echoed), the table
  is unchanged and nobody else got a message;
- non-transient (``ValidationError``, ``ItemCollectionSizeLimitExceeded``...) -> ``internal_error``
  at once (never retried), logged at ERROR with the code, nothing written;
- applied, then an error -> counted as done once: same messages and table as without faults.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ReadTimeoutError

from shared.services.errors import BusyError, ConflictError, ContentionError, TryAgainError
from tests.faults.conftest import cancelled, dynamo_error
from tests.faults.support import started

# --------------------------------------------------------------------------- the codes
BOTOCORE_ATTEMPTS = 2
"""Tries botocore's standard mode makes per call (``shared.runtime.bootstrap.client``; checked
below)."""

THROTTLING = [
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
]
UNAVAILABLE = ["InternalServerError", "ServiceUnavailable"]
STATUS = {"InternalServerError": 500, "ServiceUnavailable": 503}
PLAIN_WRITE_CODES = ["TransactionConflictException", *THROTTLING, *UNAVAILABLE]
"""What PutItem / UpdateItem / DeleteItem can answer that is not a failed condition."""
TRANSACTION_CODES = [
    *THROTTLING,
    *UNAVAILABLE,
    "TransactionInProgressException",
    "Cancelled:ConditionalCheckFailed",
    "Cancelled:TransactionConflict",
    "Cancelled:ThrottlingError",
    "Cancelled:ProvisionedThroughputExceeded",
]
"""What TransactWriteItems can answer that a retry overcomes (``Cancelled:<reason>``: a
``TransactionCanceledException`` with that reason on one item, ``None`` on another)."""
READ_CODES = [*THROTTLING, *UNAVAILABLE]
RETRIED_BY_BOTOCORE = {*THROTTLING, *UNAVAILABLE, "TransactionInProgressException"}

PLAIN = frozenset({"PutItem", "UpdateItem", "DeleteItem"})
WRITES = frozenset({*PLAIN, "TransactWriteItems"})


def answer_for(code: str) -> tuple[dict[str, Any], int]:
    """The error body and HTTP status DynamoDB answers ``code`` with."""
    if code.startswith("Cancelled:"):
        return cancelled(code.partition(":")[2], "None"), 400
    return dynamo_error(code), STATUS.get(code, 400)


def operations_for(code: str) -> frozenset[str]:
    """The write requests that can answer ``code``."""
    if code == "TransactionConflictException":
        return PLAIN  # a transaction gets TransactionCanceledException instead
    if code.startswith("Cancelled:") or code == "TransactionInProgressException":
        return frozenset({"TransactWriteItems"})
    return WRITES


def transient_calls(code: str) -> int:
    """Fail this many calls: one more than botocore absorbs, so the use case must retry."""
    return BOTOCORE_ATTEMPTS + 1 if code in RETRIED_BY_BOTOCORE else 2


# --------------------------------------------------------------------------- the injector
class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body

    def read(self, *_: Any) -> bytes:
        return self._body


def _response(request: Any, status: int, body: dict[str, Any]) -> AWSResponse:
    headers = {"Content-Type": "application/x-amz-json-1.0"}
    return AWSResponse(request.url, status, headers, _Raw(json.dumps(body).encode()))


@dataclass
class Fault:
    operations: frozenset[str]
    body: dict[str, Any] | Callable[[Any], dict[str, Any]] | None
    """The error body (or a function of the request's JSON); None: raise ``exception``."""
    times: int | None  # None: forever
    status: int = 400
    applied: bool = False
    """Let DynamoDB (moto) apply the request first: the error hides a write that landed."""
    exception: Callable[[], Exception] | None = None
    after: Fault | None = None
    """Armed only once that fault has fired all its times."""
    when: Callable[[Any], bool] | None = None
    """Only requests whose JSON passes this (None: every request of ``operations``)."""
    hits: int = 0

    def armed(self) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        return self.after is None or self.after.hits == self.after.times


@dataclass
class Faults:
    """DynamoDB answers per operation name, injected under the store's client."""

    calls: list[str] = field(default_factory=list)
    backoffs: list[float] = field(default_factory=list)
    idempotent_tokens: bool = True
    """Emulate DynamoDB: a repeated ``ClientRequestToken`` of an applied transaction succeeds
    without applying it again (moto has no such idempotency)."""
    _faults: list[Fault] = field(default_factory=list)
    _tokens: set[str] = field(default_factory=set)

    def fail(
        self,
        operations: frozenset[str] | set[str] | str,
        body: dict[str, Any] | Callable[[Any], dict[str, Any]] | None = None,
        *,
        times: int | None = 1,
        status: int = 400,
        applied: bool = False,
        exception: Callable[[], Exception] | None = None,
        after: Fault | None = None,
        when: Callable[[Any], bool] | None = None,
    ) -> Fault:
        ops = frozenset({operations} if isinstance(operations, str) else operations)
        fault = Fault(ops, body, times, status, applied, exception, after, when)
        self._faults.append(fault)
        return fault

    def code(
        self, code: str, *, times: int | None, operations: frozenset[str] | None = None
    ) -> Fault:
        body, status = answer_for(code)
        return self.fail(operations or operations_for(code), body, times=times, status=status)

    def clear(self) -> None:
        self._faults.clear()

    def count(self, *operations: str) -> int:
        return sum(1 for c in self.calls if c in operations)

    def answer(self, request: Any, moto: Callable[[], AWSResponse | None]) -> Any:
        target = request.headers.get("X-Amz-Target", b"")
        operation = (target.decode() if isinstance(target, bytes) else target).rpartition(".")[2]
        self.calls.append(operation)
        doc = json.loads(request.body or b"{}")
        token = doc.get("ClientRequestToken") if operation == "TransactWriteItems" else None
        if token and self.idempotent_tokens and token in self._tokens:
            return _response(request, 200, {})  # DynamoDB: already applied, nothing changes
        for fault in self._faults:
            if operation not in fault.operations or not fault.armed():
                continue
            if fault.when is not None and not fault.when(doc):
                continue
            fault.hits += 1
            if fault.applied:
                self._apply(moto, token)
            if fault.exception is not None:
                raise fault.exception()
            body = fault.body(doc) if callable(fault.body) else fault.body
            return _response(request, fault.status, body or {})
        return self._apply(moto, token)

    def _apply(self, moto: Callable[[], AWSResponse | None], token: str | None) -> Any:
        response = moto()
        if token and response is not None and response.status_code == 200:
            self._tokens.add(token)
        return response


_PROBE = "X-Dynamo-Errors-Probe"


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch) -> Faults:
    """The injector, wired into moto's endpoint for the requests ``_backend``'s store client
    tags; botocore's backoff delays recorded instead of slept."""
    from botocore.retries import standard
    from moto.core.botocore_stubber import BotocoreStubber

    injected = Faults()
    original_delay = standard.ExponentialBackoff.delay_amount

    def recorded(self: Any, context: Any) -> float:
        injected.backoffs.append(original_delay(self, context))
        return 0.0

    monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", recorded)
    moto_answer = BotocoreStubber.__call__

    def answer(self: Any, event_name: str, request: Any, **kwargs: Any) -> Any:
        def moto() -> Any:
            return moto_answer(self, event_name, request, **kwargs)

        if request.headers.get(_PROBE):
            return injected.answer(request, moto)
        return moto()

    monkeypatch.setattr(BotocoreStubber, "__call__", answer)
    return injected


# --------------------------------------------------------------------------- backends
@dataclass
class Run:
    """A harness backend whose store talks through the injector."""

    backend: Any
    sleeps: list[float]
    """The services' retry backoff (``Deps.sleep``), recorded instead of slept."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)


@contextmanager
def _backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    from infra.emulator.testing import running_backend
    from shared.adapters.dynamo.store import DynamoStore
    from shared.runtime.bootstrap import client as _client
    from shared.runtime.settings import Settings

    runs = running_backend(monkeypatch)
    backend = next(runs)
    try:
        secrets = iter(range(10**6))
        client = _client("dynamodb", Settings())

        def tag(request: Any, **_: Any) -> None:
            request.headers[_PROBE] = "1"

        client.meta.events.register("request-created.dynamodb", tag)
        sleeps: list[float] = []
        backend.deps = dataclasses.replace(
            backend.deps,
            store=DynamoStore(
                client, backend.table_name, backend.clock.now_ms, sleep=sleeps.append
            ),
            sleep=sleeps.append,
            secrets=lambda: f"secret-{next(secrets):06d}-" + "x" * 24,
        )
        yield Run(backend, sleeps)
    finally:
        next(runs, None)


_ID = re.compile(r"id\d{4,}")


def _canonical(value: Any) -> str:
    """JSON with generated ids renamed in order of first appearance (a retried use case
    draws fresh ids for what it creates; the outcome is otherwise the same), and the due-index
    and waiting-index shards, hashes of the id, left out."""
    if isinstance(value, list):
        value = [{**i, "due_pk": "DUE#"} if "due_pk" in i else i for i in value]
        value = [
            {**i, "waiting_pk": i["waiting_pk"].rsplit("#", 1)[0]} if "waiting_pk" in i else i
            for i in value
        ]
    text = json.dumps(value, sort_keys=True, default=str)
    names: dict[str, str] = {}
    return _ID.sub(lambda m: names.setdefault(m.group(0), f"<id{len(names)}>"), text)


def _deterministic(run: Run) -> None:
    """What the action draws is the same on every try: a retried use case decides exactly
    as an untroubled one would (pairings, secrets, nicknames and tokens)."""
    run.backend.deps = dataclasses.replace(
        run.backend.deps, rng=lambda: random.Random(4242), secrets=lambda: "s" * 43
    )


@dataclass
class Outcome:
    messages: str
    table: str


def prepare(run: Run, faults: Faults, path: str) -> Scenario:
    """Set ``path`` up in ``run`` (no faults yet): the action, its actor, who heard what."""
    action, actor = PATHS[path](run.backend)
    _deterministic(run)
    faults.calls.clear()
    return Scenario(run, action, actor, counts(run.backend))


def counts(backend: Any) -> dict[str, int]:
    return {cid: len(msgs) for cid, msgs in backend.notifier.sent.items()}


@dataclass
class Scenario:
    run: Run
    action: Callable[[], None]
    actor: Any
    before: dict[str, int]

    def new_messages(self) -> dict[str, list[dict[str, Any]]]:
        sent = self.run.backend.notifier.sent
        return {
            p.name: sent[p.connection_id][self.before.get(p.connection_id, 0) :]
            for p in self.run.backend.players
            if sent[p.connection_id][self.before.get(p.connection_id, 0) :]
        }

    def outcome(self) -> Outcome:
        return Outcome(_canonical(self.new_messages()), _canonical(self.run.backend.items()))


REFERENCE: dict[str, Outcome] = {}
"""Fault-free outcomes per path, computed once per process (the runs are deterministic)."""


def reference(monkeypatch: pytest.MonkeyPatch, path: str) -> Outcome:
    """The outcome of ``path`` without any fault (computed once per process)."""
    if path not in REFERENCE:
        with _backend(monkeypatch) as run:
            action, _actor = PATHS[path](run.backend)
            _deterministic(run)
            before = counts(run.backend)
            action()
            REFERENCE[path] = Scenario(run, action, None, before).outcome()
    return REFERENCE[path]


# --------------------------------------------------------------------------- the paths
def _guess(b: Any) -> tuple[Callable[[], None], Any]:
    """A guess: one conditional PutItem of the tournament item (1 GetItem before)."""
    _players, mover, _opponent, _tid = started(b)
    duel_id, word = mover.current_duel().duel_id, mover.any_valid_word()
    return (lambda: mover.send("guess", duel_id=duel_id, word=word, request_id="r1")), mover


def _round_close(b: Any) -> tuple[Callable[[], None], Any]:
    """The guess that ends a round with a leaver placed: TransactWriteItems of the
    tournament, the leaver's rating history item and the leaver's rating Update (the
    leaver was released at the leave), after a BatchGetItem of the placed players."""
    _players, mover, opponent, _tid = started(b)
    opponent.send("leave")  # out at once (ruling 3): the mover wins; placed at the round's end
    movers = [p for p in b.to_move() if p not in (mover, opponent)]
    for p in movers[:-1]:
        p.solve()
    last = movers[-1]
    duel_id, word = last.current_duel().duel_id, last.secret()
    return (lambda: last.send("guess", duel_id=duel_id, word=word, request_id="r1")), last


def _join(b: Any) -> tuple[Callable[[], None], Any]:
    """A first join: TransactWriteItems of the player, a new lobby and its opener (reads:
    the session lookup, then the player, the waiting-lobbies Query, the opener)."""
    p = b.player("j")
    return (lambda: p.send("join", language="en", request_id="r1")), p


def _join_8th(b: Any) -> tuple[Callable[[], None], Any]:
    """The 8th join: one transaction seats the player, starts the tournament, updates all."""
    ps = [b.player(f"f{i}") for i in range(8)]
    for p in ps[:7]:
        p.join("en")
    return (lambda: ps[7].send("join", language="en", request_id="r1")), ps[7]


def _session_new(b: Any) -> tuple[Callable[[], None], Any]:
    """A new session: create_player's TransactWriteItems (player, token item and the
    connection's binding, in that order)."""
    p = b.player("s", session=False)
    return (lambda: p.send("session", request_id="r1")), p


def _disconnect(b: Any) -> tuple[Callable[[], None], Any]:
    """``$disconnect`` of a queued player: close_connection's PutItem, then the player's
    PutItem (reconnect deadline) and the lobby's (the other seat hears player_status)."""
    p, other = b.player("d"), b.player("o")
    p.join("en")
    other.join("en")
    return p.disconnect, p


PATHS: dict[str, Callable[[Any], tuple[Callable[[], None], Any]]] = {
    "guess": _guess,
    "round_close": _round_close,
    "join": _join,
    "join_8th": _join_8th,
    "session_new": _session_new,
    "disconnect": _disconnect,
}
FIRST_WRITE = {
    "guess": "PutItem",
    "round_close": "TransactWriteItems",
    "join": "TransactWriteItems",
    "join_8th": "TransactWriteItems",
    "session_new": "TransactWriteItems",
    "disconnect": "PutItem",
}


def _write_cases(kind: str) -> list[Any]:
    cases = []
    for path, first in FIRST_WRITE.items():
        codes = TRANSACTION_CODES if first == "TransactWriteItems" else PLAIN_WRITE_CODES
        for code in codes:
            cases.append(pytest.param(path, code, id=f"{path}-{code}"))
    return cases


def _reply(actor: Any) -> tuple[str, str | None, str | None]:
    last = actor.messages[-1]
    return last["type"], last.get("code"), last.get("request_id")


# --------------------------------------------------------------------------- writes
@pytest.mark.parametrize(("path", "code"), _write_cases("transient"))
def test_a_transient_write_error_is_retried_to_the_same_outcome_exactly_once(
    monkeypatch, faults, path, code
):
    expected = reference(monkeypatch, path)
    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, path)
        fault = faults.code(code, times=transient_calls(code))
        scenario.action()
        assert fault.hits == transient_calls(code), "the fault never fired"
        assert run.sleeps, "the use case was not retried"
        assert scenario.outcome() == expected


@pytest.mark.parametrize(("path", "code"), _write_cases("persistent"))
def test_a_persistent_write_error_is_try_again_and_changes_nothing(monkeypatch, faults, path, code):
    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, path)
        before = run.snapshot()
        faults.code(code, times=None, operations=frozenset({FIRST_WRITE[path]}))
        if path == "disconnect":  # no one to answer: the function fails, nothing changed
            with pytest.raises(TryAgainError):
                scenario.action()
        else:
            scenario.action()
            assert _reply(scenario.actor) == ("error", "try_again", "r1")
            assert len(run.sleeps) == run.deps.max_attempts - 1  # retried whole, with backoff
        faults.clear()
        assert run.snapshot() == before
        heard = scenario.new_messages()
        assert {name: [m["type"] for m in msgs] for name, msgs in heard.items()} == (
            {} if path == "disconnect" else {scenario.actor.name: ["error"]}
        )


def _touches(pk: str) -> Callable[[Any], bool]:
    """A fault filter: the request writes the item whose partition key is ``pk``."""
    return lambda doc: f'"{pk}"' in json.dumps(doc)


def test_a_new_session_whose_connection_bind_stays_refused_changes_nothing(monkeypatch, faults):
    """The player, its token and the connection's binding are one transaction: while the
    connection's part stays refused (another writer holds the item), nothing is saved, no
    orphan player is left behind (there was one while they were two writes), and the
    player hears ``try_again``."""
    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, "session_new")
        before = run.snapshot()
        # every write that touches the connection item is refused, however it is sent: the
        # transaction's third item (player, token, connection) or a PutItem of its own
        touches = _touches(f"CONN#{scenario.actor.connection_id}")
        faults.fail(
            "TransactWriteItems",
            cancelled("None", "None", "TransactionConflict"),
            times=None,
            when=touches,
        )
        faults.fail(
            "PutItem", dynamo_error("TransactionConflictException"), times=None, when=touches
        )
        scenario.action()
        faults.clear()
        assert _reply(scenario.actor) == ("error", "try_again", "r1")
        assert run.snapshot() == before


NON_TRANSIENT = [
    pytest.param("join", cancelled("ValidationError", "None", "None"), id="join-ValidationError"),
    pytest.param(
        "join",
        cancelled("ItemCollectionSizeLimitExceeded", "None", "None"),
        id="join-ItemCollectionSizeLimitExceeded",
    ),
    pytest.param(
        "join",
        cancelled("ConditionalCheckFailed", "ValidationError", "None"),
        id="join-ConditionalCheckFailed+ValidationError",
    ),
    pytest.param("join", cancelled("SomeFutureReason", "None", "None"), id="join-unknown-reason"),
    pytest.param(
        "round_close",
        cancelled("None", "ValidationError", "None"),
        id="round_close-ValidationError",
    ),
    pytest.param("guess", dynamo_error("ValidationException"), id="guess-ValidationException"),
    pytest.param(
        "guess",
        dynamo_error("ItemCollectionSizeLimitExceededException"),
        id="guess-ItemCollectionSizeLimitExceededException",
    ),
]


@pytest.mark.parametrize(("path", "body"), NON_TRANSIENT)
def test_a_non_transient_refusal_is_internal_error_at_once_logged_and_changes_nothing(
    monkeypatch, faults, caplog, path, body
):
    """A bug, not load: the same request would fail the same way. Not retried (by botocore
    or the use case), logged at ERROR with the code (never the items), ``internal_error``."""
    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, path)
        before = run.snapshot()
        faults.fail(FIRST_WRITE[path], body, times=None)
        caplog.set_level(logging.ERROR, logger="shared.adapters.dynamo.store")
        scenario.action()
        faults.clear()
        assert _reply(scenario.actor) == ("error", "internal_error", "r1")
        assert faults.count(FIRST_WRITE[path]) == 1
        assert run.sleeps == []
        assert run.snapshot() == before
        assert list(scenario.new_messages()) == [scenario.actor.name]
        refused = [r for r in caplog.records if r.name == "shared.adapters.dynamo.store"]
        assert refused, "not logged"
        assert refused[0].levelno == logging.ERROR
        code = body["__type"].rpartition("#")[2]
        reasons = [r["Code"] for r in body.get("CancellationReasons", [])]
        assert (str(reasons) if reasons else code) in refused[0].getMessage()


# --------------------------------------------------------------------------- outcome unknown
UNKNOWN_PATHS = ["guess", "round_close", "join", "session_new"]
LOST_ANSWERS = [
    pytest.param({"body": dynamo_error("InternalServerError"), "status": 500}, id="500"),
    pytest.param({"body": dynamo_error("ServiceUnavailable"), "status": 503}, id="503"),
    pytest.param(
        {"exception": lambda: ReadTimeoutError(endpoint_url="https://dynamodb")}, id="timeout"
    ),
]


@pytest.mark.parametrize("lost", LOST_ANSWERS)
@pytest.mark.parametrize("path", UNKNOWN_PATHS)
@pytest.mark.parametrize("tokens", [True, False], ids=["dynamodb-tokens", "no-tokens"])
def test_a_write_that_landed_but_answered_an_error_counts_once(
    monkeypatch, faults, path, lost, tokens
):
    """botocore resends the request: a conditional PutItem then fails its condition on
    exactly the item we sent (ALL_OLD), a transaction repeats its ClientRequestToken (DynamoDB
    answers success) or, without that idempotency, is cancelled on exactly our items. Either
    way the store knows its write landed: done once, nobody misses a message."""
    expected = reference(monkeypatch, path)
    faults.idempotent_tokens = tokens
    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, path)
        fault = faults.fail(FIRST_WRITE[path], times=1, applied=True, **lost)
        scenario.action()
        assert fault.hits == 1
        assert scenario.outcome() == expected
        assert faults.count(FIRST_WRITE[path]) == 2  # botocore's resend
        assert run.sleeps == []  # settled inside the store: no use-case retry


@pytest.mark.parametrize("path", UNKNOWN_PATHS)
def test_a_landed_write_whose_every_retry_fails_is_settled_by_reading_it_back(
    monkeypatch, faults, path
):
    """botocore's retries all fail after the write landed: one consistent GetItem of the
    commit's first item finds exactly what was sent, so the commit counts as done."""
    expected = reference(monkeypatch, path)
    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, path)
        op = FIRST_WRITE[path]
        faults.fail(op, dynamo_error("InternalServerError"), status=500, applied=True)
        faults.fail(
            op, dynamo_error("InternalServerError"), status=500, times=BOTOCORE_ATTEMPTS - 1
        )
        scenario.action()
        assert scenario.outcome() == expected
        assert run.sleeps == []


def test_a_landed_guess_that_cannot_be_verified_is_never_applied_twice(monkeypatch, faults):
    """The write landed, every resend failed and so did the read back: the outcome stays
    unknown, the use case re-reads and re-decides on the state its own write made. The guess
    is in the table exactly once (its version condition), and the re-decision finds the row its
    ``request_id`` played (ruling 18): the mover hears that row's ``turn``, not a refusal; what
    is lost is the opponent's push."""
    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, "guess")
        mover = scenario.actor
        rows = len(mover.current_duel().rows)
        error = dynamo_error("InternalServerError")
        faults.fail("PutItem", error, status=500, applied=True)
        resent = faults.fail("PutItem", error, status=500, times=BOTOCORE_ATTEMPTS - 1)
        faults.fail("GetItem", error, status=500, times=BOTOCORE_ATTEMPTS, after=resent)
        scenario.action()
        assert len(mover.current_duel().rows) == rows + 1
        last = mover.messages[-1]
        assert (last["type"], last["request_id"], last["turn"]) == ("turn", "r1", rows + 1)


def test_a_disconnect_whose_close_landed_but_answered_500_still_disconnects(monkeypatch, faults):
    expected = reference(monkeypatch, "disconnect")
    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, "disconnect")
        faults.fail("PutItem", dynamo_error("InternalServerError"), status=500, applied=True)
        scenario.action()
        assert scenario.outcome() == expected


# --------------------------------------------------------------------------- reads
READ_PATHS = [
    pytest.param("guess", "GetItem", id="guess-GetItem"),
    pytest.param("join", "Query", id="join-Query"),
    pytest.param("round_close", "BatchGetItem", id="round_close-BatchGetItem"),
]


@pytest.mark.parametrize("code", READ_CODES)
@pytest.mark.parametrize(("path", "operation"), READ_PATHS)
def test_a_transient_read_error_is_retried_to_the_same_outcome(
    monkeypatch, faults, path, operation, code
):
    expected = reference(monkeypatch, path)
    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, path)
        body, status = answer_for(code)
        faults.fail(operation, body, status=status, times=BOTOCORE_ATTEMPTS + 1)
        scenario.action()
        assert run.sleeps, "the use case was not retried"
        assert scenario.outcome() == expected


@pytest.mark.parametrize("code", READ_CODES)
@pytest.mark.parametrize(("path", "operation"), READ_PATHS)
def test_a_persistent_read_error_is_try_again_and_changes_nothing(
    monkeypatch, faults, path, operation, code
):
    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, path)
        before = run.snapshot()
        body, status = answer_for(code)
        faults.fail(operation, body, status=status, times=None)
        scenario.action()
        faults.clear()
        assert _reply(scenario.actor) == ("error", "try_again", "r1")
        assert run.snapshot() == before
        assert list(scenario.new_messages()) == [scenario.actor.name]


@pytest.mark.parametrize("code", READ_CODES)
def test_a_session_lookup_that_stays_busy_is_try_again(monkeypatch, faults, code):
    """The lookup of the connection's player (``for_player``) runs before any use case, outside
    ``retrying``: once botocore's retries are spent it answers ``try_again``."""
    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, "join")
        before = run.snapshot()
        body, status = answer_for(code)
        faults.fail("GetItem", body, status=status, times=BOTOCORE_ATTEMPTS)
        scenario.action()
        assert faults.count("GetItem") == BOTOCORE_ATTEMPTS
        assert _reply(scenario.actor) == ("error", "try_again", "r1")
        assert run.snapshot() == before
        assert run.sleeps == []


def _unprocessed(doc: dict[str, Any]) -> dict[str, Any]:
    return {"Responses": {}, "UnprocessedKeys": doc["RequestItems"]}


def test_unprocessed_batch_keys_are_asked_again_with_backoff(monkeypatch, faults):
    """BatchGetItem answers throttled keys in ``UnprocessedKeys`` (a 200): asked again after a
    jittered backoff, within ``UNPROCESSED_ROUNDS``."""
    expected = reference(monkeypatch, "round_close")
    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, "round_close")
        faults.fail("BatchGetItem", _unprocessed, status=200, times=3)
        scenario.action()
        assert scenario.outcome() == expected
        assert len(run.sleeps) == 3


def test_unprocessed_batch_keys_that_stay_unprocessed_are_try_again(monkeypatch, faults):
    from shared.adapters.dynamo.store import UNPROCESSED_ROUNDS

    with _backend(monkeypatch) as run:
        scenario = prepare(run, faults, "round_close")
        before = run.snapshot()
        faults.fail("BatchGetItem", _unprocessed, status=200, times=None)
        scenario.action()
        faults.clear()
        assert _reply(scenario.actor) == ("error", "try_again", "r1")
        assert run.snapshot() == before
        max_attempts = run.deps.max_attempts
        assert faults.count("BatchGetItem") == max_attempts * (UNPROCESSED_ROUNDS + 1)


# --------------------------------------------------------------------------- retrying
def test_the_production_client_makes_the_attempts_these_tests_count():
    from shared.runtime.bootstrap import client as _client
    from shared.runtime.settings import Settings

    retries = _client("dynamodb", Settings()).meta.config.retries
    assert (retries["mode"], retries["total_max_attempts"]) == ("standard", BOTOCORE_ATTEMPTS)


class _Clock:
    def __init__(self) -> None:
        self.now = 0

    def now_ms(self) -> int:
        return self.now

    def schedule(self, timer: Any) -> None:  # pragma: no cover - never called
        raise AssertionError


def _deps(**overrides: Any) -> Any:
    from shared.services.deps import Deps

    sleeps: list[float] = []
    deps = Deps(
        store=_NoStore(),  # type: ignore[arg-type]
        notifier=None,  # type: ignore[arg-type]
        clock=_Clock(),
        lexicon=None,  # type: ignore[arg-type]
        sleep=sleeps.append,
        **overrides,
    )
    return deps, sleeps


class _NoStore:
    """A store the retried steps below never reach (they write nothing)."""

    def commit(self, writes: Any) -> None:  # pragma: no cover - steps raise before
        raise AssertionError


@pytest.mark.parametrize(
    "error",
    [ConflictError("c"), ContentionError("t"), BusyError("b")],
    ids=lambda e: type(e).__name__,
)
def test_retrying_retries_every_transient_store_error_then_answers_try_again(error):
    from shared.services.change import run as retrying

    deps, sleeps = _deps()
    tries = []

    def attempt() -> None:
        tries.append(1)
        raise error

    with pytest.raises(TryAgainError) as info:
        retrying(deps, attempt)
    assert type(info.value) is TryAgainError  # plain: an outer retrying does not multiply it
    assert len(tries) == deps.max_attempts
    assert len(sleeps) == deps.max_attempts - 1


def test_retrying_stops_retrying_a_busy_table_after_its_time_budget():
    """botocore already waited inside each try: a table that stays busy is answered
    ``try_again`` within ``busy_budget_ms``, well inside the function's timeout."""
    from shared.services.change import run as retrying

    deps, _sleeps = _deps()
    tries = []

    def attempt() -> None:
        tries.append(1)
        deps.clock.now += 900  # botocore's own backoff inside the try
        raise BusyError("b")

    with pytest.raises(TryAgainError):
        retrying(deps, attempt, busy_budget_ms=2_000)
    assert len(tries) == 3  # 900, 1800 (< 2 s: again), 2700 (>= 2 s: stop)


@pytest.mark.parametrize(
    "error", [TryAgainError("an inner retrying gave up"), ValueError("a bug")], ids=repr
)
def test_retrying_does_not_retry_a_plain_try_again_nor_other_errors(error):
    from shared.services.change import run as retrying

    deps, sleeps = _deps()
    tries = []

    def attempt() -> None:
        tries.append(1)
        raise error

    with pytest.raises(type(error)):
        retrying(deps, attempt)
    assert (len(tries), sleeps) == (1, [])
