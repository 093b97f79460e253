"""Contract: ``InMemoryHistory`` (``shared/adapters/memory.py``) and ``DynamoHistory``
(``shared/adapters/dynamo/history.py``) on moto behave the same: each write once, a repeat
answered False and changing nothing, statistics adding up over tournaments, the board entry
moved only from the version read, renames and removals.

Every case runs against both, so the fake the use case's unit tests rely on cannot drift from
the real adapter (STYLE.md: "fakes need a contract test run against the real adapter too")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from shared.adapters.memory import InMemoryHistory
from shared.domain.progression import (
    BoardEntry,
    BoardMove,
    Opponent,
    PlayerEntry,
    Profile,
    RoundRecord,
    Standing,
    Summary,
    week_of,
)
from shared.domain.tournament import Tournament
from tests.unit.domain.helpers import run, start

NOW = 1_800_000_000_000


class _Dynamo:
    """The DynamoDB adapter and a reader of what it stored, as the memory one exposes it."""

    def __init__(self, client: Any) -> None:
        from shared.adapters.dynamo.history import DynamoHistory

        self.client = client
        self.history = DynamoHistory(client, "contract", lambda: NOW)

    def stats(self, pid: str) -> dict[str, Any]:
        from shared.adapters.dynamo import schema
        from shared.adapters.dynamo.store import from_av, to_av

        item = self.client.get_item(TableName="contract", Key=to_av(schema.stats_key(pid)))
        return from_av(item.get("Item", {}))

    def weekly(self, lang: str, week: str, pid: str) -> dict[str, Any]:
        from shared.adapters.dynamo import schema
        from shared.adapters.dynamo.store import from_av, to_av

        key = to_av(schema.weekly_entry_key(lang, week, pid))
        item = from_av(self.client.get_item(TableName="contract", Key=key).get("Item", {}))
        return {"points": item["board_score"], "nickname": item["nickname"]} if item else {}

    def give_profile(self, p: Profile) -> None:
        from shared.adapters.dynamo import schema
        from shared.adapters.dynamo.store import to_av

        item = {**schema.player_key(p.player_id), "nickname": p.nickname, "rating": p.rating}
        self.client.put_item(TableName="contract", Item=to_av({**item, "version": p.version}))


class _Memory:
    def __init__(self) -> None:
        self.history = InMemoryHistory()

    def stats(self, pid: str) -> dict[str, Any]:
        return dict(self.history.stats.get(pid, {}))

    def weekly(self, lang: str, week: str, pid: str) -> dict[str, Any]:
        return dict(self.history.weekly.get((lang, week, pid), {}))

    def give_profile(self, p: Profile) -> None:
        self.history.profiles[p.player_id] = p


@pytest.fixture(params=["memory", "dynamo"])
def side(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    if request.param == "memory":
        yield _Memory()
        return
    import boto3
    from moto import mock_aws

    from shared.adapters.dynamo.schema import create_tables

    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_tables(client, "contract")
        yield _Dynamo(client)


def _finished() -> Tournament:
    t, dealer, _ = start(4, seed=11, now_ms=NOW)
    t, _ = run(t, dealer)
    return t


def _entry(tid: str, place: int, change: int, ended_ms: int = NOW) -> PlayerEntry:
    return PlayerEntry(
        player_id="p1",
        nickname="Nick",
        tournament_id=tid,
        ended_ms=ended_ms,
        language="en",
        place=place,
        players=8,
        rating_before=1000,
        rating_after=1000 + change,
        opponents=(Opponent("p2", "Other"),),
    )


def test_a_round_is_stored_once_and_its_pairs_read_back(side: Any) -> None:
    t = _finished()
    record = RoundRecord(t.tournament_id, t.round_no, t.bye, t.duels, NOW)
    assert side.history.put_round(record) is True
    assert side.history.put_round(record) is False
    assert side.history.pairs(t.tournament_id) == {t.round_no: [tuple(d.players) for d in t.duels]}
    assert side.history.pairs("other") == {}


def test_a_summary_is_stored_once(side: Any) -> None:
    summary = Summary("t9", "en", NOW, NOW + 1, 3, (Standing("p1", "Nick", 1, 1000, 25),))
    assert side.history.has_summary("t9") is False
    assert side.history.put_summary(summary) is True
    assert side.history.put_summary(summary) is False
    assert side.history.has_summary("t9") is True


def test_entries_count_once_and_statistics_add_up(side: Any) -> None:
    h = side.history
    assert h.add_entry(_entry("t1", 1, 25)) is True
    assert h.add_entry(_entry("t1", 1, 25)) is False  # a repeat
    assert h.add_entry(_entry("t2", 4, -4, NOW + 1000)) is True
    stats = side.stats("p1")
    assert {k: stats[k] for k in ("tournaments", "wins", "podiums", "place_sum")} == {
        "tournaments": 2,
        "wins": 1,
        "podiums": 1,
        "place_sum": 5,
    }
    assert (stats["lang_en_n"], stats["lang_en_places"]) == (2, 5)
    assert stats["week_en"] == week_of(NOW)
    assert side.weekly("en", week_of(NOW), "p1") == {"points": 21, "nickname": "Nick"}


def test_the_best_rating_only_rises(side: Any) -> None:
    h = side.history
    assert h.raise_best_rating("p1", 1010) is True
    assert h.raise_best_rating("p1", 1005) is False
    assert h.raise_best_rating("p1", 1010) is False
    assert h.raise_best_rating("p1", 1020) is True
    assert side.stats("p1")["best_rating"] == 1020


def test_the_board_entry_moves_only_from_the_version_read(side: Any) -> None:
    h = side.history
    assert h.board_entry("p1") is None
    first = BoardEntry("p1", "Nick", 1025, 3)
    assert h.move(BoardMove(None, first)) is True
    assert h.move(BoardMove(None, first)) is False  # someone made it meanwhile
    assert h.board_entry("p1") == first
    later = BoardEntry("p1", "Nick", 1040, 5)
    stale = BoardEntry("p1", "Nick", 1025, 2)
    assert h.move(BoardMove(stale, later)) is False
    assert h.move(BoardMove(first, later)) is True
    tomb = BoardEntry("p1", "Nick", None, 6)
    assert h.move(BoardMove(later, tomb)) is True
    assert h.board_entry("p1") == tomb


def test_a_rename_reaches_the_weekly_entries_and_a_removal_forgets_the_statistics(
    side: Any,
) -> None:
    h = side.history
    h.add_entry(_entry("t1", 2, 18))
    assert h.rename("p1", "Renamed") == 1
    assert side.weekly("en", week_of(NOW), "p1")["nickname"] == "Renamed"
    assert h.rename("nobody", "X") == 0
    h.forget("p1")
    assert side.stats("p1") == {}


def test_a_profile_reads_as_stored(side: Any) -> None:
    assert side.history.profile("p1") is None
    side.give_profile(Profile("p1", "Nick", 1030, 7))
    assert side.history.profile("p1") == Profile("p1", "Nick", 1030, 7)
