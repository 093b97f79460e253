"""Use case: history (``shared/services/history.py``) over the in-memory port
(``shared.adapters.memory.InMemoryHistory``): the states a tournament's writes store, given in
order, record every round once, then each player's entry and the summary; repeats write
nothing; the end before a round waits for it; a player whose rating moved by 0 still gets a
board entry; profile changes move, rename and forget."""

from __future__ import annotations

import dataclasses

import pytest

from shared.adapters.memory import InMemoryHistory
from shared.domain.progression import Profile, ProfileChange
from shared.domain.rating import INITIAL_RATING
from shared.domain.tournament import Tournament
from shared.services.history import MissingRoundsError, record_tournament, track_profile
from tests.unit.domain.helpers import begin_round, decide, start

NOW = 1_800_000_000_000


def _stored_states(n: int = 8, seed: int = 21) -> list[Tournament]:
    """Every state of a played tournament that a write carrying ``hist`` would store (a closed
    round, or the end), in order."""
    t, dealer, _ = start(n, seed=seed, now_ms=NOW)
    states: list[Tournament] = []
    while not t.over:
        t, _, now = begin_round(t, dealer)
        for duel in list(t.duels):
            if t.over or duel.duel_id not in {d.duel_id for d in t.duels}:
                break
            winner = min(duel.players) if duel.duel_id.endswith((".1", ".3")) else None
            t, _, now = decide(t, dealer, duel.duel_id, winner, now)
            if t.closed is not None or t.over:
                states.append(t)
    return states


def _profiles(history: InMemoryHistory, t: Tournament) -> None:
    for p in t.players:
        rating = p.rating + (p.rating_change or 0)
        history.profiles[p.player_id] = Profile(p.player_id, p.nickname, rating, 5)


def test_a_tournament_is_recorded_once_round_by_round() -> None:
    states = _stored_states()
    final = states[-1]
    history = InMemoryHistory()
    _profiles(history, final)
    written = sum(record_tournament(history, t) for t in states)
    assert sorted(n for _, n in history.rounds) == list(range(1, final.round_no + 1))
    assert history.has_summary(final.tournament_id)
    assert len(history.entries) == 8
    assert written == final.round_no + 8 + 1
    # any repeat, in any order, writes nothing more
    assert sum(record_tournament(history, t) for t in states + states[::-1]) == 0
    places = sorted(e.place for e in history.entries.values())
    assert places == sorted(p.place or 0 for p in final.players)
    for e in history.entries.values():
        met = [
            b if a == e.player_id else a
            for n in range(1, final.round_no + 1)
            for a, b in (d.players for d in history.rounds[(final.tournament_id, n)].duels)
            if e.player_id in (a, b)
        ]
        assert [o.player_id for o in e.opponents] == met


def test_the_end_before_a_round_waits_for_it_and_writes_no_entry() -> None:
    states = _stored_states()
    history = InMemoryHistory()
    _profiles(history, states[-1])
    with pytest.raises(MissingRoundsError):
        record_tournament(history, states[-1])
    assert history.entries == {}
    assert not history.has_summary(states[-1].tournament_id)
    for t in states:
        record_tournament(history, t)
    assert history.has_summary(states[-1].tournament_id)


def test_a_player_whose_rating_moved_by_0_is_entered_from_their_profile() -> None:
    states = _stored_states()
    final = states[-1]
    p = final.players[0]
    zero = dataclasses.replace(p, rating_change=0)
    states[-1] = dataclasses.replace(
        final, players=tuple(zero if q is p else q for q in final.players)
    )
    history = InMemoryHistory()
    _profiles(history, states[-1])
    for t in states:
        record_tournament(history, t)
    entry = history.board_entry(p.player_id)
    assert entry is not None
    assert (entry.score, entry.version) == (p.rating, 5)
    # the others are entered by their profile's record, not here
    assert set(history.board) == {p.player_id}


def test_profile_changes_move_rename_and_forget() -> None:
    history = InMemoryHistory()
    a = Profile("p1", "Nick", INITIAL_RATING, 1)
    b = Profile("p1", "Nick", INITIAL_RATING + 18, 2)
    c = Profile("p1", "Renamed", INITIAL_RATING + 18, 3)
    assert track_profile(history, ProfileChange(None, a)) is None
    assert track_profile(history, ProfileChange(a, b)) is not None
    assert history.histogram == {INITIAL_RATING + 18: 1}
    history.stats["p1"] = {"week_en": "2027-01-11"}
    history.weekly[("en", "2027-01-11", "p1")] = {"points": 18, "nickname": "Nick"}
    track_profile(history, ProfileChange(b, c))
    assert history.board["p1"].nickname == "Renamed"
    assert history.weekly[("en", "2027-01-11", "p1")]["nickname"] == "Renamed"
    assert history.histogram == {INITIAL_RATING + 18: 1}  # a rename moves no count
    track_profile(history, ProfileChange(c, None))
    assert history.board["p1"].score is None
    assert {k: v for k, v in history.histogram.items() if v} == {}
    assert "p1" not in history.stats
