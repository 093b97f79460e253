"""The leaderboards' partition load at the capacity plan's peak (``infra.simulation.boards``):
computed from the designed writes on the real keys, never timed."""

from __future__ import annotations

import pytest

from infra.simulation.boards import WCU_LIMIT, Peak, simulate
from shared.adapters.dynamo import schema


@pytest.fixture(scope="module")
def load():  # type: ignore[no-untyped-def]
    return simulate(Peak(players=200_000, seconds=3))


def test_no_leaderboard_key_takes_half_a_partitions_writes(load) -> None:  # type: ignore[no-untyped-def]
    name, wcu = load.hottest()
    assert wcu < WCU_LIMIT / 2, f"{name} takes {wcu:.0f} WCU/s at the plan's peak"


def test_every_board_family_is_written(load) -> None:  # type: ignore[no-untyped-def]
    families = load.families
    for family in (
        "rating board (gsi_board)",
        "weekly board (gsi_board)",
        "histogram block counters",
        "histogram value counters",
    ):
        assert family in families, family
        assert families[family][1] > 0, family
    assert load.changes == 3 * 2_000


def test_a_moved_rating_entry_costs_a_delete_and_a_put_on_its_shard(load) -> None:  # type: ignore[no-untyped-def]
    total = sum(w for k, w in load.wcu.items() if k.startswith("gsi_board:RATING#"))
    moved = load.changes - load.first_entries
    # per second: a new entry is one put, a moved one a delete and a put (unmoved: none)
    assert load.first_entries / 3 <= total <= (2 * moved + load.first_entries) / 3


def test_board_reads_cost_a_stated_small_number_of_units(load) -> None:  # type: ignore[no-untyped-def]
    reads = load.reads
    assert reads.rating_top <= schema.RATING_BOARD_SHARDS * 3 * 0.5  # 100 entries < 12 KB a shard
    assert reads.rating_rank == 2 * schema.HISTOGRAM_SHARDS * 0.5  # items under 4 KB
    assert reads.rating_board < 100
