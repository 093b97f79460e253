"""Infrastructure tests: synthesize the CDK app once per test session (dev and prod stacks in
one app), in-process, with a stub dependency layer: no Docker, no network, no credentials."""

from __future__ import annotations

import os

# jsii prints a banner for Node 20 (end of life) on every start; the tests don't need it.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App

from infra.cdk.app import add_stage
from infra.cdk.stack import STAGES, WordleTournamentStack
from tests.tools.cdk.cfn import COMMIT, TOPICS

EDGE = "prod-edge"
"""The prod stage with the edge guard on (``edgeGuard``), synthesized alongside."""


@dataclass(frozen=True)
class Synthesized:
    app: App
    outdir: Path
    stacks: dict[str, WordleTournamentStack]
    templates: dict[str, dict[str, Any]]
    """stage -> the synthesized CloudFormation template (parsed JSON)."""


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    layer_dir = tmp_path_factory.mktemp("layer")
    (layer_dir / "python").mkdir()
    (layer_dir / "python" / "README.txt").write_text("stub layer: tests never build wheels\n")
    outdir = tmp_path_factory.mktemp("cdk.out")
    app = App(outdir=str(outdir), analytics_reporting=False)
    stacks = {
        stage: add_stage(app, stage, layer_dir=layer_dir, commit=COMMIT, **TOPICS.get(stage, {}))
        for stage in STAGES
    }
    stacks[EDGE] = add_stage(
        app,
        "prod",
        layer_dir=layer_dir,
        edge_guard=True,
        name="WordleTournament-prod-edge",
        **TOPICS.get("prod", {}),
    )
    assembly = app.synth()
    templates = {
        stage: assembly.get_stack_by_name(stack.stack_name).template
        for stage, stack in stacks.items()
    }
    return Synthesized(app=app, outdir=outdir, stacks=stacks, templates=templates)


@pytest.fixture(scope="session")
def dev(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.templates["dev"]


@pytest.fixture(scope="session")
def prod(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.templates["prod"]


@pytest.fixture(scope="session")
def prod_edge(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.templates[EDGE]
