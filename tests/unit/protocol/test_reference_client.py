"""Unit tests: the JavaScript reference client library (``shared/protocol/client/wordle-client.js``)
over a fake WebSocket and a manual clock, in Node's test runner
(``tests/unit/protocol/reference_client.test.mjs``): session and resume, batches, requests and
their retries, heartbeats, clock offset, gaps. Needs Node 20+; without it the test fails."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

CASES = Path(__file__).with_name("reference_client.test.mjs")


def test_the_reference_client_library_passes_its_node_tests() -> None:
    node = shutil.which("node")
    assert node is not None, "Node 20+ is needed (.ci/setup)"
    run = subprocess.run(
        [node, "--test", str(CASES)], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "# fail 0" in run.stdout
    assert "# pass 0" not in run.stdout
