"""Issue 38's read side through the real handlers on moto: ``profile``, ``leaderboard``,
``history`` and ``replay`` over items written as the history function writes them
(``seed``). Each request gets exactly one answer, valid against the AsyncAPI document; a bad
one an ``error`` with its stable code; none writes anything; no reply carries a token, a
connection id, a source address or a party id."""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from shared.protocol.asyncapi import build_asyncapi
from shared.services.progression import encode_cursor, week_of
from tests.functional.progression.seed import (
    Seat,
    dynamo_put,
    eight_player_tournament,
    put_history,
    put_rating_board,
    put_stats,
    put_tournament,
    put_weekly,
)

_URI = "urn:wordle-tournament:asyncapi"
_DAY = 24 * 3600 * 1000


def _reply_validators() -> dict[str, Draft202012Validator]:
    """Event type -> a Draft 2020-12 validator of its payload schema in the AsyncAPI
    document."""
    doc = build_asyncapi()
    registry: Registry[Any] = Registry().with_resource(_URI, DRAFT202012.create_resource(doc))
    return {
        message["name"]: Draft202012Validator(
            {"$ref": _URI + message["payload"]["$ref"]}, registry=registry
        )
        for message in doc["components"]["messages"].values()
    }


VALIDATORS = _reply_validators()


@pytest.fixture
def put(backend: Any) -> Any:
    return dynamo_put(backend.client, backend.table_name)


def ask(player: Any, action: str, **fields: Any) -> dict[str, Any]:
    """Send one request; its one answer (checked against the AsyncAPI document and for
    secrets: the player's token and connection id never appear in it)."""
    rid = f"r{random.random()}"
    before = len(player.backend.notifier.raw)
    player.send(action, request_id=rid, **fields)
    answers = [m for m in player.messages if m.get("request_id") == rid]
    assert len(answers) == 1, answers
    answer = answers[0]
    errors = list(VALIDATORS[answer["type"]].iter_errors(answer))
    assert not errors, errors[0].message
    for _, text in player.backend.notifier.raw[before:]:
        for secret in (player.token, player.connection_id, "127.0.0.1"):
            assert secret not in text
        assert "party_id" not in text
    return answer


def _unchanged(backend: Any, requests: Any) -> None:
    """Run ``requests`` and check the table holds exactly what it held before."""
    before = backend.items()
    requests()
    assert backend.items() == before


def test_profile_shows_stats_languages_and_the_last_100_points_oldest_first(backend, put):
    ana = backend.player("ana")
    t0 = backend.clock.now_ms() - 200 * _DAY
    places = []
    for n in range(105):
        language, place = ("en" if n % 3 else "nl"), 1 + n % 8
        places.append((language, place))
        put_history(put, ana.id, f"t{n:03d}", t0 + n * _DAY, language, place, 8, 1000 + n, 1001 + n)
    put_stats(put, ana.id, places, best=1105)
    profile = ask(ana, "profile")["player"]
    assert profile["player_id"] == ana.id
    assert profile["nickname"] == ana.last("session")["player"]["nickname"]
    assert profile["tournaments"] == 105
    assert profile["wins"] == sum(1 for _, p in places if p == 1)
    assert profile["podiums"] == sum(1 for _, p in places if p <= 3)
    assert profile["average_place"] == round(sum(p for _, p in places) / 105, 2)
    assert profile["best_rating"] == 1105
    assert [(x["language"], x["tournaments"]) for x in profile["languages"]] == [
        ("en", sum(1 for lang, _ in places if lang == "en")),
        ("nl", sum(1 for lang, _ in places if lang == "nl")),
    ]
    points = profile["rating_history"]
    assert [p["tournament_id"] for p in points] == [f"t{n:03d}" for n in range(5, 105)]


def test_a_new_player_has_an_empty_profile_and_others_see_it_by_id(backend):
    ana, bob = backend.player("ana"), backend.player("bob")
    profile = ask(bob, "profile", player_id=ana.id)["player"]
    assert profile["player_id"] == ana.id
    assert profile["tournaments"] == 0
    assert profile["average_place"] is None
    assert profile["best_rating"] is None
    assert profile["rating_history"] == []


@pytest.mark.parametrize(
    ("action", "fields", "code"),
    [
        ("profile", {"player_id": "nobody"}, "not_found"),
        ("profile", {"player_id": "bad#id"}, "invalid_value"),
        ("profile", {"player_id": ""}, "invalid_value"),
        ("history", {"player_id": "nobody"}, "not_found"),
        ("history", {"limit": 0}, "invalid_value"),
        ("history", {"limit": 51}, "invalid_value"),
        ("history", {"cursor": "!!!"}, "invalid_cursor"),
        ("history", {"cursor": base64.urlsafe_b64encode(b"HIST#x").decode()}, "invalid_cursor"),
        ("replay", {"tournament_id": "nothing"}, "not_found"),
        ("replay", {"tournament_id": "a b"}, "invalid_value"),
        ("leaderboard", {"board": "weekly", "language": "xx"}, "unknown_language"),
        ("leaderboard", {"board": "weekly"}, "invalid_value"),
        ("leaderboard", {"board": "rating", "language": "en"}, "invalid_value"),
        ("leaderboard", {"board": "rating", "week": "previous"}, "invalid_value"),
        ("leaderboard", {"board": "weekly", "language": "en", "week": "next"}, "invalid_value"),
        ("leaderboard", {"board": "all"}, "invalid_value"),
    ],
)
def test_bad_requests_get_their_code_once_and_change_nothing(backend, action, fields, code):
    ana = backend.player("ana")

    def requests() -> None:
        answer = ask(ana, action, **fields)
        assert (answer["type"], answer.get("code")) == ("error", code), answer

    _unchanged(backend, requests)


@pytest.mark.parametrize(
    ("action", "fields"),
    [
        ("profile", {}),
        ("leaderboard", {"board": "rating"}),
        ("history", {}),
        ("replay", {"tournament_id": "t1"}),
    ],
)
def test_without_a_session_each_action_is_no_session(backend, action, fields):
    stranger = backend.player("stranger", session=False)
    stranger.send(action, request_id="r1", **fields)
    assert [(m["type"], m.get("code")) for m in stranger.messages] == [("error", "no_session")]


def test_another_players_cursor_and_a_forged_one_are_refused(backend, put):
    ana, bob = backend.player("ana"), backend.player("bob")
    for n in range(3):
        put_history(put, ana.id, f"t{n}", 1_000_000 + n, "en", 2, 8, 1000, 1010)
        put_history(put, bob.id, f"t{n}", 1_000_000 + n, "en", 2, 8, 1000, 1010)
    cursor = ask(ana, "history", limit=1)["next_cursor"]
    assert cursor is not None
    assert ask(bob, "history", cursor=cursor)["code"] == "invalid_cursor"
    assert ask(ana, "history", player_id=ana.id, cursor=cursor)["type"] == "history"
    forged = encode_cursor(ana.id, "STATS")
    assert ask(ana, "history", cursor=forged)["code"] == "invalid_cursor"


@pytest.mark.parametrize("limit", [1, 7, 20, 50])
def test_history_pages_walk_every_tournament_once_newest_first(backend, put, limit):
    ana, bob = backend.player("ana"), backend.player("bob")
    ended = sorted(random.Random(limit).sample(range(10**9, 10**9 + 10**6), 45))
    for n, ms in enumerate(ended):
        put_history(
            put, ana.id, f"t{n:02d}", ms, "en", 1 + n % 8, 8, 1000, 1000 + n, [(bob.id, "bob")]
        )
    put_history(put, bob.id, "other", 5, "en", 1, 8, 1000, 1025)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        fields = {"limit": limit, "player_id": ana.id}
        if cursor is not None:
            fields["cursor"] = cursor
        page = ask(bob, "history", **fields)
        pages += 1
        assert page["player_id"] == ana.id
        assert len(page["tournaments"]) <= limit
        seen += [t["tournament_id"] for t in page["tournaments"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"t{n:02d}" for n in reversed(range(45))]
    assert pages == -(-45 // limit)
    assert page["tournaments"][-1]["opponents"] == [{"player_id": bob.id, "nickname": "bob"}]


def test_rating_board_top_100_merges_the_shards_with_ranks_and_me_around(backend, put):
    ana = backend.player("ana")
    rng = random.Random(38)
    lines = [(f"p{n:04d}", f"name{n}", rng.randint(900, 1100)) for n in range(400)]
    lines.append((ana.id, "Ana", 1000))
    put_rating_board(put, lines)
    board = ask(ana, "leaderboard", board="rating")
    order = sorted(lines, key=lambda x: (-x[2], x[0]))
    assert [(e["player_id"], e["score"]) for e in board["entries"]] == [
        (p, s) for p, _, s in order[:100]
    ]
    for e in board["entries"]:
        assert e["rank"] == 1 + sum(1 for _, _, s in lines if s > e["score"])
    mine = 1 + sum(1 for _, _, s in lines if s > 1000)
    assert board["me"] == {"rank": mine, "player_id": ana.id, "nickname": "Ana", "score": 1000}
    at = [p for p, _, _ in order].index(ana.id)
    assert [e["player_id"] for e in board["around"]] == [p for p, _, _ in order[at - 5 : at + 6]]
    for e in board["around"]:
        assert e["rank"] == 1 + sum(1 for _, _, s in lines if s > e["score"])


def test_a_player_without_a_rating_entry_has_no_line_on_the_rating_board(backend, put):
    ana = backend.player("ana")
    put_rating_board(put, [("p1", "one", 1200)])
    board = ask(ana, "leaderboard", board="rating")
    assert board["me"] is None
    assert board["around"] == []
    assert board["entries"] == [{"rank": 1, "player_id": "p1", "nickname": "one", "score": 1200}]


def test_weekly_boards_this_week_and_last(backend, put):
    ana = backend.player("ana")
    now = backend.clock.now_ms()
    this, last = week_of(now), week_of(now - 7 * _DAY)
    rng = random.Random(7)
    lines = [(f"p{n:03d}", f"n{n}", rng.randint(-30, 60)) for n in range(130)]
    put_weekly(put, "en", this, lines, now)
    put_weekly(put, "en", last, [(ana.id, "Ana", 25), ("p1", "one", 30)], now)
    put_weekly(put, "nl", this, [(ana.id, "Ana", 99)], now)
    board = ask(ana, "leaderboard", board="weekly", language="en")
    assert (board["board"], board["language"], board["week"]) == ("weekly", "en", this)
    order = sorted(lines, key=lambda x: (-x[2], x[0]))
    assert [e["player_id"] for e in board["entries"]] == [p for p, _, _ in order[:100]]
    assert board["me"]["rank"] is None
    assert board["me"]["score"] == 0
    assert board["around"] == []
    previous = ask(ana, "leaderboard", board="weekly", language="en", week="previous")
    assert previous["week"] == last
    assert [e["player_id"] for e in previous["entries"]] == ["p1", ana.id]
    assert previous["me"] == {"rank": 2, "player_id": ana.id, "nickname": "Ana", "score": 25}


def test_replay_returns_the_rounds_in_order_with_current_nicknames(backend, put):
    players = [backend.player(f"p{n}") for n in range(8)]
    seats = [Seat(p.id, f"old{n}", 1 + n, 1000, 25 - 7 * n) for n, p in enumerate(players)]
    seats[7] = Seat("gone-player", "Gone", 8, 1000, -25)  # no longer exists
    t = eight_player_tournament("t-rec", seats, started_ms=1_000_000, rows=5)
    put_tournament(put, t)
    players[0].send("nickname", nickname="New Name")
    record = ask(players[1], "replay", tournament_id="t-rec")["record"]
    assert record["format"] == "wordle-tournament-record"
    assert record["version"] == 1
    assert [r["round_no"] for r in record["rounds"]] == list(range(1, len(t.rounds) + 1))
    assert record["rounds"] == t.rounds
    names = {p["player_id"]: p["nickname"] for p in record["players"]}
    assert names[players[0].id] == "New Name"
    assert names[players[1].id] == players[1].last("session")["player"]["nickname"]
    assert names["gone-player"] == "Gone"
    assert [p["place"] for p in record["players"]] == sorted(p["place"] for p in record["players"])


def test_a_running_tournament_has_no_replay(backend):
    players = backend.fill_lobby("en")
    tid = players[0].tournament_id()
    assert ask(players[0], "replay", tournament_id=tid)["code"] == "not_found"


def test_reads_change_nothing(backend, put):
    ana = backend.player("ana")
    put_rating_board(put, [(ana.id, "Ana", 1010)])
    put_history(put, ana.id, "t1", 10**9, "en", 1, 8, 1000, 1010)

    def requests() -> None:
        ask(ana, "profile")
        ask(ana, "leaderboard", board="rating")
        ask(ana, "leaderboard", board="weekly", language="en")
        ask(ana, "history")
        ask(ana, "replay", tournament_id="t1")

    _unchanged(backend, requests)


def test_worst_case_replay_fits_api_gateways_message_limit(backend, put):
    """8 players, the most duels a tournament can have (every duel won, each costing one
    life: 7 x 3 + 2 = 23), every duel 12 rows, the longest words in bytes (6 Uzbek two-letter
    tiles of 3 bytes each), 20-character nicknames of 3-byte letters: the ``replay`` message
    stays under API Gateway's 128 KB WebSocket message quota
    (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html)."""
    players = [backend.player(f"p{n}") for n in range(8)]
    seats = [Seat(p.id, "ж" * 20, 1 + n, 1000, 25 - 7 * n) for n, p in enumerate(players)]
    t = eight_player_tournament(
        "t" * 16, seats, started_ms=10**12, language="uz", tiles=["gʻ"] * 6, rows=12
    )
    put_tournament(put, t)
    duels = sum(len(r["duels"]) for r in t.rounds)
    ask(players[0], "replay", tournament_id="t" * 16)
    text = backend.notifier.raw[-1][1]
    size = len(text.encode("utf-8"))
    print(
        f"worst-case replay: {len(t.rounds)} rounds, {duels} duels x 12 rows: "
        f"{size} bytes ({size / 1024:.1f} KB of 128 KB)"
    )
    assert json.loads(text)["type"] == "replay"
    assert size < 128 * 1024
