"""Infrastructure: the lock file of the Lambda runtime's dependencies, ``infra/requirements.lock``.

What it pins: the closure of ``pyproject.toml``'s ``[project] dependencies`` — boto3,
aws-lambda-powertools[parser], pydantic and everything they pull in (botocore, s3transfer,
jmespath, urllib3, python-dateutil, six, pydantic-core, ...) — one ``name==version`` line each,
with the sha256 of *every* file the index has for that version (the sdist and every wheel:
manylinux x86_64 and aarch64 alike), resolved for the Lambda runtime's Python
(``infra.runtime_version.LAMBDA_PYTHON_VERSION``) on the layer's platform
(``infra.runtime_version.PLATFORM``).

Who installs it, with ``pip install --require-hashes``: ``.ci/setup``, before the dev extras, so
the tests run against these versions; and ``infra.layer.build_layer``, which ships the same
versions to Lambda (boto3 included). So what production runs is what the tests ran, and a rebuild
of an old commit ships that commit's versions.

Regenerate it (needs ``uv``, a dev extra, and the package index)::

    .venv/bin/python -m infra.lock                          # keep the pins; add new ones
    .venv/bin/python -m infra.lock --upgrade                # newest that pyproject.toml allows
    .venv/bin/python -m infra.lock --upgrade-package boto3  # one package (and what it needs)

then ``bash .ci/setup`` installs the new pins. Source: uv's ``uv pip compile`` reference
(``--generate-hashes``, ``--python-version``, ``--python-platform``, ``--upgrade-package``);
pip's "Secure installs" (hash-checking mode).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from infra.runtime_version import LAMBDA_PYTHON_VERSION, PLATFORM

REPO_ROOT = Path(__file__).resolve().parent.parent
LOCK_FILE = REPO_ROOT / "infra" / "requirements.lock"
PYPROJECT = REPO_ROOT / "pyproject.toml"
COMMAND = "python -m infra.lock"
"""What the lock's header names as the way to regenerate it."""
TARGET_LINE = "# target: Python {python} ({platform} wheels)"
"""The header line that records what the lock was resolved for (checked by the tests)."""

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)")


def normalize(name: str) -> str:
    """PEP 503 normalised project name (``Typing_Extensions`` -> ``typing-extensions``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def uv_platform(pip_platform: str) -> str:
    """pip's ``--platform`` tag -> uv's ``--python-platform`` name.

    ``"manylinux2014_aarch64"`` -> ``"aarch64-manylinux2014"``. Raises ValueError for a tag
    that is not ``manylinux*_<arch>``.
    """
    tag, sep, arch = pip_platform.partition("_")
    if not sep or not tag.startswith("manylinux") or arch not in ("x86_64", "aarch64"):
        raise ValueError(f"not a manylinux platform tag: {pip_platform!r}")
    return f"{arch}-{tag}"


def locked_versions(lock: Path = LOCK_FILE) -> dict[str, str]:
    """Normalised name -> pinned version of every ``name==version`` line in ``lock``.

    Raises FileNotFoundError when there is no lock, ValueError when it pins nothing.
    """
    pins: dict[str, str] = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        match = _PIN.match(line)
        if match:
            pins[normalize(match.group(1))] = match.group(2)
    if not pins:
        raise ValueError(f"{lock} pins no package")
    return pins


def compile_command(
    uv: str,
    output: Path = LOCK_FILE,
    *,
    platform: str | None = None,
    upgrade: bool = False,
    upgrade_packages: tuple[str, ...] = (),
) -> list[str]:
    """The ``uv pip compile`` argv that writes the lock for the Lambda runtime.

    ``platform`` is pip's tag (default ``infra.runtime_version.PLATFORM``). Without ``upgrade``
    the pins already in ``output`` are kept (uv reads them), so only what ``pyproject.toml``
    changed moves.
    """
    argv = [
        uv,
        "pip",
        "compile",
        str(PYPROJECT),
        "--quiet",
        "--generate-hashes",
        "--python-version",
        LAMBDA_PYTHON_VERSION,
        "--python-platform",
        uv_platform(platform or PLATFORM),
        "--custom-compile-command",
        COMMAND,
        "--output-file",
        str(output),
    ]
    if upgrade:
        argv.append("--upgrade")
    for name in upgrade_packages:
        argv += ["--upgrade-package", name]
    return argv


def _find_uv() -> str:
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found is None:
            raise SystemExit(
                "uv is needed: it is a dev extra (bash .ci/setup installs it)"
            ) from None
        return found


def _add_target_line(output: Path, platform: str) -> None:
    """Insert ``TARGET_LINE`` after uv's header (uv keeps no comment of ours on a rewrite)."""
    lines = output.read_text(encoding="utf-8").splitlines(keepends=True)
    target = TARGET_LINE.format(python=LAMBDA_PYTHON_VERSION, platform=platform) + "\n"
    lines = [line for line in lines if not line.startswith(TARGET_LINE.split("{", 1)[0])]
    at = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    output.write_text("".join([*lines[:at], target, *lines[at:]]), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Regenerate ``infra/requirements.lock`` (see the module docstring). Returns uv's exit code."""
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument("--upgrade", action="store_true", help="newest allowed versions")
    parser.add_argument(
        "--upgrade-package", action="append", default=[], metavar="NAME", help="upgrade one"
    )
    args = parser.parse_args(argv)
    command = compile_command(
        _find_uv(), upgrade=args.upgrade, upgrade_packages=tuple(args.upgrade_package)
    )
    code = subprocess.run(command, cwd=REPO_ROOT, check=False).returncode
    if code == 0:
        _add_target_line(LOCK_FILE, PLATFORM)
        pins = locked_versions()
        print(f"{LOCK_FILE.relative_to(REPO_ROOT)}: {len(pins)} packages", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
