"""Infrastructure: the code asset and the layer ship unchecked-hash bytecode compiled by the
runtime's Python (PEP 552), built the same from the same sources wherever the build runs, and
cached by the sources' content."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from infra.cdk import bytecode
from infra.cdk.bytecode import (
    CODE_PREFIX,
    UNCHECKED_HASH_FLAGS,
    NoRuntimePythonError,
    build_code_asset,
    cache_file_flags,
    compile_tree,
    tree_digest,
)
from infra.cdk.constructs.functions import CODE_EXCLUDE
from infra.cdk.runtime_version import LAMBDA_PYTHON_VERSION, runtime_python

SAME_PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}" == LAMBDA_PYTHON_VERSION


@pytest.fixture(scope="module")
def python() -> Path:
    found = runtime_python()
    if found is None:
        pytest.skip(f"no Python {LAMBDA_PYTHON_VERSION}")
    return found


def _sources(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(
        'NAMES = frozenset({"duel", "round", "bye", "lives"})\n\n'
        "def boom():\n    raise ValueError('line 4')\n"
    )
    return root


def test_bytecode_is_the_same_wherever_it_is_compiled(tmp_path, python):
    first = _sources(tmp_path / "one")
    second = _sources(tmp_path / "elsewhere" / "two")
    compile_tree(first, CODE_PREFIX, python)
    compile_tree(second, CODE_PREFIX, python)
    assert tree_digest(first) == tree_digest(second)
    pyc = (
        first / "pkg" / "__pycache__" / f"mod.cpython-{LAMBDA_PYTHON_VERSION.replace('.', '')}.pyc"
    )
    data = pyc.read_bytes()
    assert cache_file_flags(data) == UNCHECKED_HASH_FLAGS
    # the file name recorded is the deployed one, not this checkout's
    assert b"/var/task/pkg/mod.py" in data
    assert str(tmp_path).encode() not in data


@pytest.mark.skipif(not SAME_PYTHON, reason="reads the cache files with the runtime's Python")
def test_an_unchecked_hash_file_is_loaded_and_its_source_shows_in_tracebacks(tmp_path, python):
    root = _sources(tmp_path / "code")
    compile_tree(root, CODE_PREFIX, python)
    pyc = Path(importlib.util.cache_from_source(str(root / "pkg" / "mod.py")))
    data = pyc.read_bytes()
    assert data[:4] == importlib.util.MAGIC_NUMBER
    assert data[8:16] == importlib.util.source_hash((root / "pkg" / "mod.py").read_bytes())
    # a source edited after compiling is not looked at: unchecked (the package never changes)
    (root / "pkg" / "mod.py").write_text("raise SystemExit('source read')\n\n\n\n")
    run = subprocess.run(
        [
            str(python),
            "-I",
            "-S",
            "-c",
            f"import sys; sys.path[:0] = [{str(root)!r}]; import pkg.mod; pkg.mod.boom()",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "ValueError: line 4" in run.stderr
    assert str(root / "pkg" / "mod.py") in run.stderr  # the real path, set on load


def test_a_module_that_does_not_compile_fails_the_build(tmp_path, python):
    root = _sources(tmp_path / "code")
    (root / "pkg" / "bad.py").write_text("def broken(:\n")
    with pytest.raises(subprocess.CalledProcessError):
        compile_tree(root, CODE_PREFIX, python)


def test_no_runtime_python_fails_with_a_message(tmp_path, monkeypatch):
    monkeypatch.setattr(bytecode, "runtime_python", lambda: None)
    with pytest.raises(NoRuntimePythonError, match=LAMBDA_PYTHON_VERSION):
        compile_tree(_sources(tmp_path / "code"), CODE_PREFIX)


def _checkout(root: Path) -> Path:
    for package in ("functions", "shared", "wordlists"):
        (root / package / "__pycache__").mkdir(parents=True)
        (root / package / "__init__.py").write_text(f'"""{package}"""\n')
        # a checkout's own (timestamp) cache file must not ship
        (root / package / "__pycache__" / "__init__.cpython-313.pyc").write_bytes(b"stale")
    (root / "shared" / "tests").mkdir()
    (root / "shared" / "tests" / "test_x.py").write_text("")
    (root / "infra").mkdir()
    (root / "infra" / "app.py").write_text("")
    return root


def test_the_code_asset_is_built_once_per_content(tmp_path, python, monkeypatch):
    checkout = _checkout(tmp_path / "repo")
    compiled: list[Path] = []

    def counting(root: Path, prefix: str, python_: Path | None = None) -> None:
        compiled.append(root)
        compile_tree(root, prefix, python)

    monkeypatch.setattr(bytecode, "compile_tree", counting)
    built = build_code_asset(checkout, CODE_EXCLUDE, tmp_path / "cache")
    assert sorted(p.name for p in built.iterdir()) == ["functions", "shared", "wordlists"]
    assert not (built / "shared" / "tests").exists()
    for package in ("functions", "shared", "wordlists"):
        (pyc,) = (built / package / "__pycache__").iterdir()
        assert cache_file_flags(pyc.read_bytes()) == UNCHECKED_HASH_FLAGS
    assert build_code_asset(checkout, CODE_EXCLUDE, tmp_path / "cache") == built
    assert len(compiled) == 1  # reused: nothing compiled again
    (checkout / "shared" / "__init__.py").write_text('"""shared, edited"""\n')
    again = build_code_asset(checkout, CODE_EXCLUDE, tmp_path / "cache")
    assert again != built
    assert len(compiled) == 2
    # a copy of the same sources elsewhere builds the same asset, byte for byte
    shutil.copytree(checkout, tmp_path / "other-checkout")
    elsewhere = build_code_asset(tmp_path / "other-checkout", CODE_EXCLUDE, tmp_path / "cache2")
    assert elsewhere.name == again.name
    assert tree_digest(elsewhere) == tree_digest(again)
