"""Modules imported on first use: ``lazy_module(name)`` is the module, executed on its first
attribute access (``importlib.util.LazyLoader``), or imported at once on a Python where that is
not thread-safe (before 3.12.3; ``DEFERS`` says which applies). Standard library only, so any
layer may use it. Why and the threads issue: ``shared/domain/RULINGS.md``, Design notes, "Cold
path".
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import Final

DEFERS: Final = sys.version_info >= (3, 12, 3)
"""Whether ``lazy_module`` defers running a module to its first use on this Python (see the
module docstring: ``LazyLoader`` is thread-safe from 3.12.3); False: it imports at once."""


def lazy_module(name: str) -> ModuleType:
    """Module ``name`` (already imported: that module; else registered in ``sys.modules`` and on
    its parent package now, executed on its first attribute access — ``from name import x`` and
    ``import name`` elsewhere then find it as usual). Raises ``ModuleNotFoundError`` when
    ``name`` does not exist (found now, not on first use); an error raised by the module's code
    comes on first use (at once where ``DEFERS`` is False)."""
    if not DEFERS:
        # import_module also waits for a module another thread is still running.
        return importlib.import_module(name)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return module
