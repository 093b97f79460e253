"""Infrastructure: the third-party dependency layer, built from the lock file without Docker.

pip installs exactly the pins of ``infra/requirements.lock`` (``infra.cdk.lock``:
aws-lambda-powertools[parser], pydantic *and boto3*, with their dependencies) for the Lambda
platform (Amazon Linux 2023, arm64, CPython 3.13) from binary wheels only, hashes checked, into
``build/lambda-layer/<key>/python``, compiled by ``infra.cdk.bytecode``. The key hashes the lock,
the Python version and the platform, so an unchanged lock reuses the build (no network).
``build_layer(platform=host_platform())`` builds it for this machine's CPU instead (the artifact
test, ``tests/artifact``). Why boto3 ships in it: ``shared/domain/RULINGS.md``, design notes.
"""

from __future__ import annotations

import hashlib
import json
import platform as _platform
import shutil
import subprocess
import sys
from pathlib import Path

from infra.cdk.bytecode import LAYER_PREFIX, build_once, compile_tree
from infra.cdk.lock import LOCK_FILE
from infra.cdk.runtime_version import LAMBDA_PYTHON_VERSION, PLATFORM

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_ROOT = REPO_ROOT / "build" / "lambda-layer"

PYTHON_VERSION = LAMBDA_PYTHON_VERSION
"""The functions' runtime (declared once in ``cdk.json``, see ``infra.cdk.runtime_version``)."""
LAYER_FORMAT = 3
"""Part of the cache key: bump it when the way a layer is built changes (2: from the lock,
boto3 included; 3: with unchecked-hash bytecode, ``infra.cdk.bytecode``)."""

_ARCHES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


def host_platform(machine: str | None = None) -> str:
    """pip's manylinux platform tag for this machine's CPU (``platform.machine()``), e.g.
    ``"manylinux2014_x86_64"``. Raises ValueError for a CPU Lambda does not offer."""
    name = (machine if machine is not None else _platform.machine()).lower()
    if name not in _ARCHES:
        raise ValueError(f"no Lambda architecture for CPU {name!r}")
    return f"manylinux2014_{_ARCHES[name]}"


def cache_key(lock_text: bytes, platform: str, python_version: str = PYTHON_VERSION) -> str:
    """16 hex digits naming a build: the lock file's bytes, the Python version, the platform."""
    blob = json.dumps(
        {
            "lock": hashlib.sha256(lock_text).hexdigest(),
            "py": python_version,
            "platform": platform,
            "format": LAYER_FORMAT,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def pip_command(lock: Path, target: Path, platform: str) -> list[str]:
    """The pip argv that installs ``lock`` into ``target`` for ``platform`` and the runtime's
    Python: binary wheels only, every file checked against the lock's hashes."""
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-compile",
        "--require-hashes",
        "--only-binary=:all:",
        "--platform",
        platform,
        "--implementation",
        "cp",
        "--python-version",
        PYTHON_VERSION,
        "--target",
        str(target),
        "-r",
        str(lock),
    ]


def build_layer(
    lock: Path = LOCK_FILE,
    build_root: Path = BUILD_ROOT,
    platform: str = PLATFORM,
) -> Path:
    """Install the pins of ``lock`` for ``platform``; return the layer's asset folder.

    The folder holds ``python/`` (the packages) and ``requirements.lock`` (a copy of the lock,
    so a deployed layer says what it ships). Idempotent and cached by ``cache_key``; PyPI is
    needed on the first build only. Raises FileNotFoundError when ``lock`` is missing,
    ``subprocess.CalledProcessError`` when pip fails (no wheel for the platform, a hash
    mismatch, a dependency the lock does not pin) or a module does not compile, and
    ``infra.cdk.bytecode.NoRuntimePythonError`` without the runtime's Python.
    """
    lock_text = lock.read_bytes()

    def fill(staging: Path) -> None:
        (staging / "python").mkdir()
        subprocess.run(pip_command(lock, staging / "python", platform), check=True)
        # Console scripts are of no use in a layer.
        shutil.rmtree(staging / "python" / "bin", ignore_errors=True)
        # pip compiled nothing (``--no-compile``: its cache files would be timestamp-based,
        # stale once zipped); the runtime's Python compiles them hash-based instead.
        compile_tree(staging / "python", LAYER_PREFIX)
        (staging / "requirements.lock").write_bytes(lock_text)

    return build_once(build_root, cache_key(lock_text, platform), fill)
