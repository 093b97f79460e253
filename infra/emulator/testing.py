"""Local runtime: the test harness, a pytest plugin (``pytest_plugins =
["infra.emulator.testing"]``, as ``tests/conftest.py`` does). Its fixture ``backend`` is a
:class:`Backend`: moto DynamoDB with the real schema, a ``ManualClock`` (times absolute UTC ms,
from 1_800_000_000_000), a :class:`RecordingNotifier` and the real ``functions/`` handlers;
``backend.player(name)`` gives a connected :class:`ScriptedPlayer`. A worked example:
``shared/domain/RULINGS.md``, Design notes, "Local runtime".
"""

from __future__ import annotations

import functools
import itertools
import json
import random
import zlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from infra.emulator.events import ws_event
from infra.emulator.states import ManualClock
from shared.protocol.framing import unpack
from shared.protocol.outbound import parse_outbound
from shared.services.deps import Deps

__all__ = [
    "Backend",
    "LambdaContext",
    "ManualClock",
    "RecordingNotifier",
    "ScriptedPlayer",
    "ws_event",
]


class RecordingNotifier:
    """Records every message per connection; connections in ``gone`` answer like a 410.

    ``raw``: each post as sent, ``(connection_id, text)`` (a ``batch`` is one post);
    ``events``: each event delivered, ``(connection_id, event)``, batches unpacked;
    ``sent``: the events per connection.

    ``active``: each connection's ``LastActiveAt`` (UTC ms), what ``last_active_ms`` answers
    (GetConnection; None for a gone or unknown connection, like a 410). ``Backend`` sets it at
    ``$connect`` and at every message the client sends (``ping`` included), as API Gateway
    does; tests may set it directly (``activity``). The server's own posts leave it alone:
    the reading of ``LastActiveAt`` ruling 14 relies on (``infra/emulator/gateway.py``).

    Every post is validated against the protocol's classes (``parse_outbound``; a message
    outside the contract raises ``pydantic.ValidationError`` in the test that sent it)."""

    def __init__(self) -> None:
        self.sent: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.raw: list[tuple[str, str]] = []
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.gone: set[str] = set()
        self.closed: list[str] = []
        self.active: dict[str, int] = {}
        self.reads: list[str] = []
        """Connection ids of each GetConnection, in order."""

    def activity(self, connection_id: str, at_ms: int) -> None:
        """The client sent a message at ``at_ms`` (UTC ms): ``LastActiveAt`` moves there."""
        self.active[connection_id] = max(self.active.get(connection_id, at_ms), at_ms)

    def last_active_ms(self, connection_id: str) -> int | None:
        self.reads.append(connection_id)
        if connection_id in self.gone:
            return None
        return self.active.get(connection_id)

    def send(self, messages: list[tuple[str, str]]) -> list[str]:
        gone: list[str] = []
        for cid, text in messages:
            if cid in self.gone:
                if cid not in gone:
                    gone.append(cid)
                continue
            # The server builds its events without pydantic (``shared.protocol.outbound``): every
            # post is checked here against the published contract (``ValidationError``).
            parse_outbound(text)
            self.raw.append((cid, text))
            for event in unpack(text):
                self.sent[cid].append(event)
                self.events.append((cid, event))
        return gone

    def close(self, connection_id: str) -> None:
        self.closed.append(connection_id)
        self.gone.add(connection_id)

    def gateway_frame(self, connection_id: str, frame: dict[str, Any]) -> None:
        """A frame API Gateway itself sends the client (no ``type``: outside the protocol's
        contract, so not validated); recorded with the connection's messages."""
        if connection_id not in self.gone:
            self.sent[connection_id].append(frame)
            self.events.append((connection_id, frame))


@dataclass
class LambdaContext:
    """A Lambda context object as the Python runtime passes it (the fields Powertools reads)."""

    function_name: str = "local"
    function_version: str = "$LATEST"
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:000000000000:function:local"
    memory_limit_in_mb: int = 256
    aws_request_id: str = "req"
    log_group_name: str = "/aws/lambda/local"
    log_stream_name: str = "local"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def _readable(item: dict[str, Any]) -> dict[str, Any]:
    """A tournament item's ``state`` (a Binary: the zlib-compressed JSON document, schema 2)
    as the document itself, so that tests read, compare and search items as plain values."""
    from boto3.dynamodb.types import Binary

    state = item.get("state")
    if isinstance(state, Binary):
        return {**item, "state": json.loads(zlib.decompress(bytes(getattr(state, "value", b""))))}
    return item


def _canonical(value: Any) -> str:
    """JSON for what ``json`` cannot write (Decimal): its text."""
    return str(value)


class Backend:
    """The real handlers over moto + a manual clock + a recording notifier (see module doc)."""

    def __init__(
        self,
        *,
        seed: int = 7,
        lexicon: Any = None,
        rate_limit_per_second: float = 5.0,
        rate_limit_burst: int = 1_000_000,
        heartbeat_timeout_seconds: float = 0,
        new_players_per_source: int = 0,
    ) -> None:
        """``rate_limit_*``: the per-connection bucket
        (``shared.runtime.rate_limit.RateLimiter``). Test scripts send many messages at one frozen
        instant of the manual clock, so the default burst is effectively unlimited; pass the
        production 20 to test the limit itself.

        ``heartbeat_timeout_seconds``: ruling 14's liveness check. Off (0) by default: scripted
        players stand for conformant clients, which ping every 20 s, and the manual clock
        jumps whole turns at a time without them. Tests of liveness pass the production 60
        and keep their players alive with ``ScriptedPlayer.ping()``.

        ``new_players_per_source``: ruling 17's limit. Off (0) by default: every scripted
        player connects from one address; tests of the limit pass one and connect players
        from several (``player(source_ip=...)``)."""
        import boto3

        from functions.routes import MOCK_ROUTES, ROUTES, TIMERS
        from shared.adapters.dynamo.boards import DynamoProgression
        from shared.adapters.dynamo.schema import create_tables
        from shared.adapters.dynamo.store import DynamoStore
        from shared.adapters.dynamo.switch import DynamoGameSwitch
        from shared.runtime.bootstrap import build
        from shared.runtime.settings import Settings

        self.clock = ManualClock()
        self.notifier = RecordingNotifier()
        self.client = boto3.client("dynamodb", region_name="us-east-1")
        self.table_name = "wordle-tournament"
        create_tables(self.client, self.table_name)
        self.store = DynamoStore(self.client, self.table_name, self.clock.now_ms)
        settings = Settings(
            turn_seconds=30,
            intro_seconds=6,
            reconnect_seconds=60,
            rate_limit_per_second=rate_limit_per_second,
            rate_limit_burst=rate_limit_burst,
            heartbeat_timeout_seconds=heartbeat_timeout_seconds,
            new_players_per_source=new_players_per_source,
        )
        rng = random.Random(seed)
        counter = itertools.count(1)
        self.deps: Deps = build(
            settings,
            store=self.store,
            notifier=self.notifier,
            clock=self.clock,
            switch=DynamoGameSwitch(self.client, self.table_name),
            progression=DynamoProgression(self.client, self.table_name),
            lexicon=lexicon,
            rng=lambda: random.Random(rng.random()),
            ids=lambda: f"id{next(counter):04d}",
        )
        """The dependencies every handler call gets (``dataclasses.replace`` it to vary one)."""
        self.entrypoints = {k: _load(v) for k, v in {**ROUTES, **TIMERS}.items()}
        self.mock_routes = MOCK_ROUTES
        """Route key or timer name (``functions.routes``) -> its ``Entrypoint``."""
        self.clock.fire = lambda state: self.call("clock", state)
        self._ids = itertools.count(1)
        self.players: list[ScriptedPlayer] = []
        self._throttled: dict[str, int] = {}
        self._api_requests = itertools.count(1)
        self._stream_pollers: dict[str, Any] = {}

    def throttle(self, connection_id: str, messages: int = 1) -> None:
        """API Gateway throttles the next ``messages`` messages of this connection: each is
        answered with the gateway's own frame, ``{"message": "Too Many Requests",
        "connectionId": ..., "requestId": ...}`` (no ``type``), and no handler runs (the stage
        or route token bucket was empty; AWS, "Protect your WebSocket APIs in API Gateway",
        https://docs.aws.amazon.com/apigateway/latest/developerguide/websocket-api-protect.html).
        A test hook: the real throttles (stage and route buckets) live in the local gateway."""
        self._throttled[connection_id] = self._throttled.get(connection_id, 0) + messages

    def invoke(
        self,
        route: str,
        connection_id: str,
        body: str | None = None,
        *,
        received_ms: int | None = None,
        source_ip: str = "127.0.0.1",
    ) -> Any:
        """Call the route's handler now. ``received_ms``: when API Gateway received the
        message (``requestTimeEpoch``; default now) — earlier than now for a message whose
        handler runs late. ``source_ip``: the client's address (``identity.sourceIp``)."""
        if route not in ("$connect", "$disconnect") and self._throttled.get(connection_id):
            self._throttled[connection_id] -= 1
            self.notifier.gateway_frame(connection_id, throttle_frame(connection_id, self))
            return None
        event = ws_event(
            route, connection_id, body, self.clock.now, received_ms=received_ms, source_ip=source_ip
        )
        if route != "$disconnect":
            self.notifier.activity(connection_id, event["requestContext"]["requestTimeEpoch"])
        mock = self.mock_routes.get(route)
        if mock is not None:  # answered by the gateway itself: no handler, no table access
            received = event["requestContext"]["requestTimeEpoch"]
            self.route_response(connection_id, mock.answer(received, body))
            return None
        return self.call(route if route in self.entrypoints else "$default", event)

    def route_response(self, connection_id: str, text: str) -> None:
        """The gateway's own answer on a mock route (``pong``): delivered to the connection
        like any message (recorded by the notifier); not a ``PostToConnection``. A ``request_id``
        that is not a valid string is echoed as it came (API Gateway validates no ping), so the
        contract is checked on the pong without it."""
        pong = json.loads(text)
        if not (isinstance(pong.get("request_id"), str) and _encodable(pong["request_id"])):
            text = json.dumps({**pong, "request_id": None}, separators=(",", ":"))
        self.deps.notifier.send([(connection_id, text)])

    def call(self, name: str, event: dict[str, Any]) -> Any:
        """Run the entrypoint of route key or timer ``name`` on ``event`` now, with
        ``self.deps``, through the same Lambda wrapper as deployed (``Entrypoint.invoke``)."""
        return self.entrypoints[name].invoke(event, LambdaContext(), self.deps)

    def send_raw(self, connection_id: str, body: str, *, received_ms: int | None = None) -> None:
        """Route ``body`` like API Gateway (``$request.body.action``; else ``$default``, also
        for JSON nested too deep to parse, as ``infra.emulator.sockets.select_route``)."""
        try:
            action = json.loads(body).get("action")
        except (ValueError, AttributeError, RecursionError):
            action = None
        known = isinstance(action, str) and (
            action in self.entrypoints or action in self.mock_routes
        )
        route = action if known else "$default"
        self.invoke(route, connection_id, body, received_ms=received_ms)

    def player(
        self, name: str | None = None, *, session: bool = True, source_ip: str = "127.0.0.1"
    ) -> ScriptedPlayer:
        """A new connection from ``source_ip``, with a new player's session unless
        ``session`` is False."""
        cid = f"conn{next(self._ids):03d}="
        p = ScriptedPlayer(self, cid, name or cid)
        self.invoke("$connect", cid, source_ip=source_ip)
        if session:
            p.send("session")
            p.id = p.last("session")["player"]["id"]
            p.token = p.last("session")["token"]
        self.players.append(p)
        return p

    def fill_lobby(self, language: str = "en", n: int = 8) -> list[ScriptedPlayer]:
        players = [self.player(f"p{i}") for i in range(n)]
        for p in players:
            p.join(language)
        return players

    def items(self) -> list[dict[str, Any]]:
        """Every item of the table as plain Python values, sorted by key (a Scan)."""
        from shared.adapters.dynamo.store import from_av

        found: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"TableName": self.table_name, "ConsistentRead": True}
        while True:
            resp = self.client.scan(**kwargs)
            found += [_readable(from_av(i)) for i in resp.get("Items", [])]
            if "LastEvaluatedKey" not in resp:
                break
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
        return sorted(found, key=lambda i: (i["pk"], i["sk"]))

    def snapshot(self) -> str:
        """The whole table as canonical JSON: equal snapshots mean nothing was written."""
        return json.dumps(self.items(), sort_keys=True, default=_canonical)

    def item(self, key: dict[str, str]) -> dict[str, Any] | None:
        """One raw item by key (e.g. ``schema.player_key(pid)``), as plain Python values."""
        from shared.adapters.dynamo.store import from_av, to_av

        resp = self.client.get_item(TableName=self.table_name, Key=to_av(key), ConsistentRead=True)
        return _readable(from_av(resp["Item"])) if "Item" in resp else None

    def tournament(self, tournament_id: str) -> Any:
        return self.store.get_tournament(tournament_id)

    def end_intro(self) -> None:
        """Run the clock to its next wake (the round intro's end, on a fresh round)."""
        due = self.clock.next_due()
        if due is not None:
            self.clock.advance_to(due)

    def pass_deadline(self, deadline_ms: int) -> None:
        """Move time until a turn deadline's skip has surely been applied: the round's clock
        wakes at the deadline plus the skip grace, rounded up to the whole second (Step
        Functions' Wait; ``shared.adapters.step_functions``)."""
        due = deadline_ms + self.deps.timing.skip_grace_ms
        self.clock.advance_to(-(-due // 1000) * 1000)

    def to_move(self) -> list[ScriptedPlayer]:
        """Players whose turn it is, in any running duel (one read per tournament)."""
        by_tournament: dict[str, list[ScriptedPlayer]] = defaultdict(list)
        for p in self.players:
            tid = p.tournament_id()
            if tid:
                by_tournament[tid].append(p)
        movers = []
        for tid, group in by_tournament.items():
            rec = self.store.get_tournament(tid)
            if rec is None:
                continue
            for p in group:
                d = rec.tournament.duel_of(p.id)
                if d is not None and not d.over and d.next_player == p.id:
                    movers.append(p)
        return movers

    def deliver_streams(self, handlers: dict[str, Any] | None = None) -> dict[str, Any]:
        """Deliver what the table's stream holds now to the stream functions
        (``functions.streams.STREAMS``), as the emulator does
        (``infra.emulator.streams.StreamPoller``: the same filters, batches, retries and
        failure destination; the batching window skipped), each record once across calls:
        in the harness history appears when a test says so, never inside a write.
        ``handlers`` (function module -> ``handler(event, context)``) replaces the real ones.
        Returns function module -> its poller (``delivered``, ``failures``)."""
        import boto3

        from functions.streams import STREAMS
        from infra.emulator.emulator import bind
        from infra.emulator.streams import StreamPoller

        if not self._stream_pollers:
            table = self.client.describe_table(TableName=self.table_name)["Table"]
            # botocore's default endpoint names the account (<account>.streams-ddb...), which
            # moto's mock does not route: name the regional one
            streams = boto3.client(
                "dynamodbstreams",
                region_name="us-east-1",
                endpoint_url="https://streams.dynamodb.us-east-1.amazonaws.com",
            )
            for module, source in STREAMS.items():
                handler = (handlers or {}).get(module) or bind(source.target, self.deps)
                self._stream_pollers[module] = StreamPoller(
                    streams,
                    table["LatestStreamArn"],
                    source,
                    functools.partial(_invoke_stream_function, handler),
                    region="us-east-1",
                )
        for poller in self._stream_pollers.values():
            poller.poll(flush=True)
        return dict(self._stream_pollers)


def _invoke_stream_function(handler: Any, event: dict[str, Any]) -> Any:
    return handler(event, LambdaContext())


THROTTLED = "Too Many Requests"
"""The ``message`` of API Gateway's frame for a throttled message (``Backend.throttle``)."""


def throttle_frame(connection_id: str, backend: Backend) -> dict[str, Any]:
    """API Gateway's answer to a throttled message: its error frame's shape (as for an
    integration failure, ``infra.emulator.sockets``), no ``type``."""
    return {
        "message": THROTTLED,
        "connectionId": connection_id,
        "requestId": f"throttled{next(backend._api_requests):04d}",
    }


@functools.lru_cache(maxsize=64)
def _sorted_words_cached(lexicon: Any, language: str, length: int) -> tuple[str, ...]:
    return tuple(sorted(lexicon.allowed(language, length)))


def _sorted_words(lexicon: Any, language: str, length: int) -> tuple[str, ...]:
    """The allowed words of a length, sorted once per lexicon, language and length."""
    return _sorted_words_cached(lexicon, language, length)


def _load(spec: str) -> Any:
    import importlib

    module, attr = spec.split(":")
    return getattr(importlib.import_module(module), attr)


@dataclass
class ScriptedPlayer:
    backend: Backend
    connection_id: str
    name: str
    id: str = ""
    token: str = ""
    _request: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    # ---------------------------------------------------------------- messages
    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.backend.notifier.sent[self.connection_id]

    def all(self, type_: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("type") == type_]

    @property
    def gateway_frames(self) -> list[dict[str, Any]]:
        """API Gateway's own frames this connection received (no ``type``: throttled...)."""
        return [m for m in self.messages if "type" not in m]

    def last(self, type_: str) -> dict[str, Any]:
        found = self.all(type_)
        if not found:
            raise AssertionError(
                f"{self.name} received no {type_!r}; got {[m['type'] for m in self.messages]}"
            )
        return found[-1]

    @property
    def errors(self) -> list[str]:
        return [m["code"] for m in self.all("error")]

    # ---------------------------------------------------------------- actions
    def send(self, action: str, *, received_ms: int | None = None, **fields: Any) -> None:
        """Send ``{"action": action, **fields}``; ``received_ms`` as in ``Backend.invoke``."""
        body = json.dumps({"action": action, **fields})
        self.backend.send_raw(self.connection_id, body, received_ms=received_ms)

    def send_raw(self, body: str) -> None:
        """Send ``body`` verbatim (routed like API Gateway would)."""
        self.backend.send_raw(self.connection_id, body)

    def clear(self) -> None:
        """Forget the messages received so far (to assert only on what comes next)."""
        self.backend.notifier.sent[self.connection_id].clear()

    def join(self, language: str = "en") -> None:
        self.send("join", language=language)

    def ping(self) -> None:
        """Send ``ping`` now (a sign of life, ruling 14: the gateway answers ``pong`` itself
        and the connection's ``LastActiveAt`` moves; no handler runs)."""
        self.send("ping")

    def tournament_id(self) -> str | None:
        """The tournament of the last ``round`` event this player received."""
        rounds = self.all("round")
        if rounds:
            return str(rounds[-1]["tournament_id"])
        # a resumed connection has seen no round yet: ask the store (one read)
        player = self.backend.store.get_player(self.id) if self.id else None
        return player.tournament_id if player is not None else None

    def current_duel(self) -> Any:
        tid = self.tournament_id()
        rec = self.backend.store.get_tournament(tid) if tid else None
        return rec.tournament.duel_of(self.id) if rec else None

    def my_turn(self) -> bool:
        d = self.current_duel()
        return d is not None and not d.over and d.next_player == self.id

    def secret(self) -> str:
        """The current duel's secret (test-only peek into storage)."""
        return str(self.current_duel().word)

    def any_valid_word(self, *, wrong: bool = True) -> str:
        """A valid word of the current duel's length; with ``wrong`` not the secret."""
        d = self.current_duel()
        tid = self.tournament_id()
        rec = self.backend.store.get_tournament(tid) if tid else None
        if rec is None:
            raise AssertionError(f"{self.name} is in no tournament")
        words = _sorted_words(self.backend.deps.lexicon, rec.tournament.language, d.length)
        for w in words:
            if not wrong or w != d.word:
                return w
        raise AssertionError("no word")

    def guess(self, word: str | None = None) -> None:
        d = self.current_duel()
        self.send("guess", duel_id=d.duel_id, word=word or self.any_valid_word())

    def solve(self) -> None:
        self.guess(self.secret())

    def time_out(self) -> None:
        """Let this player's turn run out: time passes until the round's clock applied the
        skip (``Backend.pass_deadline``)."""
        d = self.current_duel()
        self.backend.pass_deadline(d.turn_deadline_ms)

    def disconnect(self) -> None:
        self.backend.notifier.gone.add(self.connection_id)
        self.backend.invoke("$disconnect", self.connection_id)

    def send_before_close(self, action: str, **fields: Any) -> None:
        """The tab closes just after sending ``{"action": action, **fields}``, and API Gateway
        runs ``$disconnect`` before the message's invocation (nothing orders them on AWS:
        ruling 13): the message is received now, ``$disconnect`` runs now, then the message's
        handler runs (its ``requestTimeEpoch`` before the close; its reply goes nowhere)."""
        received = self.backend.clock.now
        self.disconnect()
        self.send(action, received_ms=received, **fields)

    def resume(self) -> None:
        cid = f"conn{next(self.backend._ids):03d}="
        self.connection_id = cid
        self.backend.invoke("$connect", cid)
        self.send("session", token=self.token)
        replies = self.all("session")
        if replies and replies[-1].get("token"):
            self.token = replies[-1]["token"]  # tokens rotate at every resume (ruling 11)


def running_backend(monkeypatch: pytest.MonkeyPatch, **options: Any) -> Iterator[Backend]:
    """A ``Backend(**options)`` inside moto's ``mock_aws`` with dummy AWS credentials. The
    body of the ``backend`` fixture, for fixtures that need other options (e.g. the
    production rate limit)."""
    from moto import mock_aws

    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_METRICS_NAMESPACE": "Test",
        "POWERTOOLS_SERVICE_NAME": "wordle-tournament",
    }.items():
        monkeypatch.setenv(key, value)
    from infra.emulator.moto_speedups import ItemRollback, StreamRecords

    records = StreamRecords()  # stream records as DynamoDB Streams writes them
    # a transaction backs up the items it names, not a deep copy of the table and its stream
    # (each transaction would copy every stream record so far: quadratic in a long test)
    rollback = ItemRollback()
    with mock_aws():
        records.install()
        rollback.install()
        try:
            yield Backend(**options)
        finally:
            rollback.uninstall()
            records.uninstall()


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    """A fresh moto-backed backend per test (see the module docstring)."""
    yield from running_backend(monkeypatch)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
