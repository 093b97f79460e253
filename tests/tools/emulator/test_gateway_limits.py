"""Local runtime: LocalGateway enforces API Gateway's WebSocket limits and failure modes.

Idle timeout and connection duration (closed with 1001 "Going away", ``$disconnect`` reports it),
frame and message sizes (32 KB frames, 128 KB messages in both directions), lost ``$disconnect``
events, half-open peers, ``LastActiveAt``. Short settings (fractions of a second) keep every test
at a few seconds; real sockets on 127.0.0.1 and a real boto3 ``apigatewaymanagementapi`` client.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest
import websockets
from aws_lambda_powertools.utilities.parser.models import APIGatewayWebSocketDisconnectEventModel
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from infra.emulator.gateway import LocalGateway
from infra.emulator.sockets import FrameScanner
from shared.protocol.limits import MAX_FRAME_BYTES, MAX_MESSAGE_BYTES

from .echo import EchoApp, gateway, management_client, run
from .echo import my_connection_id as whoami

pytestmark = pytest.mark.enable_socket


async def closed_by_server(ws: ClientConnection) -> tuple[int, str]:
    """Wait for the server's close frame; (code, reason) as the client received them."""

    async def drain() -> None:
        while True:
            await asyncio.wait_for(ws.recv(), 10)

    with pytest.raises(ConnectionClosed) as closed:
        await drain()
    assert closed.value.rcvd is not None, "closed without a close frame"
    return closed.value.rcvd.code, closed.value.rcvd.reason


def sink_app() -> tuple[EchoApp, dict[str, Any]]:
    """EchoApp whose ``sink`` route and ``$default`` record and answer nothing (no outbound
    traffic, so only the client's frames count as activity)."""
    app = EchoApp()

    def sink(event: dict[str, Any], context: Any) -> dict[str, Any]:
        app.recorder.add("sink", event, context)
        return {"statusCode": 200}

    return app, app.routes() | {"sink": sink, "$default": sink}


def disconnect_code(event: dict[str, Any]) -> int:
    model = APIGatewayWebSocketDisconnectEventModel.model_validate(event)
    return int(model.request_context.disconnect_status_code)


# -- idle timeout and connection duration ---------------------------------------------------


def test_an_idle_socket_is_closed_with_1001_and_disconnect_reports_it() -> None:
    app = EchoApp()

    async def scenario() -> None:
        # 1.5 s: the echo's reply to whoami must land before the idle close on a loaded core
        async with gateway(app.routes(), idle_timeout_seconds=1.5) as gw:
            async with websockets.connect(gw.ws_url) as ws:
                connection_id = await whoami(ws)
                assert await closed_by_server(ws) == (1001, "Going away")
            (event,) = await app.recorder.await_route("$disconnect")
            assert event["requestContext"]["connectionId"] == connection_id
            assert disconnect_code(event) == 1001
            assert event["requestContext"]["disconnectReason"] == "Going away"
            assert gw.connection_ids() == []
            client = management_client(gw.callback_url)
            with pytest.raises(client.exceptions.GoneException):
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=b"late"
                )

    run(scenario)


def test_inbound_messages_keep_a_socket_open_past_the_idle_timeout() -> None:
    app, routes = sink_app()

    async def scenario() -> None:
        async with gateway(routes, idle_timeout_seconds=1.0) as gw:
            async with websockets.connect(gw.ws_url) as ws:
                for _ in range(12):  # 2.4 s of a message every 0.2 s, nothing sent back
                    await ws.send(json.dumps({"action": "sink"}))
                    await asyncio.sleep(0.2)
                assert app.recorder.events("$disconnect") == []
                await whoami(ws)  # still open
                assert await closed_by_server(ws) == (1001, "Going away")  # silence again
            (event,) = await app.recorder.await_route("$disconnect")
            assert disconnect_code(event) == 1001

    run(scenario)


def test_outbound_posts_keep_a_socket_open_past_the_idle_timeout() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes(), idle_timeout_seconds=1.0) as gw:
            client = management_client(gw.callback_url)
            async with websockets.connect(gw.ws_url) as ws:
                connection_id = await whoami(ws)
                for i in range(12):  # 2.4 s of a post every 0.2 s, the client says nothing
                    await asyncio.to_thread(
                        client.post_to_connection, ConnectionId=connection_id, Data=b"%d" % i
                    )
                    assert await asyncio.wait_for(ws.recv(), 10) == str(i)
                    await asyncio.sleep(0.2)
                assert app.recorder.events("$disconnect") == []
                assert await closed_by_server(ws) == (1001, "Going away")
            (event,) = await app.recorder.await_route("$disconnect")
            assert disconnect_code(event) == 1001

    run(scenario)


def test_websocket_ping_frames_do_not_count_as_activity() -> None:
    """API Gateway never shows control frames to the backend; only messages keep it open."""
    app = EchoApp()

    async def scenario() -> None:
        # 2 s of idle time (20 pings' worth): long enough that the echo's own reply lands
        # first on a loaded CI core (0.6 s did not), short enough to keep the test quick
        async with gateway(app.routes(), idle_timeout_seconds=2.0) as gw:
            async with websockets.connect(gw.ws_url, ping_interval=0.1, ping_timeout=5) as ws:
                await whoami(ws)
                assert await closed_by_server(ws) == (1001, "Going away")
            (event,) = await app.recorder.await_route("$disconnect")
            assert disconnect_code(event) == 1001

    run(scenario)


def test_the_connection_duration_cap_closes_even_a_busy_socket() -> None:
    app, routes = sink_app()

    async def scenario() -> None:
        async with gateway(routes, idle_timeout_seconds=1.0, max_connection_seconds=2.0) as gw:
            async with websockets.connect(gw.ws_url) as ws:
                connection_id = await whoami(ws)

                async def chatter() -> None:
                    while True:
                        await ws.send(json.dumps({"action": "sink"}))
                        await asyncio.sleep(0.1)

                talking = asyncio.create_task(chatter())
                try:
                    assert await closed_by_server(ws) == (1001, "Going away")
                finally:
                    talking.cancel()
                    await asyncio.gather(talking, return_exceptions=True)
            (event,) = await app.recorder.await_route("$disconnect")
            assert event["requestContext"]["connectionId"] == connection_id
            assert disconnect_code(event) == 1001
        # the chatter went on for the whole 2 s: the idle timeout never applied
        assert len(app.recorder.events("sink")) >= 10

    run(scenario)


# -- sizes --------------------------------------------------------------------------------------


def test_a_128_kb_message_in_32_kb_frames_is_delivered_as_one_event() -> None:
    app, routes = sink_app()
    body = json.dumps({"action": "sink", "pad": ""})
    body = body.replace('""', '"' + "x" * (MAX_MESSAGE_BYTES - len(body)) + '"')
    assert len(body.encode()) == MAX_MESSAGE_BYTES
    frames = [body[i : i + MAX_FRAME_BYTES] for i in range(0, len(body), MAX_FRAME_BYTES)]
    assert len(frames) == 4

    async def scenario() -> None:
        async with gateway(routes) as gw, websockets.connect(gw.ws_url) as ws:
            await ws.send(frames)  # one message, fragmented: one frame per element
            await ws.send(frames[0])  # a single frame of exactly 32 KB
            await app.recorder.await_route("sink", 2)
            await whoami(ws)  # still open
        sinks = app.recorder.events("sink")
        assert [e["body"] for e in sinks] == [body, frames[0]]
        assert sinks[0]["requestContext"]["routeKey"] == "sink"

    run(scenario)


@pytest.mark.parametrize(
    ("case", "frames"),
    [
        ("message over 128 KB", ["y" * MAX_FRAME_BYTES] * 4 + ["y"]),
        ("one frame over 32 KB", ["y" * (MAX_FRAME_BYTES + 1)]),
        ("a 33 KB frame in a small message", ["y" * 10, "y" * (MAX_FRAME_BYTES + 1), "y"]),
    ],
)
def test_too_big_a_frame_or_message_closes_with_1009_and_is_never_delivered(
    case: str, frames: list[str]
) -> None:
    app, routes = sink_app()

    async def scenario() -> None:
        async with gateway(routes) as gw, websockets.connect(gw.ws_url) as ws:
            await ws.send("before")
            await ws.send(frames if len(frames) > 1 else frames[0])
            assert await closed_by_server(ws) == (1009, "Message too big")
            (event,) = await app.recorder.await_route("$disconnect")
            assert disconnect_code(event) == 1009
        assert [e["body"] for e in app.recorder.events("sink")] == ["before"], case

    run(scenario)


def test_json_nested_too_deep_goes_to_default_and_the_connection_lives_on() -> None:
    """``[[[[...`` deeper than Python's json parses raises RecursionError, not ValueError: the
    route selection cannot be evaluated, so the message goes to ``$default`` as on AWS, and the
    connection's later messages and its ``$disconnect`` are handled as ever. The size quotas
    still come first: nested that deep past 128 KB is closed with 1009, never parsed."""
    app = EchoApp()
    one_frame = "[" * 16_000 + "]" * 16_000  # 32,000 bytes: one frame
    deep = '{"action": "echo", "x": ' + "[" * 100_000  # 100 KB: four frames
    fragments = [deep[i : i + MAX_FRAME_BYTES] for i in range(0, len(deep), MAX_FRAME_BYTES)]
    too_big = ["[" * MAX_FRAME_BYTES] * 4 + ["]"]  # 128 KB + 1

    async def scenario() -> None:
        async with gateway(app.routes()) as gw:
            async with websockets.connect(gw.ws_url) as ws:
                await ws.send(one_frame)
                await ws.send(fragments)
                await ws.send(json.dumps({"action": "echo", "seq": 3}))
                replies = [json.loads(await asyncio.wait_for(ws.recv(), 10)) for _ in range(3)]
                # each message is its own invocation: replies come in any order
                by_body = {r["body"]: r["route"] for r in replies}
                assert by_body == {
                    one_frame: "$default",
                    deep: "$default",
                    json.dumps({"action": "echo", "seq": 3}): "echo",
                }
            (event,) = await app.recorder.await_route("$disconnect")
            assert disconnect_code(event) == 1000

            async with websockets.connect(gw.ws_url) as ws:
                await ws.send(too_big)
                assert await closed_by_server(ws) == (1009, "Message too big")
            await app.recorder.await_route("$disconnect", 2)
        assert len(app.recorder.events("$default")) == 2

    run(scenario)


def test_post_to_connection_up_to_128_kb_is_delivered_and_bigger_is_413() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw:
            client = management_client(gw.callback_url)
            async with websockets.connect(gw.ws_url, max_size=2 * MAX_MESSAGE_BYTES) as ws:
                connection_id = await whoami(ws)
                exactly = b"z" * MAX_MESSAGE_BYTES
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=exactly
                )
                assert await asyncio.wait_for(ws.recv(), 10) == exactly.decode()
                with pytest.raises(client.exceptions.PayloadTooLargeException) as too_big:
                    await asyncio.to_thread(
                        client.post_to_connection, ConnectionId=connection_id, Data=exactly + b"z"
                    )
                assert too_big.value.response["ResponseMetadata"]["HTTPStatusCode"] == 413
                await whoami(ws)  # the refused post changed nothing

    run(scenario)


def test_frame_scanner_follows_headers_split_across_chunks() -> None:
    """Every header length (7-bit, 16-bit, 64-bit), fed one byte at a time, is read right."""
    seen: list[tuple[int, bool, int]] = []
    forwarded = bytearray()

    class Sink:
        def feed_data(self, data: bytes) -> tuple[bool, bytes]:
            forwarded.extend(data)
            return False, b""

        def feed_eof(self) -> None:
            pass

    def frame(opcode: int, fin: bool, payload: bytes) -> bytes:
        head = bytes([(0x80 if fin else 0) | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
        else:
            head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
        return head + b"MASK" + payload  # a mask key, then the (masked) payload

    def on_frame(opcode: int, fin: bool, length: int) -> bool:
        seen.append((opcode, fin, length))
        return length <= 1000

    stream = (
        frame(0x1, False, b"a" * 5)
        + frame(0x9, True, b"p")  # a ping between fragments
        + frame(0x0, True, b"b" * 300)
        + frame(0x2, True, b"c" * 70_000)
        + frame(0x1, True, b"never")
    )
    scanner = FrameScanner(Sink(), on_frame)
    for i in range(len(stream)):
        scanner.feed_data(stream[i : i + 1])
    assert seen == [(0x1, False, 5), (0x9, True, 1), (0x0, True, 300), (0x2, True, 70_000)]
    assert scanner.refused
    refused_at = stream.index(frame(0x2, True, b"c" * 70_000))
    assert len(forwarded) < refused_at + 14  # at most part of the refused header went on
    assert bytes(forwarded[:refused_at]) == stream[:refused_at]


# -- lost $disconnect -------------------------------------------------------------------------


@pytest.mark.parametrize("loss", [0.0, 0.5, 1.0])
def test_disconnect_loss_drops_that_share_of_disconnect_events(loss: float) -> None:
    app = EchoApp()
    count, seed = 12, 7

    async def scenario() -> None:
        async with gateway(app.routes(), disconnect_loss=loss, seed=seed) as gw:
            for _ in range(count):
                async with websockets.connect(gw.ws_url) as ws:
                    await whoami(ws)
        # stop() waited for every connection's worker: each $disconnect ran or was lost

    run(scenario)
    draws = random.Random(seed)
    expected = sum(draws.random() >= loss for _ in range(count))
    delivered = app.recorder.events("$disconnect")
    assert len(delivered) == expected
    if loss == 0.0:
        assert len(delivered) == count
    elif loss == 1.0:
        assert delivered == []
    else:
        assert 0 < len(delivered) < count


# -- half-open peers ----------------------------------------------------------------------------


def test_a_half_open_peer_accepts_posts_then_is_gone_with_1006() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes(), half_open_seconds=1.0) as gw:
            client = management_client(gw.callback_url)
            async with websockets.connect(gw.ws_url) as ws:
                connection_id = await whoami(ws)
                assert gw.drop(connection_id)
                with pytest.raises(ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), 10)
                assert closed.value.rcvd is None  # the TCP connection vanished: no close frame

            # the gateway has not noticed: posts succeed (and go nowhere), GetConnection answers
            for _ in range(3):
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=b"void"
                )
            info = await asyncio.to_thread(client.get_connection, ConnectionId=connection_id)
            assert info["Identity"]["SourceIp"] == "127.0.0.1"
            assert connection_id in gw.connection_ids()
            assert app.recorder.events("$disconnect") == []

            (event,) = await app.recorder.await_route("$disconnect")
            assert event["requestContext"]["connectionId"] == connection_id
            assert disconnect_code(event) == 1006
            with pytest.raises(client.exceptions.GoneException):
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=b"late"
                )
            with pytest.raises(client.exceptions.GoneException):
                await asyncio.to_thread(client.get_connection, ConnectionId=connection_id)

    run(scenario)


def test_without_half_open_a_dropped_peer_is_gone_at_once() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw:
            client = management_client(gw.callback_url)
            async with websockets.connect(gw.ws_url) as ws:
                connection_id = await whoami(ws)
                assert gw.drop(connection_id)
                assert not gw.drop(connection_id)
                with pytest.raises(client.exceptions.GoneException):
                    await asyncio.to_thread(
                        client.post_to_connection, ConnectionId=connection_id, Data=b"x"
                    )
                with pytest.raises(ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), 10)
            (event,) = await app.recorder.await_route("$disconnect")
            assert disconnect_code(event) == 1006

    run(scenario)


def test_stop_ends_a_half_open_connection_and_delivers_its_disconnect() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with (
            gateway(app.routes(), half_open_seconds=30) as gw,
            websockets.connect(gw.ws_url) as ws,
        ):
            gw.drop(await whoami(ws))
        (event,) = app.recorder.events("$disconnect")
        assert disconnect_code(event) == 1006

    run(scenario)


# -- LastActiveAt ---------------------------------------------------------------------------------


@pytest.mark.parametrize("posts_count", [False, True])
def test_last_active_at_moves_with_the_clients_messages_and_posts_only_if_told(
    posts_count: bool,
) -> None:
    """``LastActiveAt`` (GetConnection): the client's last message; the server's posts move it
    only with ``posts_move_last_active`` (AWS leaves that undocumented)."""
    app, routes = sink_app()

    async def scenario() -> None:
        async with gateway(routes, posts_move_last_active=posts_count) as gw:
            client = management_client(gw.callback_url)
            async with websockets.connect(gw.ws_url) as ws:
                connection_id = await whoami(ws)

                async def last_active() -> Any:
                    info = await asyncio.to_thread(
                        client.get_connection, ConnectionId=connection_id
                    )
                    return info["LastActiveAt"]

                first = await last_active()
                await asyncio.sleep(0.05)
                await ws.send(json.dumps({"action": "sink"}))
                await app.recorder.await_route("sink")
                after_inbound = await last_active()
                assert after_inbound > first
                await asyncio.sleep(0.05)
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=b"hi"
                )
                assert await asyncio.wait_for(ws.recv(), 10) == "hi"
                assert (await last_active() > after_inbound) is posts_count

    run(scenario)


def test_a_mock_route_is_answered_by_the_gateway_and_counts_as_activity() -> None:
    """``ping`` as deployed (``functions.routes.MOCK_ROUTES``): the gateway answers ``pong``
    with its receipt time and the request id, no handler runs, ``LastActiveAt`` moves."""
    from functions.routes import MOCK_ROUTES

    app, routes = sink_app()

    async def scenario() -> None:
        async with gateway(routes, mock_routes=MOCK_ROUTES) as gw:
            client = management_client(gw.callback_url)
            async with websockets.connect(gw.ws_url) as ws:
                connection_id = await whoami(ws)
                before = (
                    await asyncio.to_thread(client.get_connection, ConnectionId=connection_id)
                )["LastActiveAt"]
                await asyncio.sleep(0.05)
                await ws.send(json.dumps({"action": "ping", "request_id": "r1"}))
                pong = json.loads(await asyncio.wait_for(ws.recv(), 10))
                after = (
                    await asyncio.to_thread(client.get_connection, ConnectionId=connection_id)
                )["LastActiveAt"]
            assert pong["type"] == "pong"
            assert pong["request_id"] == "r1"
            assert isinstance(pong["server_time_ms"], int)
            assert after > before
            assert after.timestamp() * 1000 <= pong["server_time_ms"] + 1
        # no handler saw the ping ($default included): only the whoami echo ran
        assert [r for r, *_ in app.recorder.calls if not r.startswith("$")] == ["echo"]

    run(scenario)


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="disconnect_loss"):
        LocalGateway({}, disconnect_loss=1.5)
    with pytest.raises(ValueError, match="positive"):
        LocalGateway({}, idle_timeout_seconds=0)
    with pytest.raises(ValueError, match="half_open_seconds"):
        LocalGateway({}, half_open_seconds=-1)
