"""Local runtime: ``@connections`` answers only the runtime's own credentials, as IAM does.

On AWS the Management API takes only SigV4-signed requests by principals allowed
``execute-api:ManageConnections``; the twin's only such principal is the runtime, whose
credentials its handlers get (``infra.emulator.iam``). Whoever else reaches the port — unsigned,
signed with other credentials, or replaying a signature on another connection — gets API
Gateway's 403, and nothing is sent to, read from or closed on any connection. Both doors: the
HTTP route and the in-process transport the handlers' clients use.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from io import BytesIO
from typing import Any

import botocore
import pytest
import websockets
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from botocore.exceptions import ClientError
from websockets.asyncio.client import ClientConnection

from infra.emulator.emulator import Emulator
from infra.emulator.gateway import LocalGateway
from infra.emulator.iam import RuntimeCredentials, verify
from infra.emulator.inprocess import ConnectionsTransport, register

from .echo import CREDENTIALS, EchoApp, gateway, my_connection_id, run, session

pytestmark = pytest.mark.enable_socket

PATHS = ["http", "in-process"]

STRANGER = RuntimeCredentials.generate()
WRONG_SECRET = RuntimeCredentials(
    CREDENTIALS.access_key_id, "not-the-secret", CREDENTIALS.session_token
)

INTRUDERS = {
    # who: (credentials or None for unsigned, the x-amzn-ErrorType AWS answers)
    "unsigned": (None, "MissingAuthenticationTokenException"),
    "other credentials": (STRANGER, "UnrecognizedClientException"),
    "right key id, wrong secret": (WRONG_SECRET, "InvalidSignatureException"),
}


def client(gw: LocalGateway, path: str, credentials: RuntimeCredentials | None) -> Any:
    """A Management API client of ``gw`` over ``path``, signing with ``credentials`` (None:
    not signing at all)."""
    s = session(credentials or CREDENTIALS)
    if path == "in-process":
        register(s, connections=ConnectionsTransport(gw, gw.callback_url))
    config = Config(
        signature_version=botocore.UNSIGNED if credentials is None else None,
        retries={"total_max_attempts": 1},
    )
    return s.client("apigatewaymanagementapi", endpoint_url=gw.callback_url, config=config)


async def nothing_arrived(ws: ClientConnection, gw: LocalGateway, connection_id: str) -> None:
    """The socket is open and received nothing: the next frame is a legitimate post's."""
    legit = client(gw, "http", CREDENTIALS)
    await asyncio.to_thread(legit.post_to_connection, ConnectionId=connection_id, Data=b"legit")
    assert await asyncio.wait_for(ws.recv(), 10) == "legit"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("who", INTRUDERS)
def test_only_the_runtimes_credentials_post_get_or_delete(path: str, who: str) -> None:
    credentials, error_type = INTRUDERS[who]
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw, websockets.connect(gw.ws_url) as ws:
            connection_id = await my_connection_id(ws)
            intruder = client(gw, path, credentials)
            calls = [
                (intruder.post_to_connection, {"Data": b'{"type":"turn","forged":true}'}),
                (intruder.get_connection, {}),
                (intruder.delete_connection, {}),
            ]
            for call, extra in calls:
                with pytest.raises(ClientError) as refused:
                    await asyncio.to_thread(call, ConnectionId=connection_id, **extra)
                error = refused.value.response
                assert error["ResponseMetadata"]["HTTPStatusCode"] == 403, call
                assert error["Error"]["Code"] == error_type, call
            await nothing_arrived(ws, gw, connection_id)
            assert connection_id in gw.connection_ids()

            owner = client(gw, path, CREDENTIALS)
            await asyncio.to_thread(
                owner.post_to_connection, ConnectionId=connection_id, Data=b"signed"
            )
            assert await asyncio.wait_for(ws.recv(), 10) == "signed"
            info = await asyncio.to_thread(owner.get_connection, ConnectionId=connection_id)
            assert info["Identity"]["SourceIp"] == "127.0.0.1"
            await asyncio.to_thread(owner.delete_connection, ConnectionId=connection_id)
            await app.recorder.await_route("$disconnect")

    run(scenario)


class _Body(BytesIO):
    def stream(self, **_: Any) -> Any:
        yield self.read()


def signed_post(endpoint: str, connection_id: str, data: bytes) -> Any:
    """The request botocore prepares (signed with :data:`CREDENTIALS`) to post ``data`` to
    ``connection_id`` at ``endpoint``, captured before it is sent; it is never sent."""
    seen: list[Any] = []

    def capture(request: Any, **_: Any) -> AWSResponse:
        seen.append(request)
        return AWSResponse(request.url, 200, {}, _Body(b""))  # type: ignore[arg-type]

    s = session(CREDENTIALS)
    s.events.register("before-send.apigatewaymanagementapi", capture)
    s.client("apigatewaymanagementapi", endpoint_url=endpoint).post_to_connection(
        ConnectionId=connection_id, Data=data
    )
    (request,) = seen
    return request


def _raw(method: str, url: str, body: bytes = b"", headers: dict[str, str] | None = None) -> Any:
    """``(status, headers, JSON body)`` of a plain HTTP request, as ``curl`` would send it."""
    request = urllib.request.Request(url, data=body or None, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), json.loads(err.read())


@pytest.mark.parametrize("method", ["POST", "GET", "DELETE", "PUT"])
def test_a_plain_request_on_the_port_gets_missing_authentication_token(method: str) -> None:
    """What ``curl -X POST http://host:port/@connections/{id} -d '{"type":"turn",...}'`` gets:
    API Gateway's 403 for an unsigned request to an IAM-authorized API, and nothing moves."""
    app = EchoApp()

    async def scenario() -> None:
        async with gateway(app.routes()) as gw, websockets.connect(gw.ws_url) as ws:
            connection_id = await my_connection_id(ws)
            for prefix in ("", "/local"):
                url = f"{gw.url}{prefix}/@connections/{connection_id}"
                status, headers, body = await asyncio.to_thread(
                    _raw, method, url, b'{"type":"turn"}' if method == "POST" else b""
                )
                assert status == 403
                assert body == {"message": "Missing Authentication Token"}
                assert headers["x-amzn-ErrorType"] == "MissingAuthenticationTokenException"
            await nothing_arrived(ws, gw, connection_id)

    run(scenario)


def test_a_signature_for_one_connection_opens_no_other() -> None:
    """A signed request seen on the wire, replayed against another connection or with other
    data: the path and the body are signed, so the signature no longer matches. (Replayed as
    it was, within SigV4's five minutes, it is accepted, as on AWS: the control case.)"""
    app = EchoApp()

    async def scenario() -> None:
        async with (
            gateway(app.routes()) as gw,
            websockets.connect(gw.ws_url) as a,
            websockets.connect(gw.ws_url) as b,
        ):
            victim = await my_connection_id(b)
            own = await my_connection_id(a)
            signed = signed_post(gw.callback_url, own, b"mine")
            headers = {
                k: v.decode() if isinstance(v, bytes) else v for k, v in signed.headers.items()
            }
            replayed = await asyncio.to_thread(_raw, "POST", signed.url, b"mine", headers)
            assert replayed[0] == 200
            assert await asyncio.wait_for(a.recv(), 10) == "mine"
            other = signed.url.replace(own.replace("=", "%3D"), victim.replace("=", "%3D"))
            for url, body in [(other, b"mine"), (signed.url, b"fake")]:
                status, answer_headers, answer = await asyncio.to_thread(
                    _raw, "POST", url, body, headers
                )
                assert status == 403, url
                assert answer_headers["x-amzn-ErrorType"] == "InvalidSignatureException"
                assert answer["message"].startswith("The request signature we calculated")
            await nothing_arrived(a, gw, own)
            await nothing_arrived(b, gw, victim)

    run(scenario)


def test_a_signature_older_or_newer_than_five_minutes_is_refused() -> None:
    """SigV4's replay window: "a request must reach AWS within five minutes of the time stamp
    in the request" (IAM, AWS Signature Version 4 for API requests)."""
    r = signed_post("http://127.0.0.1:9", "abc=", b"x")
    now = datetime.now(UTC)
    assert verify(CREDENTIALS, r.method, r.url, r.headers.items(), r.body, now=now) is None
    for shift, start in [(6, "Signature expired: "), (-6, "Signature not yet current: ")]:
        later = now + timedelta(minutes=shift)
        refusal = verify(CREDENTIALS, r.method, r.url, r.headers.items(), r.body, now=later)
        assert refusal is not None
        assert refusal.error_type == "InvalidSignatureException"
        assert refusal.message.startswith(start)


def test_credentials_are_drawn_fresh_and_keep_their_secret_out_of_repr() -> None:
    a, b = RuntimeCredentials.generate(), RuntimeCredentials.generate()
    assert a != b
    assert a.access_key_id.startswith("ASIA")
    assert len(a.access_key_id) == 20
    assert a.secret_access_key not in repr(a)
    assert a.session_token not in repr(a)
    assert LocalGateway({}).credentials != LocalGateway({}).credentials


@pytest.mark.usefixtures("clean_env")
@pytest.mark.parametrize("in_process", [True, False])
def test_the_emulator_hands_its_credentials_to_its_handlers_and_nobody_else(
    in_process: bool,
) -> None:
    """The emulator exports its own credentials as Lambda exports a role's (whatever the
    caller's environment held) and restores the environment on stop; its handlers' notifier
    posts with them; a client with other credentials is refused."""
    os.environ["AWS_ACCESS_KEY_ID"] = "AKIACALLERSOWNKEY000"
    os.environ["AWS_SECRET_ACCESS_KEY"] = "callers-secret"

    async def scenario() -> None:
        async with Emulator(watchdog_seconds=None, in_process=in_process) as emu:
            creds = emu.credentials
            assert creds is not None
            assert creds == emu.gateway.credentials
            for name, value in creds.environ().items():
                assert os.environ[name] == value == emu.env[name]
            assert emu.deps is not None
            notifier = emu.deps.notifier
            async with websockets.connect(emu.ws_url) as ws:
                await ws.send('{"action": "ping"}')
                await asyncio.wait_for(ws.recv(), 10)
                (connection_id,) = emu.gateway.connection_ids()
                assert await asyncio.to_thread(notifier.send, [(connection_id, "hi")]) == []
                assert await asyncio.wait_for(ws.recv(), 10) == "hi"
                mine = emu.management_client()
                await asyncio.to_thread(
                    mine.post_to_connection, ConnectionId=connection_id, Data=b"me too"
                )
                assert await asyncio.wait_for(ws.recv(), 10) == "me too"
                stranger = session(STRANGER).client(
                    "apigatewaymanagementapi", endpoint_url=emu.callback_url
                )
                with pytest.raises(ClientError):
                    await asyncio.to_thread(
                        stranger.post_to_connection, ConnectionId=connection_id, Data=b"x"
                    )
        assert os.environ["AWS_ACCESS_KEY_ID"] == "AKIACALLERSOWNKEY000"
        assert "AWS_SESSION_TOKEN" not in os.environ

    run(scenario)


@pytest.mark.usefixtures("clean_env")
def test_with_a_dynamodb_endpoint_dynamodb_keeps_the_callers_credentials() -> None:
    """``--dynamodb-endpoint``: the table is called with the credentials the caller had (a
    real endpoint needs them; DynamoDB Local keeps a database per key id), ``@connections``
    with the runtime's; a session message still writes its player and gets its answer."""
    from infra.emulator.dynamo_process import DynamoProcess

    os.environ["AWS_ACCESS_KEY_ID"] = "AKIACALLERSOWNKEY000"
    os.environ["AWS_SECRET_ACCESS_KEY"] = "callers-secret"
    database = DynamoProcess("127.0.0.1")
    database.start()

    async def scenario() -> None:
        async with Emulator(dynamodb_endpoint=database.endpoint, watchdog_seconds=None) as emu:
            assert emu.deps is not None
            assert emu.credentials is not None
            store_keys = emu.deps.store.client._request_signer._credentials  # type: ignore[attr-defined]
            assert store_keys.access_key == "AKIACALLERSOWNKEY000"
            assert emu.deps.notifier.client._request_signer._credentials.access_key == (  # type: ignore[attr-defined]
                emu.credentials.access_key_id
            )
            assert emu.table_name in emu.dynamodb_client().list_tables()["TableNames"]
            async with websockets.connect(emu.ws_url) as ws:
                await ws.send(json.dumps({"action": "session", "request_id": "s1"}))
                reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
                assert reply["type"] == "session", reply

    try:
        run(scenario)
    finally:
        database.stop()


@pytest.fixture
def clean_env(clean_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulator tests' ``clean_env``, and placeholder keys: the caller's own credentials."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "unset")  # restored by monkeypatch after the test
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "unset")
