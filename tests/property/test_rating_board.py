"""Properties: the rating board and its histogram on moto (``shared.services.history.track_profile``
over ``shared.adapters.dynamo.history.DynamoHistory``). Random histories of rating changes,
nickname changes and removals, their stream records delivered with duplicates and out of order:
the histogram's counters always equal a brute-force count of the board's entries, every
player's rank read from the histogram is 1 + the number of entries strictly higher, and no
entry goes back to an older version."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.adapters.dynamo import schema
from shared.adapters.dynamo.history import (
    BLOCK_PREFIX,
    VALUE_PREFIX,
    DynamoHistory,
    histogram_counts,
)
from shared.adapters.dynamo.store import from_av
from shared.domain.progression import Profile, ProfileChange, block_of, rank_of
from shared.domain.rating import INITIAL_RATING
from shared.services.history import track_profile

TABLE = "wordle-tournament"
_ids = itertools.count()


@pytest.fixture(scope="module")
def table(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A bare table on moto (module-wide: each example uses fresh player ids, and the
    properties hold over every entry in it)."""
    import os

    import boto3
    from moto import mock_aws

    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing")
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        schema.create_tables(client, TABLE)
        yield client
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _items(client: Any) -> list[dict[str, Any]]:
    pages = client.get_paginator("scan").paginate(TableName=TABLE, ConsistentRead=True)
    return [from_av(i) for page in pages for i in page["Items"]]


def _histogram(items: list[dict[str, Any]]) -> tuple[dict[int, int], dict[int, int]]:
    blocks: dict[int, int] = {}
    values: dict[int, int] = {}
    for item in items:
        if item["pk"].startswith("RANKHIST#") and item["sk"] == "BLOCKS":
            for b, n in histogram_counts(item, BLOCK_PREFIX).items():
                blocks[b] = blocks.get(b, 0) + n
        elif item["pk"].startswith("RANKHIST#") and item["sk"] == "VALUES":
            for v, n in histogram_counts(item, VALUE_PREFIX).items():
                values[v] = values.get(v, 0) + n
    return blocks, values


history_steps = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=3),  # which player
        st.one_of(st.integers(min_value=-120, max_value=120), st.none()),  # change, or removal
        st.booleans(),  # rename
    ),
    min_size=1,
    max_size=16,
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=history_steps, rng=st.randoms(use_true_random=False))
def test_the_histogram_always_equals_a_brute_force_count(table: Any, steps, rng) -> None:
    history = DynamoHistory(table, TABLE, lambda: 1_800_000_000_000)
    run = next(_ids)
    players = [f"r{run}p{i}" for i in range(4)]
    current: dict[str, Profile | None] = {
        pid: Profile(pid, f"Nick{i}", INITIAL_RATING, 1) for i, pid in enumerate(players)
    }
    records: list[ProfileChange] = []
    for who, change, rename in steps:
        pid = players[who]
        old = current[pid]
        if old is None:
            continue  # removed for good
        if change is None:
            records.append(ProfileChange(old, None))
            current[pid] = None
            continue
        new = Profile(
            pid,
            old.nickname + "x" if rename else old.nickname,
            old.rating + change,
            old.version + 1,
        )
        records.append(ProfileChange(old, new))
        current[pid] = new
    deliveries = (
        records + [rng.choice(records) for _ in range(len(records) // 2)] if records else []
    )
    rng.shuffle(deliveries)
    newest: dict[str, int] = {}
    for change in deliveries:
        track_profile(history, change)
        entry = history.board_entry(change.player_id)
        if entry is not None:  # never back to an older version
            assert entry.version >= newest.get(change.player_id, 0)
            newest[change.player_id] = entry.version

    items = _items(table)
    entries = [
        i
        for i in items
        if i["pk"].startswith("BOARD#") and i["sk"] == "RATING" and "board_score" in i
    ]
    blocks, values = _histogram(items)
    scores = [int(e["board_score"]) for e in entries]
    brute_blocks: dict[int, int] = {}
    brute_values: dict[int, int] = {}
    for s in scores:
        b = block_of(s, schema.HISTOGRAM_BLOCK)
        brute_blocks[b] = brute_blocks.get(b, 0) + 1
        brute_values[s] = brute_values.get(s, 0) + 1
    assert {b: n for b, n in blocks.items() if n} == brute_blocks
    assert {v: n for v, n in values.items() if n} == brute_values
    for s in set(scores):
        assert rank_of(s, blocks, values, schema.HISTOGRAM_BLOCK) == 1 + sum(
            1 for x in scores if x > s
        )
    # a removed player has no entry on the board
    for pid in players:
        if current[pid] is None:
            assert not any(e["player_id"] == pid for e in entries)
