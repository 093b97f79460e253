"""Local runtime: API Gateway's throttles, Lambda's reserved concurrency and function timeouts
(``infra.emulator.throttles``), alone and through ``LocalGateway``: a throttled message gets
API Gateway's type-less "Too Many Requests" frame and reaches no handler, a throttled
``$connect`` gets HTTP 429, an invocation beyond the reservation or past the timeout gets
"Internal server error", and what a timed-out handler would do afterwards never happens."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest
import websockets
from websockets.exceptions import InvalidStatus

from infra.emulator.throttles import (
    ColdStarts,
    Concurrency,
    RouteThrottles,
    TokenBucket,
    TwinLimits,
)
from infra.limits import STAGE_LIMITS, StageLimits, Throttle

from .echo import EchoApp, gateway, recv_json, run

pytestmark = pytest.mark.enable_socket


# -- the machinery alone ----------------------------------------------------------------------


def test_a_bucket_spends_its_burst_then_refills_at_its_rate_by_arrival_time() -> None:
    bucket = TokenBucket(Throttle(rate=2, burst=3))
    assert [bucket.take(100.0) for _ in range(4)] == [True, True, True, False]
    assert bucket.take(100.4) is False  # 0.8 token back: not yet one
    assert bucket.take(100.5) is True  # 1.0 token at 0.5 s x 2/s
    assert bucket.take(100.2) is False  # an earlier arrival refills nothing
    assert [bucket.take(200.0) for _ in range(4)] == [True, True, True, False]  # capped at burst


def test_routes_get_their_own_bucket_or_the_stage_defaults_and_share_the_account() -> None:
    limits = StageLimits("t", stage=Throttle(1, 2), routes={"guess": Throttle(1, 3)})
    throttles = RouteThrottles(limits, account=Throttle(1, 6))
    t = 50.0
    assert [throttles.admit("guess", t) for _ in range(4)] == [True, True, True, False]
    # join and leave: a bucket each of the stage default's size, not one shared bucket
    assert [throttles.admit("join", t) for _ in range(3)] == [True, True, False]
    assert throttles.admit("leave", t) is True
    # the account bucket (6) is now empty: every route is refused
    assert throttles.admit("leave", t) is False
    assert throttles.throttled == {"guess": 1, "join": 1, "leave": 1}
    assert sum(throttles.admitted.values()) == 6


def test_a_reservation_caps_its_function_and_the_others_share_the_rest() -> None:
    concurrency = Concurrency({"guess": 2}, account=3)
    assert [concurrency.acquire("guess") for _ in range(3)] == [True, True, False]
    assert concurrency.acquire("join") is True  # the unreserved 1
    assert concurrency.acquire("leave") is False
    concurrency.release("guess")
    assert concurrency.acquire("guess") is True
    assert concurrency.rejected == {"guess": 1, "leave": 1}


def test_cold_starts_are_paid_by_new_environments_only() -> None:
    cold = ColdStarts({"guess": 0.5})
    assert cold.start("guess") == 0.5
    assert cold.start("guess") == 0.5  # two at once: a second environment
    cold.end("guess")
    cold.end("guess")
    assert cold.start("guess") == 0.0  # warm
    assert cold.start("join") == 0.0  # no figure: warm
    assert cold.cold == {"guess": 2}


def test_a_stage_scaled_to_a_default_rate_scales_every_throttle() -> None:
    limits = TwinLimits.for_stage("prod", stage_rate=20)
    assert limits.throttles is not None
    scaled = limits.throttles.limits
    prod = STAGE_LIMITS["prod"]
    factor = 20 / prod.stage.rate
    assert scaled.stage.rate == pytest.approx(20)
    for key, throttle in prod.routes.items():
        assert scaled.routes[key].rate == pytest.approx(throttle.rate * factor)
    assert scaled.reserved == prod.reserved


# -- through the gateway ---------------------------------------------------------------------


def _limits(**routes: Throttle) -> TwinLimits:
    """Throttles only: the stage default ``burst`` 100, ``routes`` their own; no account."""
    stage = StageLimits("t", stage=Throttle(0.001, 100), routes=dict(routes))
    return TwinLimits(throttles=RouteThrottles(stage, account=None))


def test_throttled_messages_get_api_gateways_frame_and_reach_no_handler() -> None:
    app = EchoApp()

    async def scenario() -> None:
        limits = _limits(echo=Throttle(0.001, 3))  # 3 whoami + seqs, then nothing for 1,000 s
        async with gateway(app.routes(), limits=limits) as gw:
            async with websockets.connect(gw.ws_url) as ws:
                for seq in range(6):
                    await ws.send(json.dumps({"action": "echo", "seq": seq}))
                frames = [await recv_json(ws) for _ in range(6)]
            echoed = sorted(f["seq"] for f in frames if "route" in f)
            throttled = [f for f in frames if "route" not in f]
            assert echoed == [0, 1, 2]
            assert len(throttled) == 3
            connection_id = app.recorder.events("echo")[0]["requestContext"]["connectionId"]
            for frame in throttled:
                assert set(frame) == {"message", "connectionId", "requestId"}
                assert frame["message"] == "Too Many Requests"
                assert frame["connectionId"] == connection_id
            assert len({f["requestId"] for f in throttled}) == 3
            assert len(app.recorder.events("echo")) == 3
            assert limits.counts()["throttled"] == {"echo": 3}

    run(scenario)


def test_a_throttled_connect_is_refused_with_429_and_runs_no_handler() -> None:
    app = EchoApp()

    async def scenario() -> None:
        limits = _limits(**{"$connect": Throttle(0.001, 1)})
        async with gateway(app.routes(), limits=limits) as gw:
            async with websockets.connect(gw.ws_url):
                with pytest.raises(InvalidStatus) as refused:
                    async with websockets.connect(gw.ws_url):
                        pass
                assert refused.value.response.status_code == 429
                assert json.loads(refused.value.response.body) == {"message": "Too Many Requests"}
            assert len(app.recorder.events("$connect")) == 1

    run(scenario)


def test_an_invocation_beyond_the_reservation_is_rejected_not_queued() -> None:
    app = EchoApp()
    release = threading.Event()

    def hold(event: dict[str, Any], context: Any) -> dict[str, Any]:
        app.recorder.add("hold", event, context)
        release.wait(10)
        return {"statusCode": 200}

    async def scenario() -> None:
        limits = TwinLimits(concurrency=Concurrency({"hold": 1}))
        async with gateway(app.routes() | {"hold": hold}, limits=limits) as gw:
            async with websockets.connect(gw.ws_url) as a, websockets.connect(gw.ws_url) as b:
                await a.send(json.dumps({"action": "hold"}))
                await app.recorder.await_route("hold")
                await b.send(json.dumps({"action": "hold"}))
                frame = await recv_json(b)
                assert frame["message"] == "Internal server error"
                assert set(frame) == {"message", "connectionId", "requestId"}
                release.set()
            assert len(app.recorder.events("hold")) == 1
            assert limits.counts()["rejected"] == {"hold": 1}

    run(scenario)


def test_an_invocation_past_its_timeout_fails_and_its_later_effects_never_happen() -> None:
    app = EchoApp()
    after: list[str] = []

    def late(event: dict[str, Any], context: Any) -> dict[str, Any]:
        app.recorder.add("late", event, context)
        end = time.monotonic() + 2.0
        while time.monotonic() < end:  # work in small steps: the stop lands between them
            time.sleep(0.01)
        after.append("ran on")
        app.echo(event, context)  # the reply it would have posted
        return {"statusCode": 200}

    async def scenario() -> None:
        limits = TwinLimits(timeouts={"late": 0.3})
        async with gateway(app.routes() | {"late": late}, limits=limits) as gw:
            async with websockets.connect(gw.ws_url) as ws:
                await ws.send(json.dumps({"action": "late", "seq": "x"}))
                frame = await recv_json(ws)
                assert frame["message"] == "Internal server error"
                await asyncio.sleep(2.2)  # past the moment the handler would have posted
                await ws.send(json.dumps({"action": "echo", "seq": "after"}))
                reply = await recv_json(ws)
                assert reply["seq"] == "after"  # nothing from the timed-out handler came first
            assert after == []

    run(scenario)


def test_a_recycled_environment_starts_cold_again() -> None:
    cold = ColdStarts({"guess": 0.5}, share=1.0)
    cold.start("guess")
    cold.end("guess")
    assert cold.start("guess") == 0.5  # warm environment recycled: cold again
    assert cold.cold == {"guess": 2}


def test_a_stage_runs_in_an_account_whose_quota_holds_its_reservations() -> None:
    limits = TwinLimits.for_stage("prod")
    assert limits.concurrency is not None
    assert limits.concurrency.unreserved == 100  # 3,601 needed: prod's quota raised to hold it
    assert limits.concurrency.acquire("a route of a test's own")
