"""The ``Progression`` port on both sides: ``DynamoProgression`` (sharded board queries, the
rating histogram, keyset pages on moto) answers exactly as ``InMemoryProgression``, which
computes every answer by brute force over the same items (``tests/functional/progression/
seed.py`` writes them as the history function does). Random boards with ties, and boards whose
top is crowded into one shard (the top-100 merge's follow-up queries)."""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.adapters.dynamo import schema
from shared.adapters.memory_progression import InMemoryProgression
from shared.services.ports import BoardLine
from tests.functional.progression.seed import dynamo_put, put_history, put_rating_board, put_weekly

_tables = itertools.count(1)


@pytest.fixture(scope="module")
def dynamo() -> Iterator[Any]:
    """A moto DynamoDB client; each example makes its own table (``_fresh``)."""
    import os

    import boto3
    from moto import mock_aws

    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ.update(dict.fromkeys(saved, "testing"))
    with mock_aws():
        yield boto3.client("dynamodb", region_name="us-east-1")
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _fresh(client: Any) -> tuple[Any, Any, Any]:
    """A new table, its ``DynamoProgression``, an empty fake and a ``put`` writing both."""
    from shared.adapters.dynamo.boards import DynamoProgression

    name = f"progression{next(_tables)}"
    client.create_table(**schema.table_definition(name))
    fake = InMemoryProgression()
    to_table = dynamo_put(client, name)

    def put(item: dict[str, Any]) -> None:
        to_table(item)
        fake.put(item)

    return DynamoProgression(client, name, sleep=lambda _: None), fake, put


def _in_shard(shard: int, n: int) -> list[str]:
    """``n`` player ids whose rating board shard is ``shard``."""
    found: list[str] = []
    if n == 0:
        return found
    for i in itertools.count():
        pid = f"s{i:05d}"
        if zlib.crc32(pid.encode()) % schema.RATING_BOARD_SHARDS == shard:
            found.append(pid)
            if len(found) == n:
                return found
    raise AssertionError  # pragma: no cover


boards = st.lists(st.integers(min_value=700, max_value=760), min_size=1, max_size=80)
"""Ratings of a board: a narrow range, so ties are common and blocks are shared."""


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scores=boards, crowd=st.integers(min_value=0, max_value=60), data=st.data())
def test_top_ranks_and_around_equal_brute_force(dynamo, scores, crowd, data):
    real, fake, put = _fresh(dynamo)
    ids = [f"p{i:04d}" for i in range(len(scores))]
    crowded = _in_shard(3, crowd)  # the best scores all in one shard
    lines = [(pid, f"n{pid}", s) for pid, s in zip(ids, scores, strict=True)]
    lines += [(pid, f"n{pid}", 900 + i % 7) for i, pid in enumerate(crowded)]
    put_rating_board(put, lines)
    assert real.rating_top(100) == fake.rating_top(100)
    probes = data.draw(st.lists(st.sampled_from(lines), min_size=1, max_size=3))
    wanted = [s for _, _, s in probes] + [0, 2000]
    assert real.rating_ranks(wanted) == fake.rating_ranks(wanted)
    for pid, nickname, score in probes:
        line = BoardLine(pid, nickname, score)
        assert real.rating_around(line, 5) == fake.rating_around(line, 5)
        assert real.rating_entry(pid) == fake.rating_entry(pid) == line


def test_ranks_count_higher_scores_only_ties_share_a_rank(dynamo):
    real, _, put = _fresh(dynamo)
    put_rating_board(put, [("a", "A", 1200), ("b", "B", 1100), ("c", "C", 1100), ("d", "D", 64)])
    assert real.rating_ranks([1200, 1100, 1000, 64, 63]) == {
        1200: 1,
        1100: 2,
        1000: 4,
        64: 4,
        63: 5,
    }


def test_weekly_top_is_per_language_and_week(dynamo):
    real, fake, put = _fresh(dynamo)
    put_weekly(put, "en", "2026-11-30", [(f"p{i}", "x", i - 20) for i in range(140)], 0)
    put_weekly(put, "nl", "2026-11-30", [("q", "y", 999)], 0)
    put_weekly(put, "en", "2026-11-23", [("r", "z", 999)], 0)
    top = real.weekly_top("en", "2026-11-30", 100)
    assert top == fake.weekly_top("en", "2026-11-30", 100)
    assert [x.score for x in top] == list(range(119, 19, -1))
    assert real.weekly_entry("nl", "2026-11-30", "q") == BoardLine("q", "y", 999)
    assert real.weekly_entry("nl", "2026-11-23", "q") is None


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(n=st.integers(min_value=0, max_value=40), limit=st.integers(min_value=1, max_value=15))
def test_history_pages_equal_brute_force(dynamo, n, limit):
    real, fake, put = _fresh(dynamo)
    for i in range(n):
        put_history(put, "me", f"t{i:02d}", 10**12 + 1000 * (i % 9), "en", 1, 8, 1000, 1001)
    put_history(put, "other", "t99", 10**12, "en", 1, 8, 1000, 1001)
    before = None
    walked: list[str] = []
    while True:
        page, more = real.history("me", limit, before)
        assert (page, more) == fake.history("me", limit, before)
        walked += [e["sk"] for e in page]
        if not more:
            break
        before = page[-1]["sk"]
    assert walked == sorted(walked, reverse=True)
    assert len(walked) == len(set(walked)) == n


def test_on_worker_threads_the_answers_are_the_same(dynamo):
    from shared.adapters.dynamo.boards import DynamoProgression

    _, fake, put = _fresh(dynamo)
    name = f"progression{next(_tables) - 1}"
    threaded = DynamoProgression(dynamo, name, sleep=lambda _: None, workers=4)
    crowded = _in_shard(5, 40)
    lines = [(f"p{i:03d}", "n", 800 + i % 13) for i in range(90)]
    lines += [(pid, "c", 900 + i % 3) for i, pid in enumerate(crowded)]
    put_rating_board(put, lines)
    assert threaded.rating_top(100) == fake.rating_top(100)
    for pid, nickname, score in lines[::17]:
        line = BoardLine(pid, nickname, score)
        assert threaded.rating_around(line, 5) == fake.rating_around(line, 5)


def test_around_reads_a_long_run_of_ties_in_few_queries(dynamo: Any) -> None:
    """300 players of one shard share my score: "around" still answers as brute force, and
    reads the run in pages of ``TIE_PAGE`` (2 Queries each way in that shard), not one Query
    per 5 entries (60)."""
    from shared.adapters.dynamo.boards import TIE_PAGE

    real, fake, put = _fresh(dynamo)
    tied = _in_shard(3, 300)
    others = _in_shard(3, 310)[300:]
    lines = [(pid, pid, 1000) for pid in tied]
    lines += [(pid, pid, 1001 + i) for i, pid in enumerate(others[:5])]
    lines += [(pid, pid, 990 - i) for i, pid in enumerate(others[5:])]
    put_rating_board(put, lines)
    line = BoardLine(tied[150], tied[150], 1000)
    calls: list[dict[str, Any]] = []
    query = dynamo.query

    def counted(**request: Any) -> Any:
        if request["KeyConditionExpression"].startswith("board_pk") and (
            request["ExpressionAttributeValues"][":pk"]["S"] == "RATING#3"
        ):
            calls.append(request)
        return query(**request)

    dynamo.query = counted
    try:
        assert real.rating_around(line, 5) == fake.rating_around(line, 5)
    finally:
        del dynamo.query
    assert TIE_PAGE < 300
    assert 2 <= len(calls) <= 2 + 2  # each way: a page of 5, then pages of TIE_PAGE
