"""Infrastructure: the third-party dependency layer, built without Docker.

The Lambda functions need the project's runtime dependencies (``pyproject.toml`` ``dependencies``)
except boto3, which the Lambda Python runtime already ships. They are installed by pip for the
Lambda platform (Amazon Linux, arm64, CPython 3.13) from binary wheels only, so no compiler and
no Docker are needed, into ``build/lambda-layer/<hash>/python`` (the layout Lambda expects: a
layer's ``python/`` folder is on ``sys.path``). The folder name is a hash of the requirements and
the target platform, so a second synth with the same inputs reuses the build (no network).

Why not the public Powertools layer by ARN: it pins us to one account's per-region layer
versions, and our handlers also need pydantic v2 with its compiled core at a version we choose;
a layer built from ``pyproject.toml`` ships exactly what the tests ran against.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from infra.runtime_version import LAMBDA_PYTHON_VERSION

REPO_ROOT = Path(__file__).resolve().parent.parent

PYTHON_VERSION = LAMBDA_PYTHON_VERSION
"""The functions' runtime (declared once in ``cdk.json``, see ``infra.runtime_version``)."""
PLATFORM = "manylinux2014_aarch64"
"""Lambda on arm64 (Graviton) runs Amazon Linux 2023: glibc 2.34, so manylinux2014 wheels fit."""

PROVIDED_BY_RUNTIME = frozenset({"boto3", "botocore"})
"""The Lambda Python runtime ships boto3; bundling it would add ~25 MB for no benefit."""


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement.strip())
    if match is None:
        raise ValueError(f"unparseable requirement {requirement!r}")
    return match.group(0).lower().replace("_", "-")


def layer_requirements(pyproject: Path = REPO_ROOT / "pyproject.toml") -> list[str]:
    """The runtime dependencies to ship in the layer: ``[project] dependencies`` less boto3."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    deps: list[str] = data["project"]["dependencies"]
    return [d for d in deps if _name(d) not in PROVIDED_BY_RUNTIME]


def _cache_key(requirements: list[str]) -> str:
    blob = json.dumps({"req": requirements, "py": PYTHON_VERSION, "platform": PLATFORM})
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def build_layer(
    requirements: list[str] | None = None,
    build_root: Path = REPO_ROOT / "build" / "lambda-layer",
) -> Path:
    """Install ``requirements`` for the Lambda platform; return the layer's asset folder.

    Idempotent and cached by the requirements' hash. Needs PyPI (pip) on the first build only.
    Raises ``subprocess.CalledProcessError`` when pip fails (e.g. no wheel for the platform).
    """
    reqs = layer_requirements() if requirements is None else requirements
    target = build_root / _cache_key(reqs)
    done = build_root / f"{target.name}.complete"
    if done.exists():
        return target
    staging = build_root / f".{target.name}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "python").mkdir(parents=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",
            "--platform",
            PLATFORM,
            "--implementation",
            "cp",
            "--python-version",
            PYTHON_VERSION,
            "--only-binary=:all:",
            "--target",
            str(staging / "python"),
            *reqs,
        ],
        check=True,
    )
    # Lambda's runtime ships boto3: drop any copy a dependency pulled in transitively; console
    # scripts (bin/) are useless in a layer.
    for pattern in ("boto3*", "botocore*", "s3transfer*", "bin"):
        for path in (staging / "python").glob(pattern):
            if path.is_dir():
                shutil.rmtree(path)
    (staging / "python" / "requirements.lock.txt").write_text("\n".join(reqs) + "\n")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    done.touch()
    return target
