"""Local runtime: the Emulator composes gateway, clock and DynamoDB, and the CLI runs it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import types
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets

from infra.emulator import Emulator
from infra.emulator.cli import build_parser, emulator_from_args
from infra.emulator.emulator import SWITCH_INTERVAL_SECONDS
from infra.limits import STAGE_LIMITS
from shared.adapters.step_functions import wait_timestamp
from shared.runtime.settings import Settings
from shared.services.ports import Timer, TimerKind

from . import echo
from .echo import EchoApp

pytestmark = pytest.mark.enable_socket

REPO = Path(__file__).resolve().parents[3]
SETTINGS_ENV = ("CALLBACK_URL", "DYNAMODB_ENDPOINT", "TURN_SECONDS")


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(scenario(), timeout=90)

    asyncio.run(bounded())


class Recording:
    """A clock/watchdog function that records its events and lets a test await them."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.got = threading.Event()

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        self.events.append(event)
        self.got.set()
        return {"ok": True}


def spec(attr: str) -> str:
    return f"{echo.__name__}:{attr}"


@pytest.mark.usefixtures("clean_env")
def test_emulator_exports_the_settings_and_restores_the_environment() -> None:
    async def scenario() -> None:
        emu = Emulator(routes={}, turn_seconds=0.5, intro_seconds=0.1, reconnect_seconds=2)
        async with emu:
            assert os.environ["CALLBACK_URL"] == emu.callback_url == emu.url
            assert emu.callback_url.startswith("http://127.0.0.1:")
            assert emu.ws_url == f"ws://127.0.0.1:{emu.port}/ws"
            assert os.environ["DYNAMODB_ENDPOINT"] == emu.dynamodb_endpoint
            settings = Settings.from_env()
            assert (settings.turn_ms, settings.intro_ms, settings.reconnect_ms) == (500, 100, 2000)
            assert emu.table_name in emu.dynamodb_client().list_tables()["TableNames"]
        for name in SETTINGS_ENV:
            assert name not in os.environ
        assert Settings.from_env().turn_ms == 30_000

    run(scenario)


@pytest.mark.usefixtures("clean_env")
def test_emulator_shortens_the_thread_switch_interval_while_it_runs() -> None:
    """The gateway's event loop waits for the interpreter lock at every socket read and write;
    while an emulator runs, a handler thread yields it after 1 ms instead of CPython's 5 ms."""
    before = sys.getswitchinterval()

    async def scenario() -> None:
        async with Emulator(routes={}):
            assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_SECONDS)
        assert sys.getswitchinterval() == pytest.approx(before)
        async with Emulator(routes={}, switch_interval_seconds=None):
            assert sys.getswitchinterval() == pytest.approx(before)

    assert before > SWITCH_INTERVAL_SECONDS
    run(scenario)


@pytest.mark.usefixtures("clean_env")
def test_handlers_given_as_module_attr_strings_answer_through_callback_url() -> None:
    routes = {
        "$connect": spec("connect_handler"),
        "$disconnect": spec("disconnect_handler"),
        "echo": spec("echo_handler"),
    }

    async def scenario() -> None:
        async with Emulator(routes=routes) as emu, websockets.connect(emu.ws_url) as ws:
            await ws.send(json.dumps({"action": "echo", "seq": 7}))
            reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert reply["route"] == "echo"
            assert reply["seq"] == 7
            assert reply["connectionId"] in emu.gateway.connection_ids()

    run(scenario)


@pytest.mark.usefixtures("clean_env")
def test_the_handlers_deps_are_built_with_the_local_clock_and_dropped_on_stop() -> None:
    async def scenario() -> None:
        emu = Emulator(watchdog_seconds=None)
        async with emu:
            assert emu.deps is not None
            assert emu.deps.clock is emu.clock
            assert emu.deps.timing.turn_ms == 30_000
        assert emu.deps is None

    run(scenario)


@pytest.mark.usefixtures("clean_env")
def test_routes_and_timers_come_from_functions_routes_when_not_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock_fn = Recording()
    watchdog_fn = Recording()
    fake_routes = types.ModuleType("functions.routes")
    fake_routes.ROUTES = {"$default": spec("echo_handler")}  # type: ignore[attr-defined]
    fake_routes.TIMERS = {"clock": "x:clock", "watchdog": "x:watchdog"}  # type: ignore[attr-defined]
    fake_routes.MOCK_ROUTES = {}  # type: ignore[attr-defined]
    fake_timers = types.ModuleType("x")
    fake_timers.clock = clock_fn  # type: ignore[attr-defined]
    fake_timers.watchdog = watchdog_fn  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "functions.routes", fake_routes)
    monkeypatch.setitem(sys.modules, "x", fake_timers)

    async def scenario() -> None:
        async with Emulator(watchdog_seconds=None) as emu:
            async with websockets.connect(emu.ws_url) as ws:
                await ws.send("anything")
                reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
                assert reply["route"] == "$default"

            timer = Timer(TimerKind.INTRO, "tournament-1", 2, emu.clock.now_ms())
            emu.clock.schedule(timer)
            assert await asyncio.to_thread(clock_fn.got.wait, 10)
            # the clock function gets the loop's state: the timer plus the Wait's timestamp
            # (rounded up to the whole second) and when the loop started
            (payload,) = clock_fn.events
            # as the deployed Task passes it: the state, and the machine's ARN from the
            # execution context (where the clock function starts executions)
            state = payload["state"]
            assert ":stateMachine:" in payload["machine"]
            assert Timer.from_event(state) == timer
            assert state["due"] == wait_timestamp(timer.due_ms)
            assert state["loop_started_ms"] <= emu.clock.now_ms()

            assert await emu.run_watchdog() == {"ok": True}
            (event,) = watchdog_fn.events
            assert event["detail-type"] == "Scheduled Event"
            assert event["source"] == "aws.events"

    run(scenario)


@pytest.mark.usefixtures("clean_env")
def test_only_one_emulator_runs_at_a_time_and_the_next_one_starts_clean() -> None:
    async def scenario() -> None:
        async with Emulator(routes={}, create_tables=False) as first:
            with pytest.raises(RuntimeError, match="another Emulator"):
                await Emulator(routes={}).start()
            ddb = first.dynamodb_client()
            ddb.create_table(
                TableName="leftover",
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                BillingMode="PAY_PER_REQUEST",
            )
        async with Emulator(routes={}, create_tables=False) as second:
            assert second.dynamodb_client().list_tables()["TableNames"] == []

    run(scenario)


@pytest.mark.usefixtures("clean_env")
def test_stop_delivers_disconnect_to_connected_clients() -> None:
    app = EchoApp(use_env=True)

    async def scenario() -> None:
        emu = Emulator(routes=app.routes())
        await emu.start()
        async with websockets.connect(emu.ws_url) as ws:
            await ws.send(json.dumps({"action": "echo"}))
            await asyncio.wait_for(ws.recv(), 10)
            await emu.stop()
        (event,) = app.recorder.events("$disconnect")
        assert event["requestContext"]["disconnectStatusCode"] == 1001

    run(scenario)


@pytest.mark.usefixtures("clean_env")
def test_bots_option_starts_the_bot_pool_and_stop_cancels_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[str, int, tuple[str, ...]]] = []
    cancelled = asyncio.Event()

    class BotPools:
        def __init__(self, url: str, n: int, *, languages: tuple[str, ...]) -> None:
            calls.append((url, n, languages))

        def observe(self, *args: Any) -> None:
            pass

        async def run(self) -> None:
            try:
                await asyncio.Event().wait()
            finally:
                cancelled.set()

    bots = types.ModuleType("infra.players.bots")
    bots.BotPools = BotPools  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "infra.players.bots", bots)

    async def scenario() -> None:
        async with Emulator(routes={}, bots=3, create_tables=False) as emu:
            await asyncio.sleep(0)  # let the pool task start
            assert calls == [(emu.ws_url, 3, ("en",))]
            assert emu.gateway.observers  # the pools watch joins in other languages
        assert cancelled.is_set()

    run(scenario)


def test_cli_options_map_onto_the_emulator() -> None:
    args = build_parser().parse_args(
        [
            "--port",
            "0",
            "--bots",
            "3",
            "--turn-seconds",
            "1.5",
            "--intro-seconds",
            "0",
            "--reconnect-seconds",
            "4",
            "--dynamodb-endpoint",
            "http://127.0.0.1:9",
            "--log-level",
            "debug",
            "--idle-timeout-seconds",
            "30",
            "--max-connection-seconds",
            "90.5",
            "--disconnect-loss",
            "0.25",
            "--half-open-seconds",
            "12",
            "--gateway-seed",
            "3",
        ]
    )
    emu = emulator_from_args(args)
    assert (emu.requested_port, emu.bots) == (0, 3)
    assert (emu.turn_seconds, emu.intro_seconds, emu.reconnect_seconds) == (1.5, 0.0, 4.0)
    assert emu.requested_dynamodb_endpoint == "http://127.0.0.1:9"
    assert emu.log_level == "DEBUG"
    assert (emu.idle_timeout_seconds, emu.max_connection_seconds) == (30.0, 90.5)
    assert (emu.disconnect_loss, emu.half_open_seconds, emu.gateway_seed) == (0.25, 12.0, 3)
    defaults = build_parser().parse_args([])
    assert (defaults.host, defaults.port, defaults.bots) == ("127.0.0.1", 8000, 0)
    # API Gateway's quotas by default; no failure injected
    default_emu = emulator_from_args(defaults)
    assert (default_emu.idle_timeout_seconds, default_emu.max_connection_seconds) == (600, 7200)
    assert (default_emu.disconnect_loss, default_emu.half_open_seconds) == (0.0, 0.0)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--disconnect-loss", "1.5"])


def test_cli_limit_options_map_onto_the_twins_limits() -> None:
    default = emulator_from_args(build_parser().parse_args([])).limits
    assert default is not None
    assert default.throttles is not None
    assert default.throttles.limits == STAGE_LIMITS["prod"]  # the deployed prod stage
    assert default.cold_starts is None
    args = ["--limits", "dev", "--limits-scale", "0.5", "--cold-starts", "0.1"]
    scaled = emulator_from_args(build_parser().parse_args(args)).limits
    assert scaled is not None
    assert scaled.throttles is not None
    assert scaled.throttles.limits == STAGE_LIMITS["dev"].scaled(0.5)
    assert scaled.cold_starts is not None
    assert scaled.cold_starts.share == 0.1
    assert scaled.cold_starts.seconds["guess"] > 0
    assert emulator_from_args(build_parser().parse_args(["--limits", "off"])).limits is None


@pytest.mark.usefixtures("clean_env")
def test_the_gateway_limits_reach_the_gateway_and_apply() -> None:
    app = EchoApp(use_env=True)

    async def scenario() -> None:
        emu = Emulator(
            routes=app.routes(),
            create_tables=False,
            idle_timeout_seconds=0.5,
            max_connection_seconds=30,
            disconnect_loss=1.0,
            half_open_seconds=2,
            gateway_seed=4,
        )
        async with emu:
            gw = emu.gateway
            assert (gw.idle_timeout_seconds, gw.max_connection_seconds) == (0.5, 30)
            assert (gw.disconnect_loss, gw.half_open_seconds) == (1.0, 2)
            async with websockets.connect(emu.ws_url) as ws:
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), 10)  # idle: closed after 0.5 s
                assert closed.value.rcvd is not None
                assert closed.value.rcvd.code == 1001
        assert app.recorder.events("$disconnect") == []  # every $disconnect lost

    run(scenario)


@contextlib.contextmanager
def cli_serving() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``python -m infra.emulator --port 0`` started, its banner read up to "Press Ctrl-C":
    (the process, the banner); killed on the way out if still running."""
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENV}
    proc = subprocess.Popen(
        [sys.executable, "-m", "infra.emulator", "--port", "0", "--log-level", "WARNING"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Press Ctrl-C"):
                break
        yield proc, "".join(lines)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow
def test_cli_prints_the_urls_serves_and_stops_cleanly_on_ctrl_c() -> None:
    with cli_serving() as (proc, banner):
        ws_url = next(w for w in banner.split() if w.startswith("ws://127.0.0.1:"))
        assert "/@connections/" in banner
        assert "web client" in banner

        async def connect_once() -> None:
            async with websockets.connect(ws_url):
                pass

        asyncio.run(asyncio.wait_for(connect_once(), 30))
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0, proc.stderr.read() if proc.stderr else ""


@pytest.mark.e2e
@pytest.mark.filterwarnings("ignore:No application metrics to publish")
@pytest.mark.usefixtures("clean_env")
def test_the_real_handlers_answer_ping_session_and_join_over_a_real_socket() -> None:
    """Smoke test of the real wiring: functions.routes, bootstrap with the LocalClock, moto."""
    pytest.importorskip("functions.routes")

    async def scenario() -> None:
        emu = Emulator(turn_seconds=1, intro_seconds=0.2, watchdog_seconds=None)
        async with emu, websockets.connect(emu.ws_url) as ws:

            async def request(message: dict[str, Any]) -> dict[str, Any]:
                await ws.send(json.dumps(message))
                reply: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 20))
                return reply

            assert (await request({"action": "ping", "request_id": "r1"}))["type"] == "pong"
            session = await request({"action": "session"})
            assert session["type"] == "session", session
            lobby = await request({"action": "join", "language": "en"})
            assert lobby["type"] == "lobby", lobby
            assert session["player"]["id"] in {p["id"] for p in lobby["players"]}

    run(scenario)


@pytest.mark.usefixtures("clean_env")
def test_the_runtime_reports_a_dynamodb_process_that_died() -> None:
    """Killed moto (out of memory, a stray kill): every handler call would fail from then on,
    so the emulator says why it can no longer serve (the CLI then exits 1 with it)."""

    async def scenario() -> None:
        async with Emulator(routes={}, watchdog_seconds=None) as emu:
            waiting = asyncio.ensure_future(emu.wait_failure())
            await asyncio.sleep(0.1)
            assert not waiting.done()  # nothing to report while it serves
            pid = emu._dynamo.pid if emu._dynamo is not None else None  # type: ignore[union-attr]
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            reason = await asyncio.wait_for(waiting, 10)
            assert "DynamoDB process exited unexpectedly" in reason
            with pytest.raises(RuntimeError, match="cannot go on without its database"):
                await asyncio.wait_for(emu.serve_forever(), 10)

    run(scenario)


@pytest.mark.slow
def test_cli_on_a_port_in_use_says_so_without_a_traceback() -> None:
    import socket

    env = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENV}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "infra.emulator", "--port", str(port)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1
    assert "could not start:" in done.stderr
    assert f"port {port}: choose another with --port" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_cli_exits_1_with_the_reason_when_its_dynamodb_process_dies() -> None:
    with cli_serving() as (proc, banner):
        assert "Press Ctrl-C" in banner
        children = _grandchildren(proc.pid)  # the DynamoDB process (a child of the forkserver)
        assert len(children) == 1, children
        os.kill(children[0], signal.SIGKILL)
        assert proc.wait(timeout=30) == 1
        stderr = proc.stderr.read() if proc.stderr else ""
        assert "DynamoDB process exited unexpectedly" in stderr


def _grandchildren(pid: int) -> list[int]:
    """``pid``'s descendants that are not its own children (from /proc)."""
    from infra.benchmarks.capacity import descendants

    found = []
    for one in descendants(pid):
        with open(f"/proc/{one}/stat") as f:
            parent = int(f.read().rsplit(")", 1)[1].split()[1])
        if parent != pid:
            found.append(one)
    return found
