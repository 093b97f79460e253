"""Bots: what a bot sends back for recorded event sequences (no network: a fake socket)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from infra.players.bots import SESSION_RETRIES, Bot, BotConfig
from infra.players.solver import is_consistent, pattern, vocabulary

ME, OPP, OTHER = "p-me", "p-opp", "p-other"
SECRET = tuple("crane")


class RecordingSocket:
    """Stands in for the client connection: records what the bot sends."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.closed = False

    async def send(self, text: str) -> None:
        self.sent.append(json.loads(text))

    async def close(self) -> None:
        self.closed = True

    def actions(self, action: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["action"] == action]


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), timeout=20))


def make_bot(**config: Any) -> tuple[Bot, RecordingSocket]:
    bot = Bot("ws://unused", "en", BotConfig(think_ms=(0, 0), **config), name="t", seed=1)
    bot.games_left = 1
    ws = RecordingSocket()
    bot._ws = ws  # type: ignore[assignment]
    return bot, ws


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def far() -> int:
    return int(time.time() * 1000) + 30_000


SESSION = {
    "type": "session",
    "request_id": "se-1",
    "player": {"id": ME, "nickname": "Me", "rating": 1000},
    "token": "secret",
    "resumed": False,
    "protocol": 1,
    "snapshot": None,
}


def duel_start(next_player: str, players: tuple[str, str] = (ME, OPP)) -> dict[str, Any]:
    return {
        "type": "duel_start",
        "request_id": None,
        "tournament_id": "t-1",
        "round": 1,
        "duel_id": "d-1" if ME in players else "d-2",
        "players": list(players),
        "opponent": OPP if ME in players else None,
        "length": 5,
        "first": next_player,
        "turn": 1,
        "next_player": next_player,
        "deadline_ms": far(),
    }


def turn(n: int, player: str, word: str, next_player: str | None) -> dict[str, Any]:
    tiles = tuple(word)
    return {
        "type": "turn",
        "request_id": None,
        "tournament_id": "t-1",
        "duel_id": "d-1",
        "turn": n,
        "row": {
            "player": player,
            "word": word,
            "tiles": list(tiles),
            "marks": list(pattern(tiles, SECRET)),
            "skipped": False,
        },
        "next_player": next_player,
        "deadline_ms": far() if next_player else None,
    }


def test_session_stores_the_token_and_joins_the_language():
    async def scenario() -> None:
        bot, ws = make_bot()
        await bot._handle(SESSION)
        assert bot.token == "secret"
        assert bot.player_id == ME
        assert ws.actions("join") == [{"action": "join", "language": "en", "request_id": "jo-1"}]

    run(scenario)


def test_moving_first_sends_a_valid_guess_of_the_duels_length():
    async def scenario() -> None:
        bot, ws = make_bot(strength=1.0)
        await bot._handle(SESSION)
        await bot._handle(duel_start(ME))
        await settle()
        (guess,) = ws.actions("guess")
        assert guess["duel_id"] == "d-1"
        assert tuple(guess["word"]) in vocabulary("en", 5).allowed_set

    run(scenario)


def test_opponents_move_first_means_waiting():
    async def scenario() -> None:
        bot, ws = make_bot()
        await bot._handle(SESSION)
        await bot._handle(duel_start(OPP))
        await settle()
        assert ws.actions("guess") == []

    run(scenario)


def test_spectated_duels_are_never_played():
    async def scenario() -> None:
        bot, ws = make_bot()
        await bot._handle(SESSION)
        await bot._handle(duel_start(OPP, players=(OPP, OTHER)))
        await settle()
        assert ws.actions("guess") == []
        assert bot._duel is None

    run(scenario)


def test_the_next_guess_fits_both_duelists_rows():
    async def scenario() -> None:
        bot, ws = make_bot(strength=1.0)
        await bot._handle(SESSION)
        await bot._handle(duel_start(OPP))
        await bot._handle(turn(1, OPP, "slate", ME))
        await settle()
        await bot._handle(turn(2, ME, ws.actions("guess")[-1]["word"], OPP))
        await bot._handle(turn(3, OPP, "brick", ME))
        await settle()
        rows = [(tuple(w), pattern(tuple(w), SECRET)) for w in ("slate", "brick")]
        last = tuple(ws.actions("guess")[-1]["word"])
        assert is_consistent(last, rows)

    run(scenario)


def test_a_refused_word_is_replaced_by_another():
    async def scenario() -> None:
        bot, ws = make_bot(strength=1.0)
        await bot._handle(SESSION)
        await bot._handle(duel_start(ME))
        await settle()
        first = ws.actions("guess")[0]
        await bot._handle(
            {
                "type": "error",
                "request_id": first["request_id"],
                "code": "not_in_word_list",
                "message": "The guess is not in the word list.",
            }
        )
        await settle()
        second = ws.actions("guess")[1]
        assert second["word"] != first["word"]
        assert second["duel_id"] == "d-1"

    run(scenario)


def test_invalid_rate_sends_a_word_outside_the_list_first():
    async def scenario() -> None:
        bot, ws = make_bot(invalid_rate=1.0)
        await bot._handle(SESSION)
        await bot._handle(duel_start(ME))
        await settle()
        (bad,) = ws.actions("guess")
        assert tuple(bad["word"]) not in vocabulary("en", 5).allowed_set
        await bot._handle(
            {
                "type": "error",
                "request_id": bad["request_id"],
                "code": "not_in_word_list",
                "message": "x",
            }
        )
        await settle()
        good = ws.actions("guess")[1]
        assert tuple(good["word"]) in vocabulary("en", 5).allowed_set

    run(scenario)


def test_timeout_rate_plays_nothing():
    async def scenario() -> None:
        bot, ws = make_bot(timeout_rate=1.0)
        await bot._handle(SESSION)
        await bot._handle(duel_start(ME))
        await settle()
        assert ws.actions("guess") == []

    run(scenario)


def test_leave_rate_leaves_and_the_rating_ends_the_tournament():
    async def scenario() -> None:
        bot, ws = make_bot(leave_rate=1.0)
        await bot._handle(SESSION)
        await bot._handle(duel_start(ME))
        await settle()
        assert len(ws.actions("leave")) == 1
        assert ws.actions("guess") == []
        await bot._handle(
            {
                "type": "rating",
                "request_id": None,
                "tournament_id": "t-1",
                "place": 8,
                "change": -25,
                "rating": 975,
            }
        )
        (result,) = bot.results
        assert result.left
        assert result.place == 8
        assert bot._done()

    run(scenario)


def test_disconnect_rate_hangs_up_to_resume():
    async def scenario() -> None:
        bot, ws = make_bot(disconnect_rate=1.0)
        await bot._handle(SESSION)
        await bot._handle(duel_start(ME))
        await settle()
        assert ws.closed
        assert bot._dropping

    run(scenario)


def test_resume_snapshot_restores_the_board_and_plays_on_our_turn():
    async def scenario() -> None:
        bot, ws = make_bot(strength=1.0)
        await bot._handle(SESSION)
        rows = [turn(1, OPP, "slate", ME)["row"], turn(2, ME, "brick", OPP)["row"]]
        rows.append(turn(3, OPP, "crone", ME)["row"])
        await bot._handle(
            SESSION
            | {
                "token": "rotated",
                "resumed": True,
                "snapshot": {
                    "lobby": None,
                    "round": {
                        "type": "round",
                        "tournament_id": "t-1",
                        "round": 2,
                        "pairs": [],
                        "bye": None,
                        "intro_deadline_ms": 0,
                        "standings": [],
                    },
                    "duel": {
                        "duel_id": "d-1",
                        "players": [OPP, ME],
                        "length": 5,
                        "rows": rows,
                        "next_player": ME,
                        "deadline_ms": far(),
                        "over": False,
                        "result": None,
                        "winner": None,
                        "word": None,
                    },
                    "standings": None,
                    "party": None,
                    "spectating": [],
                },
            }
        )
        await settle()
        assert bot.token == "rotated"  # tokens rotate at every resume: the newest is kept
        assert bot.state == "playing"
        assert len(ws.actions("join")) == 1  # the first session's join only
        last = tuple(ws.actions("guess")[-1]["word"])
        fed = [(tuple(r["tiles"]), tuple(r["marks"])) for r in rows]
        assert is_consistent(last, fed)

    run(scenario)


def test_duel_end_and_tournament_end_complete_the_result():
    async def scenario() -> None:
        bot, _ws = make_bot(strength=1.0)
        await bot._handle(SESSION)
        await bot._handle(duel_start(OPP))
        await bot._handle(turn(1, OPP, "crane", None))
        await bot._handle(
            {
                "type": "duel_end",
                "request_id": None,
                "tournament_id": "t-1",
                "duel_id": "d-1",
                "result": "win",
                "winner": OPP,
                "reason": "solved",
                "word": "crane",
                "display": None,
            }
        )
        await bot._handle(
            {
                "type": "rating",
                "request_id": None,
                "tournament_id": "t-1",
                "place": 2,
                "change": 18,
                "rating": 1018,
            }
        )
        end = {
            "type": "tournament_end",
            "request_id": None,
            "tournament_id": "t-1",
            "places": [],
            "winners": [OPP],
        }
        await bot._handle(end)
        (result,) = bot.results
        assert result.tournament_end == end
        assert [d.result for d in result.duels] == ["loss"]
        assert result.place == 2
        assert bot.rating == 1018
        assert bot._done()

    run(scenario)


@pytest.mark.parametrize("code", ["not_your_turn", "duel_over"])
def test_other_refusals_do_not_retry(code):
    async def scenario() -> None:
        bot, ws = make_bot()
        await bot._handle(SESSION)
        await bot._handle(duel_start(ME))
        await settle()
        first = ws.actions("guess")[0]
        await bot._handle(
            {"type": "error", "request_id": first["request_id"], "code": code, "message": "x"}
        )
        await settle()
        assert len(ws.actions("guess")) == 1

    run(scenario)


def test_a_join_answered_try_again_is_sent_again():
    """A join that lost its seat race too often (``try_again``) is retried by the bot, as a
    real client would; other errors are not."""

    async def scenario() -> None:
        bot, ws = make_bot()
        await bot._handle(SESSION)
        await bot._handle(
            {"type": "error", "code": "try_again", "message": "busy", "request_id": "jo-1"}
        )
        assert len(ws.actions("join")) == 2
        await bot._handle(
            {"type": "error", "code": "rate_limited", "message": "slow", "request_id": "jo-2"}
        )
        assert len(ws.actions("join")) == 2

    run(scenario)


def test_a_session_answered_internal_error_is_sent_again_a_few_times():
    """A ``session`` the server failed (``internal_error``) is sent again with the same token,
    as the protocol guide tells clients, up to ``SESSION_RETRIES`` times; then the bot stops
    asking on that connection. A session that succeeds resets the count."""

    async def scenario() -> None:
        bot, ws = make_bot()
        bot.token = "tok"
        failed = {"type": "error", "code": "internal_error", "message": "x"}
        for n in range(SESSION_RETRIES):
            await bot._handle(failed | {"request_id": f"se-{n}"})
        sessions = ws.actions("session")
        assert len(sessions) == SESSION_RETRIES
        assert {s.get("token") for s in sessions} == {"tok"}
        await bot._handle(failed | {"request_id": "se-x"})
        assert len(ws.actions("session")) == SESSION_RETRIES  # gave up
        await bot._handle(SESSION)
        await bot._handle(failed | {"request_id": "se-y"})
        assert len(ws.actions("session")) == SESSION_RETRIES + 1  # counting again

    run(scenario)


THROTTLED = {"message": "Too Many Requests", "connectionId": "c1=", "requestId": "r-1"}
"""API Gateway's own frame for a throttled message: no ``type``, none of our request ids."""


async def until(predicate: Callable[[], bool], seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never happened")


def test_a_throttled_guess_is_sent_again_with_the_same_request_id():
    async def scenario() -> None:
        bot, ws = make_bot(strength=1.0)
        await bot._handle(SESSION)
        await bot._handle(duel_start(ME))
        await settle()
        (first,) = ws.actions("guess")

        await bot._handle(THROTTLED)
        await until(lambda: len(ws.actions("guess")) == 2)

        assert ws.actions("guess") == [first, first]  # the same request, unchanged
        assert bot.view.gateway_frames == 1

    run(scenario)


def test_a_throttled_join_is_sent_again_until_answered():
    async def scenario() -> None:
        bot, ws = make_bot()
        await bot._handle(SESSION)
        (join,) = ws.actions("join")

        await bot._handle(THROTTLED)
        await until(lambda: len(ws.actions("join")) == 2)
        assert ws.actions("join") == [join, join]
        await bot._handle(
            {
                "type": "lobby",
                "request_id": join["request_id"],
                "lobby_id": "l-1",
                "language": "en",
                "status": "waiting",
                "players": [{"id": ME, "nickname": "Me", "rating": 1000}],
                "seats": 8,
                "party_id": None,
            }
        )
        assert join["request_id"] not in bot.view.unanswered

    run(scenario)


def test_a_guess_is_not_retried_past_its_turn():
    async def scenario() -> None:
        bot, ws = make_bot(strength=1.0)
        await bot._handle(SESSION)
        start = duel_start(ME)
        start["deadline_ms"] = int(time.time() * 1000) + 200  # under the retry safety margin
        await bot._handle(start)
        await settle()
        assert len(ws.actions("guess")) == 1

        await bot._handle(THROTTLED)
        await asyncio.sleep(0.3)

        assert len(ws.actions("guess")) == 1  # the skip stands (the join is retried)

    run(scenario)
