"""End to end over real WebSockets (issue 38): a player plays a whole tournament against 7 bots,
then reads it back through the four read-only actions, fed by the local runtime's stream poller
(history appears eventually, never inside the commit): the history entry, the profile with its
new rating point, the rating board with the player's exact rank and neighbours, the weekly
board of the tournament's language, and the replay with every row the player saw played. Bad
reads (unknown tournament, forged cursor, unknown language) each get their one error.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Iterator
from typing import Any

import pytest

from infra.emulator import Emulator
from tests.e2e.support import EmulatorThread, WsPlayer, bot_pool, run_scenario

pytestmark = [pytest.mark.enable_socket, pytest.mark.e2e]

Message = dict[str, Any]


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with EmulatorThread(turn_seconds=2, intro_seconds=0.1, reconnect_seconds=10) as emu:
        yield emu


async def ask(me: WsPlayer, action: str, **fields: Any) -> Message:
    """Send one request; its one answer (reply or error, matched by ``request_id``)."""
    request_id = await me.send(action, **fields)
    return await me.expect(lambda m: m.get("request_id") == request_id, timeout=20)


async def eventually(me: WsPlayer, action: str, done: Any, **fields: Any) -> Message:
    """Ask until ``done(reply)`` holds (the stream's lag), at most 30 s."""
    deadline = time.monotonic() + 30
    while True:
        reply = await ask(me, action, **fields)
        assert reply["type"] == action, reply
        if done(reply) or time.monotonic() > deadline:
            return reply
        await asyncio.sleep(0.5)


async def play_then_read(emu: Emulator) -> dict[str, Any]:
    me = WsPlayer(emu.ws_url, "me", seed=5)
    await me.connect()
    bots = bot_pool(emu, 7, seed=17)
    await me.join()
    end = await me.play(lambda m: m["type"] == "tournament_end", timeout=150)
    await asyncio.wait_for(bots, 160)
    (rating,) = me.seen("rating")
    out: dict[str, Any] = {"me": me.id, "end": end, "rating": rating}
    tid = end["tournament_id"]
    out["history"] = await eventually(me, "history", lambda r: bool(r["tournaments"]))
    out["profile"] = await ask(me, "profile")
    out["board"] = await eventually(
        me, "leaderboard", lambda r: len(r["entries"]) == 8, board="rating"
    )
    out["weekly"] = await eventually(
        me,
        "leaderboard",
        lambda r: len(r["entries"]) == 8,
        board="weekly",
        language="en",
    )
    out["replay"] = await ask(me, "replay", tournament_id=tid)
    mine = {m["duel_id"] for m in me.log if m["type"] == "duel_start"}
    out["turns"] = [m for m in me.log if m["type"] == "turn" and m["duel_id"] in mine]
    out["refusals"] = [
        await ask(me, "replay", tournament_id="0123456789abcdef"),
        await ask(me, "history", cursor="bm90LWEtY3Vyc29y"),
        await ask(me, "leaderboard", board="weekly", language="xx"),
    ]
    await me.drop()
    return out


def test_a_played_tournament_shows_in_history_profile_boards_and_replay(
    emulator: Emulator,
) -> None:
    seen = run_scenario(play_then_read(emulator))
    me, end, rating = seen["me"], seen["end"], seen["rating"]
    tid = end["tournament_id"]
    standings = {s["player_id"]: s for s in end["places"]}
    assert len(standings) == 8
    after = {pid: 1000 + s["rating_change"] for pid, s in standings.items()}
    assert after[me] == rating["rating"]  # fresh players start at 1000 (ruling 1)

    # history: one entry, this tournament, as the tournament ended it
    (entry,) = seen["history"]["tournaments"]
    assert entry["tournament_id"] == tid
    assert entry["language"] == "en"
    assert entry["place"] == rating["place"]
    assert (entry["rating_before"], entry["rating_after"]) == (1000, rating["rating"])
    opponents = {o["player_id"] for o in entry["opponents"]}
    assert opponents
    assert opponents <= set(standings) - {me}
    assert seen["history"]["next_cursor"] is None

    # profile: the new rating and its point on the chart
    profile = seen["profile"]["player"]
    assert profile["player_id"] == me
    assert profile["rating"] == rating["rating"]
    assert profile["tournaments"] == 1
    assert profile["wins"] == (1 if rating["place"] == 1 else 0)
    assert profile["podiums"] == (1 if rating["place"] <= 3 else 0)
    assert profile["average_place"] == rating["place"]
    assert profile["languages"] == [
        {"language": "en", "tournaments": 1, "average_place": rating["place"]}
    ]
    assert profile["best_rating"] == rating["rating"]  # the best after a tournament
    (point,) = profile["rating_history"]
    assert (point["tournament_id"], point["rating_after"]) == (tid, rating["rating"])

    # rating board: everyone of this (fresh) runtime, my exact rank, my neighbours
    board = seen["board"]
    scores = [e["score"] for e in board["entries"]]
    assert scores == sorted(scores, reverse=True)
    assert {e["player_id"]: e["score"] for e in board["entries"]} == after
    higher = sum(1 for score in after.values() if score > after[me])
    assert board["me"]["rank"] == 1 + higher
    assert board["me"]["score"] == rating["rating"]
    assert me in [e["player_id"] for e in board["around"]]

    # weekly board of English: points gained this week, the week starting Monday 00:00 UTC
    weekly = seen["weekly"]
    assert {e["player_id"]: e["score"] for e in weekly["entries"]} == {
        pid: s["rating_change"] for pid, s in standings.items()
    }
    today = dt.datetime.now(dt.UTC).date()
    assert weekly["week"] == (today - dt.timedelta(days=today.weekday())).isoformat()
    assert weekly["me"]["score"] == rating["change"]

    # replay: every row of my own duels as I was sent it, in order, and the places
    record = seen["replay"]["record"]
    assert record["tournament_id"] == tid
    assert {p["player_id"]: p["place"] for p in record["players"]} == {
        pid: s["place"] for pid, s in standings.items()
    }
    rows = {d["duel_id"]: d["rows"] for r in record["rounds"] for d in r["duels"]}
    assert [r["round_no"] for r in record["rounds"]] == list(range(1, len(record["rounds"]) + 1))
    sent: dict[str, list[Message]] = {}
    for turn in seen["turns"]:
        sent.setdefault(turn["duel_id"], []).append(turn["row"])
    assert sent, "I played duels"
    for duel_id, turn_rows in sent.items():
        recorded = rows[duel_id]
        assert [r["skipped"] for r in recorded] == [r.get("skipped", False) for r in turn_rows]
        assert [r["marks"] for r in recorded] == [r.get("marks") for r in turn_rows]

    codes = [m.get("code") for m in seen["refusals"]]
    assert codes == ["not_found", "invalid_cursor", "unknown_language"]
