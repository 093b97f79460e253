"""Infrastructure: ``infra/requirements.lock`` pins exactly the runtime dependency closure of
``pyproject.toml``, with hashes, for the Lambda runtime's Python and platform — and the test
environment runs those very versions (``.ci/setup`` installs the lock before the dev extras), so
the tests run against what the layer ships."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata

import pytest
from packaging.requirements import Requirement

from infra.lock import (
    COMMAND,
    LOCK_FILE,
    PYPROJECT,
    TARGET_LINE,
    compile_command,
    locked_versions,
    normalize,
    uv_platform,
)
from infra.runtime_version import LAMBDA_PYTHON_VERSION, PLATFORM


def _runtime_requirements() -> list[Requirement]:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    return [Requirement(r) for r in data["project"]["dependencies"]]


def _installed_closure(roots: list[Requirement]) -> set[str]:
    """Names of ``roots`` and everything they require, per the installed distributions'
    metadata, markers evaluated for this interpreter (extras followed)."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(r.name, frozenset(r.extras)) for r in roots]
    while todo:
        name, extras = todo.pop()
        if (normalize(name), extras) in seen:
            continue
        seen.add((normalize(name), extras))
        for raw in metadata.distribution(name).requires or []:
            req = Requirement(raw)
            envs = [{"extra": e} for e in extras] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((req.name, frozenset(req.extras)))
    return {name for name, _ in seen}


def test_every_runtime_dependency_of_pyproject_is_locked():
    pins = locked_versions()
    for req in _runtime_requirements():
        assert normalize(req.name) in pins, f"{req.name} is not in {LOCK_FILE.name}"
        assert req.specifier.contains(pins[normalize(req.name)]), (req, pins[normalize(req.name)])


def test_the_lock_pins_exactly_the_runtime_dependency_closure():
    closure = _installed_closure(_runtime_requirements())
    assert set(locked_versions()) == closure
    assert {"boto3", "botocore", "s3transfer", "pydantic-core"} <= closure  # shipped, not assumed


def test_every_locked_package_is_installed_at_the_locked_version():
    mismatched = {}
    for name, version in locked_versions().items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = None
        if installed != version:
            mismatched[name] = (version, installed)
    assert not mismatched, (
        f"locked vs installed {mismatched}: run `bash .ci/setup` (it installs {LOCK_FILE.name} "
        "first); if the dev extras moved a locked package, regenerate the lock"
    )


def test_every_pin_carries_sha256_hashes():
    text = LOCK_FILE.read_text(encoding="utf-8")
    hashed = re.findall(
        r"^([A-Za-z0-9][A-Za-z0-9._-]*)==\S+ \\\n(?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n)+",
        text,
        flags=re.MULTILINE,
    )
    assert sorted(normalize(n) for n in hashed) == sorted(locked_versions())


def test_the_lock_was_made_for_the_runtime_python_and_the_layer_platform():
    head = LOCK_FILE.read_text(encoding="utf-8").splitlines()[:5]
    assert f"#    {COMMAND}" in head  # the one command that regenerates it
    target = TARGET_LINE.format(python=LAMBDA_PYTHON_VERSION, platform=PLATFORM)
    assert target in head, f"{head}: regenerate with `{COMMAND}` after a runtime change"


def test_the_regenerating_command_asks_uv_for_the_runtime_and_every_hash():
    argv = compile_command("uv")
    assert argv[:3] == ["uv", "pip", "compile"]
    assert "--generate-hashes" in argv
    assert argv[argv.index("--python-version") + 1] == LAMBDA_PYTHON_VERSION
    assert argv[argv.index("--python-platform") + 1] == "aarch64-manylinux2014"
    assert argv[argv.index("--output-file") + 1] == str(LOCK_FILE)
    assert "--upgrade" not in argv  # keeps the pins unless asked
    upgrading = compile_command("uv", upgrade_packages=("boto3",))
    assert upgrading[upgrading.index("--upgrade-package") + 1] == "boto3"


def test_uv_platform_names():
    assert uv_platform("manylinux2014_aarch64") == "aarch64-manylinux2014"
    assert uv_platform("manylinux2014_x86_64") == "x86_64-manylinux2014"
    with pytest.raises(ValueError, match="win_amd64"):
        uv_platform("win_amd64")
