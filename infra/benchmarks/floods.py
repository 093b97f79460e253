"""Benchmark: floods against honest players in the twin — N human-paced tournaments, honest
probe players, then one flood per phase; loopback only, bounded in connections and time.

The emulator runs alone in a child process (``--serve``) with the prod stage's throttles scaled
down so they bind (``infra.emulator.throttles.TwinLimits.for_stage``, ``--stage-rate``; skipped
where the twin has no throttles) and the per-connection guard's deployed settings. This
process runs the tournaments' bots (``infra.benchmarks.capacity``), the probes and the floods.

Phases, ``phase_s`` seconds each: ``baseline``; ``sessionless`` (60 connections that never send
``session``, each sending ``guess`` at 5/s); ``nickname`` (60 seated connections writing
``nickname`` at 5/s); ``churn`` (30 seated connections alternating ``join`` and ``leave`` at 2/s);
``connections`` (500 connections opened at once and held); ``reconnect`` (100 seated players
dropping and resuming at once). The counts scale with ``--flood-scale``. A flood connection the
server closes stays away (what the edge guard makes of a source that reconnects past its rate;
the twin has no model of WAF).

Probes: ``PROBES`` seated players, each sending ``nickname`` (a write) once a second and timing
the reply by ``request_id`` (``reply`` figures), and dropping and resuming with its token every
``RESUME_EVERY_S`` (``resume``: socket closed -> ``session`` reply on the new one). A request
with no reply within ``REPLY_TIMEOUT_S`` is lost; a type-less frame is API Gateway's throttle
(or failed integration) answer. Figures: ``infra/benchmarks/RESULTS.md``, "Floods".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PHASES = ("baseline", "sessionless", "nickname", "churn", "connections", "reconnect")
PROBES = 6
RESUME_EVERY_S = 4.0
REPLY_TIMEOUT_S = 10.0
RECONNECT_WINDOW_S = 60.0
"""The rules' reconnect window: a player back within it keeps its seat."""
FLOODS = {"sessionless": 60, "nickname": 60, "churn": 30, "connections": 500, "reconnect": 100}
"""Phase -> connections (before ``--flood-scale``)."""
FLOOD_RATE = {"sessionless": 5.0, "nickname": 5.0, "churn": 2.0}
"""Messages per second per flood connection."""
STAGE_RATE = 100.0
"""The stage default's scaled rate (prod: 1,000/s), every route throttle scaled alike: ``guess``
50/s (burst 100), ``$connect`` and ``session`` 5/s (burst 10), so the floods bind."""


# ------------------------------------------------------------------------------ server side
def serve(stage_rate: float, turn_seconds: float, intro_seconds: float) -> None:
    """Child process: the emulator with prod's limits scaled to ``stage_rate``; prints
    ``READY <ws_url>``, stops when stdin closes."""
    import inspect
    import logging

    from infra.emulator.emulator import Emulator

    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
    kwargs: dict[str, Any] = {}
    if "limits" in inspect.signature(Emulator).parameters:  # a twin with throttles
        from infra.emulator.throttles import TwinLimits

        kwargs["limits"] = TwinLimits.for_stage("prod", stage_rate=stage_rate)

    async def main() -> None:
        async with Emulator(
            port=0,
            turn_seconds=turn_seconds,
            intro_seconds=intro_seconds,
            watchdog_seconds=None,
            log_level="ERROR",
            **kwargs,
        ) as emu:
            print(f"READY {emu.ws_url} {'throttled' if kwargs else 'unthrottled'}", flush=True)
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

    asyncio.run(main())


# ------------------------------------------------------------------------------ figures
def p99(values: list[float]) -> float | None:
    """The 99th percentile (nearest rank), None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.99 * len(ordered)) - 1))]


@dataclass
class Phase:
    """One phase's figures (times in ms)."""

    name: str
    reply_ms: list[float] = field(default_factory=list)
    resume_ms: list[float] = field(default_factory=list)
    guess_ms: list[float] = field(default_factory=list)
    probe_sent: int = 0
    probe_answered: int = 0
    probe_throttled: int = 0
    probe_lost: int = 0
    resumes: int = 0
    resumes_failed: int = 0
    flood_sent: int = 0
    flood_answers: Counter[str] = field(default_factory=Counter)
    flood_closed: int = 0
    flood_connect_refused: int = 0

    def summary(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("reply_ms", "resume_ms", "guess_ms"):
            values = out.pop(key)
            out[f"{key}_n"] = len(values)
            out[f"{key}_p99"] = p99(values)
        out["flood_answers"] = dict(self.flood_answers)
        out["resumed_in_time"] = self.resumes_failed == 0 and all(
            v < RECONNECT_WINDOW_S * 1000 for v in self.resume_ms
        )
        return out


@dataclass
class Run:
    guard: str
    tournaments: int
    phase_s: float
    flood_scale: float
    throttled_twin: bool = False
    phases: list[Phase] = field(default_factory=list)
    tournaments_started: int = 0
    guesses_in_time: int = 0
    guesses_judged_late: int = 0
    errors: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        phases = [p.summary() for p in self.phases]
        base = phases[0] if phases else {}
        for ph in phases:
            for key in ("reply_ms_p99", "resume_ms_p99", "guess_ms_p99"):
                b, v = base.get(key), ph.get(key)
                ph[key.replace("_p99", "_vs_baseline")] = (
                    round(v / b, 2) if b and v is not None else None
                )
        return {
            "guard": self.guard,
            "tournaments": self.tournaments,
            "phase_s": self.phase_s,
            "flood_scale": self.flood_scale,
            "throttled_twin": self.throttled_twin,
            "tournaments_started": self.tournaments_started,
            "guesses_in_time": self.guesses_in_time,
            "guesses_judged_late": self.guesses_judged_late,
            "probe_sent": sum(p.probe_sent for p in self.phases),
            "probe_answered": sum(p.probe_answered for p in self.phases),
            "probe_throttled": sum(p.probe_throttled for p in self.phases),
            "probe_lost": sum(p.probe_lost for p in self.phases),
            "flood_sent": sum(p.flood_sent for p in self.phases),
            "flood_closed": sum(p.flood_closed for p in self.phases),
            "phases": phases,
            "errors": self.errors,
        }


# ------------------------------------------------------------------------------ clients
class Client:
    """One WebSocket connection: sends JSON, routes replies to waiters by ``request_id``,
    counts the rest (``answers``: ``type`` or ``code``; ``throttled`` for type-less frames)."""

    ids = itertools.count()

    def __init__(self, url: str) -> None:
        self.url = url
        self.ws: Any = None
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.answers: Counter[str] = Counter()
        self.closed = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None

    async def open(self) -> bool:
        import websockets

        try:
            self.ws = await websockets.connect(self.url, open_timeout=REPLY_TIMEOUT_S)
        except Exception:  # refused (HTTP 429 from a throttled $connect), or timed out
            return False
        self.closed.clear()
        self._reader = asyncio.create_task(self._read())
        return True

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                m = json.loads(raw)
                events = m.get("events", [m]) if m.get("type") == "batch" else [m]
                for e in events:
                    kind = e.get("code") or e.get("type") or "throttled"
                    self.answers[kind] += 1
                    waiter = self.waiting.pop(e.get("request_id") or "", None)
                    if waiter is not None and not waiter.done():
                        waiter.set_result(e)
                if "type" not in m:  # API Gateway's own frame: no request_id to match
                    for waiter in self.waiting.values():
                        if not waiter.done():
                            waiter.set_result(m)
                            break
        except Exception:
            pass
        finally:
            self.closed.set()

    async def send(self, body: dict[str, Any]) -> None:
        with contextlib.suppress(Exception):
            await self.ws.send(json.dumps(body))

    async def ask(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """Send ``body`` with a fresh ``request_id``; its reply, or None when lost."""
        rid = f"r{next(self.ids)}"
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[rid] = waiter
        await self.send({**body, "request_id": rid})
        try:
            return await asyncio.wait_for(waiter, REPLY_TIMEOUT_S)
        except TimeoutError:
            return None
        finally:
            self.waiting.pop(rid, None)

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader


async def seated(url: str, tries: int = 1) -> tuple[Client, str] | None:
    """A new player on a new connection: the client and its token, or None (after ``tries``
    attempts 0.5-1 s apart: a throttled ``$connect`` or ``session`` is retried)."""
    for attempt in range(tries):
        got = await _seated(url)
        if got is not None or attempt == tries - 1:
            return got
        await asyncio.sleep(0.5 + 0.5 * (attempt % 2))
    return None


async def _seated(url: str) -> tuple[Client, str] | None:
    client = Client(url)
    if not await client.open():
        return None
    reply = await client.ask({"action": "session"})
    if reply is None or reply.get("type") != "session":
        await client.close()
        return None
    return client, reply["token"]


async def resume(url: str, token: str) -> tuple[Client, str] | None:
    client = Client(url)
    if not await client.open():
        return None
    reply = await client.ask({"action": "session", "token": token})
    if reply is None or reply.get("type") != "session":
        await client.close()
        return None
    return client, reply.get("token") or token


class Probes:
    """``PROBES`` honest players measuring into the current phase (``self.phase``)."""

    def __init__(self, url: str, run: Run) -> None:
        self.url, self.run = url, run
        self.phase = Phase("setup")
        self.stop = asyncio.Event()

    async def one(self, i: int) -> None:
        got = await seated(self.url, tries=20)
        if got is None:
            self.run.errors.append(f"probe {i} could not start")
            return
        client, token = got
        next_resume = time.perf_counter() + RESUME_EVERY_S * (1 + i / PROBES)
        while not self.stop.is_set():
            phase = self.phase
            if time.perf_counter() >= next_resume:
                next_resume = time.perf_counter() + RESUME_EVERY_S
                await client.close()
                start = time.perf_counter()
                back = None
                while back is None and time.perf_counter() - start < RECONNECT_WINDOW_S:
                    back = await resume(self.url, token)
                    if back is None:
                        await asyncio.sleep(0.5)  # refused or lost: try again, as clients do
                phase.resumes += 1
                if back is None:
                    phase.resumes_failed += 1
                    return
                phase.resume_ms.append((time.perf_counter() - start) * 1000)
                client, token = back
                continue
            start = time.perf_counter()
            phase.probe_sent += 1
            reply = await client.ask({"action": "nickname", "nickname": f"Probe {i}"})
            if reply is None:
                phase.probe_lost += 1
            elif "type" not in reply:
                phase.probe_throttled += 1
            else:
                phase.probe_answered += 1
                phase.reply_ms.append((time.perf_counter() - start) * 1000)
            await asyncio.sleep(max(0.0, 1.0 - (time.perf_counter() - start)))
        await client.close()


async def _paced(client: Client, rate: float, until: float, bodies: Any, phase: Phase) -> None:
    while time.perf_counter() < until and not client.closed.is_set():
        await client.send(next(bodies))
        phase.flood_sent += 1
        await asyncio.sleep(1 / rate)


async def _open(url: str, tries: int) -> Client | None:
    for attempt in range(tries):
        client = Client(url)
        if await client.open():
            return client
        if attempt < tries - 1:
            await asyncio.sleep(0.5 + 0.5 * (attempt % 2))
    return None


@dataclass
class Flood:
    """A flood's connections, opened (and seated) before its phase starts."""

    name: str
    clients: list[Client] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    refused: int = 0


async def prepare(url: str, name: str, count: int) -> Flood:
    """Open flood ``name``'s ``count`` connections (seated ones with a session), retrying a
    throttled ``$connect`` or ``session`` a few times as a script would; ``connections`` opens
    its own during its phase."""
    f = Flood(name)
    if name == "connections":
        return f
    if name == "sessionless":
        got_open = await asyncio.gather(*(_open(url, 5) for _ in range(count)))
        f.clients = [c for c in got_open if c is not None]
        f.refused = count - len(f.clients)
        return f
    got = await asyncio.gather(*(seated(url, tries=5) for _ in range(count)))
    f.refused = sum(g is None for g in got)
    f.clients = [c for c, _ in (g for g in got if g is not None)]
    f.tokens = [t for _, t in (g for g in got if g is not None)]
    return f


async def flood(url: str, f: Flood, count: int, phase_s: float, phase: Phase) -> None:
    """Run flood ``f`` (``count`` connections for ``connections``) for ``phase_s`` seconds."""
    name = f.name
    until = time.perf_counter() + phase_s
    clients = f.clients
    phase.flood_connect_refused += f.refused
    if name == "connections":
        opened = await asyncio.gather(*(_open(url, 1) for _ in range(count)))
        clients = [c for c in opened if c is not None]
        phase.flood_connect_refused += count - len(clients)
    tasks = []
    if name == "sessionless":
        body = {"action": "guess", "duel_id": "T#flood#1#0", "word": "crane"}
        tasks = [_paced(c, FLOOD_RATE[name], until, itertools.repeat(body), phase) for c in clients]
    elif name == "nickname":
        tasks = [
            _paced(
                c,
                FLOOD_RATE[name],
                until,
                ({"action": "nickname", "nickname": f"Flood {n % 7}"} for n in itertools.count()),
                phase,
            )
            for c in clients
        ]
    elif name == "churn":
        bodies = ({"action": "join", "language": "en"}, {"action": "leave"})
        tasks = [
            _paced(c, FLOOD_RATE[name], until, itertools.cycle(bodies), phase) for c in clients
        ]
    elif name == "reconnect":
        tokens = f.tokens
        for c in clients:
            await c.close()
        clients = []

        async def back(token: str) -> None:
            start = time.perf_counter()
            got = None
            while got is None and time.perf_counter() - start < RECONNECT_WINDOW_S:
                got = await resume(url, token)
                if got is None:
                    await asyncio.sleep(0.5)
            if got is None:
                phase.resumes_failed += 1
            else:
                phase.resume_ms.append((time.perf_counter() - start) * 1000)
                clients.append(got[0])

        tasks = [back(t) for t in tokens]
    await asyncio.gather(*tasks)
    await asyncio.sleep(max(0.0, until - time.perf_counter()))
    for c in clients:
        phase.flood_answers.update(c.answers)
        phase.flood_closed += c.closed.is_set()
    await asyncio.gather(*(c.close() for c in clients))


async def _tournaments(url: str, run: Run, probes: Probes, stop: asyncio.Event) -> None:
    """``run.tournaments`` tournaments of human-paced bots (``infra.benchmarks.capacity``);
    each guess's reply time goes to the phase under way."""
    if run.tournaments == 0:
        return
    from infra.benchmarks import capacity

    class Stamped(list):  # type: ignore[type-arg]
        def append(self, value: Any) -> None:
            probes.phase.guess_ms.append(value)
            super().append(value)

    level = capacity.Level(run.tournaments)
    level.latencies_ms = Stamped()
    ramp_s = max(2.0, 2.0 * run.tournaments)  # the joins fit the scaled $connect throttle
    task = asyncio.create_task(capacity._play(url, run.tournaments, level, ramp_s))
    await stop.wait()
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    run.tournaments_started = level.started
    run.guesses_in_time = level.sent_in_time
    run.guesses_judged_late = level.judged_late


async def scenario(url: str, run: Run) -> None:
    probes = Probes(url, run)
    stop = asyncio.Event()
    players = asyncio.create_task(_tournaments(url, run, probes, stop))
    probe_tasks = [asyncio.create_task(probes.one(i)) for i in range(PROBES)]
    await asyncio.sleep(min(10.0, run.phase_s))  # probes seated, tournaments under way
    for name in PHASES:
        phase = Phase(name)
        run.phases.append(phase)
        probes.phase = phase
        count = max(1, round(FLOODS.get(name, 0) * run.flood_scale))
        if name == "baseline":
            await asyncio.sleep(run.phase_s)
        else:
            probes.phase = Phase("setup")
            prepared = await prepare(url, name, count)
            probes.phase = phase
            await flood(url, prepared, count, run.phase_s, phase)
        probes.phase = Phase("gap")
        await asyncio.sleep(min(2.0, run.phase_s / 4))  # let the queues drain
    probes.stop.set()
    stop.set()
    await asyncio.gather(*probe_tasks, players, return_exceptions=True)


def measure(
    *,
    guard: str = "on",
    tournaments: int = 2,
    phase_s: float = 15.0,
    flood_scale: float = 1.0,
    stage_rate: float = STAGE_RATE,
    turn_seconds: float = 30.0,
    intro_seconds: float = 6.0,
) -> Run:
    """One run on a fresh emulator child process. ``guard`` only labels the figures (the
    guard is whatever the code under ``ROOT`` has)."""
    import tempfile

    run = Run(guard, tournaments, phase_s, flood_scale)
    command = [
        sys.executable,
        "-m",
        "infra.benchmarks.floods",
        "--serve",
        "--stage-rate",
        str(stage_rate),
        "--turn-seconds",
        str(turn_seconds),
        "--intro-seconds",
        str(intro_seconds),
    ]
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().split()
            if not line or line[0] != "READY":
                run.errors.append(f"the emulator did not start: {line!r}")
                return run
            run.throttled_twin = line[2] == "throttled"
            bound = 120 + (2 * phase_s + 40) * (len(PHASES) + 2)
            asyncio.run(asyncio.wait_for(scenario(line[1], run), bound))
        except TimeoutError:
            run.errors.append("cut off")
        finally:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return run


def describe(summary: dict[str, Any]) -> str:
    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.0f}"

    def x(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f}x"

    lines = [
        f"guard {summary['guard']}: {summary['tournaments']} tournaments "
        f"({summary['tournaments_started']} started), phases of {summary['phase_s']} s, "
        f"floods x{summary['flood_scale']}, twin throttles "
        f"{'on' if summary['throttled_twin'] else 'off'}",
        f"honest requests: sent {summary['probe_sent']}, answered {summary['probe_answered']}, "
        f"throttled {summary['probe_throttled']}, lost {summary['probe_lost']}; guesses in time "
        f"{summary['guesses_in_time']}, judged late {summary['guesses_judged_late']}",
        "phase        reply p99  vs base  resume p99  vs base  guess p99  in time  "
        "flood sent  closed  refused  answers",
    ]
    for p in summary["phases"]:
        answers = ", ".join(f"{k} {v}" for k, v in sorted(p["flood_answers"].items()))
        lines.append(
            f"{p['name']:<12} {ms(p['reply_ms_p99']):>9}  {x(p['reply_ms_vs_baseline']):>7}  "
            f"{ms(p['resume_ms_p99']):>10}  {x(p['resume_ms_vs_baseline']):>7}  "
            f"{ms(p['guess_ms_p99']):>9}  {'yes' if p['resumed_in_time'] else 'NO':>7}  "
            f"{p['flood_sent']:>10}  {p['flood_closed']:>6}  {p['flood_connect_refused']:>7}  "
            f"{answers}"
        )
    if summary["errors"]:
        lines.append(f"errors: {summary['errors']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.benchmarks.floods", description=__doc__)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="1 tournament, 8 s phases")
    parser.add_argument("--tournaments", type=int, default=None)
    parser.add_argument("--phase-seconds", type=float, default=None)
    parser.add_argument("--flood-scale", type=float, default=1.0)
    parser.add_argument("--stage-rate", type=float, default=STAGE_RATE)
    parser.add_argument("--turn-seconds", type=float, default=30.0)
    parser.add_argument("--intro-seconds", type=float, default=6.0)
    parser.add_argument("--guard", default="on", help="label for the figures (before: off)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.stage_rate, args.turn_seconds, args.intro_seconds)
        return 0
    tournaments = args.tournaments if args.tournaments is not None else (1 if args.quick else 4)
    phase_s = args.phase_seconds or (8.0 if args.quick else 20.0)
    run = measure(
        guard=args.guard,
        tournaments=tournaments,
        phase_s=phase_s,
        flood_scale=args.flood_scale,
        stage_rate=args.stage_rate,
        turn_seconds=args.turn_seconds,
        intro_seconds=args.intro_seconds,
    )
    summary = run.summary()
    print(describe(summary))
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
