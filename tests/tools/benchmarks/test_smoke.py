"""Smoke: the benchmark command still runs end to end (``--quick``), so it cannot rot.

Asserts that the table is produced with every figure present — never a timing or a cost
(benchmarks measure, tests assert behaviour).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FIGURES = (
    "1. AWS calls, valid guess",
    "1b. tournament item at its worst",
    "1c. CPU per valid guess by layer",
    "2. cold start vs the floor (boto3 + 2 clients)",
    "3. cost per 8-player tournament",
    "4. local capacity",
)
SECTIONS = (
    "## 1. AWS calls per action",
    "## 1b. The tournament item at its worst",
    "## 1c. CPU per action by layer",
    "## 2. Cold start",
    "## 3. Cost per 8-player tournament",
    "## 3d. Progression (issue 38): the added cost per tournament",
    "## 4. Local capacity",
)


@pytest.mark.slow
def test_quick_benchmark_prints_the_table_and_writes_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"

    proc = subprocess.run(
        [sys.executable, "-m", "infra.benchmarks", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert proc.returncode == 0, proc.stderr[-3000:]
    for figure in FIGURES:
        assert f"| {figure} |" in proc.stdout
    text = out.read_text()
    for heading in (*SECTIONS, "## Summary"):
        assert heading in text
    for figure in FIGURES:
        assert f"| {figure} |" in text
    assert "Quick smoke run" in text
    # the cost table gives each item's floor and why it cannot go lower
    assert "| cost | share | floor | why not lower |" in text
