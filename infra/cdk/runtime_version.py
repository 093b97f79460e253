"""Infrastructure: the Lambda runtime's Python version, declared once.

The one declaration is ``cdk.json``'s ``lambdaPythonVersion`` (e.g. ``"3.13"``, AWS Lambda
runtimes: https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtimes.html). CDK reads it here
(``infra.cdk.constructs.functions.RUNTIME``, ``infra.cdk.layer``), ``.ci/setup --full`` picks
CI's interpreter by it, and ``tests/tools/cdk/test_runtime_version.py`` holds the three together.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
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

RUNTIME_ENVIRONMENT: dict[str, str] = {"PYDANTIC_DISABLE_PLUGINS": "__all__"}
"""Interpreter-level variables every function's environment holds (CDK adds them to each
function; the cold-start benchmark runs with them).

- ``PYDANTIC_DISABLE_PLUGINS=__all__``: pydantic looks for plugins when it builds its first
  validator (the settings' at import) by reading the entry points of every installed
  distribution on ``sys.path``; on Lambda that is the layer's and the runtime's own (boto3's,
  ``awslambdaric``'s). We use no pydantic plugin, so the scan is skipped: about 2 ms of every
  cold start with the layer's 13 distributions (measured on the deployed path), more with the
  runtime's own. Source: pydantic's plugin docs (``PYDANTIC_DISABLE_PLUGINS``),
  https://docs.pydantic.dev/latest/concepts/plugins/.
"""

PLATFORM = "manylinux2014_aarch64"
"""The functions' platform, pip's tag for their wheels: Lambda on arm64 (Graviton) runs Amazon
Linux 2023 (glibc 2.34), so manylinux2014 wheels fit."""


def _version_of(python: str | Path) -> str | None:
    try:
        out = subprocess.run(
            [str(python), "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def runtime_python(version: str = LAMBDA_PYTHON_VERSION) -> Path | None:
    """A base (non-venv) CPython ``version`` interpreter, or None: this venv's base interpreter
    (``sys._base_executable``) when it is that version, else pyenv's newest ``version.*``,
    else ``python<version>`` on PATH. It compiles the functions' bytecode (``infra.cdk.bytecode``)
    and runs the artifact tests."""
    candidates: list[Path] = [Path(getattr(sys, "_base_executable", sys.executable))]
    pyenv = shutil.which("pyenv")
    roots = [Path.home() / ".pyenv"]
    if pyenv:
        answer = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=False)
        if answer.returncode == 0 and answer.stdout.strip():
            roots.insert(0, Path(answer.stdout.strip()))
    for root in roots:
        found = sorted((root / "versions").glob(f"{version}.*"), reverse=True)
        candidates += [d / "bin" / "python" for d in found]
    on_path = shutil.which(f"python{version}")
    if on_path:
        candidates.append(Path(on_path))
    for candidate in candidates:
        if candidate.exists() and _version_of(candidate) == version:
            return candidate
    return None
