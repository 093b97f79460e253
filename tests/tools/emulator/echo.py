"""Test support for the local runtime: a recording echo app standing in for ``functions/``.

The echo route answers through the real ``@connections`` API with a real boto3
``apigatewaymanagementapi`` client — the way the notifier adapter will — at
``http://{domainName}/{stage}`` taken from the event (or ``CALLBACK_URL`` when ``use_env``),
signed with :data:`CREDENTIALS` (those :func:`gateway`'s gateways accept), or, with
``use_env``, with the environment's (an :class:`~infra.emulator.emulator.Emulator` exports its
own there, as Lambda does a function's role's).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import boto3
from websockets.asyncio.client import ClientConnection

from infra.emulator.gateway import LocalGateway
from infra.emulator.iam import RuntimeCredentials

Event = dict[str, Any]


def make_key_table(ddb: Any, name: str) -> None:
    """A DynamoDB table ``name`` keyed on the string ``pk`` alone, billed per request."""
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


CREDENTIALS = RuntimeCredentials.generate()
"""What every gateway :func:`gateway` starts accepts on ``@connections`` (one set for the test
process, so that the gateways of one test may call each other's)."""


def session(credentials: RuntimeCredentials | None = CREDENTIALS) -> boto3.session.Session:
    """A boto3 session signing with ``credentials``; None: with the environment's."""
    keys = credentials.client_kwargs() if credentials is not None else {}
    return boto3.session.Session(region_name="us-east-1", **keys)


def management_client(
    endpoint_url: str, credentials: RuntimeCredentials | None = CREDENTIALS
) -> Any:
    return session(credentials).client("apigatewaymanagementapi", endpoint_url=endpoint_url)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    """Run an async scenario to its end, bounded at 60 s."""

    async def bounded() -> None:
        await asyncio.wait_for(scenario(), timeout=60)

    asyncio.run(bounded())


@asynccontextmanager
async def gateway(routes: dict[str, Any], **kwargs: Any) -> AsyncIterator[LocalGateway]:
    """A started ``LocalGateway`` on a free port, accepting :data:`CREDENTIALS` (unless
    ``credentials`` says otherwise), stopped afterwards."""
    gw = LocalGateway(routes, port=0, **{"credentials": CREDENTIALS, **kwargs})
    await gw.start()
    try:
        yield gw
    finally:
        await gw.stop()


async def recv_json(ws: ClientConnection) -> dict[str, Any]:
    raw = await asyncio.wait_for(ws.recv(), timeout=10)
    result: dict[str, Any] = json.loads(raw)
    return result


async def my_connection_id(ws: ClientConnection) -> str:
    """Ask the echo route who we are: the connection id API Gateway gave this socket."""
    await ws.send(json.dumps({"action": "echo", "seq": "whoami"}))
    reply = await recv_json(ws)
    connection_id: str = reply["connectionId"]
    return connection_id


class Recorder:
    """Every handler invocation, in order; thread-safe, with waits that never sleep blindly."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.calls: list[tuple[str, Event, Any]] = []

    def add(self, route: str, event: Event, context: Any) -> None:
        with self._cond:
            self.calls.append((route, event, context))
            self._cond.notify_all()

    def events(self, route: str) -> list[Event]:
        with self._cond:
            return [event for r, event, _ in self.calls if r == route]

    def wait_for(self, predicate: Callable[[Recorder], bool], timeout: float = 10.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: predicate(self), timeout):
                raise AssertionError(f"timed out; recorded routes: {[r for r, *_ in self.calls]}")

    def wait_for_route(self, route: str, count: int = 1, timeout: float = 10.0) -> list[Event]:
        self.wait_for(lambda rec: len(rec.events(route)) >= count, timeout)
        return self.events(route)

    async def await_route(self, route: str, count: int = 1) -> list[Event]:
        return await asyncio.to_thread(self.wait_for_route, route, count)


class EchoApp:
    """Route handlers that record their events; ``echo`` and ``$default`` reply via @connections.

    Each reply is ``{"route", "body", "connectionId", "seq"}`` (``seq`` from the body, if any).
    ``$connect`` refuses with 403 when the query string has ``reject``, raises on ``explode``.
    ``boom`` raises. Per connection, ``active`` tracks how many handlers run at once.
    """

    def __init__(self, *, use_env: bool = False) -> None:
        self.recorder = Recorder()
        self.use_env = use_env
        self._lock = threading.Lock()
        self._clients: dict[tuple[str, str | None], Any] = {}
        self.active: dict[str, int] = {}
        self.max_active: dict[str, int] = {}

    def client_for(self, event: Event) -> Any:
        ctx = event["requestContext"]
        if self.use_env:
            endpoint = os.environ["CALLBACK_URL"]
            credentials = None  # the runtime's, from the environment
            key = (endpoint, os.environ.get("AWS_ACCESS_KEY_ID"))  # a new runtime, new ones
        else:
            endpoint = f"http://{ctx['domainName']}/{ctx['stage']}"
            credentials = CREDENTIALS
            key = (endpoint, None)
        with self._lock:
            if key not in self._clients:
                self._clients[key] = management_client(endpoint, credentials)
            return self._clients[key]

    def connect(self, event: Event, context: Any) -> dict[str, Any]:
        self.recorder.add("$connect", event, context)
        query = event.get("queryStringParameters") or {}
        if "explode" in query:
            raise RuntimeError("connect handler failure")
        if "reject" in query:
            return {"statusCode": 403, "body": "go away"}
        return {"statusCode": 200}

    def disconnect(self, event: Event, context: Any) -> dict[str, Any]:
        self.recorder.add("$disconnect", event, context)
        return {"statusCode": 200}

    def echo(self, event: Event, context: Any) -> dict[str, Any]:
        ctx = event["requestContext"]
        connection_id = ctx["connectionId"]
        with self._lock:
            self.active[connection_id] = self.active.get(connection_id, 0) + 1
            self.max_active[connection_id] = max(
                self.max_active.get(connection_id, 0), self.active[connection_id]
            )
        try:
            self.recorder.add(ctx["routeKey"], event, context)
            try:
                seq = json.loads(event["body"]).get("seq")
            except (ValueError, AttributeError, TypeError, RecursionError):
                seq = None
            reply = {
                "route": ctx["routeKey"],
                "body": event["body"],
                "connectionId": connection_id,
                "seq": seq,
            }
            self.client_for(event).post_to_connection(
                ConnectionId=connection_id, Data=json.dumps(reply).encode()
            )
        finally:
            with self._lock:
                self.active[connection_id] -= 1
        return {"statusCode": 200}

    def kick(self, event: Event, context: Any) -> dict[str, Any]:
        """Close the caller's own connection from inside its handler (like a forced leave)."""
        self.recorder.add("kick", event, context)
        connection_id = event["requestContext"]["connectionId"]
        self.client_for(event).delete_connection(ConnectionId=connection_id)
        return {"statusCode": 200}

    def boom(self, event: Event, context: Any) -> dict[str, Any]:
        self.recorder.add("boom", event, context)
        raise RuntimeError("handler failure")

    def routes(self, *, default: bool = True) -> dict[str, Callable[[Event, Any], Any]]:
        routes: dict[str, Callable[[Event, Any], Any]] = {
            "$connect": self.connect,
            "$disconnect": self.disconnect,
            "echo": self.echo,
            "boom": self.boom,
            "kick": self.kick,
        }
        if default:
            routes["$default"] = self.echo
        return routes


# Module-level app for "module:attr" wiring tests (functions.routes-style strings).
APP = EchoApp(use_env=True)
connect_handler = APP.connect
disconnect_handler = APP.disconnect
echo_handler = APP.echo
