"""Infrastructure: the Lambda runtime's Python version, declared once.

The one declaration is ``cdk.json``'s context key ``lambdaPythonVersion`` (e.g. ``"3.13"``). CDK
reads it here (``infra.constructs.functions.RUNTIME``, the layer's wheels in ``infra.layer``),
``.ci/setup --full`` reads the same key to pick the interpreter CI runs the suite on, and
``tests/infra/test_runtime_version.py`` holds the three together. Changing the runtime is one
edit of ``cdk.json`` (then ``bash .ci/setup --full`` recreates ``.venv`` on that Python).

Source: AWS Lambda runtimes, https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtimes.html
(``python3.13`` on Amazon Linux 2023).
"""

from __future__ import annotations

import json
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CDK_JSON = REPO_ROOT / "cdk.json"
CONTEXT_KEY = "lambdaPythonVersion"


def lambda_python_version(cdk_json: Path = CDK_JSON) -> str:
    """``"MAJOR.MINOR"`` of the Lambda runtime (``cdk.json`` context). Raises KeyError when
    the key is missing, ValueError when it is not ``3.N``."""
    version = str(json.loads(cdk_json.read_text(encoding="utf-8"))["context"][CONTEXT_KEY])
    major, _, minor = version.partition(".")
    if major != "3" or not minor.isdigit():
        raise ValueError(f"{CONTEXT_KEY} must look like '3.13', not {version!r}")
    return version


LAMBDA_PYTHON_VERSION = lambda_python_version()
"""The runtime every function runs on and CI tests on (``"3.13"``)."""

PLATFORM = "manylinux2014_aarch64"
"""The functions' platform, pip's tag for their wheels: Lambda on arm64 (Graviton) runs Amazon
Linux 2023 (glibc 2.34), so manylinux2014 wheels fit."""
