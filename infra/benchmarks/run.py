"""Benchmarks: the command — run every figure, print the table, write ``RESULTS.md``.

    python -m infra.benchmarks [--quick] [--out PATH] [--only calls,items,layers,cold,cost,capacity]

``--quick`` (the CI smoke run, about a minute) keeps every figure but shrinks the samples: 1 round
of cold imports, 1 local tournament. Its numbers are not results; only a full run is committed.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from infra.benchmarks import report
from infra.benchmarks.figures import RESULTS_JSON

FIGURES = ("calls", "items", "layers", "cold", "cost", "capacity")
DEFAULT_OUT = Path(__file__).with_name("RESULTS.md")


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _quietly(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` with stdout captured (Powertools prints metrics as EMF JSON lines)."""
    import logging
    import warnings

    logging.getLogger().setLevel(logging.ERROR)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        return fn()


def run(quick: bool, only: Sequence[str]) -> report.Results:
    res = report.Results(
        quick=quick,
        started=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        commit=_git_commit(),
        machine=f"{os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.machine()}",
        load_before=os.getloadavg(),
    )
    t0 = time.perf_counter()
    if "calls" in only:
        from infra.benchmarks import calls

        print("figure 1: AWS calls per action (moto) ...", file=sys.stderr)
        res.calls = _quietly(calls.measure_actions)
    if "items" in only:
        from infra.benchmarks import items

        print("figure 1b: the tournament item at its worst ...", file=sys.stderr)
        res.items = items.measure(repeat=200 if quick else 2_000)
    if "layers" in only:
        from infra.benchmarks import layers

        print("figure 1c: CPU per valid guess by layer (canned AWS answers) ...", file=sys.stderr)
        res.layers = _quietly(lambda: layers.measure_guess(repeat=50 if quick else 1_000))
    if "cost" in only:
        from infra.benchmarks import cost

        print("figure 3: a full tournament at list prices (moto) ...", file=sys.stderr)
        res.cost = _quietly(cost.measure)
        from infra.benchmarks import progression

        print("figure 3d: progression's added cost (moto) ...", file=sys.stderr)
        res.progression = _quietly(lambda: progression.measure(res.cost.total))
    if "cold" in only:
        from infra.benchmarks import cold

        print("figure 2: cold imports (fresh processes) ...", file=sys.stderr)
        res.cold = cold.measure(rounds=1 if quick else 21, warm=not quick)
    if "capacity" in only:
        from infra.benchmarks import capacity

        print("figure 4: local capacity (emulator + bots) ...", file=sys.stderr)
        res.capacity = capacity.measure(quick=quick)
    if res.cost is not None:
        from infra.benchmarks import memory

        res.memory = memory.size_functions(res.cost.run.invocations, res.cost.prices, res.cold)
    res.seconds = time.perf_counter() - t0
    res.load_after = os.getloadavg()
    return res


KEPT_MARKER = "<!-- kept: written by separate benchmarks; python -m infra.benchmarks keeps it -->"
"""Everything from this line on in ``RESULTS.md`` survives a rewrite (``infra.benchmarks.floods``'
figures, run on their own)."""


def kept_sections(out: Path) -> str:
    """The part of ``out`` from :data:`KEPT_MARKER` on (with a blank line before), or ""."""
    if not out.is_file():
        return ""
    text = out.read_text()
    at = text.find(KEPT_MARKER)
    return "" if at < 0 else "\n" + text[at:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smoke mode (CI): small samples")
    parser.add_argument("--out", type=Path, help=f"results file (default {DEFAULT_OUT})")
    parser.add_argument(
        "--only", default=",".join(FIGURES), help=f"comma-separated subset of {FIGURES}"
    )
    args = parser.parse_args(argv)
    only = [f.strip() for f in args.only.split(",") if f.strip()]
    unknown = set(only) - set(FIGURES)
    if unknown:
        parser.error(f"unknown figures: {sorted(unknown)}")
    # The CDK constructs (the cold-start figure packages the functions with them) start jsii's
    # Node runtime; its end-of-life box for Node 20 is silenced as in CI (.ci/run).
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    res = run(args.quick, only)
    text = report.render(res)
    print(report.summary_table(res))
    out = args.out
    if out is None and not args.quick:
        out = DEFAULT_OUT
    if out is not None:
        out.write_text(text + kept_sections(out))
        print(f"\nwrote {out}", file=sys.stderr)
        if out == DEFAULT_OUT and res.cost is not None:
            # the figures the docs quote (python -m infra.benchmarks.figures --write)
            RESULTS_JSON.write_text(json.dumps(report.results_json(res), indent=2) + "\n")
            print(f"wrote {RESULTS_JSON}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
