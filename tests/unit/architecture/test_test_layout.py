"""The test tree keeps its layout (``tests/README.md``): every top-level folder is described
there, and each folder's tests use only the substrate its row allows."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]
README = TESTS / "README.md"


def _described_folders() -> set[str]:
    rows = re.findall(r"^\| `([a-z0-9_]+)/", README.read_text(encoding="utf-8"), flags=re.M)
    return set(rows)


def _modules(folder: str) -> list[Path]:
    return sorted((TESTS / folder).rglob("test_*.py"))


def test_every_top_level_test_folder_is_described_in_the_readme() -> None:
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert folders == _described_folders()


def test_unit_tests_use_no_moto_no_sockets_and_no_harness() -> None:
    forbidden = re.compile(
        r"^\s*(import moto|from moto|import websockets|from websockets)|enable_socket"
        r"|def test_\w+\([^)]*\bbackend\b",
        flags=re.M,
    )
    offenders = [
        str(path.relative_to(TESTS))
        for path in _modules("unit")
        if path != Path(__file__).resolve() and forbidden.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_end_to_end_and_artifact_tests_carry_their_markers() -> None:
    unmarked = []
    for folder, marker in (("e2e", "e2e"), ("artifact", "artifact")):
        for path in _modules(folder):
            if f"pytest.mark.{marker}" not in path.read_text(encoding="utf-8"):
                unmarked.append(str(path.relative_to(TESTS)))
    for path in _modules("e2e"):
        text = path.read_text(encoding="utf-8")
        if "browser" in path.name and "pytest.mark.browser" not in text:
            unmarked.append(str(path.relative_to(TESTS)))
    assert unmarked == []
