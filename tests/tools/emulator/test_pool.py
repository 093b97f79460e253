"""The local runtime's worker pool (``infra.emulator.pool``): queued invocations are taken by
priority (a guess before earlier joins, the clock before the rest), first in, first out within
one; results, errors and shutdown as ``ThreadPoolExecutor``'s. Interleavings are forced with
events (a blocker holds the only thread while the queue is filled), never with sleeps."""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import CancelledError
from typing import Any

import pytest
import websockets

from infra.emulator.pool import (
    CLOCK,
    CLOCK_MAX_WAIT_SECONDS,
    OTHER,
    PLAY,
    SEATED,
    WorkerPool,
    message_priority,
)

from .echo import EchoApp, gateway, management_client, recv_json, run


def _hold(pool: WorkerPool) -> threading.Event:
    """Occupy every thread of ``pool`` until the returned event is set."""
    release = threading.Event()
    started = threading.Barrier(pool.max_workers + 1)

    def block() -> None:
        started.wait(10)
        assert release.wait(10)

    for _ in range(pool.max_workers):
        pool.submit_at(PLAY, block)
    started.wait(10)
    return release


def test_queued_work_runs_by_priority_then_in_arrival_order() -> None:
    pool = WorkerPool(1)
    ran: list[str] = []
    release = _hold(pool)
    futures = [
        pool.submit_at(OTHER, ran.append, "join 1"),
        pool.submit_at(CLOCK, ran.append, "clock 1"),
        pool.submit(ran.append, "session"),  # submit: OTHER
        pool.submit_at(PLAY, ran.append, "guess 1"),
        pool.lane(CLOCK).submit(ran.append, "clock 2"),
        pool.submit_at(PLAY, ran.append, "guess 2"),
    ]
    assert pool.queued() == 6
    release.set()
    for future in futures:
        future.result(10)
    assert ran == ["guess 1", "guess 2", "clock 1", "clock 2", "join 1", "session"]
    pool.shutdown()


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("waited", "expected"),
    [
        (CLOCK_MAX_WAIT_SECONDS * 0.9, ["guess", "clock"]),
        (CLOCK_MAX_WAIT_SECONDS, ["clock", "guess"]),
    ],
)
def test_a_clock_call_that_waited_long_enough_goes_before_guesses(
    waited: float, expected: list[str]
) -> None:
    clock = FakeTime()
    pool = WorkerPool(1, monotonic=clock)
    ran: list[str] = []
    release = _hold(pool)
    futures = [pool.submit_at(CLOCK, ran.append, "clock")]
    clock.now += waited
    futures.append(pool.submit_at(PLAY, ran.append, "guess"))
    release.set()
    for future in futures:
        future.result(10)
    assert ran == expected
    pool.shutdown()


def test_priorities_other_than_the_three_are_refused() -> None:
    pool = WorkerPool(1)
    with pytest.raises(ValueError, match="priority"):
        pool.submit_at(7, print)
    pool.shutdown()


def test_other_work_leaves_one_thread_for_guesses_and_the_clock() -> None:
    """With 2 threads, one join running and another queued, a guess and a clock wake still get
    the second thread; the queued join waits for the first."""
    pool = WorkerPool(2)
    join_running = threading.Event()
    release = threading.Event()
    ran: list[str] = []

    def long_join() -> None:
        join_running.set()
        assert release.wait(10)
        ran.append("join 1 done")

    first = pool.submit(long_join)
    assert join_running.wait(10)
    second = pool.submit(ran.append, "join 2")
    pool.submit_at(PLAY, ran.append, "guess").result(10)
    pool.submit_at(CLOCK, ran.append, "clock").result(10)
    assert ran == ["guess", "clock"]
    assert pool.queued() == 1  # join 2 waits: OTHER holds at most one of the two threads
    release.set()
    first.result(10)
    second.result(10)
    assert ran == ["guess", "clock", "join 1 done", "join 2"]
    pool.shutdown()


def test_with_one_thread_other_work_may_use_it() -> None:
    pool = WorkerPool(1)
    assert pool.submit(lambda: "ran").result(10) == "ran"
    pool.shutdown()


def test_results_and_exceptions_come_back_through_the_future() -> None:
    pool = WorkerPool(2)

    def fail() -> None:
        raise ValueError("handler failed")

    assert pool.submit(lambda a, b=0: a + b, 2, b=3).result(10) == 5
    with pytest.raises(ValueError, match="handler failed"):
        pool.submit_at(PLAY, fail).result(10)
    assert pool.submit(lambda: "still serving").result(10) == "still serving"
    pool.shutdown()


def test_never_more_threads_at_once_than_max_workers() -> None:
    """Three blocking guesses on a 2-thread pool: two run, the third waits for a thread; over
    many calls only the two named threads ever run anything."""
    pool = WorkerPool(2, thread_name_prefix="lambda")
    release = threading.Event()
    two_running = threading.Barrier(3)
    names: set[str] = set()

    def block() -> None:
        names.add(threading.current_thread().name)
        two_running.wait(10)
        assert release.wait(10)

    blocked = [pool.submit_at(PLAY, block) for _ in range(2)]
    third = pool.submit_at(PLAY, names.add, "third ran")
    two_running.wait(10)  # both threads are inside block()
    assert pool.queued() == 1
    assert not third.done()
    release.set()
    for future in [*blocked, third]:
        future.result(10)
    for future in [pool.submit_at(i % 3, lambda: None) for i in range(200)]:
        future.result(10)
    pool.shutdown()
    assert names == {"lambda_0", "lambda_1", "third ran"}


def test_shutdown_runs_queued_work_then_refuses_new_work() -> None:
    pool = WorkerPool(1)
    release = _hold(pool)
    queued = pool.submit(lambda: "queued before shutdown")
    release.set()
    pool.shutdown(wait=True)
    assert queued.result(0) == "queued before shutdown"
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(lambda: None)
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.lane(PLAY).submit(lambda: None)


def test_shutdown_with_cancel_futures_cancels_what_waits() -> None:
    pool = WorkerPool(1)
    release = _hold(pool)
    waiting = pool.submit_at(PLAY, lambda: "never")
    pool.shutdown(wait=False, cancel_futures=True)
    release.set()
    pool.shutdown(wait=True)
    with pytest.raises(CancelledError):
        waiting.result(0)


def test_a_lane_shutdown_leaves_the_pool_serving() -> None:
    pool = WorkerPool(1)
    pool.lane(CLOCK).shutdown(wait=True)
    assert pool.submit(lambda: 7).result(10) == 7
    pool.shutdown()


def test_max_workers_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        WorkerPool(0)


def test_route_priorities() -> None:
    """A seated connection's guess plays first; its other messages, and anyone's ``session``
    and connection events, come next; a connection without a session gets no priority, even
    for a message that says ``"action": "guess"``."""
    assert message_priority("guess", seated=True) == PLAY
    for route in ("join", "leave", "party", "nickname", "$default", "session", "$connect"):
        assert message_priority(route, seated=True) == SEATED
    for route in ("session", "$connect", "$disconnect"):
        assert message_priority(route, seated=False) == SEATED
    for route in ("guess", "join", "leave", "party", "nickname", "$default"):
        assert message_priority(route, seated=False) == OTHER


def test_seated_work_goes_before_work_without_a_session() -> None:
    """With the only thread busy: two calls without a session, then a seated one: the seated
    one runs first, then the others in arrival order."""
    pool = WorkerPool(1)
    release = _hold(pool)
    order: list[str] = []
    futures = [
        pool.submit_at(OTHER, order.append, "flood-1"),
        pool.submit_at(OTHER, order.append, "flood-2"),
        pool.submit_at(SEATED, order.append, "nickname"),
    ]
    release.set()
    for future in futures:
        future.result(10)
    assert order == ["nickname", "flood-1", "flood-2"]
    pool.shutdown()


@pytest.mark.enable_socket
def test_the_gateway_runs_a_seated_guess_before_earlier_joins_and_a_sessionless_one_last() -> None:
    """Through real sockets: with the only thread busy, a guess from a connection without a
    session, two joins, then a guess arrive, the last three from connections the backend
    answered ``session``;
    the seated guess's handler runs first (AWS would not have queued it at all), the
    session-less one after the joins: writing ``"action": "guess"`` buys no priority."""
    app = EchoApp()
    pool = WorkerPool(1)
    busy = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def hold(event: dict[str, Any], context: Any) -> dict[str, Any]:
        busy.set()
        assert release.wait(10)
        return app.echo(event, context)

    def seat(event: dict[str, Any], context: Any) -> dict[str, Any]:
        ctx = event["requestContext"]
        client = management_client(f"http://{ctx['domainName']}/{ctx['stage']}")
        client.post_to_connection(ConnectionId=ctx["connectionId"], Data=b'{"type":"session"}')
        return {"statusCode": 200}

    def record(event: dict[str, Any], context: Any) -> dict[str, Any]:
        order.append(json.loads(event["body"])["who"])
        return app.echo(event, context)

    routes = app.routes() | {"hold": hold, "session": seat, "join": record, "guess": record}

    async def until(condition: Any) -> None:
        for _ in range(1000):
            if condition():
                return
            await asyncio.sleep(0.01)
        raise AssertionError("condition never became true")

    async def scenario() -> None:
        async with gateway(routes, executor=pool) as gw:
            sockets = [await websockets.connect(gw.ws_url) for _ in range(5)]
            try:
                holder, flooder, joiner1, joiner2, guesser = sockets
                for ws in (joiner1, joiner2, guesser):
                    await ws.send(json.dumps({"action": "session"}))
                    assert (await recv_json(ws))["type"] == "session"
                await holder.send(json.dumps({"action": "hold"}))
                await until(busy.is_set)
                for queued, (ws, body) in enumerate(
                    (
                        (flooder, {"action": "guess", "who": "flood"}),
                        (joiner1, {"action": "join", "who": "join"}),
                        (joiner2, {"action": "join", "who": "join"}),
                        (guesser, {"action": "guess", "who": "seated guess"}),
                    ),
                    start=1,
                ):
                    await ws.send(json.dumps(body))
                    await until(lambda n=queued: pool.queued() == n)
                release.set()
                for ws in (holder, flooder, joiner1, joiner2, guesser):
                    await recv_json(ws)
            finally:
                for ws in sockets:
                    await ws.close()

    run(scenario)
    pool.shutdown()
    assert order == ["seated guess", "join", "join", "flood"]
