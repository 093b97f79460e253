"""Flows: issue 38's history, fed by the table's own DynamoDB stream (moto's, read with the
``dynamodbstreams`` API) to the history function (``functions/history.py``) after a whole
tournament played through the real handlers: every round with every row and its secret, the
summary as ``tournament_end`` told it, each player's entry, statistics, weekly points, best
rating and rating board entry, the histogram; the same records again change nothing."""

from __future__ import annotations

from typing import Any

from infra.emulator.testing import LambdaContext
from shared.adapters.dynamo import schema
from shared.adapters.dynamo.history import BLOCK_PREFIX, histogram_counts
from shared.domain.progression import week_of
from shared.domain.tournament import ClosedRound
from tests.functional.driver import Game, messages, peek_item, peek_player
from tests.functional.progression.stream import StreamReader, lambda_event


def _policy(game: Game, duel: Any, mover: str) -> str:
    """A skip on the second row, wrong guesses, a solve on the fifth (some duels draw on
    time: the clock's skips)."""
    rows = len(duel.rows)
    if rows == 1:
        return "skip"
    if rows >= 4 and int(duel.duel_id.rsplit(".", 1)[1]) % 2:
        return "solve"
    return "wrong" if rows < 11 else "skip"


def _play(g: Game) -> dict[int, ClosedRound]:
    """Play to the end; the rounds as the tournament closed them (the truth to compare with)."""
    truth: dict[int, ClosedRound] = {}
    for _ in range(40):
        if g.t.over:
            break
        g.play_round(_policy)
        t = g.t
        if t.closed is not None:
            truth[t.closed.round_no] = t.closed
        if t.over:
            truth[t.round_no] = ClosedRound(t.round_no, t.duels, t.bye)
    assert g.t.over
    return truth


def _invoke(backend: Any, records: list[dict[str, Any]]) -> dict[str, Any]:
    from functions.history import handler

    response: dict[str, Any] = handler.invoke(lambda_event(records), LambdaContext(), backend.deps)
    return response


def test_a_played_tournament_is_recorded_from_the_stream_once(backend):
    reader = StreamReader(backend.client, backend.table_name)
    g = Game.start(backend)
    truth = _play(g)
    tid, t = g.tid, g.t
    records = reader.read()
    assert _invoke(backend, records) == {"batchItemFailures": []}

    # every round, every row (as the duelists were told it), the secret revealed at the end
    turns: dict[tuple[str, int], dict[str, Any]] = {}
    secrets: dict[str, str] = {}
    for p in g.players:
        for m in messages(p):
            if m["type"] == "turn":
                turns[(m["duel_id"], m["turn"])] = m["row"]
            elif m["type"] == "duel_end":
                secrets[m["duel_id"]] = m["word"]
    assert sorted(truth) == list(range(1, t.round_no + 1))
    skipped = 0
    for round_no, closed in truth.items():
        item = peek_item(schema.round_record_key(tid, round_no))
        assert item is not None, round_no
        assert item["kind"] == "round"
        assert item["round_no"] == round_no
        assert item.get("bye") == closed.bye
        assert [d["duel_id"] for d in item["duels"]] == [d.duel_id for d in closed.duels]
        for stored, duel in zip(item["duels"], closed.duels, strict=True):
            assert stored["word"] == secrets[duel.duel_id] == duel.word
            assert stored["players"] == list(duel.players)
            assert stored["first"] == duel.first
            assert stored["length"] == duel.length
            assert (stored["result"], stored["winner"], stored["reason"]) == (
                duel.result.value if duel.result else None,
                duel.winner,
                duel.reason.value if duel.reason else None,
            )
            assert len(stored["rows"]) == len(duel.rows)
            for n, (row, truth_row) in enumerate(zip(stored["rows"], duel.rows, strict=True), 1):
                told = turns[(duel.duel_id, n)]
                assert row["player_id"] == told["player"]
                assert row["word"] == told.get("word")
                assert row["tiles"] == told.get("tiles")
                assert row["marks"] == told.get("marks")
                assert row["skipped"] == told.get("skipped", False)
                assert row["at_ms"] == truth_row.at_ms
                skipped += row["skipped"]
        assert item["ttl"] == schema.record_ttl(max(d.ended_ms or 0 for d in closed.duels))
    assert skipped > 0  # the clock's skips were recorded too

    # the summary: places and ratings as tournament_end told them
    end = g.players[0].last("tournament_end")
    summary = peek_item(schema.record_key(tid))
    assert summary is not None
    assert summary["rounds"] == t.round_no
    assert (summary["language"], summary["started_ms"], summary["ended_ms"]) == (
        "en",
        t.started_ms,
        t.ended_ms,
    )
    told = {s["player_id"]: s for s in end["places"]}
    assert [s["player_id"] for s in summary["players"]] == [
        pid for _, pid in sorted((s["place"], s["player_id"]) for s in end["places"])
    ]
    for line in summary["players"]:
        s = told[line["player_id"]]
        assert (line["place"], line["rating_change"], line["nickname"]) == (
            s["place"],
            s["rating_change"],
            s["nickname"],
        )
        assert line["rating_after"] == line["rating_before"] + line["rating_change"]
        assert line["rating_after"] == peek_player(line["player_id"]).rating

    # each player: history entry, statistics, weekly points, best rating, rating board entry
    week = week_of(t.ended_ms or 0)
    blocks: dict[int, int] = {}
    for line in summary["players"]:
        pid, place = line["player_id"], line["place"]
        entry = peek_item(schema.player_history_key(pid, t.ended_ms or 0, tid))
        assert entry is not None
        assert (entry["place"], entry["players"], entry["language"]) == (place, 8, "en")
        assert (entry["rating_before"], entry["rating_after"]) == (
            line["rating_before"],
            line["rating_after"],
        )
        met = [
            b if a == pid else a
            for r in sorted(truth)
            for a, b in (d.players for d in truth[r].duels)
            if pid in (a, b)
        ]
        assert [o["player_id"] for o in entry["opponents"]] == met
        stats = peek_item(schema.stats_key(pid))
        assert stats is not None
        assert (stats["tournaments"], stats["wins"], stats["podiums"], stats["place_sum"]) == (
            1,
            int(place == 1),
            int(place <= 3),
            place,
        )
        assert (stats["lang_en_n"], stats["lang_en_places"]) == (1, place)
        assert stats["best_rating"] == line["rating_after"]
        weekly = peek_item(schema.weekly_entry_key("en", week, pid))
        assert weekly is not None
        assert weekly["board_score"] == line["rating_change"]
        assert weekly["board_pk"] == schema.weekly_board_pk("en", week, pid)
        board = peek_item(schema.rating_entry_key(pid))
        assert board is not None
        assert board["board_score"] == line["rating_after"]
        assert board["board_pk"] == schema.rating_board_pk(pid)
        assert board["nickname"] == line["nickname"]
        assert board["version"] == peek_player(pid).version
    for shard in range(schema.HISTOGRAM_SHARDS):
        for b, n in histogram_counts(
            peek_item(schema.rank_blocks_key(shard)), BLOCK_PREFIX
        ).items():
            blocks[b] = blocks.get(b, 0) + n
    expected: dict[int, int] = {}
    for line in summary["players"]:
        b = line["rating_after"] // schema.HISTOGRAM_BLOCK
        expected[b] = expected.get(b, 0) + 1
    assert {b: n for b, n in blocks.items() if n} == expected

    # at-least-once: the whole stream again, and twice over in reverse, changes nothing
    before = backend.snapshot()
    assert _invoke(backend, records) == {"batchItemFailures": []}
    assert _invoke(backend, records[::-1] + records) == {"batchItemFailures": []}
    assert backend.snapshot() == before


def test_a_nickname_change_reaches_the_board_entries(backend):
    reader = StreamReader(backend.client, backend.table_name)
    g = Game.start(backend)
    _play(g)
    player = g.players[0]
    player.send("nickname", nickname="Renamed Player")
    assert not player.errors, player.errors
    assert _invoke(backend, reader.read()) == {"batchItemFailures": []}
    week = week_of(g.t.ended_ms or 0)
    board = peek_item(schema.rating_entry_key(player.id))
    weekly = peek_item(schema.weekly_entry_key("en", week, player.id))
    assert board is not None
    assert weekly is not None
    nickname = peek_player(player.id).nickname
    assert nickname != g.t.player(player.id).nickname
    assert board["nickname"] == weekly["nickname"] == nickname
    # the history keeps the nickname of the tournament
    summary = peek_item(schema.record_key(g.tid))
    assert summary is not None
    assert {s["player_id"]: s["nickname"] for s in summary["players"]}[player.id] == (
        g.t.player(player.id).nickname
    )


def test_a_bad_record_is_reported_alone_and_the_rest_of_the_batch_applies(backend):
    from shared.adapters.dynamo.store import to_av

    good = {
        "eventID": "2",
        "eventName": "MODIFY",
        "eventSource": "aws:dynamodb",
        "dynamodb": {
            "Keys": to_av(schema.player_key("p1")),
            "OldImage": to_av(
                {**schema.player_key("p1"), "nickname": "Nick", "rating": 1000, "version": 1}
            ),
            "NewImage": to_av(
                {**schema.player_key("p1"), "nickname": "Nick", "rating": 1025, "version": 2}
            ),
            "SequenceNumber": "200",
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        },
    }
    bad = {
        "eventID": "1",
        "eventName": "MODIFY",
        "eventSource": "aws:dynamodb",
        "dynamodb": {
            "Keys": to_av(schema.tournament_key("t1")),
            "NewImage": to_av(
                {**schema.tournament_key("t1"), "state": b"not zlib", "version": 3, "hist": 1}
            ),
            "SequenceNumber": "100",
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        },
    }
    assert _invoke(backend, [bad, good]) == {"batchItemFailures": [{"itemIdentifier": "100"}]}
    board = peek_item(schema.rating_entry_key("p1"))
    assert board is not None
    assert board["board_score"] == 1025
