"""Every deployed handler is a name its module defines in its source: a ``module:attr`` target of
``functions.routes`` (``ROUTES``, ``TIMERS``) is assigned or defined at the module's top level,
so grep, an editor and mypy find it (no handler made only at run time), and the message
functions' action table holds named functions, not lambdas."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from functions.routes import ROUTES, TIMERS

ROOT = Path(__file__).resolve().parents[3]
TARGETS = sorted(set(ROUTES.values()) | set(TIMERS.values()))


def _top_level_names(module: str) -> set[str]:
    tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


@pytest.mark.parametrize("target", TARGETS)
def test_each_handler_is_a_name_in_its_modules_source(target: str) -> None:
    module, _, attr = target.partition(":")
    assert attr in _top_level_names(module), target
    assert callable(getattr(importlib.import_module(module), attr)), target


def test_the_action_table_holds_named_functions() -> None:
    from functions.messages import ACTIONS

    for action, entry in ACTIONS.items():
        assert entry.call.__name__ != "<lambda>", action
        assert entry.call.__name__ == f"_{action}", action
