"""Benchmark, figure 4: local capacity — N concurrent bot tournaments in the local runtime.

The emulator (``infra.emulator.emulator.Emulator``: gateway, handlers, embedded moto DynamoDB,
local clock) runs alone in a child process (``python -m infra.benchmarks.capacity --serve``), so
its CPU and memory are its own (read from ``/proc``). The bots (``infra.emulator.bots.Bot``, 8 per
tournament, all joining at once) run in this process; a ``Bot`` subclass stamps each guess when
sent and each opponent's row when received (same process, same monotonic clock), keyed by
(duel, row index). The latency is *guess sent -> the row received by the opponent*: the gateway,
the guess handler (read, conditional write), the pushes through the local ``@connections`` and
both event loops.

Each level is a fresh emulator with N tournaments at once. Think times are shortened (bots play
within ``THINK_MS``) so a level takes tens of seconds, not 15 minutes: the offered load (guesses
per second) is then far above N tournaments at human pace, and the report converts it with the
guess rate of a human-paced tournament from figure 3.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
THINK_MS = (200, 800)
TURN_SECONDS = 30.0
INTRO_SECONDS = 0.5
GOAL_TOURNAMENTS = 100
GOAL_P99_MS = 100.0
LEVELS_FULL = (1, 10, 25)
LEVELS_QUICK = (1,)
LEVEL_SECONDS = 60.0
"""Each level is cut off after this long (tournaments still running are cancelled)."""


# ------------------------------------------------------------------------------ server side
def serve(turn_seconds: float, intro_seconds: float) -> None:
    """Child process: run the emulator, print ``READY <ws_url>``, stop when stdin closes."""
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


def proc_sample(pid: int) -> ProcSample:
    """CPU seconds (user + system) and resident memory of ``pid``, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = hwm = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    return ProcSample(cpu, rss, hwm)


# ------------------------------------------------------------------------------ bot side
@dataclass
class Level:
    tournaments: int
    seconds: float = 0.0
    finished: int = 0
    guesses: int = 0
    """Guesses whose row reached the opponent (the latency samples)."""
    latencies_ms: list[float] = field(default_factory=list)
    server_cpu_s: float = 0.0
    server_rss_mb: float = 0.0
    server_peak_mb: float = 0.0
    bots_cpu_s: float = 0.0
    error: str = ""
    cut_off: bool = False
    """The level's time ran out before every tournament ended (the samples still count)."""
    server_errors: dict[str, int] = field(default_factory=dict)
    """Handler failures the emulator logged, by exception name (e.g. TryAgainError)."""

    def pct(self, q: float) -> float:
        if not self.latencies_ms:
            return float("nan")
        data = sorted(self.latencies_ms)
        return data[min(len(data) - 1, round(q / 100 * (len(data) - 1)))]

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies_ms) if self.latencies_ms else float("nan")

    @property
    def p99(self) -> float:
        return self.pct(99)

    @property
    def guesses_per_s(self) -> float:
        return self.guesses / self.seconds if self.seconds else 0.0

    @property
    def server_cpu_ms_per_guess(self) -> float:
        """Server CPU per delivered guess (joins, sessions, clock and pushes included)."""
        return 1000 * self.server_cpu_s / self.guesses if self.guesses else float("nan")

    @property
    def server_cpu_pct(self) -> float:
        """Server CPU as % of one core over the level."""
        return 100 * self.server_cpu_s / self.seconds if self.seconds else 0.0


def _timed_bot_class() -> Any:
    from infra.emulator.bots import Bot

    class TimedBot(Bot):
        """A bot that stamps its guesses and its opponents' rows (see the module docstring)."""

        sent: dict[tuple[str, int, str], float]
        latencies: list[float]
        joining: asyncio.Semaphore
        """One join at a time across all bots (see ``_join``)."""
        _holds: bool = False

        async def _join(self) -> None:
            # Simultaneous joins can each find no waiting lobby and each create one (8 bots
            # split over lobbies that never fill) or exhaust the lobby's optimistic retries
            # (try_again). Real players trickle in; the benchmark serialises the joins so every
            # 8 bots fill one lobby, releasing at the bot's first lobby event (or 5 s).
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

        async def _guess(self, duel_id: str, word: str, deadline_ms: int) -> dict[str, Any] | None:
            index = len(self._duel.rows) if self._duel is not None else -1
            self.sent[(duel_id, index, self.player_id or "")] = time.perf_counter()
            return await super()._guess(duel_id, word, deadline_ms)

        async def _on_turn(self, m: dict[str, Any]) -> None:
            row = m.get("row") or {}
            if (
                self._duel is not None
                and m.get("duel_id") == self._duel.duel_id
                and row.get("player") != self.player_id
                and not row.get("skipped")
            ):
                key = (m["duel_id"], len(self._duel.rows), row.get("player", ""))
                at = self.sent.pop(key, None)
                if at is not None:
                    self.latencies.append((time.perf_counter() - at) * 1000)
            await super()._on_turn(m)

    return TimedBot


async def _play(url: str, tournaments: int, level: Level) -> None:
    import random

    from infra.emulator.bots import BotConfig

    timed = _timed_bot_class()
    timed.sent = {}
    timed.latencies = level.latencies_ms
    timed.joining = asyncio.Semaphore(1)
    rng = random.Random(tournaments)
    config = BotConfig(think_ms=THINK_MS)
    bots = [
        timed(url, "en", config, name=f"t{i // 8}b{i % 8}", seed=rng.randrange(2**32))
        for i in range(8 * tournaments)
    ]

    results = await asyncio.gather(*(b.run(1) for b in bots), return_exceptions=True)
    finished: set[str] = set()
    for r in results:
        if isinstance(r, BaseException):
            level.error = level.error or repr(r)
            continue
        for res in r:
            if res.tournament_end is not None and res.tournament_id:
                finished.add(res.tournament_id)
    level.finished = len(finished)


def run_level(tournaments: int, seconds: float = LEVEL_SECONDS) -> Level:
    """One level on a fresh emulator; the emulator's log is scanned for handler failures."""
    import tempfile

    with tempfile.TemporaryFile(mode="w+") as log:
        return _run_level(tournaments, seconds, log)


def _run_level(tournaments: int, seconds: float, log: Any) -> Level:
    import collections
    import re

    level = Level(tournaments)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "infra.benchmarks.capacity",
            "--serve",
            "--turn-seconds",
            str(TURN_SECONDS),
            "--intro-seconds",
            str(INTRO_SECONDS),
        ],
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
            asyncio.run(asyncio.wait_for(_play(url, tournaments, level), seconds))
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
    think_ms: tuple[int, int] = THINK_MS
    turn_seconds: float = TURN_SECONDS
    intro_seconds: float = INTRO_SECONDS


def measure(quick: bool = False) -> CapacityResult:
    import logging

    logging.getLogger("bots").setLevel(logging.ERROR)
    levels = LEVELS_QUICK if quick else LEVELS_FULL
    return CapacityResult([run_level(n, 40.0 if quick else LEVEL_SECONDS) for n in levels])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.benchmarks.capacity")
    parser.add_argument("--serve", action="store_true", help="run the emulator (child process)")
    parser.add_argument("--turn-seconds", type=float, default=TURN_SECONDS)
    parser.add_argument("--intro-seconds", type=float, default=INTRO_SECONDS)
    parser.add_argument("--levels", default="1", help="comma-separated tournament counts")
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.turn_seconds, args.intro_seconds)
        return 0
    for n in (int(x) for x in args.levels.split(",")):
        lv = run_level(n)
        print(
            f"{n} tournaments: {lv.finished} finished in {lv.seconds:.1f} s, "
            f"{lv.guesses} guesses ({lv.guesses_per_s:.1f}/s), latency p50 {lv.p50:.1f} ms "
            f"p99 {lv.p99:.1f} ms (n={len(lv.latencies_ms)}), server CPU {lv.server_cpu_pct:.0f}% "
            f"RSS {lv.server_rss_mb:.0f} MB (peak {lv.server_peak_mb:.0f}), bots CPU "
            f"{lv.bots_cpu_s:.1f} s {'cut off ' if lv.cut_off else ''}{lv.error}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
