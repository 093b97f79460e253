"""Infrastructure: the functions ship compiled bytecode, so a cold start compiles nothing.

The code asset and the layer are compiled by the runtime's interpreter (``runtime_python``) into
``unchecked-hash`` cache files (PEP 552) beside their sources, named by their deployed paths
(``/var/task/...``, ``/opt/python/...``): the bytes, and so the asset's hash, depend only on the
sources and the interpreter version. Why: ``shared/domain/RULINGS.md``, "Shipped bytecode".
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from infra.cdk.runtime_version import LAMBDA_PYTHON_VERSION, runtime_python

REPO_ROOT = Path(__file__).resolve().parents[2]
CODE_BUILD_ROOT = REPO_ROOT / "build" / "lambda-code"
CODE_PREFIX = "/var/task"
"""Where Lambda unpacks the function's package (``LAMBDA_TASK_ROOT``)."""
LAYER_PREFIX = "/opt/python"
"""Where a layer's ``python/`` folder lands (on ``sys.path``)."""
CODE_FORMAT = 1
"""Part of the code asset's cache key: bump it when the way the asset is built changes."""
INVALIDATION_MODE = "unchecked-hash"
UNCHECKED_HASH_FLAGS = 0b01
"""PEP 552's flags word of an ``unchecked-hash`` cache file: bit 0 set (hash-based), bit 1
(check_source) clear."""


class NoRuntimePythonError(RuntimeError):
    """No interpreter of the Lambda runtime's version to compile the bytecode with."""


def compile_command(root: Path, prefix: str, python: Path) -> list[str]:
    """The argv compiling every ``.py`` under ``root`` into ``unchecked-hash`` cache files whose
    recorded file names start with ``prefix`` instead of ``root``. One process, files in
    ``compileall``'s order: the output is the same on every run."""
    return [
        str(python),
        "-m",
        "compileall",
        "-q",
        "--invalidation-mode",
        INVALIDATION_MODE,
        "-d",
        prefix,
        str(root),
    ]


def compile_tree(root: Path, prefix: str, python: Path | None = None) -> None:
    """Compile ``root`` in place (``compile_command``) with ``python``, by default the runtime's
    (``runtime_python``). Raises ``NoRuntimePythonError`` when there is none and
    ``subprocess.CalledProcessError`` when a module does not compile."""
    interpreter = python or runtime_python()
    if interpreter is None:
        raise NoRuntimePythonError(
            f"no Python {LAMBDA_PYTHON_VERSION} (the Lambda runtime, cdk.json) to compile the "
            f"functions' bytecode: install it, e.g. `pyenv install {LAMBDA_PYTHON_VERSION}`"
        )
    # A fixed hash seed: set and frozenset constants are written in iteration order.
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8"}
    subprocess.run(
        compile_command(root, prefix, interpreter),
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )


def tree_digest(root: Path) -> str:
    """sha256 over every file under ``root``: its relative POSIX path and its bytes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def build_code_asset(
    code_root: Path,
    exclude: Sequence[str],
    build_root: Path = CODE_BUILD_ROOT,
    python: Path | None = None,
) -> Path:
    """The functions' code asset folder: ``code_root`` filtered by ``exclude`` (gitignore-style,
    CDK's ``IgnoreMode.GIT``; it must drop ``__pycache__``) and compiled (``compile_tree``).

    Cached in ``build_root`` by the sources' content, the runtime's version and ``CODE_FORMAT``:
    a synth with unchanged sources compiles nothing. Raises as ``compile_tree``.
    """
    from aws_cdk import CopyOptions, FileSystem, IgnoreMode

    key = hashlib.sha256(
        "|".join(
            (
                FileSystem.fingerprint(
                    str(code_root), exclude=list(exclude), ignore_mode=IgnoreMode.GIT
                ),
                LAMBDA_PYTHON_VERSION,
                str(CODE_FORMAT),
            )
        ).encode()
    ).hexdigest()[:16]

    def fill(staging: Path) -> None:
        FileSystem.copy_directory(
            str(code_root),
            str(staging),
            CopyOptions(exclude=list(exclude), ignore_mode=IgnoreMode.GIT),
        )
        compile_tree(staging, CODE_PREFIX, python)

    return build_once(build_root, key, fill)


def build_once(build_root: Path, key: str, fill: Callable[[Path], None]) -> Path:
    """``build_root / key``, made once: ``fill`` builds it in a private staging folder that is
    then renamed into place, and a ``<key>.complete`` marker makes later calls return at once.
    A concurrent builder's result is kept; a build that died before its marker is replaced.
    Shared by the code asset and the layer (``infra.cdk.layer.build_layer``). Raises what ``fill``
    raises, leaving nothing behind."""
    target = build_root / key
    done = build_root / f"{key}.complete"
    if done.exists():
        return target
    build_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=build_root))
    staging.chmod(0o755)  # mkdtemp makes it 0700; Lambda's user must read the code
    try:
        fill(staging)
        if done.exists():  # another process built the same asset meanwhile: keep theirs
            return target
        shutil.rmtree(target, ignore_errors=True)  # a build that died before ``done``
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    done.touch()
    return target


def cache_file_flags(pyc: bytes) -> int:
    """The flags word of a cache file's header (PEP 552: magic, flags, then either mtime and
    size or the source hash)."""
    return int.from_bytes(pyc[4:8], "little")
