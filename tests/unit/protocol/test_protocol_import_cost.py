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


def test_outbound_validators_are_built_lazily_one_event_at_a_time() -> None:
    code = (
        "import shared.protocol.outbound as m; "
        "built = lambda: sorted("
        "t for t, k in m.EVENT_BY_TYPE.items() if k.__pydantic_complete__); "
        "print(built()); "
        "m.dump_event(m.error_event('internal_error', None, None)); "
        "print(built())"
    )
    assert _run(code).splitlines() == ["[]", "['error']"]


def _string_annotations(model: type) -> dict[str, str]:
    return {
        name: value
        for klass in model.__mro__
        for name, value in vars(klass).get("__annotations__", {}).items()
        if isinstance(value, str)
    }


def test_model_annotations_are_evaluated_with_the_class_not_compiled_by_pydantic() -> None:
    """A string annotation (``from __future__ import annotations``, or a quoted forward
    reference) is compiled and evaluated by pydantic when the class is created: about 6 ms of
    ``shared.protocol.outbound``'s import on the cold path. Only the batch's recursive
    ``events`` stays a string (it names the union that contains the batch)."""
    from shared.protocol import outbound
    from shared.runtime.settings import Settings

    models = [
        *inbound.MODEL_BY_ACTION.values(),
        *outbound.EVENT_BY_TYPE.values(),
        outbound.Snapshot,
        outbound.DuelBoard,
        outbound.Row,
        outbound.Standing,
        outbound.LanguageInfo,
        outbound.Pair,
        outbound.PlayerView,
        Settings,
    ]
    strings = {m.__name__: _string_annotations(m) for m in models}
    assert {name: s for name, s in strings.items() if s} == {
        "BatchEvent": {"events": "list[OutboundEvent]"}
    }
