"""Drift: every figure block of the docs (``infra.benchmarks.figures``: alarm and function
counts, reserved concurrency sums, monthly fixed cost, cost per tournament, memory, storage)
says what the synthesized templates and the last benchmark run (``results.json``) say. Fix a
failure with ``python -m infra.benchmarks.figures --write`` (and, for benchmark figures, a
benchmark run: ``python -m infra.benchmarks``)."""

from __future__ import annotations

import re

from infra.benchmarks import figures
from tests.tools.cdk.conftest import Synthesized


def test_the_docs_figures_are_those_of_the_templates_and_the_benchmark(
    synthesized: Synthesized,
) -> None:
    assert figures.drift(synthesized.templates) == []


def test_every_document_has_figure_blocks_and_each_has_a_renderer() -> None:
    render = figures.renderers({}, {})
    for path in figures.DOCUMENTS:
        names = [m["name"] for m in figures.BLOCK.finditer(path.read_text())]
        assert set(names) <= set(render), path
    readme = (figures.ROOT / "infra" / "README.md").read_text()
    assert {"alarms-by-stage", "functions", "reserved-prod", "tournament-usd"} <= {
        m["name"] for m in figures.BLOCK.finditer(readme)
    }


def test_results_json_is_the_run_of_results_md() -> None:
    results = figures.load_results()
    text = (figures.ROOT / "infra" / "benchmarks" / "RESULTS.md").read_text()
    commit = re.search(r"commit `([0-9a-f]+)`", text)
    assert commit is not None
    assert results["run"]["commit"] == commit.group(1)
    assert f"**${results['cost']['total']:.5f}**" in text
