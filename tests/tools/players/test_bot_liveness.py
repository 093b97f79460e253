"""Bots: liveness (ping messages, ruling 14) and resuming after the server closed the socket.

Message-level tests on a fake socket, then end to end against the local emulator with API
Gateway's idle timeout and connection cap shortened to seconds: the bots' connections are closed
under them (1001) and they reconnect, resume with their token and finish the tournament.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from infra.emulator import Emulator
from infra.players.bots import PING_EVERY_SECONDS, Bot, BotConfig, play_tournament
from shared.protocol.limits import PING_INTERVAL_SECONDS

from .test_bot_messages import ME, SESSION, make_bot, run, settle


def resumed(snapshot: dict[str, Any]) -> dict[str, Any]:
    return SESSION | {"token": None, "resumed": True, "snapshot": snapshot}


def test_bots_ping_at_the_interval_clients_promise() -> None:
    assert BotConfig().ping_every_s == PING_EVERY_SECONDS
    assert 0 < PING_EVERY_SECONDS <= PING_INTERVAL_SECONDS


def test_keep_pinging_sends_ping_messages_at_the_configured_interval() -> None:
    async def scenario() -> None:
        bot, ws = make_bot(ping_every_s=0.05)
        pinger = asyncio.create_task(bot._keep_pinging())
        await asyncio.sleep(0.4)
        pinger.cancel()
        await asyncio.gather(pinger, return_exceptions=True)
        pings = ws.actions("ping")
        assert len(pings) >= 3
        assert len({p["request_id"] for p in pings}) == len(pings)

    run(scenario)


def test_a_bot_that_keeps_sending_other_messages_does_not_ping() -> None:
    """Ruling 14 asks for a message at least every 20 s, any message: a ping fills a gap."""

    async def scenario() -> None:
        bot, ws = make_bot(ping_every_s=0.2)
        await bot._send({"action": "session"})  # the connect's first message
        pinger = asyncio.create_task(bot._keep_pinging())
        for _ in range(8):  # a message every 0.05 s for 0.4 s: never a 0.2 s gap
            await bot._send({"action": "leave"})
            await asyncio.sleep(0.05)
        assert ws.actions("ping") == []
        await asyncio.sleep(0.45)  # then silence: pings come
        pinger.cancel()
        await asyncio.gather(pinger, return_exceptions=True)
        assert len(ws.actions("ping")) >= 1

    run(scenario)


def test_a_tournament_that_ended_while_away_completes_the_result_from_the_snapshot() -> None:
    end = {
        "type": "tournament_end",
        "tournament_id": "t-1",
        "places": [{"player_id": ME, "place": 1}],
    }
    rating = {"type": "rating", "tournament_id": "t-1", "place": 1, "change": 25}
    rating |= {"rating": 1025, "previous": 1000}

    async def scenario() -> None:
        bot, ws = make_bot()
        await bot._handle(SESSION)
        bot.state = "playing"
        await bot._handle(resumed({"tournament_end": end, "rating": rating}))
        await settle()
        assert bot.state == "idle"
        (result,) = bot.results
        assert result.tournament_end == end
        assert result.rating == rating
        assert result.resumes == 1
        assert bot.rating == 1025
        assert len(ws.actions("join")) == 1  # one game asked for: no new join

    run(scenario)


def test_a_released_lobby_seat_is_queued_for_again_not_counted_as_a_game() -> None:
    async def scenario() -> None:
        bot, ws = make_bot()
        await bot._handle(SESSION)
        assert bot.state == "queued"
        await bot._handle(resumed({"lobby": None, "round": None}))
        await settle()
        assert bot.results == []
        assert bot.state == "queued"
        assert len(ws.actions("join")) == 2

    run(scenario)


@pytest.mark.enable_socket
@pytest.mark.e2e
def test_bots_whose_connections_are_closed_by_the_gateway_resume_and_finish() -> None:
    """Every connection is capped at 4 s and closed after 2 s of silence, both with 1001 (a
    turn is 2 s: every bot is closed several times in a tournament; the cap leaves a busy CI
    core time to answer a resume before the next close)."""

    async def scenario() -> list[Any]:
        async with Emulator(
            port=0,
            turn_seconds=2,
            intro_seconds=0.2,
            reconnect_seconds=5,
            idle_timeout_seconds=2,
            max_connection_seconds=4,
            watchdog_seconds=None,
        ) as emu:
            return await play_tournament(
                emu.ws_url, 8, "en", config=BotConfig(think_ms=(0, 30)), seed=11, timeout=150
            )

    results = asyncio.run(scenario())
    unfinished = [(r.name, r.last_state, r.events) for r in results if not r.finished]
    assert not unfinished, f"bots still playing at the timeout: {unfinished}"
    assert sum(r.resumes for r in results) > 0, "no connection was closed under a bot"
    ended = [r.tournament_end for r in results if r.tournament_end is not None]
    assert ended, "no bot saw the tournament end"
    assert len({end["tournament_id"] for end in ended}) == 1
    places = [sorted((s["player_id"], s["place"]) for s in end["places"]) for end in ended]
    assert all(p == places[0] for p in places)
    assert sorted(p for p, _ in places[0]) == sorted(r.player_id for r in results)
    for r in results:
        assert r.duels, f"{r.name} played no duel"


@pytest.mark.enable_socket
@pytest.mark.e2e
def test_ping_messages_keep_a_waiting_bot_connected_past_the_idle_timeout() -> None:
    """Two bots wait in a lobby (idle limit 1 s): the one pinging every 0.2 s keeps its
    connection; the one pinging every 15 s is closed for idleness, resumes and waits on."""

    async def scenario() -> tuple[Bot, Bot]:
        async with Emulator(port=0, idle_timeout_seconds=1.0, watchdog_seconds=None) as emu:
            pinger = Bot(emu.ws_url, "en", BotConfig(ping_every_s=0.2), name="pinger", seed=1)
            silent = Bot(emu.ws_url, "en", BotConfig(), name="silent", seed=2)
            tasks = [asyncio.create_task(bot.run(1)) for bot in (pinger, silent)]
            await asyncio.sleep(3)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            return pinger, silent

    pinger, silent = asyncio.run(scenario())
    assert (pinger.connections, pinger.server_closes) == (1, 0)
    assert silent.server_closes >= 1
    assert silent.connections >= 2  # it came back (maybe closed again, stopped before resuming)
    assert pinger.state == silent.state == "queued"
    assert silent.current is not None
    assert silent.current.resumes >= 1


def test_a_pong_without_a_request_id_answers_the_oldest_ping() -> None:
    """API Gateway makes the pong (a MOCK route); should it come without the ping's request
    id, the bot still takes its clock offset from it, matching the oldest ping in flight."""

    async def scenario() -> None:
        bot, ws = make_bot()
        await bot._ping()
        await bot._ping()
        first, second = (p["request_id"] for p in ws.actions("ping"))
        server_now = time.time() * 1000 + 60_000  # a server clock one minute ahead
        await bot._handle({"type": "pong", "server_time_ms": server_now, "request_id": None})
        assert list(bot._ping_sent) == [second]
        assert 55_000 < bot.offset_ms < 65_000
        assert first not in bot._ping_sent

    run(scenario)
