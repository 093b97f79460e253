"""Infrastructure: the dependency layer installs the lock file (boto3 included) for the
functions' runtime and platform, or for this machine's CPU; builds are cached by the lock's
content, the Python version and the platform."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from infra.cdk.constructs.functions import ARCHITECTURE, RUNTIME
from infra.cdk.layer import (
    PYTHON_VERSION,
    build_layer,
    cache_key,
    host_platform,
    pip_command,
)
from infra.cdk.lock import LOCK_FILE
from infra.cdk.runtime_version import PLATFORM


def test_wheels_target_the_functions_runtime_and_architecture():
    assert RUNTIME.name == f"python{PYTHON_VERSION}"
    assert ARCHITECTURE.name == "arm64"
    assert PLATFORM.endswith("_aarch64")


def test_pip_installs_the_lock_with_hashes_for_the_platform(tmp_path):
    argv = pip_command(LOCK_FILE, tmp_path, "manylinux2014_x86_64")
    assert argv[argv.index("-r") + 1] == str(LOCK_FILE)
    assert "--require-hashes" in argv
    assert "--only-binary=:all:" in argv
    assert argv[argv.index("--platform") + 1] == "manylinux2014_x86_64"
    assert argv[argv.index("--python-version") + 1] == PYTHON_VERSION
    assert argv[argv.index("--implementation") + 1] == "cp"
    assert argv[argv.index("--target") + 1] == str(tmp_path)


@pytest.mark.parametrize(
    ("machine", "tag"),
    [
        ("x86_64", "manylinux2014_x86_64"),
        ("AMD64", "manylinux2014_x86_64"),
        ("aarch64", "manylinux2014_aarch64"),
        ("arm64", "manylinux2014_aarch64"),
    ],
)
def test_host_platform_names_this_cpu_as_a_manylinux_tag(machine, tag):
    assert host_platform(machine) == tag


def test_host_platform_refuses_a_cpu_lambda_does_not_offer():
    with pytest.raises(ValueError, match="ppc64le"):
        host_platform("ppc64le")


def test_the_cache_key_changes_with_the_lock_the_platform_and_the_python():
    lock = LOCK_FILE.read_bytes()
    key = cache_key(lock, PLATFORM)
    assert cache_key(lock, PLATFORM) == key  # stable
    assert cache_key(lock.replace(b"boto3==", b"boto3===", 1), PLATFORM) != key
    assert cache_key(lock + b"\n# a comment\n", PLATFORM) != key
    assert cache_key(lock, "manylinux2014_x86_64") != key
    assert cache_key(lock, PLATFORM, python_version="3.12") != key


def _fake_pip(installed: list[list[str]]):
    """Stands in for pip: records the argv and leaves packages in --target as pip would."""

    def run(argv, check):
        installed.append(argv)
        target = Path(argv[argv.index("--target") + 1])
        for name in ("boto3", "botocore", "s3transfer", "pydantic", "bin"):
            (target / name).mkdir()
        return subprocess.CompletedProcess(argv, 0)

    return run


def _no_compile(compiled: list[tuple[Path, str]] | None = None):
    """Stands in for ``infra.cdk.bytecode.compile_tree``: records the folder and its prefix."""

    def run(root: Path, prefix: str, python: Path | None = None) -> None:
        if compiled is not None:
            compiled.append((root, prefix))

    return run


@pytest.fixture(autouse=True)
def _fake_compile(monkeypatch):
    monkeypatch.setattr("infra.cdk.layer.compile_tree", _no_compile())


def test_a_build_ships_boto3_and_the_lock_and_drops_console_scripts(tmp_path, monkeypatch):
    lock = tmp_path / "requirements.lock"
    lock.write_text("example==1.0 \\\n    --hash=sha256:00\n")
    runs: list[list[str]] = []
    compiled: list[tuple[Path, str]] = []
    monkeypatch.setattr("infra.cdk.layer.subprocess.run", _fake_pip(runs))
    monkeypatch.setattr("infra.cdk.layer.compile_tree", _no_compile(compiled))
    built = build_layer(lock, build_root=tmp_path / "cache", platform="manylinux2014_x86_64")
    assert built.name == cache_key(lock.read_bytes(), "manylinux2014_x86_64")
    assert sorted(p.name for p in (built / "python").iterdir()) == [
        "boto3",
        "botocore",
        "pydantic",
        "s3transfer",
    ]
    assert (built / "requirements.lock").read_bytes() == lock.read_bytes()
    assert runs[0][runs[0].index("-r") + 1] == str(lock)
    assert "--no-compile" in runs[0]  # pip's cache files would be timestamp-based
    # the packages are compiled once, in the staging folder, as they will sit in Lambda
    assert [(root.name, prefix) for root, prefix in compiled] == [("python", "/opt/python")]


def test_a_finished_build_is_reused_and_a_new_lock_builds_anew(tmp_path, monkeypatch):
    lock = tmp_path / "requirements.lock"
    lock.write_text("example==1.0 \\\n    --hash=sha256:00\n")
    runs: list[list[str]] = []
    monkeypatch.setattr("infra.cdk.layer.subprocess.run", _fake_pip(runs))
    cache = tmp_path / "cache"
    first = build_layer(lock, build_root=cache)
    assert build_layer(lock, build_root=cache) == first
    assert len(runs) == 1  # the second call ran no pip
    lock.write_text("example==1.1 \\\n    --hash=sha256:11\n")
    second = build_layer(lock, build_root=cache)
    assert second != first
    assert len(runs) == 2
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [first.name, f"{first.name}.complete", second.name, f"{second.name}.complete"]
    )  # no staging folder is left behind


def test_a_failed_pip_leaves_no_layer(tmp_path, monkeypatch):
    lock = tmp_path / "requirements.lock"
    lock.write_text("example==1.0 \\\n    --hash=sha256:00\n")

    def failing(argv, check):
        raise subprocess.CalledProcessError(1, argv)

    monkeypatch.setattr("infra.cdk.layer.subprocess.run", failing)
    with pytest.raises(subprocess.CalledProcessError):
        build_layer(lock, build_root=tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []
