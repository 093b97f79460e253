"""Infrastructure: the lock files, ``infra/requirements.lock`` (the Lambda runtime's dependencies)
and ``infra/requirements-dev.lock`` (the dev extras: what the tests, the local runtime and the
checks run with).

Both pin every package of their closure with the sha256 of every file the index has for it;
the runtime lock for the Lambda runtime's Python and platform
(``infra.cdk.runtime_version``), the dev lock universally and constrained by the runtime lock.
``.ci/setup`` and ``infra.cdk.layer.build_layer`` install them with ``--require-hashes``. What
each pins and why: ``shared/domain/RULINGS.md``, design notes, "The lock files". Regenerate both
(needs ``uv``, a dev extra, and the package index), the runtime lock first::

    .venv/bin/python -m infra.cdk.lock  # keep the pins; add new ones
    .venv/bin/python -m infra.cdk.lock --upgrade  # newest that pyproject.toml allows
    .venv/bin/python -m infra.cdk.lock --upgrade-package boto3  # one package (and what it needs)
    .venv/bin/python -m infra.cdk.lock --upgrade-package moto  # dev lock only

then ``bash .ci/setup`` installs the new pins.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import NamedTuple

from infra.cdk.runtime_version import LAMBDA_PYTHON_VERSION, PLATFORM

REPO_ROOT = Path(__file__).resolve().parents[2]
LOCK_FILE = REPO_ROOT / "infra" / "requirements.lock"
DEV_LOCK_FILE = REPO_ROOT / "infra" / "requirements-dev.lock"
PYPROJECT = REPO_ROOT / "pyproject.toml"
DEV_EXTRA = "dev"
"""The ``[project.optional-dependencies]`` extra the dev lock pins (with the runtime closure)."""
COMMAND = "python -m infra.cdk.lock"
"""What the locks' headers name as the way to regenerate them."""
TARGET_LINE = "# target: Python {python} ({platform} wheels)"
"""The header line that records what the runtime lock was resolved for (checked by the tests)."""
DEV_TARGET_LINE = "# target: universal (every requires-python, any platform), constrained by {lock}"
"""The dev lock's header line: resolved with ``--universal``, constrained by the runtime lock."""

_PIN = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)\s*(?:;\s*([^\\]*?))?\s*\\?$"
)


class Pin(NamedTuple):
    """One ``name==version [; marker]`` line of a lock: the normalised ``name``, the ``version``,
    and the environment ``marker`` (PEP 508 text, ``""`` when the line applies everywhere)."""

    name: str
    version: str
    marker: str


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


def locked_pins(lock: Path) -> list[Pin]:
    """Every ``name==version [; marker]`` line of ``lock``, in file order (the dev lock may pin
    one name twice, under exclusive markers).

    Raises FileNotFoundError when there is no lock, ValueError when it pins nothing.
    """
    pins = []
    for line in lock.read_text(encoding="utf-8").splitlines():
        match = _PIN.match(line)
        if match:
            pins.append(Pin(normalize(match.group(1)), match.group(2), match.group(3) or ""))
    if not pins:
        raise ValueError(f"{lock} pins no package")
    return pins


def locked_versions(lock: Path = LOCK_FILE) -> dict[str, str]:
    """Normalised name -> pinned version of every ``name==version`` line in ``lock`` (the
    runtime lock by default; for a name pinned under several markers, the last line's).

    Raises FileNotFoundError when there is no lock, ValueError when it pins nothing.
    """
    return {pin.name: pin.version for pin in locked_pins(lock)}


def compile_command(
    uv: str,
    output: Path = LOCK_FILE,
    *,
    platform: str | None = None,
    upgrade: bool = False,
    upgrade_packages: tuple[str, ...] = (),
) -> list[str]:
    """The ``uv pip compile`` argv that writes the lock for the Lambda runtime.

    ``platform`` is pip's tag (default ``infra.cdk.runtime_version.PLATFORM``). Without ``upgrade``
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
    return argv + _upgrade_args(upgrade, upgrade_packages)


def minimum_python(pyproject: Path = PYPROJECT) -> str:
    """``"MAJOR.MINOR"`` from ``pyproject``'s ``requires-python`` (``">=3.11"`` -> ``"3.11"``):
    the oldest Python the dev lock is resolved for. Raises ValueError for any other form."""
    spec = str(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["requires-python"])
    match = re.fullmatch(r">=\s*(3\.\d+)", spec.strip())
    if match is None:
        raise ValueError(f"requires-python must look like '>=3.11', not {spec!r}")
    return match.group(1)


def dev_compile_command(
    uv: str,
    output: Path = DEV_LOCK_FILE,
    *,
    constraints: Path = LOCK_FILE,
    upgrade: bool = False,
    upgrade_packages: tuple[str, ...] = (),
) -> list[str]:
    """The ``uv pip compile`` argv that writes the dev lock: the runtime dependencies and the
    ``DEV_EXTRA`` extra, ``--universal`` (every platform, every Python from
    :func:`minimum_python` up: given explicitly, as uv would otherwise start from the interpreter
    it finds; markers where they differ), constrained by the runtime lock ``constraints``.

    Without ``upgrade`` the pins already in ``output`` are kept, as for :func:`compile_command`;
    with it, the runtime lock's pins still hold (regenerate that one first).
    """
    argv = [
        uv,
        "pip",
        "compile",
        str(PYPROJECT),
        "--extra",
        DEV_EXTRA,
        "--universal",
        "--python-version",
        minimum_python(),
        "--quiet",
        "--generate-hashes",
        "--constraint",
        str(constraints),
        "--custom-compile-command",
        COMMAND,
        "--output-file",
        str(output),
    ]
    return argv + _upgrade_args(upgrade, upgrade_packages)


def _upgrade_args(upgrade: bool, upgrade_packages: tuple[str, ...]) -> list[str]:
    argv = ["--upgrade"] if upgrade else []
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


def _add_target_line(output: Path, target: str) -> None:
    """Insert the header line ``target`` after uv's header, in place of any older ``# target:``
    line (uv keeps no comment of ours on a rewrite)."""
    lines = output.read_text(encoding="utf-8").splitlines(keepends=True)
    prefix = "# target: "
    lines = [line for line in lines if not line.startswith(prefix)]
    at = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    output.write_text("".join([*lines[:at], target + "\n", *lines[at:]]), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Regenerate ``infra/requirements.lock``, then ``infra/requirements-dev.lock`` against it
    (see the module docstring). Returns uv's exit code (the first that is not 0)."""
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--upgrade",
        action="store_true",
        help="move every package to the newest version pyproject.toml allows (without it, "
        "versions already locked are kept)",
    )
    parser.add_argument(
        "--upgrade-package",
        action="append",
        default=[],
        metavar="NAME",
        help="move only this package (and what it needs) to its newest allowed version; "
        "may be given more than once",
    )
    args = parser.parse_args(argv)
    uv = _find_uv()
    upgrade, upgrade_packages = args.upgrade, tuple(args.upgrade_package)
    locks = (
        (
            compile_command(uv, upgrade=upgrade, upgrade_packages=upgrade_packages),
            LOCK_FILE,
            TARGET_LINE.format(python=LAMBDA_PYTHON_VERSION, platform=PLATFORM),
        ),
        (
            dev_compile_command(uv, upgrade=upgrade, upgrade_packages=upgrade_packages),
            DEV_LOCK_FILE,
            DEV_TARGET_LINE.format(lock=LOCK_FILE.name),
        ),
    )
    for command, output, target in locks:
        code = subprocess.run(command, cwd=REPO_ROOT, check=False).returncode
        if code != 0:
            return code
        _add_target_line(output, target)
        count = len({pin.name for pin in locked_pins(output)})
        print(f"{output.relative_to(REPO_ROOT)}: {count} packages", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
