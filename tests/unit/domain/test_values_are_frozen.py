"""Unit tests: every value of the domain is immutable (STYLE.md: frozen dataclasses).

Transitions return new values; a caller holding an old state (a service between its load and
its conditional write, a test comparing before and after) can rely on it never changing.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil

import pytest

import shared.domain


def _domain_dataclasses() -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(shared.domain.__path__):
        module = importlib.import_module(f"shared.domain.{info.name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__:
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[name] for name in sorted(found)]


DATACLASSES = _domain_dataclasses()


def test_the_domain_has_its_values() -> None:
    names = {cls.__name__ for cls in DATACLASSES}
    assert {"Duel", "Row", "Tournament", "PlayerState", "Dealer", "Lobby", "Party"} <= names


@pytest.mark.parametrize("cls", DATACLASSES, ids=lambda cls: cls.__qualname__)
def test_every_domain_dataclass_is_frozen(cls: type) -> None:
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen, f"{cls.__qualname__} is not frozen"


def test_assigning_to_a_domain_value_raises() -> None:
    from tests.unit.domain.helpers import start

    t, _, _ = start(2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.round_no = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.duels[0].rows = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.players[0].lives = 9  # type: ignore[misc]
    assert t.round_no == 1
