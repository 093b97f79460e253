"""The layers of the README, read from the source: every ``import`` in ``shared/`` and
``functions/`` — function-local ones included — is collected with ``ast`` and checked.

- no import cycle among the modules (a strongly connected component of more than one module,
  or a module importing itself);
- the domain imports only the standard library and itself (never boto3, pydantic or ``os``);
- services import no adapter, no runtime and no entrypoint; only adapters (and the
  composition root) import boto3/botocore;
- the in-memory store (``shared.adapters.memory``) never reaches boto3/botocore, not even
  through another module it imports;
- the services' use cases (``sessions``, ``matchmaking``, ``parties``, ``duels``,
  ``deadlines``) never import each other; building blocks import no use case;
- ``wordlists/`` is data: its package imports nothing from ``shared`` (the loader is the
  lexicon adapter's), only its offline build script (never deployed) uses the language rules.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("shared", "functions")
USE_CASES = {
    f"shared.services.{m}" for m in ("sessions", "matchmaking", "parties", "duels", "deadlines")
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str) -> set[str]:
    """Every module ``path`` imports, anywhere in it (absolute names; ``from a import b``
    counts ``a.b`` when that is a module, else ``a``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}
    return {
        name: {i for i in _imports(path, name) if i in files and i != name}
        | ({name} if name in _imports(path, name) and path.name != "__init__.py" else set())
        for name, path in files.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with a cycle (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(sorted(component))
    return found


GRAPH = _graph()


def test_the_checker_finds_a_cycle_and_a_function_local_import(tmp_path: Path) -> None:
    """The checks below can fail: a lazy import inside a function closes a cycle here."""
    module = tmp_path / "b.py"
    module.write_text("def later():\n    from . import a\n    import shared.services.c\n")
    assert _imports(module, "pkg.b") == {"pkg", "pkg.a", "shared.services.c"}
    graph = {"pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}, "pkg.d": {"pkg.a"}, "pkg.e": {"pkg.e"}}
    assert _cycles(graph) == [["pkg.a", "pkg.b"], ["pkg.e"]]


def test_no_import_cycle_in_shared_or_functions() -> None:
    assert len(GRAPH) > 40  # the walk saw the code base
    assert _cycles(GRAPH) == []


def test_the_domain_imports_only_the_standard_library() -> None:
    for module, path in _files("shared.domain"):
        for imported in _imports(path, module):
            top = imported.split(".")[0]
            if imported.startswith("shared.domain") or top == "__future__":
                continue
            assert top in sys.stdlib_module_names, (module, imported)
            assert top != "os", (module, imported)


@pytest.mark.parametrize(
    "layer", ["shared.services", "shared.protocol"], ids=["services", "protocol"]
)
def test_inner_layers_import_no_adapter_runtime_or_entrypoint(layer: str) -> None:
    banned = ("shared.adapters", "shared.runtime", "functions", "boto3", "botocore")
    for module, path in _files(layer):
        for imported in _imports(path, module):
            assert not imported.startswith(banned), (module, imported)


def test_the_in_memory_store_never_reaches_the_aws_sdk() -> None:
    paths = dict(_files("shared"))
    seen, todo = set(), ["shared.adapters.memory"]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for imported in _imports(paths[module], module):
            assert not imported.startswith(("boto3", "botocore")), (module, imported)
        todo += sorted(GRAPH[module])
    assert {"shared.adapters.memory", "shared.services.model"} <= seen  # the walk saw them


def test_use_cases_never_import_each_other_and_blocks_import_no_use_case() -> None:
    for module in GRAPH:
        if not module.startswith("shared.services."):
            continue
        bad = GRAPH[module] & (USE_CASES - {module})
        assert not bad, (module, sorted(bad))


WORDLISTS_BUILD = "wordlists.build"
"""The offline generator (``python -m wordlists.build``): it applies the domain's language and
offensive-word rules, and is left out of the code asset (``infra.cdk.constructs.functions``)."""


def test_the_word_lists_import_nothing_from_shared() -> None:
    files = _files("wordlists")
    assert "wordlists" in dict(files)  # the walk saw the package
    for module, path in files:
        if module == WORDLISTS_BUILD:
            continue
        for imported in _imports(path, module):
            assert imported.split(".")[0] != "shared", (module, imported)


def _files(prefix: str) -> list[tuple[str, Path]]:
    base = ROOT.joinpath(*prefix.split("."))
    return [(_module_name(p), p) for p in sorted(base.rglob("*.py"))]
