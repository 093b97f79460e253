"""Artifact tests: the runtime's base interpreter, and the functions packaged as CDK packages
them — the dependency layer built from the lock for this machine's CPU, the CDK app
synthesized with it, the staged assets read from the cloud assembly. A summary of each test
(``record_property("artifact", ...)``) is printed at the end of the run, xdist or not."""

from __future__ import annotations

import os

# jsii prints a banner for Node 20 (end of life) on every start; the tests don't need it.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from infra.cdk.runtime_version import LAMBDA_PYTHON_VERSION
from tests.artifact.support import Packaged, runtime_python


@pytest.fixture(scope="session")
def runtime_interpreter() -> Path:
    """The Lambda runtime's Python (``cdk.json``), a base interpreter. Missing: a failure on
    CI (``.ci/setup --full`` needs it anyway), a skip elsewhere."""
    found = runtime_python()
    if found is None:
        message = (
            f"no Python {LAMBDA_PYTHON_VERSION} (the Lambda runtime, cdk.json) found: "
            f"install it, e.g. `pyenv install {LAMBDA_PYTHON_VERSION}`"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@dataclass(frozen=True)
class Built:
    packaged: Packaged
    layer_s: float
    """Seconds to build (or find cached) the layer."""
    synth_s: float
    """Seconds to synthesize the app."""


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The dev stage synthesized with the real layer, built from the lock for this CPU."""
    from aws_cdk import App

    from infra.cdk.app import add_stage
    from infra.cdk.layer import build_layer, host_platform

    t0 = time.monotonic()
    layer_dir = build_layer(platform=host_platform())
    t1 = time.monotonic()
    outdir = tmp_path_factory.mktemp("artifact-cdk.out")
    app = App(outdir=str(outdir), analytics_reporting=False)
    stack = add_stage(app, "dev", layer_dir=layer_dir)
    template = app.synth().get_stack_by_name(stack.stack_name).template
    t2 = time.monotonic()
    return Built(Packaged.from_assembly(outdir, template), t1 - t0, t2 - t1)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = [
        value
        for reports in terminalreporter.stats.values()
        for report in reports
        for key, value in getattr(report, "user_properties", ())
        if key == "artifact" and getattr(report, "when", "call") == "call"
    ]
    if lines:
        terminalreporter.section("artifact")
        for line in lines:
            terminalreporter.write_line(str(line))
