"""End to end over real sockets: connections as clients live them.

- silent drop (ruling 14): the socket stays open, the client stops sending; after the
  heartbeat timeout the server treats the player as disconnected and closes the socket;
  after the reconnect window the player is out (``timeout``);
- no absent player seated (ruling 9): a lobby whose 8th seat fills while a holder is offline
  starts without them, once one more player came; the holder learns on resume;
- everyone sees the end (ruling 15): a leaver who stays connected receives ``tournament_end``;
- API Gateway's idle timeout and 2-hour cap (short here) close a socket: the client
  reconnects and resumes with its token.

Short clocks: turns of 2 s, and the heartbeat timeout given to the handlers as the
``HEARTBEAT_TIMEOUT_SECONDS`` setting.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from infra.emulator import Emulator
from infra.players.bots import BotResult
from tests.e2e.support import (
    EmulatorThread,
    Message,
    WsPlayer,
    bot_pool,
    check_final_standings,
    run_scenario,
)

pytestmark = [pytest.mark.enable_socket, pytest.mark.e2e]


def test_a_silent_player_is_disconnected_after_the_heartbeat_timeout_then_out() -> None:
    heartbeat, window = 6.0, 3.0

    async def scenario(emu: Emulator) -> tuple[WsPlayer, float, float, list[BotResult]]:
        pool = bot_pool(emu, 7, seed=21)
        human = WsPlayer(emu.ws_url, "quiet", seed=2, ping_every=0.5)
        await human.connect()
        await human.join()
        await human.expect(lambda m: m["type"] == "duel_start" and human.id in m["players"])
        human.silent = True  # the socket stays open; nothing is sent from now on
        went_quiet = time.monotonic()
        while human.close_code is None:
            await asyncio.sleep(0.05)
        closed_after = time.monotonic() - went_quiet
        results = await pool
        return human, closed_after, went_quiet, results

    with EmulatorThread(
        turn_seconds=2,
        intro_seconds=0.1,
        reconnect_seconds=window,
        env={"HEARTBEAT_TIMEOUT_SECONDS": str(heartbeat)},
    ) as emu:
        human, closed_after, _, results = run_scenario(scenario(emu))

    # closed by the server (DeleteConnection: 1000), not before the heartbeat timeout
    assert human.close_code == 1000
    assert closed_after >= heartbeat - 0.6  # the last ping was at most 0.5 s before
    ends = [r.tournament_end for r in results if r.tournament_end is not None]
    assert ends, "the bots finished the tournament"
    places = check_final_standings(ends, {r.player_id for r in results} | {human.id})
    mine = next(s for s in places if s["player_id"] == human.id)
    assert mine["left"] is True, "after the reconnect window: treated as having left"


def test_an_offline_holder_is_not_seated_when_the_eighth_seat_fills() -> None:
    async def scenario(emu: Emulator) -> tuple[WsPlayer, WsPlayer, Message, list[BotResult]]:
        away = WsPlayer(emu.ws_url, "away", seed=3)
        await away.connect()
        await away.join()
        await away.drop()  # closed the tab: the seat is held for the reconnect window ...
        pool = bot_pool(emu, 7, seed=22)  # ... but the 7 bots fill the lobby: away is released
        await asyncio.sleep(1.0)
        eighth = WsPlayer(emu.ws_url, "eighth", seed=4)
        await eighth.connect()
        await eighth.join()
        end = await eighth.play(lambda m: m["type"] == "tournament_end", timeout=180)
        session = await away.connect()
        results = await pool
        await eighth.drop()
        await away.drop()
        return away, eighth, {"end": end, "session": session}, results

    with EmulatorThread(turn_seconds=2, intro_seconds=0.1, reconnect_seconds=30) as emu:
        away, eighth, seen, results = run_scenario(scenario(emu))

    ids = {s["player_id"] for s in seen["end"]["places"]}
    assert away.id not in ids
    assert ids == {r.player_id for r in results} | {eighth.id}
    snapshot = seen["session"]["snapshot"]
    assert snapshot.get("lobby") is None, "no longer queued: the holder learns it on resume"
    assert snapshot.get("round") is None


def test_a_leaver_who_stays_connected_sees_how_the_tournament_ended() -> None:
    async def scenario(emu: Emulator) -> tuple[WsPlayer, list[BotResult]]:
        pool = bot_pool(emu, 7, seed=23)
        leaver = WsPlayer(emu.ws_url, "leaver", seed=5)
        await leaver.connect()
        await leaver.join()
        await leaver.expect(lambda m: m["type"] == "duel_start" and leaver.id in m["players"])
        await leaver.send("leave")
        end = await leaver.expect(lambda m: m["type"] == "tournament_end", timeout=180)
        assert end is not None
        results = await pool
        await leaver.drop()
        return leaver, results

    with EmulatorThread(turn_seconds=2, intro_seconds=0.1, reconnect_seconds=10) as emu:
        leaver, results = run_scenario(scenario(emu))
    [end] = leaver.seen("tournament_end")
    bot_end = next(r.tournament_end for r in results if r.tournament_end is not None)
    assert end["places"] == bot_end["places"]
    mine = next(s for s in end["places"] if s["player_id"] == leaver.id)
    assert mine["left"] is True


@pytest.mark.parametrize(
    ("limit", "option"),
    [("idle", {"idle_timeout_seconds": 1.5}), ("cap", {"max_connection_seconds": 2.5})],
)
def test_a_socket_closed_by_api_gateways_limits_resumes_in_the_lobby(
    limit: str, option: dict[str, float]
) -> None:
    async def scenario(emu: Emulator) -> tuple[int, Message]:
        # the idle case waits without pinging; the cap case pings (busy) and is closed anyway
        player = WsPlayer(emu.ws_url, limit, seed=6, ping_every=0.3 if limit == "cap" else 60)
        await player.connect()
        await player.join()
        while player.close_code is None:
            await asyncio.sleep(0.05)
        code = player.close_code
        session = await player.connect()
        await player.drop()
        return code, session

    with EmulatorThread(turn_seconds=2, intro_seconds=0.1, reconnect_seconds=30, **option) as emu:
        code, session = run_scenario(scenario(emu))
    assert code == 1001  # "Going away", as API Gateway closes them
    assert session["resumed"] is True
    assert session["snapshot"]["lobby"] is not None, "still queued after coming back"
