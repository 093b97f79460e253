"""Infrastructure: ``infra/requirements.lock`` pins exactly the runtime dependency closure of
``pyproject.toml``, with hashes, for the Lambda runtime's Python and platform — and the test
environment runs those very versions (``.ci/setup`` installs the lock before the dev extras), so
the tests run against what the layer ships. ``infra/requirements-dev.lock`` pins the dev extras
too, with hashes, for every supported Python (universal), at the runtime lock's versions for the
packages both pin, and ``.ci/setup`` installs it instead of resolving the dev extras afresh."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement

from infra.cdk.lock import (
    COMMAND,
    DEV_EXTRA,
    DEV_LOCK_FILE,
    DEV_TARGET_LINE,
    LOCK_FILE,
    PYPROJECT,
    REPO_ROOT,
    TARGET_LINE,
    Pin,
    compile_command,
    dev_compile_command,
    locked_pins,
    locked_versions,
    minimum_python,
    normalize,
    uv_platform,
)
from infra.cdk.runtime_version import LAMBDA_PYTHON_VERSION, PLATFORM


def _runtime_requirements() -> list[Requirement]:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    return [Requirement(r) for r in data["project"]["dependencies"]]


def _dev_requirements() -> list[Requirement]:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    return [Requirement(r) for r in data["project"]["optional-dependencies"][DEV_EXTRA]]


def _applies_here(pin: Pin) -> bool:
    """Whether pip installs ``pin`` on this interpreter (its marker, if any, holds)."""
    return not pin.marker or Marker(pin.marker).evaluate()


def _hashed_names(lock: Path) -> list[str]:
    """Normalised names of the pins in ``lock`` followed by at least one sha256 hash line."""
    hashed = re.findall(
        r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==\S+(?: ; [^\\\n]+)? \\\n"
        r"(?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n)+",
        lock.read_text(encoding="utf-8"),
        flags=re.MULTILINE,
    )
    return [normalize(n) for n in hashed]


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
    assert sorted(_hashed_names(LOCK_FILE)) == sorted(locked_versions())


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


def test_every_dev_pin_carries_sha256_hashes():
    pins = locked_pins(DEV_LOCK_FILE)
    assert sorted(_hashed_names(DEV_LOCK_FILE)) == sorted(pin.name for pin in pins)
    assert any(pin.marker for pin in pins)  # the marker lines are among those counted


def test_the_dev_lock_pins_every_dev_extra_and_runtime_dependency_within_its_specifier():
    pins = locked_pins(DEV_LOCK_FILE)
    for req in [*_runtime_requirements(), *_dev_requirements()]:
        versions = [pin.version for pin in pins if pin.name == normalize(req.name)]
        assert versions, f"{req.name} is not in {DEV_LOCK_FILE.name}: run `{COMMAND}`"
        assert all(req.specifier.contains(v) for v in versions), (req, versions)


def test_the_dev_lock_has_the_runtime_locks_version_of_every_package_both_pin():
    runtime = locked_versions(LOCK_FILE)
    dev = locked_pins(DEV_LOCK_FILE)
    assert {pin.name for pin in dev} >= set(runtime)  # the dev lock is a superset
    moved = {
        pin.name: (runtime[pin.name], pin.version)
        for pin in dev
        if pin.name in runtime and (pin.version != runtime[pin.name] or pin.marker)
    }
    assert not moved, f"runtime lock vs dev lock {moved}: regenerate both with `{COMMAND}`"


def test_the_dev_lock_pins_exactly_the_dev_closure_on_this_python():
    here = {pin.name for pin in locked_pins(DEV_LOCK_FILE) if _applies_here(pin)}
    closure = _installed_closure([*_runtime_requirements(), *_dev_requirements()])
    assert here == closure
    assert {"moto", "pytest", "mypy", "ruff", "aws-cdk-lib", "uv", "setuptools"} <= closure


def test_every_dev_locked_package_for_this_python_is_installed_at_the_locked_version():
    mismatched = {}
    for pin in filter(_applies_here, locked_pins(DEV_LOCK_FILE)):
        try:
            installed = metadata.version(pin.name)
        except metadata.PackageNotFoundError:
            installed = None
        if installed != pin.version:
            mismatched[pin.name] = (pin.version, installed)
    assert not mismatched, f"locked vs installed {mismatched}: run `bash .ci/setup`"


def test_the_dev_lock_is_universal_with_one_pin_per_name_and_environment():
    pins = locked_pins(DEV_LOCK_FILE)
    head = DEV_LOCK_FILE.read_text(encoding="utf-8").splitlines()[:5]
    assert f"#    {COMMAND}" in head
    assert DEV_TARGET_LINE.format(lock=LOCK_FILE.name) in head
    for python in ("3.11", "3.12", "3.13"):
        for platform in ("linux", "darwin", "win32"):
            env = {
                "python_version": python,
                "python_full_version": f"{python}.0",
                "sys_platform": platform,
            }
            names = [pin.name for pin in pins if not pin.marker or Marker(pin.marker).evaluate(env)]
            assert len(names) == len(set(names)), (python, platform)  # pip takes one line each
            assert {"moto", "mypy"} <= set(names)


def test_the_dev_lock_command_is_universal_constrained_by_the_runtime_lock():
    argv = dev_compile_command("uv")
    assert argv[:4] == ["uv", "pip", "compile", str(PYPROJECT)]
    assert argv[argv.index("--extra") + 1] == DEV_EXTRA
    assert {"--universal", "--generate-hashes"} <= set(argv)
    assert "--python-platform" not in argv  # every platform, not the layer's
    assert argv[argv.index("--python-version") + 1] == "3.11"  # requires-python: the oldest
    assert argv[argv.index("--constraint") + 1] == str(LOCK_FILE)
    assert argv[argv.index("--output-file") + 1] == str(DEV_LOCK_FILE)
    assert "--upgrade" not in argv
    upgrading = dev_compile_command("uv", upgrade=True, upgrade_packages=("moto",))
    assert "--upgrade" in upgrading
    assert upgrading[upgrading.index("--upgrade-package") + 1] == "moto"


def test_setup_installs_both_locks_with_hashes_and_reinstalls_when_one_changes():
    setup = (REPO_ROOT / ".ci" / "setup").read_text(encoding="utf-8")
    assert f"dev_lock={DEV_LOCK_FILE.relative_to(REPO_ROOT)}\n" in setup
    assert f"lock={LOCK_FILE.relative_to(REPO_ROOT)}\n" in setup
    assert 'inputs+=("$lock")' in setup  # the inputs of the stamp that decides a reinstall
    assert 'inputs+=("$dev_lock")' in setup
    assert '--require-hashes -r "$dev_lock"' in setup
    assert "--no-deps --no-build-isolation -e ." in setup  # built with the locked setuptools


def test_minimum_python_is_read_from_requires_python(tmp_path):
    assert minimum_python() == "3.11"
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nrequires-python = ">=3.12"\n', encoding="utf-8")
    assert minimum_python(pyproject) == "3.12"
    pyproject.write_text('[project]\nrequires-python = "~=3.11"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"~=3\.11"):
        minimum_python(pyproject)


def test_uv_platform_names():
    assert uv_platform("manylinux2014_aarch64") == "aarch64-manylinux2014"
    assert uv_platform("manylinux2014_x86_64") == "x86_64-manylinux2014"
    with pytest.raises(ValueError, match="win_amd64"):
        uv_platform("win_amd64")


def test_lock_lines_parse_with_and_without_markers(tmp_path):
    lock = tmp_path / "x.lock"
    lock.write_text(
        "# header\n"
        "Networkx==3.6.1 ; python_full_version < '3.12' \\\n    --hash=sha256:" + "a" * 64 + "\n"
        "networkx==3.7 ; python_full_version >= '3.12' \\\n    --hash=sha256:" + "b" * 64 + "\n"
        "moto[server]==5.2.5 \\\n    --hash=sha256:" + "c" * 64 + "\n    # via x\n",
        encoding="utf-8",
    )
    assert locked_pins(lock) == [
        Pin("networkx", "3.6.1", "python_full_version < '3.12'"),
        Pin("networkx", "3.7", "python_full_version >= '3.12'"),
        Pin("moto", "5.2.5", ""),
    ]
    assert sorted(_hashed_names(lock)) == ["moto", "networkx", "networkx"]
    (tmp_path / "empty.lock").write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(ValueError, match="pins no package"):
        locked_pins(tmp_path / "empty.lock")
