"""Fault injection at the adapter boundary: DynamoDB throttling and
transaction conflicts, API Gateway ``GoneException`` / ``LimitExceededException``, Step
Functions ``StartExecution`` failures, and the clock function invoked twice or late.

Each test injects one fault through the real adapters (a botocore ``before-send`` hook or
``Stubber``; see ``conftest.py``) and asserts the final state and every message.
"""

from __future__ import annotations

import dataclasses
import logging

import pytest
from botocore.exceptions import EndpointConnectionError
from botocore.stub import Stubber

from shared.services.ports import Timer, TimerKind
from tests.faults.conftest import READS, WRITES, cancelled, dynamo_error
from tests.faults.support import counts, record, started


def _run(backend, name, event):
    return backend.call(name, event)


# ------------------------------------------------------------------ DynamoDB: throttling
@pytest.mark.parametrize("code", ["ProvisionedThroughputExceededException", "ThrottlingException"])
def test_a_throttled_guess_is_retried_by_botocore_with_backoff_and_lands_once(
    backend, dynamo_faults, code
):
    _players, mover, opponent, tid = started(backend)
    rows = len(mover.current_duel().rows)
    dynamo_faults.calls.clear()
    dynamo_faults.fail(WRITES, dynamo_error(code), times=2)
    dynamo_faults.fail("GetItem", dynamo_error(code), times=1)
    mover.guess()
    # 1 read throttled once + 1 write throttled twice: botocore retried each once (standard
    # mode, 2 attempts: shared.runtime.bootstrap), then the store's own retry re-read and wrote
    assert dynamo_faults.count("GetItem") >= 2
    assert dynamo_faults.count("PutItem", "TransactWriteItems") == 3
    assert len(dynamo_faults.backoffs) == 2
    assert all(b >= 0 for b in dynamo_faults.backoffs)
    assert mover.errors == []
    assert len(record(backend, tid).tournament.duel(mover.current_duel().duel_id).rows) == rows + 1
    assert mover.last("turn")["row"]["player"] == mover.id
    assert opponent.last("turn") == mover.last("turn")


@pytest.mark.parametrize(
    ("code", "operations"),
    [
        ("ProvisionedThroughputExceededException", WRITES),
        ("ThrottlingException", WRITES),
        ("ThrottlingException", READS),
        ("InternalServerError", WRITES),
    ],
)
def test_throttling_that_outlasts_the_retries_is_try_again_and_changes_nothing(
    backend, dynamo_faults, code, operations
):
    players, mover, _opponent, _tid = started(backend)
    before = backend.snapshot()
    heard = counts(players)
    status = 500 if code == "InternalServerError" else 400
    dynamo_faults.fail(operations, dynamo_error(code), times=None, status=status)
    word = mover.any_valid_word()
    mover.send("guess", duel_id=mover.current_duel().duel_id, word=word, request_id="g1")
    dynamo_faults.clear()
    assert mover.messages[-1]["type"] == "error"
    assert (mover.messages[-1]["code"], mover.messages[-1]["request_id"]) == ("try_again", "g1")
    assert word not in mover.messages[-1]["message"]
    assert backend.snapshot() == before
    assert counts(players) == [n + (p is mover) for n, p in zip(heard, players, strict=True)]
    # and the game goes on: the same guess now lands
    mover.guess()
    assert mover.last("turn")["row"]["player"] == mover.id


def test_a_throttled_join_is_try_again_and_seats_nobody(backend, dynamo_faults):
    a = backend.player("a")
    before = backend.snapshot()
    dynamo_faults.fail(WRITES, dynamo_error("ProvisionedThroughputExceededException"), times=None)
    a.send("join", language="en", request_id="j")
    dynamo_faults.clear()
    assert [(m["type"], m.get("code")) for m in a.messages[-1:]] == [("error", "try_again")]
    assert backend.snapshot() == before
    a.join("en")
    assert a.last("lobby")["status"] == "waiting"


# ------------------------------------------------------------------ DynamoDB: conflicts
def test_a_transaction_conflict_is_retried_with_backoff_then_commits(
    backend, dynamo_faults, retry_sleeps
):
    a = backend.player("a")
    dynamo_faults.calls.clear()
    dynamo_faults.fail("TransactWriteItems", cancelled("TransactionConflict", "None"), times=2)
    a.join("en")
    assert a.errors == []
    assert a.last("lobby")["status"] == "waiting"
    assert dynamo_faults.count("TransactWriteItems") == 3
    # two conflicts, two jittered waits under the 10 ms and 20 ms ceilings
    assert len(retry_sleeps) == 2
    assert 0 <= retry_sleeps[0] <= 0.01
    assert 0 <= retry_sleeps[1] <= 0.02


def test_a_lasting_transaction_conflict_is_try_again_with_growing_backoff(
    backend, dynamo_faults, retry_sleeps
):
    players, mover, _opponent, _tid = started(backend)
    before = backend.snapshot()
    heard = counts(players)
    # a guess is one Put (tournament only) unless places change: fail both shapes
    dynamo_faults.fail("TransactWriteItems", cancelled("TransactionConflict"), times=None)
    dynamo_faults.fail("PutItem", cancelled("TransactionConflict"), times=None)
    word = mover.any_valid_word()
    mover.send("guess", duel_id=mover.current_duel().duel_id, word=word, request_id="r")
    dynamo_faults.clear()
    assert (mover.messages[-1]["code"], mover.messages[-1]["request_id"]) == ("try_again", "r")
    assert backend.snapshot() == before
    assert counts(players) == [n + (p is mover) for n, p in zip(heard, players, strict=True)]
    deps = backend.deps
    assert len(retry_sleeps) == deps.max_attempts - 1
    ceilings = [
        min(deps.backoff_cap_s, deps.backoff_base_s * 2**n) for n in range(deps.max_attempts - 1)
    ]
    assert all(0 <= s <= c for s, c in zip(retry_sleeps, ceilings, strict=True))


def test_a_transaction_cancelled_for_a_validation_error_is_not_mistaken_for_a_race(
    backend, dynamo_faults, retry_sleeps
):
    a = backend.player("a")
    dynamo_faults.fail("TransactWriteItems", cancelled("ValidationError"), times=1)
    a.join("en")
    assert a.errors == ["internal_error"]  # a bug, surfaced once, not retried 6 times
    assert retry_sleeps == []
    a.join("en")
    assert a.last("lobby")["status"] == "waiting"


# ------------------------------------------------------------------ ConditionalCheckFailed
def _condition_failed(operation: str) -> dict:
    if operation == "TransactWriteItems":
        return cancelled("ConditionalCheckFailed", "None")
    return dynamo_error("ConditionalCheckFailedException", "The conditional request failed")


def _write_paths(backend):
    """(name, setup -> (action, check)) for every use case that writes."""
    from shared.adapters.dynamo import schema

    def player_item(p):
        return backend.item(schema.player_key(p.id))

    def session_new():
        p = backend.player("s", session=False)
        return (lambda: p.send("session")), (
            lambda: (
                p.last("session")["token"]
                and backend.item(schema.connection_key(p.connection_id))["player_id"]
                == p.last("session")["player"]["id"]
            )
        )

    def session_resume():
        p = backend.player("r")
        p.join("en")
        p.disconnect()
        p.connection_id = "resumed="
        backend.invoke("$connect", p.connection_id)
        return (
            (lambda: p.send("session", token=p.token)),
            lambda: (
                p.last("session")["resumed"]
                and player_item(p)["connected"]
                and player_item(p)["connection_id"] == p.connection_id
            ),
        )

    def nickname():
        p = backend.player("n")
        return (lambda: p.send("nickname", nickname="Zed Zed")), (
            lambda: player_item(p)["nickname"] == "Zed Zed"
        )

    def join():
        p = backend.player("j")
        return (lambda: p.join("en")), lambda: player_item(p)["status"] == "queued"

    def join_8th():
        ps = [backend.player(f"f{i}") for i in range(8)]
        for p in ps[:7]:
            p.join("en")
        return (lambda: ps[7].join("en")), (
            lambda: all(player_item(p)["status"] == "playing" for p in ps)
        )

    def leave_lobby():
        p = backend.player("l")
        p.join("en")
        return (lambda: p.send("leave")), lambda: player_item(p)["status"] == "idle"

    def party_create():
        p = backend.player("pc")
        return (lambda: p.send("party_create")), lambda: player_item(p).get("party_id")

    def party_join():
        a, b = backend.player("pa"), backend.player("pb")
        a.send("party_create")
        invite = a.last("party")["invite"]
        return (lambda: b.send("party_join", invite=invite)), (
            lambda: player_item(b).get("party_id") == player_item(a)["party_id"]
        )

    def party_leave():
        a, b = backend.player("pa"), backend.player("pb")
        a.send("party_create")
        b.send("party_join", invite=a.last("party")["invite"])
        return (lambda: a.send("party_leave")), (
            lambda: not player_item(a).get("party_id") and b.last("party")["leader"] == b.id
        )

    def party_start():
        a, b = backend.player("pa"), backend.player("pb")
        a.send("party_create")
        b.send("party_join", invite=a.last("party")["invite"])
        return (lambda: a.send("party_start", language="en")), (
            lambda: player_item(b)["status"] == "queued"
        )

    def party_remove():
        a, b = backend.player("pa"), backend.player("pb")
        a.send("party_create")
        b.send("party_join", invite=a.last("party")["invite"])
        return (lambda: a.send("party_remove", player_id=b.id)), (
            lambda: not player_item(b).get("party_id") and b.last("party")["status"] == "left"
        )

    def party_reset_invite():
        a = backend.player("pa")
        a.send("party_create")
        old = a.last("party")["invite"]
        return (lambda: a.send("party_reset_invite")), (
            lambda: (
                a.last("party")["invite"] != old and backend.item(schema.invite_key(old)) is None
            )
        )

    def party_member_away():
        a, b = backend.player("pa"), backend.player("pb")
        a.send("party_create")
        b.send("party_join", invite=a.last("party")["invite"])
        b.disconnect()
        return (lambda: backend.clock.advance(60_000)), (
            lambda: not player_item(b).get("party_id") and a.last("party")["members"][1:] == []
        )

    def disconnect_queued():
        p = backend.player("d")
        p.join("en")
        return (
            p.disconnect,
            lambda: (
                not player_item(p)["connected"]
                and player_item(p)["reconnect_deadline_ms"] is not None
            ),
        )

    def guess():
        _, mover, _, _tid = started(backend)
        n = len(mover.current_duel().rows)
        return mover.guess, lambda: len(mover.current_duel().rows) == n + 1

    def leave_tournament():
        _players, mover, _, tid = started(backend)
        return (lambda: mover.send("leave")), (
            lambda: record(backend, tid).tournament.player(mover.id).left
        )

    def turn_deadline():
        _, mover, _, _tid = started(backend)
        n = len(mover.current_duel().rows)
        return mover.time_out, lambda: mover.current_duel().rows[n].skipped

    def reconnect_deadline():
        _players, mover, _, tid = started(backend)
        mover.disconnect()
        return (lambda: backend.clock.advance(60_000)), (
            lambda: record(backend, tid).tournament.player(mover.id).left
        )

    return {
        "session_new": session_new,
        "session_resume": session_resume,
        "nickname": nickname,
        "join": join,
        "join_8th_seat_starts": join_8th,
        "leave_lobby": leave_lobby,
        "party_create": party_create,
        "party_join": party_join,
        "party_leave": party_leave,
        "party_start": party_start,
        "party_remove": party_remove,
        "party_reset_invite": party_reset_invite,
        "party_member_away": party_member_away,
        "disconnect_in_lobby": disconnect_queued,
        "guess": guess,
        "leave_tournament": leave_tournament,
        "turn_deadline": turn_deadline,
        "reconnect_deadline": reconnect_deadline,
    }


WRITE_PATHS = [
    "session_new",
    "session_resume",
    "nickname",
    "join",
    "join_8th_seat_starts",
    "leave_lobby",
    "party_create",
    "party_join",
    "party_leave",
    "party_start",
    "party_remove",
    "party_reset_invite",
    "party_member_away",
    "disconnect_in_lobby",
    "guess",
    "leave_tournament",
    "turn_deadline",
    "reconnect_deadline",
]


@pytest.mark.parametrize("path", WRITE_PATHS)
def test_conditional_check_failed_on_every_write_path_is_retried_to_the_same_outcome(
    backend, dynamo_faults, retry_sleeps, path
):
    action, check = _write_paths(backend)[path]()
    dynamo_faults.fail({"PutItem", "TransactWriteItems"}, _condition_failed, times=1)
    action()
    fault = dynamo_faults._faults[0]
    assert fault.hits == 1, "the action wrote nothing conditional?"
    assert len(retry_sleeps) == 1  # re-read and retried once
    assert check(), path
    errors = [
        (cid, m["code"])
        for cid, msgs in backend.notifier.sent.items()
        for m in msgs
        if m["type"] == "error" and m["code"] not in ("session_replaced",)
    ]
    assert errors == []


# ------------------------------------------------------------------ API Gateway posts
def _notifier():
    import boto3

    from shared.adapters.notifier import ApiGatewayNotifier

    client = boto3.client(
        "apigatewaymanagementapi",
        region_name="us-east-1",
        endpoint_url="https://example.execute-api.us-east-1.amazonaws.com/prod",
    )
    return ApiGatewayNotifier(client), Stubber(client)


def test_gone_and_limit_exceeded_posts_never_stop_the_others(caplog):
    caplog.set_level(logging.WARNING)
    notifier, stub = _notifier()
    stub.add_response("post_to_connection", {}, {"ConnectionId": "a", "Data": b"1"})
    stub.add_client_error("post_to_connection", "GoneException", http_status_code=410)
    stub.add_client_error("post_to_connection", "LimitExceededException", http_status_code=429)
    stub.add_response("post_to_connection", {}, {"ConnectionId": "d", "Data": b"4"})
    with stub:
        gone = notifier.send([("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")])
        stub.assert_no_pending_responses()
    assert gone == ["b"]
    assert "LimitExceededException" in caplog.text
    assert "3" not in [r.getMessage()[-1:] for r in caplog.records]  # no payload logged


def test_a_transport_error_on_one_post_never_stops_the_others(monkeypatch, caplog):
    notifier, _ = _notifier()
    sent = []

    def post(ConnectionId, Data):  # noqa: N803 - boto3's names
        if ConnectionId == "b":
            raise EndpointConnectionError(endpoint_url="https://example")
        sent.append(ConnectionId)

    monkeypatch.setattr(notifier._client, "post_to_connection", post)
    assert notifier.send([("a", "1"), ("b", "2"), ("c", "3")]) == []
    assert sent == ["a", "c"]
    assert "EndpointConnectionError" in caplog.text


def test_last_active_is_get_connections_last_active_at_and_gone_is_none(caplog):
    """Ruling 14's read: GetConnection's ``LastActiveAt`` in UTC ms; 410 is None (gone); any
    other failure reads as "active now" (a connection is never closed on a failed read)."""
    import datetime as dt
    import time

    notifier, stub = _notifier()
    at = dt.datetime(2027, 1, 1, 12, 0, 5, 250_000, tzinfo=dt.UTC)
    connected = dt.datetime(2027, 1, 1, 12, 0, 0, tzinfo=dt.UTC)
    identity = {"SourceIp": "203.0.113.9", "UserAgent": "ua"}
    stub.add_response(
        "get_connection",
        {"ConnectedAt": connected, "LastActiveAt": at, "Identity": identity},
        {"ConnectionId": "a"},
    )
    stub.add_client_error("get_connection", "GoneException", http_status_code=410)
    stub.add_client_error("get_connection", "LimitExceededException", http_status_code=429)
    with stub:
        assert notifier.last_active_ms("a") == 1_798_804_805_250
        assert notifier.last_active_ms("b") is None
        before = time.time_ns() // 1_000_000
        assert (notifier.last_active_ms("c") or 0) >= before
        stub.assert_no_pending_responses()
    assert "LimitExceededException" in caplog.text


def test_a_gone_duelist_starts_the_disconnect_flow_and_the_others_still_hear(backend):
    players, mover, opponent, tid = started(backend)
    backend.notifier.gone.add(opponent.connection_id)  # the socket died without $disconnect
    others = [p for p in players if p not in (mover, opponent)]
    marks = counts(others)
    mover.guess()
    row = mover.last("turn")
    assert row["row"]["player"] == mover.id
    # everyone still connected heard the row and then that the opponent went away
    for p, start in zip([mover, *others], [0, *marks], strict=True):
        status = [m for m in p.messages[start:] if m["type"] == "player_status"]
        assert [(m["player_id"], m["status"]) for m in status] == [(opponent.id, "disconnected")]
    from tests.functional.stored import player_item

    item = player_item(backend, opponent)
    assert item["connected"] is False
    assert item.get("connection_id") is None
    assert item["reconnect_deadline_ms"] == backend.clock.now + 60_000
    pending = [t for t in backend.clock.pending() if t.kind is TimerKind.RECONNECT]
    assert [(t.ref, t.due_ms) for t in pending] == [(opponent.id, backend.clock.now + 60_000)]
    assert record(backend, tid).connections[opponent.id] is None
    assert opponent.all("player_status") == []  # nothing more is pushed to the dead socket
    # and the 60 s deadline then applies ruling 3
    backend.clock.advance(60_000)
    assert record(backend, tid).tournament.player(opponent.id).left


def test_a_gone_caller_of_an_error_reply_is_disconnected_too(backend):
    a = backend.player("a")
    a.join("en")
    backend.notifier.gone.add(a.connection_id)
    a.send("join", language="en")  # already_queued, but the reply finds the socket gone
    from tests.functional.stored import player_item

    assert player_item(backend, a)["connected"] is False


# ------------------------------------------------------------------ Step Functions
def test_start_execution_failures_are_logged_and_never_raise(caplog):
    import boto3

    from shared.adapters.step_functions import StepFunctionsClock

    client = boto3.client("stepfunctions", region_name="us-east-1")
    counted: list[tuple[str, float]] = []
    clock = StepFunctionsClock(
        client,
        "arn:aws:states:us-east-1:000000000000:stateMachine:x",
        metrics=lambda name, value: counted.append((name, value)),
    )
    timer = Timer(TimerKind.INTRO, "t", 2, 1_800_000_030_000)  # every design starts one
    with Stubber(client) as stub:
        stub.add_client_error("start_execution", "ExecutionLimitExceeded")
        stub.add_client_error("start_execution", "ExecutionAlreadyExists")
        stub.add_client_error("start_execution", "ThrottlingException", http_status_code=400)
        for _ in range(3):
            clock.schedule(timer)
        stub.assert_no_pending_responses()
    assert caplog.text.count("the watchdog will apply it") == 2
    # counted, so a loop that fell to the watchdog is alarmed on (ClockStartFailures)
    assert counted == [("ClockStartFailed", 1), ("ClockStartFailed", 1)]


def test_a_start_execution_transport_error_does_not_lose_the_pushes(monkeypatch, caplog):
    import boto3

    from shared.adapters.step_functions import StepFunctionsClock

    client = boto3.client("stepfunctions", region_name="us-east-1")
    counted: list[str] = []
    clock = StepFunctionsClock(client, "arn", metrics=lambda name, _value: counted.append(name))

    def boom(**_):
        raise EndpointConnectionError(endpoint_url="https://states")

    monkeypatch.setattr(client, "start_execution", boom)
    clock.schedule(Timer(TimerKind.INTRO, "t", 1, 0))
    assert "EndpointConnectionError" in caplog.text
    assert counted == ["ClockStartFailed"]


class _FailingStarts:
    """The production clock adapter with a Step Functions client whose StartExecution always
    fails; time still comes from the harness's manual clock. ``scheduled``: every timer it
    was asked to start."""

    def __init__(self, manual, client):
        from shared.adapters.step_functions import StepFunctionsClock

        self.manual = manual
        self.adapter = StepFunctionsClock(client, "arn:aws:states:us-east-1:0:stateMachine:x")
        self.scheduled = []

    def now_ms(self):
        return self.manual.now_ms()

    def schedule(self, timer):
        self.scheduled.append(timer)
        self.adapter.schedule(timer)


def test_when_no_timer_starts_the_watchdog_applies_the_deadlines(backend, monkeypatch):
    import boto3

    _players, mover, opponent, tid = started(backend)
    backend.clock.advance(10_000)
    mover.guess()
    duel_id = mover.current_duel().duel_id
    rows = len(mover.current_duel().rows)
    assert opponent.my_turn()
    deadline = mover.current_duel().turn_deadline_ms
    # the other duels' first deadlines (10 s earlier) are applied by the round's loop ...
    backend.clock.advance_to(deadline - 6_000)
    assert record(backend, tid).tournament.next_deadline() == deadline
    client = boto3.client("stepfunctions", region_name="us-east-1")
    monkeypatch.setattr(
        client,
        "start_execution",
        lambda **_: (_ for _ in ()).throw(EndpointConnectionError(endpoint_url="x")),
    )
    failing = _FailingStarts(backend.clock, client)
    backend.deps = dataclasses.replace(backend.deps, clock=failing)
    # ... then the loop dies (turns schedule no timer of their own: nothing else runs the
    # round's deadlines), and no execution can start any more
    assert backend.clock.service.abandon()
    grace = backend.deps.timing.skip_grace_ms
    backend.clock.advance_to(deadline + grace + 1_000)  # past the skip's wake: nothing fires
    assert backend.clock.pending() == []
    assert len(record(backend, tid).tournament.duel(duel_id).rows) == rows
    _run(backend, "watchdog", {})  # within the watchdog's grace (5 s): not yet
    assert len(record(backend, tid).tournament.duel(duel_id).rows) == rows
    assert failing.scheduled == []
    backend.clock.advance_to(deadline + 6_000)
    _run(backend, "watchdog", {})
    t = record(backend, tid).tournament
    duel = t.duel(duel_id)
    assert len(duel.rows) == rows + 1
    assert duel.rows[-1].skipped
    assert duel.rows[-1].player == opponent.id
    assert opponent.last("turn")["row"]["skipped"] is True
    # the watchdog tried to start the round's loop again, due at the round's next due time
    assert failing.scheduled == [
        Timer(TimerKind.INTRO, tid, t.round_no, t.next_due(backend.deps.timing.skip_grace_ms))
    ]
    # a second watchdog run finds nothing more due
    before = backend.snapshot()
    _run(backend, "watchdog", {})
    assert backend.snapshot() == before


# ------------------------------------------------------------------ the clock function
def _round_timer(backend, tid, due_ms):
    """A wake of the round's clock loop (turns schedule no timer: the round's loop, started
    by its intro timer, applies every turn deadline)."""
    return Timer(TimerKind.INTRO, tid, record(backend, tid).tournament.round_no, due_ms)


def test_a_turn_deadline_fired_twice_applies_once(backend):
    players, mover, opponent, tid = started(backend)
    deadline = mover.current_duel().turn_deadline_ms
    timer = _round_timer(backend, tid, deadline + backend.deps.timing.skip_grace_ms)
    rows = len(mover.current_duel().rows)
    backend.pass_deadline(deadline)  # the loop's scheduled wake applies the skip
    assert len(mover.current_duel().rows) == rows + 1
    heard = counts(players)
    before = backend.snapshot()
    result = _run(backend, "clock", timer.to_event())  # the same wake again (at-least-once)
    assert result["applied"] is False
    assert result["loop"] is True  # the round goes on: the duplicate loop waits again
    assert backend.snapshot() == before
    assert counts(players) == heard
    assert len(mover.current_duel().rows) == rows + 1
    assert [m["turn"] for m in opponent.all("turn")] == [rows + 1]


def test_a_turn_deadline_fired_late_applies_every_skip_due_in_order_once(backend):
    _players, mover, opponent, tid = started(backend)
    duel_id = mover.current_duel().duel_id
    deadline = mover.current_duel().turn_deadline_ms
    timer = _round_timer(backend, tid, deadline + backend.deps.timing.skip_grace_ms)
    # the wake is 65 s late: three skips (due 1, 31 and 61 s after the deadline) are due
    backend.clock.now = deadline + 65_000
    _run(backend, "clock", timer.to_event())
    duel = record(backend, tid).tournament.duel(duel_id)
    assert [r.skipped for r in duel.rows] == [True, True, True]
    assert [r.player for r in duel.rows] == [mover.id, opponent.id, mover.id]
    assert [m["turn"] for m in mover.all("turn") if m["duel_id"] == duel_id] == [1, 2, 3]
    # the round's own loop, waking afterwards for the first deadline, is stale: nothing changes
    before = backend.snapshot()
    backend.clock.settle()
    assert backend.snapshot() == before
    for t in backend.clock.pending():
        assert _run(backend, "clock", t.to_event())["applied"] is False
    assert len(record(backend, tid).tournament.duel(duel_id).rows) == 3


def test_an_intro_deadline_fired_twice_starts_the_duels_once(backend):
    players = backend.fill_lobby("en")
    (intro,) = backend.clock.pending()
    backend.clock.advance_to(intro.due_ms)
    starts = [len(p.all("duel_start")) for p in players]
    before = backend.snapshot()
    assert _run(backend, "clock", intro.to_event())["applied"] is False
    assert backend.snapshot() == before
    assert [len(p.all("duel_start")) for p in players] == starts


def test_a_reconnect_deadline_fired_twice_or_after_a_resume_changes_nothing(backend):
    _players, mover, _opponent, tid = started(backend)
    mover.disconnect()
    (timer,) = [t for t in backend.clock.pending() if t.kind is TimerKind.RECONNECT]
    mover.resume()
    before = backend.snapshot()
    backend.clock.now = timer.due_ms
    _run(backend, "clock", timer.to_event())
    _run(backend, "clock", timer.to_event())
    assert backend.snapshot() == before
    assert not record(backend, tid).tournament.player(mover.id).left
