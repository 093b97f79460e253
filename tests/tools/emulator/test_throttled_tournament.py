"""Local runtime: real tournaments played into the deployed limits scaled down (prod's, with
the default route at 20 messages/s, and ``guess`` at 2/s, burst 4, so that a fast
tournament's guesses overflow it). Throttled guesses are answered
with API Gateway's type-less "Too Many Requests" frame and reach no handler; the tournament
still ends, every player sees the same places, and nothing else is refused.

The bots do not retry a throttled guess (the turn then runs out: a skip); retries are the
client's part (issue 35, item 3)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest

from infra.emulator import Emulator
from infra.emulator.throttles import RouteThrottles, TwinLimits
from infra.limits import Throttle
from infra.players import bots
from infra.players.bots import BotConfig, play_tournament

pytestmark = [pytest.mark.enable_socket, pytest.mark.e2e]


def test_a_tournament_played_into_scaled_down_limits_ends_and_throttled_guesses_get_the_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frames: list[dict[str, Any]] = []
    handle = bots.Bot._handle

    async def spy(self: bots.Bot, m: dict[str, Any]) -> None:
        if "type" not in m:
            frames.append(m)
        await handle(self, m)

    monkeypatch.setattr(bots.Bot, "_handle", spy)
    # the account bucket left out: scaled with the rest it would also take $connect/session
    scaled = TwinLimits.for_stage("prod", stage_rate=20, account=None)
    assert scaled.throttles is not None
    stage = scaled.throttles.limits
    stage = replace(stage, routes={**stage.routes, "guess": Throttle(2, 4)})
    limits = replace(scaled, throttles=RouteThrottles(stage, account=None))

    async def scenario() -> list[bots.BotResult]:
        async with Emulator(
            port=0, turn_seconds=2, intro_seconds=0.2, reconnect_seconds=5, limits=limits
        ) as emu:
            return await play_tournament(
                emu.ws_url, 8, "en", config=BotConfig(think_ms=(0, 10)), seed=11, timeout=240
            )

    results = asyncio.run(scenario())
    counts = limits.counts()

    assert counts["throttled"].get("guess", 0) > 0, counts  # the limits did bind
    assert set(counts["throttled"]) == {"guess"}, counts  # nothing but guesses was refused
    assert counts["rejected"] == {}, counts
    assert len(frames) == counts["throttled"]["guess"]
    for frame in frames:
        assert set(frame) == {"message", "connectionId", "requestId"}, frame
        assert frame["message"] == "Too Many Requests"
    assert all(r.finished for r in results), [(r.name, r.last_state) for r in results]
    ends = [r.tournament_end for r in results]
    assert all(end is not None for end in ends)
    places = [json.dumps(end["places"], sort_keys=True) for end in ends if end is not None]
    assert len(set(places)) == 1
    # a throttled guess is retried with its request_id inside the turn (ruling 18): a retry
    # that lands after the skip is turn_over, one after the duel ended (the opponent's last
    # row landed first) duel_over; nothing else may be refused
    expected = {"not_a_word", "turn_over", "duel_over"}
    unexpected = [e for r in results for e in r.errors if e.get("code") not in expected]
    assert not unexpected, unexpected
