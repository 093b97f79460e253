"""Bots end to end: 8 bots play a whole English tournament against the local emulator.

Real sockets on 127.0.0.1 only; short clocks so a tournament takes seconds.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from infra.emulator import Emulator
from infra.players.bots import BotConfig, play_tournament

pytestmark = [pytest.mark.enable_socket, pytest.mark.e2e]


def test_eight_bots_finish_an_english_tournament_with_identical_places():
    async def scenario() -> list:
        async with Emulator(port=0, turn_seconds=2, intro_seconds=0.2, reconnect_seconds=5) as emu:
            return await play_tournament(
                emu.ws_url, 8, "en", config=BotConfig(think_ms=(0, 30)), seed=5, timeout=150
            )

    started = time.monotonic()
    results = asyncio.run(scenario())
    elapsed = time.monotonic() - started

    assert len(results) == 8
    unfinished = [(r.name, r.last_state, r.events) for r in results if not r.finished]
    assert not unfinished, f"bots still playing at the timeout: {unfinished}"
    ends = [r.tournament_end for r in results]
    assert all(end is not None for end in ends), [r.name for r in results if not r.tournament_end]
    tournament_ids = {end["tournament_id"] for end in ends}
    assert len(tournament_ids) == 1
    places = [[(s["player_id"], s["place"]) for s in end["places"]] for end in ends]
    assert all(p == places[0] for p in places)
    by_player = dict(places[0])
    assert sorted(by_player) == sorted(r.player_id for r in results)
    assert min(by_player.values()) == 1
    for r in results:
        assert r.rating is not None, f"{r.name} got no rating event"
        assert r.rating["place"] == by_player[r.player_id]
        assert r.duels, f"{r.name} played no duel"
    assert elapsed < 150
