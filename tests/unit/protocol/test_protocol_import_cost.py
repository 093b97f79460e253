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
