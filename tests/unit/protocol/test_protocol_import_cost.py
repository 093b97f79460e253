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


def test_inbound_adapter_is_built_lazily() -> None:
    code = (
        "import shared.protocol.inbound as m; "
        "print(m._adapter.cache_info().currsize); "
        'm.parse_inbound(\'{"action":"ping"}\'); '
        "print(m._adapter.cache_info().currsize)"
    )
    assert _run(code).split() == ["0", "1"]
    assert inbound.ACTIONS
