"""Local runtime: LocalGateway behaves like API Gateway's WebSocket and Management APIs.

Real sockets on 127.0.0.1, a real boto3 ``apigatewaymanagementapi`` client, and the events
checked against Powertools' Parser models of API Gateway WebSocket events.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import aiohttp
import pytest
import websockets
from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser.models import (
    APIGatewayWebSocketConnectEventModel,
    APIGatewayWebSocketDisconnectEventModel,
    APIGatewayWebSocketMessageEventModel,
)
from botocore.exceptions import ClientError
from websockets.exceptions import ConnectionClosed, InvalidStatus

from infra.emulator.gateway import LocalGateway
from infra.emulator.sockets import select_route

from .echo import (
    CREDENTIALS,
    EchoApp,
    gateway,
    management_client,
    my_connection_id,
    recv_json,
    run,
)

pytestmark = pytest.mark.enable_socket

CONNECTION_ID = re.compile(r"^[A-Za-z0-9]{15}=$")


def test_connect_event_is_api_gateway_shaped_with_headers_and_query() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw:
            url = f"{gw.ws_url}?lang=nl&x=1&x=2"
            async with websockets.connect(url, user_agent_header="pytest-bot/1") as ws:
                connection_id = await my_connection_id(ws)
        (event,) = app.recorder.events("$connect")
        model = APIGatewayWebSocketConnectEventModel.model_validate(event)
        ctx = model.request_context
        assert ctx.connection_id == connection_id
        assert CONNECTION_ID.match(connection_id)
        assert ctx.event_type == "CONNECT"
        assert ctx.route_key == "$connect"
        assert ctx.stage == "local"
        assert str(ctx.identity.source_ip.network_address) == "127.0.0.1"
        assert ctx.identity.user_agent == "pytest-bot/1"
        assert event["queryStringParameters"] == {"lang": "nl", "x": "2"}
        assert event["multiValueQueryStringParameters"]["x"] == ["1", "2"]
        assert event["headers"]["Sec-WebSocket-Version"] == "13"
        assert "Sec-WebSocket-Key" in event["headers"]
        assert event["multiValueHeaders"]["Host"] == [event["headers"]["Host"]]
        assert event["isBase64Encoded"] is False

    run(scenario)


def test_connect_event_without_query_string_has_no_query_keys() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw, websockets.connect(gw.ws_url) as ws:
            await my_connection_id(ws)
        (event,) = app.recorder.events("$connect")
        assert "queryStringParameters" not in event
        assert "multiValueQueryStringParameters" not in event

    run(scenario)


def test_route_selection_uses_body_action_and_falls_back_to_default() -> None:
    app = EchoApp()
    frames = [
        json.dumps({"action": "echo", "seq": 1}),
        json.dumps({"action": "no-such-route", "seq": 2}),
        "not json at all",
        json.dumps({"action": 5}),
        json.dumps(["action", "echo"]),
        json.dumps({"action": "$connect"}),
    ]

    async def scenario() -> None:
        async with gateway(app.routes()) as gw, websockets.connect(gw.ws_url) as ws:
            for frame in frames:
                await ws.send(frame)
            replies = [await recv_json(ws) for _ in frames]
        # each message is its own invocation: replies come in any order
        assert {r["body"]: r["route"] for r in replies} == dict(
            zip(frames, ["echo"] + ["$default"] * 5, strict=True)
        )

    run(scenario)
    messages = app.recorder.events("echo") + app.recorder.events("$default")
    for event in messages:
        model = APIGatewayWebSocketMessageEventModel.model_validate(event)
        assert model.request_context.event_type == "MESSAGE"
        assert model.request_context.message_direction == "IN"
        assert model.is_base64_encoded is False
    assert len({e["requestContext"]["messageId"] for e in messages}) == len(frames)


def test_select_route_is_pure_and_matches_api_gateway_expression() -> None:
    routes = {"join", "guess", "$default"}
    assert select_route('{"action": "join"}', routes) == "join"
    assert select_route('{"action": "JOIN"}', routes) == "$default"
    assert select_route('{"action": "$default"}', routes) == "$default"
    assert select_route("{}", routes) == "$default"
    assert select_route("", routes) == "$default"
    assert select_route(None, routes) == "$default"
    # nested deeper than json parses (RecursionError, not ValueError): cannot be evaluated
    assert select_route("[" * 100_000 + "]" * 100_000, routes) == "$default"
    assert select_route('{"action": "join", "x": ' + "[" * 100_000 + "]}", routes) == "$default"


def test_serial_mode_runs_one_connections_messages_one_at_a_time_in_order() -> None:
    """The test switch ``serial_messages`` (not AWS's behaviour: see the next tests)."""
    app = EchoApp()
    count = 30

    async def talk(url: str) -> list[int]:
        async with websockets.connect(url) as ws:
            for seq in range(count):
                await ws.send(json.dumps({"action": "echo", "seq": seq}))
            return [(await recv_json(ws))["seq"] for _ in range(count)]

    async def scenario() -> None:
        async with gateway(app.routes(), serial_messages=True) as gw:
            results = await asyncio.gather(*(talk(gw.ws_url) for _ in range(3)))
        assert results == [list(range(count))] * 3

    run(scenario)
    assert len(app.max_active) == 3
    assert set(app.max_active.values()) == {1}


def test_messages_of_one_connection_run_concurrently_by_default() -> None:
    """As on AWS, each message is its own invocation: the first message's handler blocks
    until the second one of the same connection was handled."""
    import threading

    second_handled = threading.Event()
    app = EchoApp()

    def wait_for_second(event: dict[str, Any], context: Any) -> dict[str, Any]:
        assert second_handled.wait(10), "the second message waited for the first"
        return app.echo(event, context)

    def mark_second(event: dict[str, Any], context: Any) -> dict[str, Any]:
        second_handled.set()
        return app.echo(event, context)

    routes = app.routes() | {"first": wait_for_second, "second": mark_second}

    async def scenario() -> None:
        async with gateway(routes) as gw, websockets.connect(gw.ws_url) as ws:
            await ws.send(json.dumps({"action": "first"}))
            await ws.send(json.dumps({"action": "second"}))
            # serial, the first handler would time out waiting ("Internal server error")
            replies = [await recv_json(ws) for _ in range(2)]
            assert sorted(r["route"] for r in replies) == ["first", "second"]

    run(scenario)


def test_disconnect_races_the_messages_sent_just_before_the_close() -> None:
    """``$disconnect`` starts at the close, while a message received before it still runs
    (nothing orders them on AWS); that message's event keeps its receipt time, before the
    ``$disconnect``'s."""
    import threading

    disconnected = threading.Event()
    app = EchoApp()

    def slow(event: dict[str, Any], context: Any) -> dict[str, Any]:
        assert disconnected.wait(10), "$disconnect waited for the message"
        app.recorder.add("slow", event, context)
        return {"statusCode": 200}

    def on_disconnect(event: dict[str, Any], context: Any) -> dict[str, Any]:
        app.recorder.add("$disconnect", event, context)
        disconnected.set()
        return {"statusCode": 200}

    routes = app.routes() | {"slow": slow, "$disconnect": on_disconnect}

    async def scenario() -> None:
        async with gateway(routes) as gw:
            async with websockets.connect(gw.ws_url) as ws:
                await ws.send(json.dumps({"action": "slow"}))
            await app.recorder.await_route("slow")

    run(scenario)
    routes_seen = [route for route, *_ in app.recorder.calls]
    assert routes_seen.index("$disconnect") < routes_seen.index("slow")
    ((message,), (closed,)) = app.recorder.events("slow"), app.recorder.events("$disconnect")
    received = message["requestContext"]["requestTimeEpoch"]
    assert received <= closed["requestContext"]["requestTimeEpoch"]


def test_different_connections_are_handled_concurrently() -> None:
    """A handler of connection A blocks until connection B's message was handled."""
    import threading

    b_handled = threading.Event()
    app = EchoApp()

    def wait_for_b(event: dict[str, Any], context: Any) -> dict[str, Any]:
        assert b_handled.wait(10), "B was never handled while A's handler was running"
        return app.echo(event, context)

    def mark_b(event: dict[str, Any], context: Any) -> dict[str, Any]:
        b_handled.set()
        return app.echo(event, context)

    routes = app.routes() | {"a": wait_for_b, "b": mark_b}

    async def scenario() -> None:
        async with (
            gateway(routes) as gw,
            websockets.connect(gw.ws_url) as a,
            websockets.connect(gw.ws_url) as b,
        ):
            await a.send(json.dumps({"action": "a"}))
            await b.send(json.dumps({"action": "b"}))
            assert (await recv_json(b))["route"] == "b"
            assert (await recv_json(a))["route"] == "a"

    run(scenario)


def test_management_api_post_get_delete_with_boto3() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw:
            client = management_client(gw.callback_url)
            async with websockets.connect(gw.ws_url, user_agent_header="ua/2") as ws:
                connection_id = await my_connection_id(ws)

                info = await asyncio.to_thread(client.get_connection, ConnectionId=connection_id)
                assert info["Identity"] == {"SourceIp": "127.0.0.1", "UserAgent": "ua/2"}
                assert info["ConnectedAt"] <= info["LastActiveAt"]

                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=b"hello"
                )
                assert await asyncio.wait_for(ws.recv(), 10) == "hello"

                await asyncio.to_thread(
                    client.post_to_connection,
                    ConnectionId=connection_id,
                    Data="Ωмگ".encode(),
                )
                assert await asyncio.wait_for(ws.recv(), 10) == "Ωмگ"

                deleted = await asyncio.to_thread(
                    client.delete_connection, ConnectionId=connection_id
                )
                assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
                with pytest.raises(ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), 10)
                assert closed.value.rcvd is not None
                assert closed.value.rcvd.code == 1000

            (event,) = await app.recorder.await_route("$disconnect")
            model = APIGatewayWebSocketDisconnectEventModel.model_validate(event)
            assert model.request_context.connection_id == connection_id
            assert model.request_context.disconnect_status_code == 1000
            assert model.request_context.disconnect_reason == "Connection Closed Normally"

            with pytest.raises(client.exceptions.GoneException):
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=b"late"
                )
            with pytest.raises(client.exceptions.GoneException):
                await asyncio.to_thread(client.get_connection, ConnectionId=connection_id)
            with pytest.raises(client.exceptions.GoneException):
                await asyncio.to_thread(client.delete_connection, ConnectionId=connection_id)

    run(scenario)


def test_post_to_a_connection_the_client_closed_raises_gone_exception() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw:
            client = management_client(gw.callback_url)
            async with websockets.connect(gw.ws_url) as ws:
                connection_id = await my_connection_id(ws)
            (event,) = await app.recorder.await_route("$disconnect")
            model = APIGatewayWebSocketDisconnectEventModel.model_validate(event)
            assert model.request_context.disconnect_status_code == 1000
            with pytest.raises(client.exceptions.GoneException) as gone:
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=b"x"
                )
            # GoneException is a ClientError: adapters must catch it first (STYLE.md).
            assert isinstance(gone.value, ClientError)
            assert gone.value.response["Error"]["Code"] == "GoneException"
            assert gone.value.response["ResponseMetadata"]["HTTPStatusCode"] == 410
            with pytest.raises(client.exceptions.GoneException):
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId="NeverExisted00A=", Data=b"x"
                )

    run(scenario)


def test_a_handler_can_delete_its_own_connection_without_deadlock() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw, websockets.connect(gw.ws_url) as ws:
            await ws.send(json.dumps({"action": "kick"}))
            await ws.send(json.dumps({"action": "echo", "seq": "after-kick"}))

            async def until_closed() -> None:
                for _ in range(2):  # the echo runs concurrently: its reply may come first
                    reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
                    assert reply["route"] == "echo"

            with pytest.raises(ConnectionClosed) as closed:
                await until_closed()
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == 1000
            (event,) = await app.recorder.await_route("$disconnect")
            assert event["requestContext"]["disconnectStatusCode"] == 1000
        # the kick ran before $disconnect; the frame sent after it may or may not have arrived
        routes = [route for route, *_ in app.recorder.calls]
        assert routes.index("kick") < routes.index("$disconnect")

    run(scenario)


def test_stage_prefixed_management_endpoint_works() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes(), stage="prod") as gw:
            client = management_client(f"{gw.url}/prod")
            async with websockets.connect(gw.ws_url) as ws:
                connection_id = await my_connection_id(ws)
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=b"staged"
                )
                assert await asyncio.wait_for(ws.recv(), 10) == "staged"

    run(scenario)


def test_post_larger_than_128_kb_is_payload_too_large() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw:
            client = management_client(gw.callback_url)
            async with websockets.connect(gw.ws_url) as ws:
                connection_id = await my_connection_id(ws)
                with pytest.raises(client.exceptions.PayloadTooLargeException):
                    await asyncio.to_thread(
                        client.post_to_connection,
                        ConnectionId=connection_id,
                        Data=b"x" * (128 * 1024 + 1),
                    )
                exactly = b"y" * (128 * 1024)
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=exactly
                )
                assert await asyncio.wait_for(ws.recv(), 10) == exactly.decode()

    run(scenario)


def test_connect_refused_when_handler_answers_non_2xx() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw:
            with pytest.raises(InvalidStatus) as refused:
                async with websockets.connect(f"{gw.ws_url}?reject=1"):
                    pass
            assert refused.value.response.status_code == 403
            with pytest.raises(InvalidStatus) as failed:
                async with websockets.connect(f"{gw.ws_url}?explode=1"):
                    pass
            assert failed.value.response.status_code == 500
            assert gw.connection_ids() == []

    run(scenario)
    assert len(app.recorder.events("$connect")) == 2
    assert app.recorder.events("$disconnect") == []


def test_failing_handler_answers_internal_server_error_like_api_gateway() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw, websockets.connect(gw.ws_url) as ws:
            connection_id = await my_connection_id(ws)
            await ws.send(json.dumps({"action": "boom"}))
            reply = await recv_json(ws)
            assert reply["message"] == "Internal server error"
            assert reply["connectionId"] == connection_id
            (event,) = app.recorder.events("boom")
            assert reply["requestId"] == event["requestContext"]["requestId"]

    run(scenario)


def test_no_route_and_no_default_answers_forbidden() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes(default=False)) as gw, websockets.connect(gw.ws_url) as ws:
            await ws.send(json.dumps({"action": "unknown"}))
            reply = await recv_json(ws)
            assert reply["message"] == "Forbidden"
            assert CONNECTION_ID.match(reply["connectionId"])

    run(scenario)


def test_frame_larger_than_32_kb_closes_with_1009() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw, websockets.connect(gw.ws_url) as ws:
            await ws.send(json.dumps({"action": "echo", "pad": "x" * (32 * 1024)}))
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 10)
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == 1009
            assert closed.value.rcvd.reason == "Message too big"
            (event,) = await app.recorder.await_route("$disconnect")
            assert event["requestContext"]["disconnectStatusCode"] == 1009
        assert app.recorder.events("echo") == []

    run(scenario)


def test_route_response_sends_handler_body_back_for_two_way_routes() -> None:
    def pong(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"statusCode": 200, "body": json.dumps({"type": "pong"})}

    async def scenario() -> None:
        routes = {"ping": pong, "silent": pong}
        async with (
            gateway(routes, route_responses=("ping",)) as gw,
            websockets.connect(gw.ws_url) as ws,
        ):
            await ws.send(json.dumps({"action": "silent"}))
            await ws.send(json.dumps({"action": "ping"}))
            assert await recv_json(ws) == {"type": "pong"}

    run(scenario)


def test_context_works_with_powertools_logger_inject_lambda_context() -> None:
    logger = Logger(service="emulator-test")
    seen: list[Any] = []

    @logger.inject_lambda_context
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        seen.append((context, context.get_remaining_time_in_millis()))
        logger.info("handled")
        return {"statusCode": 200}

    async def scenario() -> None:
        async with gateway({"$default": handler}) as gw, websockets.connect(gw.ws_url) as ws:
            await ws.send("hi")
            await ws.send("again")
            await ws.close()
        # $disconnect has no route here; stop() ran after the two messages were handled.

    run(scenario)
    assert len(seen) == 2
    (first, remaining), (second, _) = seen
    assert first.aws_request_id != second.aws_request_id
    assert first.invoked_function_arn.startswith("arn:aws:lambda:us-east-1:")
    assert first.function_name.startswith("wordle-tournament-")
    assert first.memory_limit_in_mb > 0
    assert 0 < remaining <= 29_000


def test_root_serves_the_web_client_and_upgrades_websockets() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw:
            async with aiohttp.ClientSession() as http, http.get(f"{gw.url}/") as page:
                assert page.status == 200
                assert "<html" in (await page.text()).lower()
            async with websockets.connect(f"ws://{gw.host}:{gw.port}/") as ws:
                assert CONNECTION_ID.match(await my_connection_id(ws))
            async with (
                aiohttp.ClientSession() as http,
                http.get(gw.ws_url.replace("ws:", "http:")) as plain,
            ):
                assert plain.status == 400  # a plain GET is not a connection: no $connect
        assert len(app.recorder.events("$connect")) == 1

    run(scenario)


def test_the_web_client_and_the_client_library_it_imports_are_served_as_javascript() -> None:
    async def scenario() -> None:
        async with gateway(EchoApp().routes()) as gw, aiohttp.ClientSession() as http:
            for path, needle in (
                ("/app.js", 'from "./client/wordle-client.js"'),
                ("/client/wordle-client.js", "export class WordleClient"),
            ):
                async with http.get(f"{gw.url}{path}") as script:
                    assert script.status == 200, path
                    assert script.content_type in {"text/javascript", "application/javascript"}
                    assert needle in await script.text()

    run(scenario)


def test_stop_closes_sockets_with_1001_and_delivers_disconnect() -> None:
    app = EchoApp()

    async def scenario() -> None:
        gw = LocalGateway(app.routes(), port=0, credentials=CREDENTIALS)
        await gw.start()
        async with websockets.connect(gw.ws_url) as ws:
            await my_connection_id(ws)
            await gw.stop()
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 10)
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == 1001
        (event,) = app.recorder.events("$disconnect")
        assert event["requestContext"]["disconnectStatusCode"] == 1001

    run(scenario)
