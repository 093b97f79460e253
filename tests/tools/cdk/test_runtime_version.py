"""Infrastructure: the Lambda runtime's Python is declared once (``cdk.json`` context
``lambdaPythonVersion``) and CDK, the layer and ``.ci/setup`` all read that one (the lock's
target: ``test_lock.py``; the artifact test's interpreter: ``tests/artifact``)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from infra.cdk.constructs.functions import RUNTIME
from infra.cdk.layer import PYTHON_VERSION
from infra.cdk.runtime_version import (
    CDK_JSON,
    LAMBDA_PYTHON_VERSION,
    REPO_ROOT,
    lambda_python_version,
)


def test_cdk_and_the_layer_use_the_declared_version():
    declared = json.loads(CDK_JSON.read_text(encoding="utf-8"))["context"]["lambdaPythonVersion"]
    assert declared == LAMBDA_PYTHON_VERSION
    assert RUNTIME.name == f"python{declared}"
    assert declared == PYTHON_VERSION


def test_ci_setup_reads_the_same_key():
    script = (REPO_ROOT / ".ci" / "setup").read_text(encoding="utf-8")
    match = re.search(r"^runtime=\$\((sed .*cdk\.json)\)$", script, flags=re.MULTILINE)
    assert match, "no runtime=$(sed ... cdk.json) line in .ci/setup"
    out = subprocess.run(
        ["bash", "-c", match.group(1)], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == LAMBDA_PYTHON_VERSION


@pytest.mark.parametrize("bad", ["3", "3.x", "2.7", "py3.13"])
def test_a_malformed_version_is_refused(tmp_path, bad):
    cdk_json = tmp_path / "cdk.json"
    cdk_json.write_text(json.dumps({"context": {"lambdaPythonVersion": bad}}))
    with pytest.raises(ValueError, match="lambdaPythonVersion"):
        lambda_python_version(cdk_json)


def test_a_missing_version_is_refused(tmp_path):
    cdk_json = tmp_path / "cdk.json"
    cdk_json.write_text(json.dumps({"context": {}}))
    with pytest.raises(KeyError):
        lambda_python_version(cdk_json)
