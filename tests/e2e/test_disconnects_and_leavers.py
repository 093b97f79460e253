"""End to end over real sockets: a dropped player resumes, a vanished one is out, a leaver loses.

Each scenario puts one or two hand-driven players (:class:`WsPlayer`) in an English lobby with
bots, scripts the moment that matters, and lets everybody play the tournament to its end; the
final standings and the rating items are then checked as in every e2e tournament.

- resume (ruling 9): drop mid-duel, come back with the token inside the reconnect window: a
  ``session`` with ``resumed: true`` and a snapshot holding the duel board; play on to the end;
- vanish: drop at the first duel and never return: after ``reconnect_seconds`` the player is out
  (``eliminated`` reason ``timeout``), the opponent wins the duel (``timeout``), last place;
- leave (ruling 3): ``leave`` mid-duel: the opponent wins (``left``), the leaver is eliminated
  (``left``) and placed below everybody eliminated in that round.
"""

from __future__ import annotations

import asyncio

import pytest

from infra.emulator import Emulator
from infra.players.bots import BotResult, DuelRecord
from tests.e2e.support import (
    EmulatorThread,
    Message,
    WsPlayer,
    bot_pool,
    check_final_standings,
    check_rating_items,
    rating_records,
    run_scenario,
)

pytestmark = [pytest.mark.enable_socket, pytest.mark.e2e]


def check_bots_finished(results: list[BotResult]) -> None:
    unfinished = [(r.name, r.last_state) for r in results if not r.finished]
    assert not unfinished, f"bots still playing at the timeout: {unfinished}"
    assert all(r.tournament_end is not None and r.rating is not None for r in results)


def first_duel_of(results: list[BotResult], player_id: str) -> DuelRecord:
    bot = next(r for r in results if r.player_id == player_id)
    return bot.duels[0]


def test_a_player_who_drops_mid_duel_resumes_with_the_board_and_plays_on() -> None:
    async def scenario(
        emu: Emulator,
    ) -> tuple[WsPlayer, Message, list[Message], str, list[BotResult]]:
        pool = bot_pool(emu, 7, seed=11)
        human = WsPlayer(emu.ws_url, "human", seed=1)
        try:
            await human.connect()
            await human.join()
            # Play until it is our turn again in a running duel (so the board has rows), then
            # drop instead of moving.
            await human.play(
                lambda m: (
                    m["type"] == "turn"
                    and m["duel_id"] == human.duel_id
                    and m["next_player"] == human.id
                )
            )
            duel_id, rows_seen = human.duel_id, list(human.rows)
            assert duel_id is not None
            await human.drop()
            await asyncio.sleep(0.3)
            session = await human.connect()
            await human.resume_from(session)
            await human.play(lambda m: m["type"] == "tournament_end")
        finally:
            await human.drop()
        return human, session, rows_seen, duel_id, await pool

    with EmulatorThread(turn_seconds=2, intro_seconds=0.1, reconnect_seconds=10) as emu:
        human, session, rows_seen, duel_id, results = run_scenario(scenario(emu))

        assert session["resumed"] is True
        assert session["player"]["id"] == human.id
        assert session["token"], "a resume rotates the token (ruling 11)"
        assert human.token == session["token"], "the client keeps the newest token"
        snapshot = session["snapshot"]
        assert snapshot is not None
        assert snapshot["duel"] is not None, "the snapshot holds the player's duel board"
        assert snapshot["duel"]["duel_id"] == duel_id
        assert human.id in snapshot["duel"]["players"]
        assert snapshot["duel"]["rows"][: len(rows_seen)] == rows_seen
        assert snapshot["round"] is not None
        assert snapshot["standings"] is not None

        check_bots_finished(results)
        ends = [r.tournament_end for r in results] + human.seen("tournament_end")
        assert len(human.seen("tournament_end")) == 1, "the resumed player sees the end"
        assert snapshot["round"]["tournament_id"] == ends[0]["tournament_id"]
        places = check_final_standings(ends, {r.player_id for r in results} | {human.id})
        mine = next(s for s in places if s["player_id"] == human.id)
        assert not mine["left"], "back inside the window: not treated as having left"
        [rating] = human.seen("rating")
        messages = {r.player_id: r.rating for r in results} | {human.id: rating}
        check_rating_items(emu, ends[0]["tournament_id"], messages, places)


def test_a_player_who_never_comes_back_is_out_after_the_reconnect_window() -> None:
    async def scenario(
        emu: Emulator,
    ) -> tuple[WsPlayer, WsPlayer, Message, list[BotResult], Message]:
        pool = bot_pool(emu, 6, seed=12)
        ghost = WsPlayer(emu.ws_url, "ghost", seed=2)
        watcher = WsPlayer(emu.ws_url, "watcher", seed=3)
        try:
            await ghost.connect()
            await watcher.connect()
            await ghost.join()
            await watcher.join()
            watching = asyncio.create_task(watcher.play(lambda m: m["type"] == "tournament_end"))
            start = await ghost.expect(
                lambda m: m["type"] == "duel_start" and ghost.id in m["players"]
            )
            await ghost.drop()
            await watching
            results = await pool
            # Back after the tournament: the player still exists, with no duel to resume.
            after = await ghost.connect()
        finally:
            await ghost.drop()
            await watcher.drop()
        return ghost, watcher, start, results, after

    with EmulatorThread(turn_seconds=3, intro_seconds=0.1, reconnect_seconds=1) as emu:
        ghost, watcher, start, results, after = run_scenario(scenario(emu))

        check_bots_finished(results)
        ends = [r.tournament_end for r in results] + watcher.seen("tournament_end")
        players = {r.player_id for r in results} | {ghost.id, watcher.id}
        places = check_final_standings(ends, players)
        tournament_id = ends[0]["tournament_id"]

        drops = [
            m
            for m in watcher.seen("player_status")
            if m["player_id"] == ghost.id and m["status"] == "disconnected"
        ]
        assert drops, "the others are told the player disconnected"
        assert drops[0]["reconnect_deadline_ms"] is not None
        out = [m for m in watcher.seen("eliminated") if m["player_id"] == ghost.id]
        assert [m["reason"] for m in out] == ["timeout"]
        assert out[0]["round"] == start["round"]

        opponent = start["opponent"]
        if opponent == watcher.id:
            [end] = [m for m in watcher.seen("duel_end") if m["duel_id"] == start["duel_id"]]
            assert (end["reason"], end["winner"]) == ("timeout", watcher.id)
        else:
            duel = first_duel_of(results, opponent)
            assert duel.duel_id == start["duel_id"]
            assert (duel.reason, duel.result) == ("timeout", "win")

        mine = next(s for s in places if s["player_id"] == ghost.id)
        assert mine["left"]
        assert mine["eliminated"]
        others = [s["place"] for s in places if s["player_id"] != ghost.id]
        assert mine["place"] > max(others), "out first, alone: last place"

        messages = {r.player_id: r.rating for r in results}
        messages[watcher.id] = watcher.seen("rating")[0]
        check_rating_items(emu, tournament_id, messages, places)
        ratings, _ = rating_records(emu, tournament_id)
        assert after["resumed"] is True
        assert after["player"]["rating"] == ratings[ghost.id]["rating_after"]
        snapshot = after["snapshot"] or {}
        assert snapshot.get("duel") is None, "no duel to resume"
        if snapshot.get("standings"):  # the last round of the ended tournament, as a spectator
            [line] = [s for s in snapshot["standings"]["players"] if s["player_id"] == ghost.id]
            assert (line["left"], line["place"]) == (True, mine["place"])


def test_leaving_mid_duel_gives_the_opponent_the_win_and_the_leaver_last_place() -> None:
    async def scenario(emu: Emulator) -> tuple[WsPlayer, str, dict[str, Message], list[BotResult]]:
        pool = bot_pool(emu, 7, seed=13)
        leaver = WsPlayer(emu.ws_url, "leaver", seed=4)
        try:
            await leaver.connect()
            await leaver.join()
            # Mid-duel, on the leaver's own turn: a row on the board, the duel running, and the
            # opponent unable to end it (solve) before the leave lands.
            await leaver.play(
                lambda m: (
                    m["type"] == "turn"
                    and m["duel_id"] == leaver.duel_id
                    and m["next_player"] == leaver.id
                )
            )
            duel_id = leaver.duel_id
            assert duel_id is not None
            await leaver.send("leave")
            # The leaver stops receiving the tournament's messages except its own
            # ``eliminated`` now and its ``rating``.
            wanted = {"eliminated", "rating"}
            got: dict[str, Message] = {}
            while wanted - set(got):
                m = await leaver.expect(
                    lambda m: (
                        (m["type"] == "eliminated" and m["player_id"] == leaver.id)
                        or m["type"] in ("rating", "error")
                    )
                )
                assert m["type"] != "error", f"leave refused: {m}"
                got[m["type"]] = m
            results = await pool
        finally:
            await leaver.drop()
        return leaver, duel_id, got, results

    with EmulatorThread(turn_seconds=2, intro_seconds=0.1, reconnect_seconds=10) as emu:
        leaver, duel_id, got, results = run_scenario(scenario(emu))

        duel_start = next(m for m in leaver.seen("duel_start") if m["duel_id"] == duel_id)
        opponent = duel_start["opponent"]
        assert got["eliminated"]["reason"] == "left"
        assert got["eliminated"]["round"] == duel_start["round"]
        for end in leaver.seen("duel_end"):
            if end["duel_id"] == duel_id:
                assert (end["reason"], end["winner"]) == ("left", opponent)

        # The opponent (a bot) saw duel_end with reason "left" and itself as the winner.
        duel = first_duel_of(results, opponent)
        assert duel.duel_id == duel_id
        assert (duel.reason, duel.result) == ("left", "win")

        check_bots_finished(results)
        ends = [r.tournament_end for r in results]
        places = check_final_standings(ends, {r.player_id for r in results} | {leaver.id})
        mine = next(s for s in places if s["player_id"] == leaver.id)
        assert mine["left"]
        same_round = [
            s["place"]
            for s in places
            if s["player_id"] != leaver.id and s["eliminated"] and s["place"] >= mine["place"]
        ]
        assert not same_round, "placed below everybody else"
        assert got["rating"]["place"] == mine["place"]
        messages = {r.player_id: r.rating for r in results} | {leaver.id: got["rating"]}
        check_rating_items(emu, ends[0]["tournament_id"], messages, places)
