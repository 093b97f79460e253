"""Cross-references in the repository's prose resolve: dotted Python names, repo paths, rulings.

Three checks, each listing every broken reference as ``file:line: text``:

- **Dotted names** in double backticks, in Python docstrings and Markdown files (where single
  backticks count too), resolve: the longest importable module prefix is imported and the rest
  looked up as attributes (class annotations, dataclass and pydantic fields and ``self.<name>``
  assignments count as attributes). Only names that start with one of the repository's
  top-level packages (``shared``, ``functions``, ``infra``, ``wordlists``, ``tests``) or with a
  direct subpackage of ``shared`` or ``infra`` (``services.change.run`` means
  ``shared.services.change.run``, ``emulator.states`` means ``infra.emulator.states``) are checked:
  anything else in backticks (``cdk.json``, ``requestContext.requestTimeEpoch``,
  ``apigatewaymanagementapi``, ``json.dumps``) is a file name, a JSON path or an outside API.
  Names ending in a file suffix (``cdk.json``, ``cdk.out``: ``cdk`` is also a subpackage of
  ``infra``) and mutmut's generated mutant names (``..._mutmut_7``) are not checked either.
  A ``module:attr`` handler string (``functions.messages:guess``) is checked as a dotted name.
- **Repo paths** in double backticks (single ones too in Markdown) whose first segment is a
  top-level folder of the repository exist (a trailing ``/`` names a folder; ``:line`` suffixes
  are dropped; paths with ``*``, ``<`` or ``{`` are patterns, not checked).
- **Rulings** cited anywhere in .py, .md and .js files ("ruling 13", "Rulings 1-3",
  "rulings 9, 13 and 14") are headings of ``shared/domain/RULINGS.md`` (``### Ruling N: ...``).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
RULINGS = ROOT / "shared" / "domain" / "RULINGS.md"

PACKAGES = ("shared", "functions", "infra", "wordlists", "tests")
"""Top-level Python packages: a dotted name starting with one of these is checked."""

FOLDERS = (*PACKAGES, ".ci")
"""Top-level folders: a path starting with one of these is checked."""

SKIP_DIRS = {
    ".git",
    ".venv",
    "node_modules",
    "cdk.out",
    "mutants",
    "__pycache__",
    "build",
    "dist",
    ".wordlists-cache",
    ".hypothesis",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
}

FILE_SUFFIXES = frozenset(
    {"json", "out", "md", "py", "txt", "toml", "lock", "js", "mjs", "ts", "html", "yaml"}
)
"""Last segments that make a dotted text a file name (``cdk.json``, ``cdk.out``), not a name."""

DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?(?:\(\))?$")
PATH = re.compile(r"^[\w.\-]+/[\w.\-/]*(?::\d+)?$")
DOUBLE = re.compile(r"``([^`\n]+?)``")
SINGLE = re.compile(r"(?<!`)`([^`\n]+?)`(?!`)")
RULING_CITE = re.compile(
    r"\brulings?\s+(\d+(?:\s*[-–]\s*\d+)?(?:\s*(?:,\s*and|,|and|&|/)\s*\d+(?:\s*[-–]\s*\d+)?)*)",
    re.IGNORECASE,
)
RULING_HEADING = re.compile(r"^#{2,4}\s+Ruling\s+(\d+)\b", re.MULTILINE)


def _files(*suffixes: str) -> Iterator[Path]:
    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT)
        if any(part in SKIP_DIRS for part in relative.parts[:-1]):
            continue
        if path.is_file() and path.suffix in suffixes:
            yield path


def _docstrings(path: Path) -> Iterator[tuple[int, str]]:
    """(first line, text) of every module, class and function docstring of a Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [tree, *ast.walk(tree)]
    for node in nodes:
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if node.body and isinstance(node.body[0], ast.Expr):
            value = node.body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                yield node.body[0].lineno, value.value
    # Attribute docstrings: a string right after an assignment (``NAME = ...`` then """...""").
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for before, after in itertools.pairwise(body):
            if (
                isinstance(before, (ast.Assign, ast.AnnAssign))
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                yield after.lineno, after.value.value


def _spans(path: Path) -> Iterator[tuple[int, str]]:
    """(line, backticked text) of a file's prose: docstrings of .py files, all of a .md file."""
    if path.suffix == ".py":
        for first, text in _docstrings(path):
            for match in DOUBLE.finditer(text):
                yield first + text.count("\n", 0, match.start()), match.group(1).strip()
    else:
        text = path.read_text(encoding="utf-8")
        for pattern in (DOUBLE, SINGLE):
            for match in pattern.finditer(text):
                yield 1 + text.count("\n", 0, match.start()), match.group(1).strip()


def _subpackages() -> dict[str, str]:
    """Short first segments the prose uses -> their package (``services`` -> ``shared``)."""
    short: dict[str, str] = {}
    for parent in ("shared", "infra"):
        for child in (ROOT / parent).iterdir():
            if (child / "__init__.py").is_file():
                short[child.name] = f"{parent}.{child.name}"
    return short


SHORT = _subpackages()


def _checked_name(text: str) -> str | None:
    """The full dotted name a backticked text refers to, or None when it is not ours to check."""
    if not DOTTED.match(text):
        return None
    name = text.removesuffix("()").replace(":", ".")
    if name.rsplit(".", 1)[-1] in FILE_SUFFIXES or re.search(r"__mutmut_\d+$", name):
        return None
    first, _, rest = name.partition(".")
    if first in PACKAGES:
        return name
    if first in SHORT:
        return f"{SHORT[first]}.{rest}"
    return None


def _member(obj: Any, name: str) -> Any:
    """``getattr``, plus what a class declares without a class attribute (fields, ``self.x``)."""
    if hasattr(obj, name):
        return getattr(obj, name)
    if inspect.isclass(obj):
        for klass in obj.__mro__:
            if name in getattr(klass, "__annotations__", {}):
                return None
            if dataclasses.is_dataclass(klass) and name in {
                f.name for f in dataclasses.fields(klass)
            }:
                return None
            if name in getattr(klass, "model_fields", {}):
                return None
            try:
                source = inspect.getsource(klass)
            except (OSError, TypeError):
                continue
            if re.search(rf"\bself\.{re.escape(name)}\s*(?::[^=]+)?=", source):
                return None
    raise AttributeError(name)


def resolve(name: str) -> bool:
    """Whether a full dotted name names a module or an attribute reachable from one."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        try:
            for part in parts[cut:]:
                if obj is None:  # an annotated field: its value's type is not looked into
                    return True
                obj = _member(obj, part)
        except AttributeError:
            return False
        return True
    return False


def _checked_path(text: str) -> str | None:
    if any(char in text for char in "*<{ ") or not PATH.match(text):
        return None
    path = re.sub(r":\d+$", "", text)
    if path.split("/", 1)[0] not in FOLDERS:
        return None
    return path


def _cited(span: str) -> Iterator[int]:
    for part in re.split(r"\s*(?:,\s*and|,|and|&|/)\s*", span):
        bounds = [int(number) for number in re.split(r"\s*[-–]\s*", part) if number]
        if len(bounds) == 2:
            yield from range(bounds[0], bounds[1] + 1)
        else:
            yield from bounds


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def dotted_references() -> list[tuple[str, str]]:
    """(where, full dotted name) of every checked dotted name."""
    return [
        (_where(path, line), name)
        for path in _files(".py", ".md")
        for line, text in _spans(path)
        if (name := _checked_name(text)) is not None
    ]


def path_references() -> list[tuple[str, str]]:
    """(where, path) of every checked repo path."""
    return [
        (_where(path, line), repo_path)
        for path in _files(".py", ".md")
        for line, text in _spans(path)
        if (repo_path := _checked_path(text)) is not None
    ]


def ruling_references() -> list[tuple[str, int]]:
    """(where, number) of every cited ruling."""
    found = []
    for path in _files(".py", ".md", ".js"):
        if path == RULINGS:
            continue
        text = path.read_text(encoding="utf-8")
        for match in RULING_CITE.finditer(text):
            line = 1 + text.count("\n", 0, match.start())
            found.extend((_where(path, line), number) for number in _cited(match.group(1)))
    return found


def test_dotted_names_in_prose_resolve() -> None:
    references = dotted_references()
    assert len(references) > 100, "the scan found suspiciously few names"
    broken = sorted({f"{where}: {name}" for where, name in references if not resolve(name)})
    assert not broken, "names that exist nowhere:\n" + "\n".join(broken)


def test_repo_paths_in_prose_exist() -> None:
    references = path_references()
    assert len(references) > 50, "the scan found suspiciously few paths"
    broken = sorted(f"{where}: {path}" for where, path in references if not (ROOT / path).exists())
    assert not broken, "paths that exist nowhere:\n" + "\n".join(broken)


def test_cited_rulings_are_headings_of_the_rulings_document() -> None:
    headings = {int(number) for number in RULING_HEADING.findall(RULINGS.read_text("utf-8"))}
    assert headings == set(range(1, 19)), "RULINGS.md states rulings 1 to 18, one heading each"
    references = ruling_references()
    assert len(references) > 200, "the scan found suspiciously few citations"
    broken = sorted(f"{where}: ruling {n}" for where, n in references if n not in headings)
    assert not broken, "rulings cited but not stated:\n" + "\n".join(broken)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("shared.services.change.run", "shared.services.change.run"),
        ("services.change.run", "shared.services.change.run"),
        ("functions.messages:guess", "functions.messages.guess"),
        ("infra.cdk.json", None),
        ("requestContext.requestTimeEpoch", None),
        ("cdk.json", None),
        ("json.dumps", None),
    ],
)
def test_which_names_are_checked(text: str, expected: str | None) -> None:
    assert _checked_name(text) == expected


def test_ruling_citations_are_read_in_all_their_forms() -> None:
    text = "rulings 9, 13 and 14; Rulings 1-3; ruling 5"
    spans = [match.group(1) for match in RULING_CITE.finditer(text)]
    assert [list(_cited(span)) for span in spans] == [[9, 13, 14], [1, 2, 3], [5]]
