"""Simulation: a fleet-wide clock outage — every running round loop terminated at once (the
deadline machine replaced) — and how long the watchdog takes until every tournament's clock
runs again.

Run ``python -m infra.simulation.outage --players N [--width W] [--budget-s B] [--write]``
(``--players`` repeats; ``--write`` replaces the section "clock outage" of
``infra/simulation/RESULTS.md`` with the rows and the method): N players join
over ``JOIN_WINDOW_S`` seconds (N / 8 tournaments), every tournament is played, every loop is
killed ``KILL_AFTER_S`` after the last join, and the watchdog (once a minute, its 60 s timeout
enforced, ``W`` parallel recoveries, ``B`` seconds of budget) restarts them. Prints the
figures of ``infra/simulation/RESULTS.md``, "clock outage".
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

from infra.simulation.cloud import WATCHDOG, quiet

JOIN_WINDOW_S = 60.0
KILL_AFTER_S = 90.0
"""Every tournament has started and its loop has woken a few times by then."""
WATCHDOG_TIMEOUT_S = 60
WATCHDOG_RESERVED = 1


@dataclass
class Recovery:
    players: int
    width: int
    budget_s: float | None
    running: int
    """Tournaments running when every loop died."""
    recovered: int
    """Of those, tournaments whose clock was started again."""
    ended_unaided: int
    """Of those, tournaments that ended without their clock (every duel decided by guesses)."""
    p50_s: float
    max_s: float
    """From the kill to the restart of each tournament's clock (simulated seconds)."""
    watchdog_runs: int
    watchdog_errors: int
    """Watchdog invocations that failed (its 60 s timeout)."""
    run_max_s: float
    """The longest watchdog invocation."""
    applied_max: int
    """The most deadlines one watchdog run applied."""
    cpu_s: float

    def row(self) -> str:
        budget = "none" if self.budget_s is None else f"{self.budget_s:.0f} s"
        return (
            f"| {self.players:,} | {self.running:,} | {self.width} | {budget} | "
            f"{self.recovered:,} | {self.ended_unaided:,} | {self.p50_s:.0f} s | "
            f"{self.max_s:.0f} s | {self.watchdog_runs} | {self.watchdog_errors} | "
            f"{self.run_max_s:.1f} s | {self.applied_max:,} |"
        )


HEADER = (
    "| players | tournaments running at the kill | parallel recoveries | budget a run | "
    "recovered | ended without their clock | restart p50 | restart max (all running) | "
    "watchdog runs | watchdog errors (time-outs) | longest watchdog run | "
    "most deadlines applied in a run |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def recover(
    players: int, width: int, budget_s: float | None, seed: int = 1, horizon_s: float = 1200.0
) -> Recovery:
    """One outage run (module docstring)."""
    from infra.simulation.run import Options, Run

    kill = JOIN_WINDOW_S + KILL_AFTER_S
    opts = Options(
        rate=players / JOIN_WINDOW_S,
        window_s=JOIN_WINDOW_S,
        arrivals=players,
        seed=seed,
        play=10**9,
        watchdog=True,
        horizon_s=kill + horizon_s,
        timeouts={WATCHDOG: WATCHDOG_TIMEOUT_S},
        reserved={WATCHDOG: WATCHDOG_RESERVED},
        watchdog_width=width,
        watchdog_budget_ms=None if budget_s is None else int(budget_s * 1000),
        kill_at_s=kill,
    )
    if budget_s is None:
        opts.watchdog_budget_ms = 10**12
    cpu = time.process_time()
    r = Run(opts)
    with quiet():
        r.execute()
    running = r.running_at_kill
    restarts = {
        ref: min(t for t in times if t >= kill)
        for ref, times in r.clock.restarts.items()
        if ref in running and any(t >= kill for t in times)
    }
    unaided = {ref for ref in running - set(restarts) if ref in r.ended}
    waits = sorted(t - kill for t in restarts.values())
    counts = r.cloud.counts
    errors = sum(
        len(v)
        for k, v in r.cloud.stream.series.items()
        if k[1] == "Errors" and dict(k[2]).get("FunctionName") == WATCHDOG
    )
    return Recovery(
        players=players,
        width=width,
        budget_s=budget_s,
        running=len(running),
        recovered=len(restarts),
        ended_unaided=len(unaided),
        p50_s=waits[len(waits) // 2] if waits else float("nan"),
        max_s=waits[-1] if waits else float("nan"),
        watchdog_runs=r.invocations["watchdog"],
        watchdog_errors=errors,
        run_max_s=max(
            (
                v / 1000
                for k, points in r.cloud.stream.series.items()
                if k[1] == "Duration" and dict(k[2]).get("FunctionName") == WATCHDOG
                for _, v in points
            ),
            default=0.0,
        ),
        applied_max=int(
            max(
                (
                    v
                    for k, points in r.cloud.stream.series.items()
                    if k[1] == "OverdueDeadlines"
                    for _, v in points
                ),
                default=0,
            )
        ),
        cpu_s=time.process_time() - cpu + 0 * len(counts),
    )


SECTION = "clock outage"

METHOD = f"""Regenerated by `python -m infra.simulation.outage --write`
(`infra/simulation/outage.py`). N players join in {JOIN_WINDOW_S:.0f} s (N / 8 tournaments),
every tournament is played by the scripted players, and {KILL_AFTER_S:.0f} s after the last
join every running round loop is terminated at once (the Express machine replaced: executions
end at their next transition).
The watchdog runs once a minute with its {WATCHDOG_TIMEOUT_S} s timeout enforced (an invocation
still running then fails at its next wait) and its reservation of {WATCHDOG_RESERVED}.
"restart" = from the kill to the start of a new round loop for that tournament (the watchdog
finds a tournament once its next deadline is 5 s overdue, so the floor is the time to that
deadline plus the wait for the next run; a restart also counts a new round's loop started by
a guess that closed the round). "ended without their clock" = every duel decided by guesses.
"""


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m infra.simulation.outage")
    parser.add_argument("--players", type=int, action="append", required=True)
    parser.add_argument("--width", type=int, action="append")
    parser.add_argument("--budget-s", type=float, default=None)
    parser.add_argument("--horizon-s", type=float, default=1200.0)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = [HEADER]
    print(HEADER)
    for n in args.players:
        for width in args.width or [1]:
            budget = args.budget_s if width > 1 else None
            r = recover(n, width, budget, horizon_s=args.horizon_s)
            rows.append(r.row())
            print(r.row(), f"<!-- cpu {r.cpu_s:.0f} s -->", flush=True)
    if args.write:
        from infra.simulation.__main__ import write

        write(SECTION, f"## {SECTION}\n\n{METHOD}\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
