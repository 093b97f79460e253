"""Benchmark, figure 4: local capacity — N concurrent human-paced tournaments in the local runtime.

The emulator (``infra.emulator.emulator.Emulator``) runs alone in a child process
(``python -m infra.benchmarks.capacity --serve``, CPU and memory read from ``/proc``); the bots
(``infra.players.bots.Bot``, 8 per tournament, think time lognormal: ``THINK_MEDIAN_S``,
``THINK_SIGMA``, ``TIMEOUT_RATE``) run in this process, arriving within ``RAMP_SECONDS``, each
level cut off after ``LEVEL_SECONDS``. Per level: guess -> opponent's row latency, guesses judged
late, deadline lateness (``Level.lateness_ms`` after the clock's wake, ``Level.due_lateness_ms``
after the due time), CPU and memory. Method: ``infra/benchmarks/RESULTS.md``, figure 4.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
THINK_MEDIAN_S = 6.0
"""Median think time per turn (seconds)."""
THINK_SIGMA = 0.6
"""Lognormal shape: p90 = median x 2.2 (13 s), p99 = median x 4 (24 s, near the 30 s clock)."""
TIMEOUT_RATE = 0.02
"""Share of turns a player lets run out (the clock skips them)."""
TURN_SECONDS = 30.0
INTRO_SECONDS = 6.0
GOAL_TOURNAMENTS = 100
GOAL_P99_MS = 100.0
GOAL_LATENESS_MS = 1000.0
LEVELS_FULL = (25, 50, 100)
TOP_LEVEL_RUNS = 3
"""The largest level runs this many times in a full run (one after another, each with a fresh
emulator): on a shared machine one run's p99 strays, and the level meets only if every run does."""
LEVELS_QUICK = (2,)
RAMP_SECONDS = 120.0
"""Tournaments' players arrive at random times within this window from the level's start."""
LEVEL_SECONDS = 240.0
"""Each level is cut off after this long (tournaments still running are cancelled)."""
STEADY_AFTER_S = 15.0
"""The steady part starts this long after the ramp (the last joins' intros are over)."""
QUICK_RAMP_SECONDS = 2.0
QUICK_LEVEL_SECONDS = 30.0


@functools.cache
def skip_grace_ms() -> int:
    """How long after a turn's deadline its skip is due (the runtime's default setting)."""
    from shared.runtime.settings import Settings

    seconds: float = Settings().skip_grace_seconds
    return round(1000 * seconds)


# ------------------------------------------------------------------------------ server side
def serve(turn_seconds: float, intro_seconds: float, *, in_process: bool = True) -> None:
    """Child process: run the emulator, print ``READY <ws_url>``, stop when stdin closes.
    ``in_process=False`` sends the handlers' DynamoDB and ``@connections`` calls over HTTP (the
    runtime before the in-process transports, for comparison)."""
    import logging

    from infra.emulator.emulator import Emulator

    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")

    async def main() -> None:
        async with Emulator(
            port=0,
            turn_seconds=turn_seconds,
            intro_seconds=intro_seconds,
            watchdog_seconds=None,
            log_level="ERROR",
            in_process=in_process,
        ) as emu:
            print(f"READY {emu.ws_url}", flush=True)
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes stdin

    asyncio.run(main())


@dataclass
class ProcSample:
    cpu_s: float
    rss_kb: int
    hwm_kb: int
    own_cpu_s: float = 0.0
    """Of ``cpu_s``, the process's own (the emulator: handlers, gateway, clock), without its
    descendants (its DynamoDB process)."""


def descendants(pid: int) -> list[int]:
    """``pid``'s child processes, theirs, and so on (from ``/proc/<pid>/task/*/children``):
    the emulator's DynamoDB process is a child of its forkserver, a child of the emulator."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    children = [int(c) for c in f.read().split()]
            except OSError:
                continue
            found.extend(children)
            pending.extend(children)
    return found


def proc_sample(pid: int) -> ProcSample:
    """CPU seconds (user + system) and resident memory of ``pid`` and its descendants (the
    emulator's DynamoDB process and forkserver: :func:`descendants`), from /proc. A process
    that exits between the listing and the reading is left out."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = ProcSample(0.0, 0, 0)
    for one in [pid, *descendants(pid)]:
        try:
            with open(f"/proc/{one}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            rss = hwm = 0
            with open(f"/proc/{one}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1])
                    elif line.startswith("VmHWM:"):
                        hwm = int(line.split()[1])
        except OSError:
            if one == pid:
                raise
            continue
        cpu = (int(fields[11]) + int(fields[12])) / ticks
        total.cpu_s += cpu
        if one == pid:
            total.own_cpu_s = cpu
        total.rss_kb += rss
        total.hwm_kb += hwm
    return total


# ------------------------------------------------------------------------------ bot side
@dataclass
class Level:
    tournaments: int
    seconds: float = 0.0
    started: int = 0
    """Tournaments that started (a ``lobby`` ``started`` reached one of their bots)."""
    finished: int = 0
    guesses: int = 0
    """Guesses whose row reached the opponent (the latency samples)."""
    latencies_ms: list[float] = field(default_factory=list)
    sent_in_time: int = 0
    """Guesses sent before their turn's deadline (by the bot's estimate of the server clock)."""
    judged_late: int = 0
    """Of those, refused ``turn_over``: the goal is none."""
    lateness_ms: list[float] = field(default_factory=list)
    """Per skipped turn and duel start: arrival at the player minus the clock's wake for it
    (the due time rounded up to the whole second, as the Step Functions Wait does), in ms: the
    local runtime's own lateness. The goal: none above 1 s."""
    due_lateness_ms: list[float] = field(default_factory=list)
    """The same arrivals minus the due time itself (0-999 ms more: the Wait's rounding)."""
    server_cpu_s: float = 0.0
    steady_seconds: float = 0.0
    """The steady part of the level: from ``STEADY_AFTER_S`` past the ramp to the end."""
    steady_guesses: int = 0
    steady_server_cpu_s: float = 0.0
    steady_own_cpu_s: float = 0.0
    """Of ``steady_server_cpu_s``, the emulator process's own (the rest: its DynamoDB process)."""
    server_rss_mb: float = 0.0
    server_peak_mb: float = 0.0
    bots_cpu_s: float = 0.0
    bots_lag_ms: list[float] = field(default_factory=list)
    """The load generator's own event-loop lag: how late a 20 ms sleep in the bots' process
    wakes (solver moves, 8 bots per tournament on one loop), in ms. A row's arrival is noted
    when the bots' loop gets to it, so this much of a latency sample can be the bots'."""
    steady_latencies_ms: list[float] = field(default_factory=list)
    """The latency samples of the steady part (no joins): a subset of ``latencies_ms``."""
    steady_running: bool = False
    """The steady part has begun and the level is not over (its samples are kept apart)."""
    error: str = ""
    cut_off: bool = False
    """The level's time ran out before every tournament ended (the samples still count)."""
    server_errors: dict[str, int] = field(default_factory=dict)
    """Handler failures the emulator logged, by exception name (e.g. TryAgainError)."""

    def pct(self, q: float, data: list[float] | None = None) -> float:
        values = sorted(self.latencies_ms if data is None else data)
        if not values:
            return float("nan")
        return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies_ms) if self.latencies_ms else float("nan")

    @property
    def p99(self) -> float:
        return self.pct(99)

    @property
    def steady_p99(self) -> float:
        return self.pct(99, self.steady_latencies_ms)

    @property
    def bots_lag_p99(self) -> float:
        return self.pct(99, self.bots_lag_ms)

    @property
    def max_lateness_ms(self) -> float:
        return max(self.lateness_ms) if self.lateness_ms else float("nan")

    @property
    def guesses_per_s(self) -> float:
        return self.guesses / self.seconds if self.seconds else 0.0

    @property
    def server_cpu_ms_per_guess(self) -> float:
        """Server CPU per delivered guess (joins, sessions, clock and pushes included)."""
        return 1000 * self.server_cpu_s / self.guesses if self.guesses else float("nan")

    @property
    def steady_cpu_ms_per_guess(self) -> float:
        """Server CPU per delivered guess in the steady part (play, clock, pings; no joins)."""
        if not self.steady_guesses:
            return float("nan")
        return 1000 * self.steady_server_cpu_s / self.steady_guesses

    @property
    def steady_cpu_pct(self) -> float:
        """Server CPU as % of one core in the steady part."""
        return 100 * self.steady_server_cpu_s / self.steady_seconds if self.steady_seconds else 0.0

    @property
    def steady_own_cpu_pct(self) -> float:
        """The emulator process's own CPU (handlers, gateway, clock; not its DynamoDB process)
        as % of one core in the steady part."""
        return 100 * self.steady_own_cpu_s / self.steady_seconds if self.steady_seconds else 0.0

    @property
    def server_cpu_pct(self) -> float:
        """Server CPU as % of one core over the level."""
        return 100 * self.server_cpu_s / self.seconds if self.seconds else 0.0

    @property
    def meets(self) -> bool:
        """p99 below the goal, no guess judged late, no deadline more than 1 s late."""
        lateness_ok = not self.lateness_ms or self.max_lateness_ms <= GOAL_LATENESS_MS
        return (
            bool(self.latencies_ms)
            and self.p99 < GOAL_P99_MS
            and self.judged_late == 0
            and lateness_ok
            and not self.error
        )


def _late(level: Level, arrived_ms: float, due_ms: int) -> None:
    wake_ms = -(-due_ms // 1000) * 1000  # the Wait state's timestamp: due rounded up to 1 s
    level.lateness_ms.append(arrived_ms - wake_ms)
    level.due_lateness_ms.append(arrived_ms - due_ms)


def _timed_bot_class() -> Any:
    from infra.players.bots import Bot

    class TimedBot(Bot):
        """A human-paced bot that stamps its guesses and its opponents' rows, counts its
        guesses judged late and the lateness of the deadlines it sees (module docstring)."""

        sent: dict[tuple[str, int, str], float]
        level: Level
        joining: asyncio.Semaphore
        """One join at a time across all bots (see ``_join``)."""
        _holds: bool = False
        _turn_deadline_ms: int | None = None
        _intro_deadline_ms: int | None = None

        def think_ms(self) -> float:
            return 1000 * self.rng.lognormvariate(math.log(THINK_MEDIAN_S), THINK_SIGMA)

        async def _join(self) -> None:
            # Simultaneous joins can each find no waiting lobby and each create one (8 bots
            # split over lobbies that never fill) or exhaust the lobby's optimistic retries
            # (try_again). The benchmark serialises the joins so every 8 bots fill one lobby,
            # releasing at the bot's first lobby event (or 5 s).
            await self.joining.acquire()
            self._holds = True
            asyncio.get_running_loop().call_later(5.0, self._release)
            await super()._join()

        def _release(self) -> None:
            if self._holds:
                self._holds = False
                self.joining.release()

        async def _on_lobby(self, m: dict[str, Any]) -> None:
            self._release()
            await super()._on_lobby(m)

        async def _on_error(self, m: dict[str, Any]) -> None:
            self._release()
            await super()._on_error(m)

        async def _on_round(self, m: dict[str, Any]) -> None:
            self._intro_deadline_ms = m.get("intro_deadline_ms")
            await super()._on_round(m)

        async def _on_duel_start(self, m: dict[str, Any]) -> None:
            if self.player_id in m.get("players", ()):
                if self._intro_deadline_ms is not None:
                    _late(self.level, self.server_now_ms(), self._intro_deadline_ms)
                    self._intro_deadline_ms = None
                self._turn_deadline_ms = m.get("deadline_ms")
            await super()._on_duel_start(m)

        async def _guess(self, duel_id: str, word: str, deadline_ms: int) -> dict[str, Any] | None:
            index = len(self._duel.rows) if self._duel is not None else -1
            self.sent[(duel_id, index, self.player_id or "")] = time.perf_counter()
            in_time = self.server_now_ms() < deadline_ms
            if in_time:
                self.level.sent_in_time += 1
            # A played guess's turn event cancels this task here; a refusal returns the error.
            reply = await super()._guess(duel_id, word, deadline_ms)
            if in_time and reply is not None and reply.get("code") == "turn_over":
                self.level.judged_late += 1
            return reply

        async def _on_turn(self, m: dict[str, Any]) -> None:
            row = m.get("row") or {}
            if self._duel is not None and m.get("duel_id") == self._duel.duel_id:
                if row.get("skipped") and self._turn_deadline_ms is not None:
                    due = self._turn_deadline_ms + skip_grace_ms()
                    _late(self.level, self.server_now_ms(), due)
                elif row.get("player") != self.player_id:
                    key = (m["duel_id"], len(self._duel.rows), row.get("player", ""))
                    at = self.sent.pop(key, None)
                    if at is not None:
                        sample = (time.perf_counter() - at) * 1000
                        self.level.latencies_ms.append(sample)
                        if self.level.steady_running:
                            self.level.steady_latencies_ms.append(sample)
                self._turn_deadline_ms = m.get("deadline_ms")
            await super()._on_turn(m)

    return TimedBot


async def _steady(pid: int, level: Level, after_s: float) -> None:
    """At ``after_s``, note the server's CPU and the guesses so far; at cancellation (the
    level's end) fill in the steady part's figures."""
    await asyncio.sleep(after_s)
    start, guesses = time.perf_counter(), len(level.latencies_ms)
    before = proc_sample(pid)
    level.steady_running = True
    try:
        await asyncio.Event().wait()
    finally:
        level.steady_running = False
        level.steady_seconds = time.perf_counter() - start
        after = proc_sample(pid)
        level.steady_server_cpu_s = after.cpu_s - before.cpu_s
        level.steady_own_cpu_s = after.own_cpu_s - before.own_cpu_s
        level.steady_guesses = len(level.latencies_ms) - guesses


async def _loop_lag(level: Level, every_s: float = 0.02) -> None:
    """Sample the bots' event-loop lag (``Level.bots_lag_ms``) until cancelled."""
    while True:
        before = time.perf_counter()
        await asyncio.sleep(every_s)
        level.bots_lag_ms.append(max(0.0, (time.perf_counter() - before - every_s) * 1000))


async def _play(
    url: str, tournaments: int, level: Level, ramp_s: float, pid: int | None = None
) -> None:
    import random

    from infra.players.bots import BotConfig

    timed = _timed_bot_class()
    timed.sent = {}
    timed.level = level
    timed.joining = asyncio.Semaphore(1)
    rng = random.Random(tournaments)
    config = BotConfig(timeout_rate=TIMEOUT_RATE)
    arrivals = sorted(rng.uniform(0, ramp_s) for _ in range(tournaments))
    started: set[str] = set()
    finished: set[str] = set()

    async def player(i: int) -> None:
        # the 8 players of one tournament arrive within a second of each other
        await asyncio.sleep(arrivals[i // 8] + rng.uniform(0, 1))
        bot = timed(url, "en", config, name=f"t{i // 8}b{i % 8}", seed=rng.randrange(2**32))
        try:
            for res in await bot.run(1):
                if res.tournament_id:
                    started.add(res.tournament_id)
                if res.tournament_end is not None and res.tournament_id:
                    finished.add(res.tournament_id)
        finally:
            if bot.current is not None and bot.current.tournament_id:
                started.add(bot.current.tournament_id)

    steady = asyncio.create_task(_steady(pid, level, ramp_s + STEADY_AFTER_S)) if pid else None
    lag = asyncio.create_task(_loop_lag(level))
    try:
        results = await asyncio.gather(
            *(player(i) for i in range(8 * tournaments)), return_exceptions=True
        )
        for r in results:
            if isinstance(r, BaseException):
                level.error = level.error or repr(r)
    finally:
        lag.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await lag
        if steady is not None:
            steady.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await steady
        level.started = len(started)
        level.finished = len(finished)


def run_level(
    tournaments: int,
    seconds: float = LEVEL_SECONDS,
    ramp_s: float = RAMP_SECONDS,
    *,
    in_process: bool = True,
) -> Level:
    """One level on a fresh emulator; the emulator's log is scanned for handler failures."""
    import tempfile

    with tempfile.TemporaryFile(mode="w+") as log:
        return _run_level(tournaments, seconds, ramp_s, in_process, log)


def _run_level(
    tournaments: int, seconds: float, ramp_s: float, in_process: bool, log: Any
) -> Level:
    import collections
    import re

    level = Level(tournaments)
    command = [
        sys.executable,
        "-m",
        "infra.benchmarks.capacity",
        "--serve",
        "--turn-seconds",
        str(TURN_SECONDS),
        "--intro-seconds",
        str(INTRO_SECONDS),
    ]
    if not in_process:
        command.append("--wire")
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.startswith("READY "):
            level.error = f"the emulator did not start: {line!r}"
            return level
        url = line.split(" ", 1)[1]
        before = proc_sample(proc.pid)
        own_before = os.times()
        start = time.perf_counter()
        try:
            asyncio.run(asyncio.wait_for(_play(url, tournaments, level, ramp_s, proc.pid), seconds))
        except TimeoutError:
            level.cut_off = True
        level.seconds = time.perf_counter() - start
        level.guesses = len(level.latencies_ms)
        after = proc_sample(proc.pid)
        own_after = os.times()
        level.server_cpu_s = after.cpu_s - before.cpu_s
        level.server_rss_mb = after.rss_kb / 1024
        level.server_peak_mb = after.hwm_kb / 1024
        level.bots_cpu_s = (own_after.user - own_before.user) + (
            own_after.system - own_before.system
        )
        return level
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.seek(0)
        found = re.findall(r"^[\w.]+\.(\w+(?:Error|Exception)):", log.read(), re.MULTILINE)
        level.server_errors = dict(collections.Counter(found))


@dataclass
class CapacityResult:
    levels: list[Level]
    think_median_s: float = THINK_MEDIAN_S
    think_sigma: float = THINK_SIGMA
    timeout_rate: float = TIMEOUT_RATE
    turn_seconds: float = TURN_SECONDS
    intro_seconds: float = INTRO_SECONDS
    ramp_seconds: float = RAMP_SECONDS
    level_seconds: float = LEVEL_SECONDS


def measure(quick: bool = False) -> CapacityResult:
    import logging

    logging.getLogger("bots").setLevel(logging.ERROR)
    if quick:
        levels = [run_level(n, QUICK_LEVEL_SECONDS, QUICK_RAMP_SECONDS) for n in LEVELS_QUICK]
        return CapacityResult(
            levels, ramp_seconds=QUICK_RAMP_SECONDS, level_seconds=QUICK_LEVEL_SECONDS
        )
    *lower, top = LEVELS_FULL
    return CapacityResult(
        [run_level(n) for n in lower] + [run_level(top) for _ in range(TOP_LEVEL_RUNS)]
    )


def describe(lv: Level) -> str:
    """One line per level, as the command prints it."""
    return (
        f"{lv.tournaments} tournaments ({lv.started} started, {lv.finished} finished) in "
        f"{lv.seconds:.0f} s: {lv.guesses} guesses ({lv.guesses_per_s:.1f}/s), guess -> "
        f"opponent's row p50 {lv.p50:.1f} ms p99 {lv.p99:.1f} ms; judged late "
        f"{lv.judged_late} of {lv.sent_in_time} sent in time; deadline lateness after the "
        f"clock's wake max {lv.max_lateness_ms:.0f} ms p99 {lv.pct(99, lv.lateness_ms):.0f} ms "
        f"(after the due time: max {max(lv.due_lateness_ms, default=float('nan')):.0f} ms; "
        f"n={len(lv.lateness_ms)}); steady part: {lv.steady_guesses} guesses in "
        f"{lv.steady_seconds:.0f} s, p99 {lv.steady_p99:.1f} ms, server CPU "
        f"{lv.steady_cpu_pct:.0f}% "
        f"({lv.steady_cpu_ms_per_guess:.1f} ms/guess); whole level: server CPU "
        f"{lv.server_cpu_pct:.0f}% ({lv.server_cpu_ms_per_guess:.1f} ms/guess), RSS "
        f"{lv.server_rss_mb:.0f} MB (peak {lv.server_peak_mb:.0f}), bots CPU "
        f"{lv.bots_cpu_s:.1f} s, bots' loop lag p99 {lv.bots_lag_p99:.0f} ms max "
        f"{max(lv.bots_lag_ms, default=float('nan')):.0f} ms"
        f"{' cut off' if lv.cut_off else ''} {lv.error} "
        f"{lv.server_errors or ''}".rstrip()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.benchmarks.capacity")
    parser.add_argument("--serve", action="store_true", help="run the emulator (child process)")
    parser.add_argument("--turn-seconds", type=float, default=TURN_SECONDS)
    parser.add_argument("--intro-seconds", type=float, default=INTRO_SECONDS)
    parser.add_argument(
        "--wire", action="store_true", help="DynamoDB and @connections over HTTP (comparison)"
    )
    parser.add_argument("--levels", default="1", help="comma-separated tournament counts")
    parser.add_argument("--seconds", type=float, default=LEVEL_SECONDS, help="window per level")
    parser.add_argument("--ramp", type=float, default=RAMP_SECONDS, help="arrival window, s")
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.turn_seconds, args.intro_seconds, in_process=not args.wire)
        return 0
    import logging

    logging.getLogger("bots").setLevel(logging.ERROR)
    for n in (int(x) for x in args.levels.split(",")):
        print(describe(run_level(n, args.seconds, args.ramp, in_process=not args.wire)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
