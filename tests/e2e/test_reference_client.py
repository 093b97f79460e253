"""End to end: a player plays a whole tournament through the JavaScript reference client library
(``shared/protocol/client/wordle-client.js``) on Node, against the local runtime with 7 bots
(``bots=7``, as ``python -m infra.emulator --bots 7``). The Node script
(``tests/e2e/reference_client_plays.mjs``) joins, guesses through the promise API with the
turn's deadline, drops its socket once in round 2 (the library resumes), and prints what it saw.
Needs Node 20+ (its WebSocket behind ``--experimental-websocket``); without it the test fails."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.support import TIMINGS, EmulatorThread

pytestmark = [pytest.mark.enable_socket, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("reference_client_plays.mjs")


def test_a_node_player_plays_a_tournament_through_the_reference_client() -> None:
    node = shutil.which("node")
    assert node is not None, "Node 20+ is needed (.ci/setup)"
    started = time.monotonic()
    with EmulatorThread(turn_seconds=3, intro_seconds=1.0, reconnect_seconds=10, bots=7) as emu:
        run = subprocess.run(
            [
                node,
                "--experimental-websocket",
                str(SCRIPT),
                emu.ws_url,
                str(ROOT / "wordlists" / "en"),
            ],
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    TIMINGS["reference client (Node) tournament"] = time.monotonic() - started
    assert run.returncode == 0, run.stdout + run.stderr
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    print("\nreference client:", json.dumps(seen, sort_keys=True))

    assert seen["joined"] == "lobby", "join resolved with its reply, the lobby"
    assert seen["end"] is not None, "the tournament ended"
    assert seen["rating"] is not None, "and the player's rating came"
    assert seen["states"][:3] == ["connecting", "open", "session"]
    assert seen["resumed"] == 1, "the dropped socket was resumed, once, as the same player"
    assert any(s.startswith("reconnecting:") for s in seen["states"])
    assert seen["final_state"] == "closed"
    assert seen["guesses"] > 0
    replies = seen["replies"]
    answered = sum(n for key, n in replies.items() if key.startswith("guess->"))
    refused = sum(seen["refusals"].values())
    assert answered + refused == seen["guesses"], "every guess settled: its reply or an error"
    assert answered > 0
    assert seen["timeouts"] == 0, "no guess went unanswered"
    assert seen["batches_unfolded"] > 0, "batches arrived and were unfolded into events"
    assert seen["types"].get("pong", 0) > 0, "pings went out and their pongs came"
    # one machine, one clock: the pong offset is only the round trip's asymmetry
    assert seen["offsets"], "the clock offset was sampled"
    assert all(abs(offset) < 2000 for offset in seen["offsets"]), seen["offsets"]
    assert seen["types"].get("batch", 0) == 0, "no batch reaches the listeners whole"
