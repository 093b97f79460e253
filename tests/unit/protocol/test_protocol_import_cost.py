"""Unit tests: importing the protocol stays cheap (handlers' cold start)."""

from __future__ import annotations

import subprocess
import sys

import shared.protocol
from shared.protocol import inbound


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return result.stdout.strip()


def test_package_import_does_not_load_pydantic() -> None:
    out = _run("import sys, shared.protocol; print('pydantic' in sys.modules)")
    assert out == "False"
    assert shared.protocol.PROTOCOL_VERSION == 1


def test_errors_module_is_stdlib_only() -> None:
    out = _run("import sys, shared.protocol.errors; print('pydantic' in sys.modules)")
    assert out == "False"


def test_inbound_validators_are_built_lazily_one_action_at_a_time() -> None:
    code = (
        "import shared.protocol.inbound as m; "
        "built = lambda: sorted("
        "a for a, k in m.MODEL_BY_ACTION.items() if k.__pydantic_complete__); "
        "print(built()); "
        'm.parse_inbound(\'{"action":"ping"}\'); '
        "print(built())"
    )
    assert _run(code).splitlines() == ["[]", "['ping']"]
    assert inbound.ACTIONS


def test_outbound_events_are_built_and_dumped_without_pydantic() -> None:
    """A function that pushes events never imports pydantic (cold start): the events
    are stdlib dataclasses written with ``json``; parsing them (clients, tests) loads it."""
    code = (
        "import sys, shared.protocol.outbound as m, shared.protocol.framing as f; "
        "e = m.TurnEvent(tournament_id='t', duel_id='d', turn=1, row=m.Row(player='p', "
        "skipped=True), next_player='q', deadline_ms=5); "
        "text = f.dump_event(e); "
        "print('pydantic' in sys.modules); "
        "print(m.parse_outbound(text) == e, 'pydantic' in sys.modules)"
    )
    assert _run(code).splitlines() == ["False", "True True"]


def _string_annotations(model: type) -> dict[str, str]:
    return {
        name: value
        for klass in model.__mro__
        for name, value in vars(klass).get("__annotations__", {}).items()
        if isinstance(value, str)
    }


def test_model_annotations_are_evaluated_with_the_class_not_compiled_by_pydantic() -> None:
    """A string annotation (``from __future__ import annotations``, or a quoted forward
    reference) of a pydantic model is compiled and evaluated by pydantic when the class is
    created: milliseconds of the messages function's cold start for each module."""
    strings = {m.__name__: _string_annotations(m) for m in inbound.MODEL_BY_ACTION.values()}
    assert {name: s for name, s in strings.items() if s} == {}
