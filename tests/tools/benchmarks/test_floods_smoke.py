"""Smoke: the floods benchmark (``infra.benchmarks.floods``) runs end to end at a tiny size and
its figures are produced and consistent with each other — never a timing (benchmarks measure,
tests assert behaviour)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from infra.benchmarks.floods import PHASES, p99
from infra.benchmarks.run import KEPT_MARKER, kept_sections

ROOT = Path(__file__).resolve().parents[3]


def test_p99_is_the_nearest_rank() -> None:
    assert p99([]) is None
    assert p99([5.0]) == 5.0
    assert p99([float(v) for v in range(1, 101)]) == 99.0
    assert p99([float(v) for v in range(200, 0, -1)]) == 198.0


def test_the_main_run_keeps_the_floods_section(tmp_path: Path) -> None:
    """``python -m infra.benchmarks`` rewrites ``RESULTS.md`` but keeps what follows the
    marker (the floods figures, run on their own)."""
    out = tmp_path / "RESULTS.md"
    assert kept_sections(out) == ""
    out.write_text(f"# old figures\n\n{KEPT_MARKER}\n\n## Floods\n\nfigures\n")
    assert kept_sections(out) == f"\n{KEPT_MARKER}\n\n## Floods\n\nfigures\n"
    out.write_text("# no marker\n")
    assert kept_sections(out) == ""


@pytest.mark.slow
@pytest.mark.enable_socket
def test_a_tiny_run_prints_and_writes_consistent_figures(tmp_path: Path) -> None:
    out = tmp_path / "floods.json"

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "infra.benchmarks.floods",
            "--tournaments",
            "0",
            "--phase-seconds",
            "2",
            "--flood-scale",
            "0.02",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert [p["name"] for p in figures["phases"]] == list(PHASES)
    for name in PHASES:
        assert f"\n{name} " in proc.stdout
    assert "cut off" not in figures["errors"]
    # every honest request is answered, throttled or lost; nothing else
    assert figures["probe_sent"] > 0
    assert figures["probe_sent"] == (
        figures["probe_answered"] + figures["probe_throttled"] + figures["probe_lost"]
    )
    for phase in figures["phases"]:
        assert phase["probe_sent"] == (
            phase["probe_answered"] + phase["probe_throttled"] + phase["probe_lost"]
        )
        assert phase["reply_ms_n"] == phase["probe_answered"]
        assert (phase["reply_ms_p99"] is None) == (phase["reply_ms_n"] == 0)
        assert phase["resumes_failed"] <= phase["resumes"]
    baseline, sessionless = figures["phases"][0], figures["phases"][1]
    assert baseline["flood_sent"] == 0
    assert sessionless["flood_sent"] > 0
    # a session-less guess is refused, never played
    assert set(sessionless["flood_answers"]) <= {"no_session", "rate_limited", "throttled"}
    assert figures["guesses_judged_late"] <= figures["guesses_in_time"]
    assert figures["flood_sent"] == sum(p["flood_sent"] for p in figures["phases"])
