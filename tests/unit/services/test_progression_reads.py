"""The progression use case (``shared.services.progression``) over fakes: the week a weekly
board resets on, the history cursor (only a key of that player's pages is accepted), and the
replies built from the in-memory ``Progression``."""

from __future__ import annotations

import base64
import dataclasses
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.adapters.memory_progression import InMemoryProgression
from shared.services import progression
from shared.services.errors import InvalidCursorError, InvalidValueError, NotFoundError
from shared.services.outbox import Request
from tests.fakes import fake_deps, new_player, sent
from tests.functional.progression.seed import put_history, put_rating_board

ids = st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True)
sort_keys = st.builds(
    lambda ms, tid: f"HIST#{ms:013d}#{tid}",
    st.integers(min_value=0, max_value=10**13 - 1),
    ids,
)


@given(st.integers(min_value=0, max_value=4_102_444_800_000))
def test_the_week_is_the_monday_at_or_before_the_instant(ms: int) -> None:
    day = datetime.fromtimestamp(ms / 1000, UTC).date()
    monday = datetime.fromisoformat(progression.week_of(ms)).date()
    assert monday.weekday() == 0
    assert 0 <= (day - monday).days < 7


def test_weeks_turn_at_monday_midnight_utc() -> None:
    monday = int(datetime(2026, 11, 30, tzinfo=UTC).timestamp() * 1000)
    assert progression.week_of(monday) == "2026-11-30"
    assert progression.week_of(monday - 1) == "2026-11-23"


@given(ids, sort_keys)
def test_a_cursor_reads_back_only_for_its_player(player_id: str, sort_key: str) -> None:
    cursor = progression.encode_cursor(player_id, sort_key)
    assert progression.decode_cursor(player_id, cursor) == sort_key
    with pytest.raises(InvalidCursorError):
        progression.decode_cursor(player_id + "x", cursor)


@given(ids, st.text(max_size=80))
def test_anything_else_is_an_invalid_cursor(player_id: str, garbage: str) -> None:
    raw = base64.urlsafe_b64encode(garbage.encode()).decode()
    for cursor in (garbage, raw, raw.rstrip("=")):
        try:
            key = progression.decode_cursor(player_id, cursor)
        except InvalidCursorError:
            continue
        # accepted only when it really is a HIST# key of this player
        assert key.startswith("HIST#")
        assert progression.encode_cursor(player_id, key).rstrip("=") == cursor.rstrip("=")


def _deps() -> tuple[object, InMemoryProgression]:
    reads = InMemoryProgression()
    return dataclasses.replace(fake_deps(), progression=reads), reads


def test_profile_and_history_over_the_fake() -> None:
    deps, reads = _deps()
    me = new_player(deps, "c1")  # type: ignore[arg-type]
    for n in range(3):
        put_history(reads.put, me, f"t{n}", 1000 + n, "en", n + 1, 8, 1000, 1000 + n)
    progression.profile(deps, Request("c1", "p"), me, None)  # type: ignore[arg-type]
    points = sent(deps, "c1")[-1]["player"]["rating_history"]  # type: ignore[arg-type]
    assert [p["tournament_id"] for p in points] == ["t0", "t1", "t2"]
    progression.history(deps, Request("c1", "h"), me, None, None, 2)  # type: ignore[arg-type]
    page = sent(deps, "c1")[-1]  # type: ignore[arg-type]
    assert [t["tournament_id"] for t in page["tournaments"]] == ["t2", "t1"]
    cursor = page["next_cursor"]
    progression.history(deps, Request("c1", "h2"), me, None, cursor, 2)  # type: ignore[arg-type]
    last = sent(deps, "c1")[-1]  # type: ignore[arg-type]
    assert [t["tournament_id"] for t in last["tournaments"]] == ["t0"]
    assert last["next_cursor"] is None
    with pytest.raises(NotFoundError):
        progression.profile(deps, Request("c1"), me, "nobody")  # type: ignore[arg-type]


def test_the_rating_board_refuses_a_language_and_ranks_ties_together() -> None:
    deps, reads = _deps()
    me = new_player(deps, "c1")  # type: ignore[arg-type]
    put_rating_board(reads.put, [("a", "A", 1100), ("b", "B", 1100), (me, "Me", 1000)])
    with pytest.raises(InvalidValueError):
        progression.leaderboard(deps, Request("c1"), me, "rating", "en", None)  # type: ignore[arg-type]
    progression.leaderboard(deps, Request("c1", "l"), me, "rating", None, None)  # type: ignore[arg-type]
    board = sent(deps, "c1")[-1]  # type: ignore[arg-type]
    assert [e["rank"] for e in board["entries"]] == [1, 1, 3]
    assert board["me"]["rank"] == 3
    assert [e["player_id"] for e in board["around"]] == ["a", "b", me]
