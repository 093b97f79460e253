"""Unit tests: progression's cost model (``infra.benchmarks.progression``): the designed items,
their write units, the stream's batches, the week, the replay's size against API Gateway's
limit. Small inputs with known answers; the figures themselves are the benchmark's."""

from __future__ import annotations

import datetime as dt

from infra.benchmarks import prices
from infra.benchmarks import progression as pg
from infra.benchmarks.units import item_size
from shared.adapters.dynamo import schema

SHAPE = pg.Shape(rounds=8, duels=23, rows=152, duration_ms=693_000)


def _ms(y: int, m: int, d: int, h: int = 0) -> int:
    return int(dt.datetime(y, m, d, h, tzinfo=dt.UTC).timestamp() * 1000)


def test_the_week_is_its_monday_utc() -> None:
    assert pg.week_of(_ms(2026, 12, 7)) == "2026-12-07"  # a Monday, 00:00
    assert pg.week_of(_ms(2026, 12, 13, 23)) == "2026-12-07"  # the Sunday after
    assert pg.week_of(_ms(2026, 12, 6, 23)) == "2026-11-30"  # the Sunday before


def test_a_batching_window_takes_every_record_until_it_closes() -> None:
    assert pg.batches([]) == 0
    assert pg.batches([0, 1_000, 4_999, 5_000, 20_000]) == 3
    assert pg.batches([0] * (pg.BATCH_SIZE + 1)) == 2


def test_the_rounds_hold_every_duel_and_row_of_the_play() -> None:
    t = pg.build(SHAPE)
    duels = [d for r in t.rounds for d in r["duels"]["L"]]
    assert len(t.rounds) == SHAPE.rounds
    assert len(duels) == SHAPE.duels
    assert sum(len(d["M"]["rows"]["L"]) for d in duels) == SHAPE.rows
    assert {r[schema.SK]["S"] for r in t.rounds} == {f"ROUND#{n:02d}" for n in range(1, 9)}


def test_transactions_cost_twice_and_a_moved_score_a_delete_and_a_put() -> None:
    t = pg.build(SHAPE)
    w = pg.writes(t)
    assert item_size(t.history[0]) < 1024
    requests, table, index = w.lines["per player: history entry (transaction)"]
    assert (requests, table, index) == (8, 16, 0)
    moved = sum(s.rating_after != s.rating_before for s in t.seats)
    assert w.lines["per player: rating entry (transaction)"][2] == 2 * moved
    assert w.lines["per player: best rating (Update)"][1] == 8


def test_the_largest_replay_fits_one_api_gateway_message() -> None:
    t = pg.build(pg.WORST, word_length=6)
    assert sum(len(d["M"]["rows"]["L"]) for r in t.rounds for d in r["duels"]["L"]) == 23 * 12
    assert pg.reply_bytes(t) < 128 * 1024


def test_the_bill_keeps_the_reads_apart_and_the_stream_free() -> None:
    played = pg.Played(
        shape=SHAPE,
        profile_writes=[0] * 16 + [600_000] * 8,
        round_closes=[100_000 * n for n in range(1, 9)],
        state_writes=160,
    )
    b = pg.bill(played, prices.load_prices(), base_usd=0.003, history_mb=256, progression_mb=256)
    lines = {item: usd for item, usd, _ in b.lines}
    assert lines["stream reads"] == 0.0
    assert b.records == 8 + 24
    assert b.invocations_quiet == 1 + 8  # the joins' batch, then each round (600 s: with one)
    assert b.total_usd == b.write_side_usd + b.reads_usd
    assert b.reads_usd > 0
    assert b.write_side_usd == sum(u for i, u in lines.items() if not i.startswith("reads:"))
    assert lines["history function: reads"] > 0


def test_compact_rows_keep_what_a_reader_cannot_derive() -> None:
    t = pg.build(SHAPE)
    small = pg.compact_rounds(t.rounds)
    rows = [row["M"] for r in small for d in r["duels"]["L"] for row in d["M"]["rows"]["L"]]
    full = [row["M"] for r in t.rounds for d in r["duels"]["L"] for row in d["M"]["rows"]["L"]]
    assert len(rows) == len(full) == SHAPE.rows
    for a, b in zip(rows, full, strict=True):
        if "NULL" in b["word"]:
            assert a == b  # a skipped row: nothing to shorten
        else:
            assert "tiles" not in a
            assert a["marks"]["S"] == "".join(m["S"][0] for m in b["marks"]["L"])
    assert pg.stored_bytes(small) < pg.stored_bytes(t.rounds)


def test_the_played_stream_has_each_rating_change_once() -> None:
    played = pg.play()
    profiles = [
        r["dynamodb"]
        for r in played.records
        if r["dynamodb"]["Keys"][schema.SK]["S"] == "PROFILE" and r["eventName"] == "MODIFY"
    ]
    changed = [p for p in profiles if p["OldImage"].get("rating") != p["NewImage"].get("rating")]
    assert len(changed) == 8
    assert len(played.profile_writes) >= len(profiles)
    assert all(r["dynamodb"]["StreamViewType"] == schema.STREAM_VIEW_TYPE for r in played.records)
    assert played.state_writes >= sum(
        r["dynamodb"]["Keys"][schema.SK]["S"] == "STATE" for r in played.records
    )


def test_reflow_refills_prose_and_keeps_tables_and_headings() -> None:
    text = "## Title\n\nsome words\nsplit `across a` line\n\n| a | b |\n|---|---|\n"
    out = pg.reflow(text, width=20)
    assert out.splitlines() == [
        "## Title",
        "",
        "some words split",
        "`across a` line",
        "",
        "| a | b |",
        "|---|---|",
    ]


def _record(pk: str, sk: str, new: dict[str, object] | None, at_s: int = 0) -> dict[str, object]:
    key = {schema.PK: {"S": pk}, schema.SK: {"S": sk}}
    return pg.stream_record(None, None if new is None else {**key, **new}, key, at_s * 1000, 0)


def test_filter_patterns_match_as_lambda_filters_do() -> None:
    closed_round = {
        "dynamodb": {
            "Keys": {schema.PK: {"S": [{"prefix": "TOURN#"}]}, schema.SK: {"S": ["STATE"]}},
            "NewImage": {"hist": {"N": [{"exists": True}]}},
        }
    }
    assert pg.matches(closed_round, _record("TOURN#t", "STATE", {"hist": {"N": "3"}}))
    assert not pg.matches(closed_round, _record("TOURN#t", "STATE", {"seq": {"N": "3"}}))
    assert not pg.matches(closed_round, _record("TOURN#t", "ROUND#01", {"hist": {"N": "3"}}))
    assert not pg.matches(closed_round, _record("LOBBY#t", "STATE", {"hist": {"N": "3"}}))


def test_a_quiet_table_cuts_batches_by_window_and_size() -> None:
    records = [_record("PLAYER#p", "PROFILE", {}, at) for at in (0, 1, 2, 9, 30)]
    assert [len(b) for b in pg.group_batches(records, window_s=2, size=100)] == [2, 1, 1, 1]
    assert [len(b) for b in pg.group_batches(records, window_s=60, size=2)] == [2, 2, 1]
