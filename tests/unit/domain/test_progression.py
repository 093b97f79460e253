"""Unit tests: progression (``shared/domain/progression.py``) and the closed round the
tournament keeps for it (``Tournament.closed``; RULINGS.md, "Progression: history"): weeks from
Monday 00:00 UTC, statistics, the histogram's rank arithmetic against a brute-force count, and
what a profile change does to the rating board under repeats and late records."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.domain.progression import (
    BoardEntry,
    Profile,
    Stats,
    block_of,
    board_move,
    closed_rounds,
    pairs_of,
    player_entries,
    previous_week,
    rank_of,
    summary_of,
    week_of,
    week_start_ms,
)
from shared.domain.rating import INITIAL_RATING
from tests.unit.domain.helpers import begin_round, decide, play_round, run, start

DAY_MS = 24 * 3600 * 1000


# ---------------------------------------------------------------------------- the closed round
def test_the_round_closing_transition_keeps_the_round_it_closed_with_every_row() -> None:
    t, dealer, _ = start(8, seed=4)
    t, _, now = begin_round(t, dealer)
    played = []
    for duel in list(t.duels):
        t, _, now = decide(t, dealer, duel.duel_id, None, now)  # draws: 12 rows each
        played.append(duel.duel_id)
    assert t.round_no == 2
    assert t.closed is not None
    assert t.closed.round_no == 1
    assert [d.duel_id for d in t.closed.duels] == played
    assert all(d.over and len(d.rows) == 12 for d in t.closed.duels)
    assert t.closed.bye is None
    # the intro's end clears it
    t2, _, _ = begin_round(t, dealer)
    assert t2.closed is None


def test_a_late_call_that_closes_a_round_and_ends_the_next_intro_keeps_the_closed_round() -> None:
    t, dealer, _ = start(2, seed=5)  # one duel: its skips close the round
    t, _, _ = begin_round(t, dealer)
    duel = t.duels[0]
    # every turn times out, and the call comes long after the next intro would have ended
    t2, _ = t.expire(duel.turn_deadline_ms + 13 * dealer.turn_ms + 60_000, dealer)
    assert t2.round_no >= 2
    if not t2.over:
        assert t2.closed is not None
        assert t2.closed.round_no == t2.round_no - 1
        assert t2.phase.value == "playing"


def test_a_bye_is_kept_with_its_round() -> None:
    t, dealer, _ = start(5, seed=1)
    bye = t.bye
    t, _ = play_round(t, dealer, {})
    assert t.closed is not None
    assert t.closed.bye == bye is not None


def test_a_finished_tournament_yields_its_last_round_and_a_summary_ordered_by_place() -> None:
    t, dealer, _ = start(8, seed=6)
    t, _ = run(t, dealer)
    rounds = closed_rounds(t)
    assert rounds[-1].round_no == t.round_no
    assert rounds[-1].duels == t.duels
    s = summary_of(t)
    assert s.rounds == t.round_no
    assert s.ended_ms == t.ended_ms
    assert [(x.place, x.player_id) for x in s.standings] == sorted(
        (p.place or 0, p.player_id) for p in t.players
    )
    for x in s.standings:
        p = t.player(x.player_id)
        assert (x.rating_before, x.rating_after) == (p.rating, p.rating + (p.rating_change or 0))


def test_opponents_are_listed_in_round_order_one_per_duel() -> None:
    t, dealer, _ = start(4, seed=7)
    met: dict[str, list[str]] = {p.player_id: [] for p in t.players}
    seen = {}
    while not t.over:
        t, _ = play_round(t, dealer, {})
        for r in closed_rounds(t):
            seen[r.round_no] = r
    for r in sorted(seen.values(), key=lambda r: r.round_no):
        for d in r.duels:
            a, b = d.players
            met[a].append(b)
            met[b].append(a)
    entries = player_entries(summary_of(t), pairs_of(seen.values()))
    assert {e.player_id: [o.player_id for o in e.opponents] for e in entries} == met


# ---------------------------------------------------------------------------- weeks
def test_the_week_starts_monday_at_midnight_utc_exactly() -> None:
    monday = int(datetime(2026, 11, 30, tzinfo=UTC).timestamp() * 1000)
    assert week_of(monday) == "2026-11-30"
    assert week_of(monday - 1) == "2026-11-23"
    assert week_of(monday + 7 * DAY_MS - 1) == "2026-11-30"
    assert week_of(monday + 7 * DAY_MS) == "2026-12-07"
    assert previous_week("2026-11-30") == "2026-11-23"


@given(st.integers(min_value=0, max_value=4_102_444_800_000))
def test_every_instant_falls_in_the_week_of_its_monday(at_ms: int) -> None:
    start_ms = week_start_ms(at_ms)
    day = datetime.fromtimestamp(start_ms / 1000, tz=UTC)
    assert day.weekday() == 0
    assert (day.hour, day.minute, day.second) == (0, 0, 0)
    assert start_ms <= at_ms < start_ms + 7 * DAY_MS
    assert week_of(at_ms) == day.strftime("%Y-%m-%d")


# ---------------------------------------------------------------------------- statistics
@given(st.lists(st.integers(min_value=1, max_value=8), max_size=30))
def test_statistics_count_tournaments_wins_podiums_and_places(places: list[int]) -> None:
    t, dealer, _ = start(8, seed=8)
    t, _ = run(t, dealer)
    entry = player_entries(summary_of(t), {})[0]
    stats = Stats()
    for place in places:
        stats = stats.plus(type(entry)(**{**_fields(entry), "place": place}))
    assert stats.tournaments == len(places)
    assert stats.wins == places.count(1)
    assert stats.podiums == sum(1 for p in places if p <= 3)
    assert stats.place_sum == sum(places)
    assert stats.average_place == (sum(places) / len(places) if places else None)


def _fields(entry: object) -> dict[str, object]:
    return {name: getattr(entry, name) for name in entry.__slots__}  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- rank arithmetic
@settings(max_examples=200)
@given(
    st.lists(st.integers(min_value=-100, max_value=3000), max_size=60),
    st.integers(min_value=-100, max_value=3000),
    st.sampled_from([1, 7, 64]),
)
def test_the_rank_from_the_histogram_is_one_plus_the_count_strictly_higher(
    scores: list[int], mine: int, block: int
) -> None:
    blocks: dict[int, int] = {}
    values: dict[int, int] = {}
    for s in scores:
        blocks[block_of(s, block)] = blocks.get(block_of(s, block), 0) + 1
        if block_of(s, block) == block_of(mine, block):
            values[s] = values.get(s, 0) + 1
    assert rank_of(mine, blocks, values, block) == 1 + sum(1 for s in scores if s > mine)


# ---------------------------------------------------------------------------- the rating board
def _p(rating: int, version: int, nickname: str = "Nick") -> Profile:
    return Profile("p1", nickname, rating, version)


def test_a_new_player_at_the_initial_rating_gets_no_entry_until_the_rating_moves() -> None:
    assert board_move(None, _p(INITIAL_RATING, 1), None) is None
    assert board_move(_p(INITIAL_RATING, 1), _p(INITIAL_RATING, 2, "Other"), None) is None
    move = board_move(_p(INITIAL_RATING, 2), _p(INITIAL_RATING + 25, 3), None)
    assert move is not None
    assert move.before is None
    assert (move.removed, move.added, move.after.version) == (None, INITIAL_RATING + 25, 3)


def test_a_repeat_or_an_older_record_changes_nothing() -> None:
    entry = BoardEntry("p1", "Nick", 1025, 5)
    assert board_move(_p(1000, 4), _p(1025, 5), entry) is None
    assert board_move(_p(1000, 3), _p(1010, 4), entry) is None
    move = board_move(_p(1025, 5), _p(1040, 6), entry)
    assert move is not None
    assert (move.removed, move.added) == (1025, 1040)


def test_a_removed_player_never_rated_leaves_only_a_tombstone() -> None:
    move = board_move(_p(INITIAL_RATING, 3), None, None)
    assert move is not None
    assert (move.removed, move.added, move.after.version) == (None, None, 3)
    assert board_move(_p(INITIAL_RATING, 2), _p(INITIAL_RATING + 20, 3), move.after) is None


def test_a_removed_player_leaves_a_tombstone_that_keeps_late_records_out() -> None:
    entry = BoardEntry("p1", "Nick", 1025, 5)
    move = board_move(_p(1025, 5), None, entry)
    assert move is not None
    assert (move.removed, move.added) == (1025, None)
    tomb = move.after
    assert board_move(_p(1025, 5), None, tomb) is None  # the REMOVE again
    assert board_move(_p(1000, 4), _p(1025, 5), tomb) is None  # a late MODIFY


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(st.integers(min_value=900, max_value=1100), st.text("ab", max_size=2)),
        min_size=1,
        max_size=8,
    ),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_applying_any_order_with_repeats_ends_at_the_latest_version(
    changes: list[tuple[int, str]], removed: bool, rng
) -> None:
    """Each record (old image, new image) of a player's profile history, delivered in any order
    with repeats: the entry ends as the newest record says, and the histogram (scores added
    minus removed) holds exactly the live entry."""
    images = [_p(INITIAL_RATING, 1)] + [_p(r, v + 2, n) for v, (r, n) in enumerate(changes)]
    records = list(itertools.pairwise(images))
    if removed:
        records.append((images[-1], None))
    deliveries = records + [rng.choice(records) for _ in range(len(records))]
    rng.shuffle(deliveries)
    deliveries.append(records[-1])  # the newest arrives at least once after the rest too
    entry: BoardEntry | None = None
    counted: dict[int, int] = {}
    for old, new in deliveries:
        move = board_move(old, new, entry)
        if move is None:
            continue
        assert move.before == entry
        if move.removed is not None:
            counted[move.removed] = counted.get(move.removed, 0) - 1
        if move.added is not None:
            counted[move.added] = counted.get(move.added, 0) + 1
        entry = move.after
    live = {k: v for k, v in counted.items() if v}
    last = images[-1]
    rated = last.rating != INITIAL_RATING or any(
        a.rating != b.rating for a, b in itertools.pairwise(images)
    )
    if removed:
        assert live == {}
        assert entry is None or entry.score is None
    elif rated:
        assert entry is not None
        # (the version moves only with a visible change: a record that changes neither
        # rating nor nickname writes nothing)
        assert (entry.score, entry.nickname) == (last.rating, last.nickname)
        assert live == {last.rating: 1}
    else:
        assert entry is None
        assert live == {}
