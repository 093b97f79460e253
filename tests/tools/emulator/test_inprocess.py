"""Local runtime: the in-process transports answer as the wire does.

The handlers' boto3 clients skip HTTP in the emulator (``infra.emulator.inprocess``): the same
Management API calls must give the same results and the same exceptions (``GoneException`` 410,
``PayloadTooLargeException`` 413) over both paths, and the notifier adapter must behave alike.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, cast

import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from infra.emulator.emulator import Emulator
from infra.emulator.gateway import LocalGateway
from infra.emulator.inprocess import ConnectionsTransport, register
from shared.adapters.notifier import ApiGatewayNotifier

from .echo import EchoApp, gateway, management_client, my_connection_id, run, session

pytestmark = pytest.mark.enable_socket

PATHS = ["http", "in-process"]


class Counted:
    """Counts the calls that reached the gateway through ``manage_threadsafe`` (the in-process
    transport's door; the HTTP route never uses it)."""

    def __init__(self, gw: LocalGateway) -> None:
        self.calls = 0
        inner: Callable[..., Any] = gw.manage_threadsafe
        lock = threading.Lock()

        def counted(*args: Any) -> Any:
            with lock:
                self.calls += 1
            return inner(*args)

        setattr(gw, "manage_threadsafe", counted)  # noqa: B010 (an instance attribute wins)


def client_for(gw: LocalGateway, path: str, endpoint: str | None = None) -> Any:
    url = endpoint or gw.callback_url
    if path == "http":
        return management_client(url)
    s = session()
    register(s, connections=ConnectionsTransport(gw, url))
    return s.client("apigatewaymanagementapi", endpoint_url=url)


@pytest.mark.parametrize("path", PATHS)
def test_post_get_delete_and_gone_answer_alike(path: str) -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw:
            counted = Counted(gw)
            client = client_for(gw, path)
            async with websockets.connect(gw.ws_url, user_agent_header="ua/3") as ws:
                connection_id = await my_connection_id(ws)

                info = await asyncio.to_thread(client.get_connection, ConnectionId=connection_id)
                assert info["Identity"] == {"SourceIp": "127.0.0.1", "UserAgent": "ua/3"}
                assert info["ConnectedAt"] <= info["LastActiveAt"]

                sent = await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data="Ωмگ".encode()
                )
                assert sent["ResponseMetadata"]["HTTPStatusCode"] == 200
                assert await asyncio.wait_for(ws.recv(), 10) == "Ωмگ"

                with pytest.raises(client.exceptions.PayloadTooLargeException) as large:
                    await asyncio.to_thread(
                        client.post_to_connection,
                        ConnectionId=connection_id,
                        Data=b"x" * (128 * 1024 + 1),
                    )
                assert large.value.response["ResponseMetadata"]["HTTPStatusCode"] == 413

                deleted = await asyncio.to_thread(
                    client.delete_connection, ConnectionId=connection_id
                )
                assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
                with pytest.raises(ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), 10)

            with pytest.raises(client.exceptions.GoneException) as gone:
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=b"late"
                )
            assert gone.value.response["Error"]["Code"] == "GoneException"
            assert gone.value.response["ResponseMetadata"]["HTTPStatusCode"] == 410
            with pytest.raises(client.exceptions.GoneException):
                await asyncio.to_thread(client.get_connection, ConnectionId=connection_id)
            with pytest.raises(client.exceptions.GoneException):
                await asyncio.to_thread(client.delete_connection, ConnectionId=connection_id)
            with pytest.raises(client.exceptions.GoneException):
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId="NeverExisted00A=", Data=b"x"
                )
            assert (counted.calls > 0) is (path == "in-process")

    run(scenario)


def test_an_in_process_post_is_accepted_without_the_loop_and_sent_in_order() -> None:
    """PostToConnection answers 200 once the gateway has accepted the message (as API Gateway
    does), not after the loop has written it: with the gateway's event loop blocked, a worker
    thread's 20 posts all return; released, the loop sends them in the order accepted. A post
    to a connection that has closed answers 410 at once."""
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw:
            client = client_for(gw, "in-process")
            async with websockets.connect(gw.ws_url) as ws:
                connection_id = await my_connection_id(ws)
                statuses: list[int] = []

                def post_all() -> None:
                    for n in range(20):
                        answer = client.post_to_connection(
                            ConnectionId=connection_id, Data=str(n).encode()
                        )
                        statuses.append(answer["ResponseMetadata"]["HTTPStatusCode"])

                worker = threading.Thread(target=post_all)
                worker.start()
                worker.join(30)  # blocks this event loop, the gateway's, on purpose
                assert statuses == [200] * 20
                received = [await asyncio.wait_for(ws.recv(), 10) for _ in range(20)]
                assert received == [str(n) for n in range(20)]
            for _ in range(100):  # until the gateway has seen the close
                if connection_id not in gw.connection_ids():
                    break
                await asyncio.sleep(0.05)
            with pytest.raises(client.exceptions.GoneException):
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=b"late"
                )

    run(scenario)


def test_the_in_process_transport_understands_a_stage_prefixed_endpoint() -> None:
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes(), stage="prod") as gw:
            counted = Counted(gw)
            client = client_for(gw, "in-process", f"{gw.url}/prod")
            async with websockets.connect(gw.ws_url) as ws:
                connection_id = await my_connection_id(ws)
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=b"staged"
                )
                assert await asyncio.wait_for(ws.recv(), 10) == "staged"
            assert counted.calls == 1

    run(scenario)


def test_another_endpoint_still_goes_over_the_wire() -> None:
    """A transport answers only for its own callback URL."""
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw, gateway(app.routes()) as other:
            counted = Counted(gw)
            s = session()
            register(s, connections=ConnectionsTransport(gw, gw.callback_url))
            client = s.client("apigatewaymanagementapi", endpoint_url=other.callback_url)
            async with websockets.connect(other.ws_url) as ws:
                connection_id = await my_connection_id(ws)
                await asyncio.to_thread(
                    client.post_to_connection, ConnectionId=connection_id, Data=b"wire"
                )
                assert await asyncio.wait_for(ws.recv(), 10) == "wire"
            assert counted.calls == 0

    run(scenario)


@pytest.mark.usefixtures("clean_env")
@pytest.mark.parametrize("in_process", [True, False])
def test_the_emulators_notifier_reports_gone_connections_on_both_paths(in_process: bool) -> None:
    """The handlers' real ``ApiGatewayNotifier``: a post reaches the socket, a gone connection
    comes back in ``send``'s result, ``last_active_ms`` is None for it — in-process or not."""

    async def scenario() -> None:
        async with Emulator(watchdog_seconds=None, in_process=in_process) as emu:
            assert emu.deps is not None
            notifier = emu.deps.notifier
            assert isinstance(notifier, ApiGatewayNotifier)
            counted = Counted(emu.gateway)
            async with websockets.connect(emu.ws_url) as ws:
                await ws.send('{"action": "ping"}')
                await asyncio.wait_for(ws.recv(), 10)
                (connection_id,) = emu.gateway.connection_ids()

                gone = await asyncio.to_thread(
                    notifier.send, [(connection_id, "hello"), ("NeverExisted00A=", "x")]
                )
                assert gone == ["NeverExisted00A="]
                assert await asyncio.wait_for(ws.recv(), 10) == "hello"
                active = await asyncio.to_thread(notifier.last_active_ms, connection_id)
                assert active is not None
                assert await asyncio.to_thread(notifier.last_active_ms, "NeverExisted00A=") is None
            assert (counted.calls > 0) is in_process

    run(scenario)


@pytest.mark.usefixtures("clean_env")
@pytest.mark.parametrize(
    ("options", "extra"),
    [
        ({}, 1),  # moto in its own process: one thread more than cores
        ({"dynamodb_process": False}, 0),  # moto under this interpreter lock: the cores
        ({"dynamodb_process": False, "in_process": False}, 0),  # HTTP, moto still here
        ({"in_process": False}, 1),  # HTTP to moto's own process
    ],
)
def test_the_emulator_sized_its_worker_pool_to_the_cores(
    options: dict[str, bool], extra: int
) -> None:
    import os

    async def scenario() -> None:
        async with Emulator(routes={}, watchdog_seconds=None, **options) as emu:
            assert emu.max_workers == max(2, len(os.sched_getaffinity(0))) + extra

    run(scenario)


def test_a_transport_answers_only_below_its_own_endpoint() -> None:
    """``http://127.0.0.1:80`` is not below ``http://127.0.0.1:8``: a prefix of the text is not
    enough; the path must follow it."""
    from botocore.awsrequest import AWSPreparedRequest
    from botocore.compat import HTTPHeaders

    from infra.emulator.management import ManagementAnswer

    asked: list[tuple[str, str, bytes]] = []

    class Stub:
        def authorize(self, *_: Any) -> None:
            return None  # let every request in: this test is about the URL

        def manage_threadsafe(self, method: str, connection_id: str, data: bytes) -> Any:
            asked.append((method, connection_id, data))
            return ManagementAnswer(200, {}, b"")

    transport = ConnectionsTransport(cast(LocalGateway, Stub()), "http://127.0.0.1:8")

    def post(url: str) -> Any:
        return transport(
            AWSPreparedRequest(
                method="POST", url=url, headers=HTTPHeaders(), body=b"x", stream_output=False
            )
        )

    assert post("http://127.0.0.1:80/@connections/abc%3D") is None
    assert post("http://127.0.0.1:8/@connections/abc%3D").status_code == 200
    assert asked == [("POST", "abc=", b"x")]
