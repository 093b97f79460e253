"""Unit tests: the tournament aggregate (shared/domain/tournament.py).

Rules page "The short version", "Tournament", "Lives and elimination", "Draws", "Byes", "Turns
and the clock", "Rating", "Leaving and disconnects", "Languages and words"; rulings 1-7.
Driven directly with a seeded dealer and a cheap fake word source (tests/unit/domain/helpers.py).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections import Counter
from typing import Any

import pytest

from shared.domain.duel import Duel, DuelResult, EndReason
from shared.domain.errors import (
    AlreadyEliminatedError,
    DomainError,
    DuelNotStartedError,
    NotInDuelError,
    NotInTournamentError,
    TournamentOverError,
    TurnOverError,
    WrongLengthError,
)
from shared.domain.events import (
    ConnectionChanged,
    DuelEnded,
    DuelStarted,
    Event,
    Placed,
    PlayerEliminated,
    RoundEnded,
    RoundStarted,
    TournamentEnded,
    TurnPlayed,
)
from shared.domain.languages import get_language
from shared.domain.rating import rating_changes
from shared.domain.tournament import LIVES, PLAYERS, Dealer, Phase, Tournament
from shared.domain.words import AllowedWords
from tests.unit.domain.helpers import (
    TinyWords,
    begin_round,
    decide,
    entrants,
    events_of,
    lower_id_wins,
    make_dealer,
    play,
    play_round,
    player_ids,
    run,
    start,
    wrong_word,
)

TABLE = [25, 18, 11, 4, -4, -11, -18, -25]


def draw_all(t: Tournament, duel: Duel) -> str | None:
    return None


def lives(t: Tournament) -> dict[str, int]:
    return {p.player_id: p.lives for p in t.players}


def places(t: Tournament) -> dict[str, int | None]:
    return {p.player_id: p.place for p in t.players}


def after_two_drawn_rounds(seed: int = 0) -> tuple[Tournament, Dealer]:
    """8 players, two rounds of draws: everyone alive on 1 life, round 3 in its intro."""
    t, dealer, _ = start(8, seed)
    for _ in range(2):
        t, _, now = begin_round(t, dealer)
        for duel in list(t.duels):
            t, _, now = decide(t, dealer, duel.duel_id, None, now)
    assert t.round_no == 3
    assert set(lives(t).values()) == {1}
    return t, dealer


# ------------------------------------------------------------------ start and rounds
def test_tournament_starts_with_eight_players_three_lives() -> None:
    """Rules page: 8 players per tournament, 3 lives each; it starts in round 1's intro."""
    t, _, events = start(8)
    assert PLAYERS == 8
    assert LIVES == 3
    assert len(t.players) == 8
    assert all(p.lives == 3 and p.alive for p in t.players)
    assert t.round_no == 1
    assert t.phase is Phase.INTRO
    [started] = events
    assert isinstance(started, RoundStarted)
    assert started.round_no == 1
    assert len(started.pairs) == 4
    assert started.bye is None


def test_start_needs_two_distinct_players() -> None:
    """Tournament.start documents ValueError for fewer than 2 entrants or duplicate ids."""
    dealer = make_dealer()
    with pytest.raises(ValueError, match="two distinct"):
        Tournament.start("t1", "en", entrants(1), 0, dealer)
    with pytest.raises(ValueError, match="two distinct"):
        Tournament.start("t1", "en", [*entrants(2), *entrants(1)], 0, dealer)


def test_every_alive_player_is_in_exactly_one_duel_or_the_bye() -> None:
    """Rules page "Tournament": in every round the players still alive are paired for 1v1
    duels (ruling 4: one bye when the count is odd)."""
    for n in range(2, 9):
        t, _, [started] = start(n, seed=n)
        assert isinstance(started, RoundStarted)
        seen = [p for _, a, b in started.pairs for p in (a, b)]
        if started.bye is not None:
            seen.append(started.bye)
        assert sorted(seen) == sorted(player_ids(n))
        assert (started.bye is not None) == (n % 2 == 1)
        assert len(t.duels) == n // 2


def test_round_intro_lasts_six_seconds() -> None:
    """Rules page: a 6-second intro shows the pairs before each round; guesses wait for it."""
    t, dealer, [started] = start(8, now_ms=1_000)
    assert dealer.intro_ms == 6_000
    assert isinstance(started, RoundStarted)
    assert started.intro_deadline_ms == 7_000
    assert t.next_deadline() == 7_000
    duel = t.duels[0]
    first = duel.next_player
    assert first is not None
    with pytest.raises(DuelNotStartedError):
        t.guess(first, duel.duel_id, duel.word, tuple(duel.word), 6_999, dealer)
    same, nothing = t.expire(6_999, dealer)
    assert same is t
    assert nothing == []
    t, events = t.expire(7_000, dealer)
    assert t.phase is Phase.PLAYING
    assert len(events_of(events, DuelStarted)) == 4


def test_all_duels_of_a_round_run_at_the_same_time() -> None:
    """Rules page: each round has 1v1 duels on a shared board, all at the same time."""
    t, dealer, _ = start(8)
    t, events, now = begin_round(t, dealer)
    started = events_of(events, DuelStarted)
    assert {e.deadline_ms for e in started} == {now + 30_000}
    assert {d.starts_ms for d in t.duels} == {now}
    assert len({e.duel_id for e in started}) == 4


def test_round_ends_when_its_last_duel_is_over() -> None:
    """Rules page: the round ends when its last duel is over."""
    t, dealer, _ = start(8)
    t, _, now = begin_round(t, dealer)
    duels = list(t.duels)
    for duel in duels[:-1]:
        t, events, now = decide(t, dealer, duel.duel_id, min(duel.players), now)
        assert t.round_no == 1
        assert not events_of(events, RoundEnded)
    t, events, now = decide(t, dealer, duels[-1].duel_id, min(duels[-1].players), now)
    [ended] = events_of(events, RoundEnded)
    assert ended.round_no == 1
    [nxt] = events_of(events, RoundStarted)
    assert nxt.round_no == 2
    assert nxt.intro_deadline_ms == now + 6_000
    assert t.round_no == 2


# ------------------------------------------------------------------ lives
def test_win_costs_nothing() -> None:
    """Rules page: winning a duel costs nothing."""
    t, dealer, _ = start(2)
    t, _, now = begin_round(t, dealer)
    t, _, _ = decide(t, dealer, t.duels[0].duel_id, "p1", now)
    assert t.player("p1").lives == 3


def test_lost_duel_costs_one_life() -> None:
    """Rules page: losing a duel costs 1 life."""
    t, dealer, _ = start(2)
    t, _, now = begin_round(t, dealer)
    t, _, _ = decide(t, dealer, t.duels[0].duel_id, "p1", now)
    assert t.player("p2").lives == 2
    assert t.player("p2").alive


def test_draw_costs_both_a_life() -> None:
    """Rules page "Draws": in a draw both players lose 1 life."""
    t, dealer, _ = start(2)
    t, _, now = begin_round(t, dealer)
    t, events, _ = decide(t, dealer, t.duels[0].duel_id, None, now)
    [ended] = events_of(events, DuelEnded)
    assert ended.result is DuelResult.DRAW
    assert lives(t) == {"p1": 2, "p2": 2}


def test_bye_costs_no_life() -> None:
    """Rules page "Byes": the bye means no duel and no life lost."""
    t, dealer, [started] = start(3)
    assert isinstance(started, RoundStarted)
    bye = started.bye
    assert bye is not None
    assert t.duel_of(bye) is None
    t, events, now = begin_round(t, dealer)
    assert bye not in {p for e in events_of(events, DuelStarted) for p in e.players}
    t, _, _ = decide(t, dealer, t.duels[0].duel_id, None, now)  # the duel is a draw
    assert t.player(bye).lives == 3
    assert t.round_no == 2


def test_bye_never_twice_in_a_row() -> None:
    """Rules page "Byes": a bye never goes to the same player in two rounds in a row."""
    for seed in range(10):
        t, dealer, events = start(5, seed)
        t, more = run(t, dealer, lower_id_wins)
        byes = [e.bye for e in events_of(events + more, RoundStarted)]
        for previous, current in itertools.pairwise(byes):
            if previous is not None:
                assert current != previous


def test_three_players_for_three_rounds_each_get_exactly_one_bye() -> None:
    """Ruling 4: the bye goes to the fewest byes so far, so with three players alive for three
    rounds each has one bye (before, the first round's holder could take the third round's
    too). Each duel is won by the player with fewer lives, so nobody goes out meanwhile."""
    for seed in range(30):
        t, dealer, events = start(3, seed)
        for _ in range(3):
            outcomes: dict[frozenset[str], str | None] = {
                frozenset(d.players): min(d.players, key=lambda p: (t.player(p).lives, p))
                for d in t.duels
            }
            t, more = play_round(t, dealer, outcomes)
            events += more
        assert len(t.alive) == 3
        byes = [e.bye for e in events_of(events, RoundStarted)][:3]
        assert sorted(byes) == ["p1", "p2", "p3"], (seed, byes)
        # the fourth round's bye (already drawn) is the holder's second
        assert sorted(p.byes for p in t.players) == [1, 1, 2]


def test_each_players_byes_count_the_rounds_they_had_the_bye() -> None:
    """``PlayerState.byes``: the byes of this tournament, the current round's included, and
    every bye went to an eligible player with the fewest (ruling 4)."""
    for n, seed in itertools.product((3, 5, 7), range(5)):
        t, dealer, events = start(n, seed)
        assert sum(p.byes for p in t.players) == (n % 2)
        t, more = run(t, dealer, lower_id_wins)
        counts: Counter[str] = Counter()
        previous: str | None = None
        for e in events_of(events + more, RoundStarted):
            if e.bye is not None:
                alive = {p for _, a, b in e.pairs for p in (a, b)} | {e.bye}
                assert counts[e.bye] == min(counts[p] for p in alive if p != previous)
                counts[e.bye] += 1
            previous = e.bye
        assert {p.player_id: p.byes for p in t.players} == {
            pid: counts[pid] for pid in player_ids(n)
        }


def test_pairing_avoids_the_previous_opponent() -> None:
    """Rules page: pairing tries to avoid your opponent from the previous round (ruling 4)."""
    for seed in range(10):
        t, dealer, [first] = start(8, seed)
        assert isinstance(first, RoundStarted)
        t, _, now = begin_round(t, dealer)
        events: list[Event] = []
        for duel in list(t.duels):
            t, events, now = decide(t, dealer, duel.duel_id, min(duel.players), now)
        [second] = events_of(events, RoundStarted)
        before = {frozenset((a, b)) for _, a, b in first.pairs}
        after = {frozenset((a, b)) for _, a, b in second.pairs}
        assert not before & after


def test_pairing_is_random() -> None:
    """Rules page: "Pairing is random" — different seeds give different first rounds."""
    firsts = set()
    for seed in range(30):
        _, _, [started] = start(8, seed)
        assert isinstance(started, RoundStarted)
        firsts.add(frozenset(frozenset((a, b)) for _, a, b in started.pairs))
    assert len(firsts) > 10


def test_zero_lives_is_out() -> None:
    """Rules page: at 0 lives you are eliminated (told at once, ruling 2); an eliminated
    player cannot guess any more."""
    t, dealer, _ = start(3, seed=1)
    loser = None
    for _ in range(10):
        t, _, now = begin_round(t, dealer)
        duel = t.duels[0]
        loser = max(duel.players)
        t, events, _ = decide(t, dealer, duel.duel_id, min(duel.players), now)
        if not t.player(loser).alive:
            break
    assert loser is not None
    p = t.player(loser)
    assert p.lives == 0
    assert not p.alive
    assert PlayerEliminated(loser, p.out_round or 0, "lives") in events
    if not t.over:
        duel = t.duels[0]
        with pytest.raises(AlreadyEliminatedError):
            t.guess(loser, duel.duel_id, duel.word, tuple(duel.word), now, dealer)


def test_last_alive_wins() -> None:
    """Rules page: the last player alive wins the tournament (place 1, fixed at the end)."""
    t, dealer, events = start(8, seed=3)
    t, more = run(t, dealer, lower_id_wins)
    events += more
    [ended] = events_of(events, TournamentEnded)
    assert events[-1] == ended
    assert ended.winners == ("p1",)  # p1 never loses under this policy
    assert t.over
    assert t.phase is Phase.OVER
    assert t.player("p1").place == 1
    assert next(x.player_id for x in ended.placed) == "p1"
    assert len(ended.placed) == 8
    assert t.next_deadline() is None


def test_finished_tournament_refuses_guesses_and_ignores_leaves() -> None:
    """After the end nothing changes: guesses raise TournamentOverError, leaving is a no-op."""
    t, dealer, _ = start(2)
    t, _ = run(t, dealer)
    with pytest.raises(TournamentOverError):
        t.guess("p1", "t1.1.1", "abcd", tuple("abcd"), 10**9, dealer)
    assert t.leave("p1", 10**9, dealer) == (t, [])
    assert t.expire(10**12, dealer) == (t, [])


# ------------------------------------------------------------------ places (ruling 2)
def test_players_out_in_same_round_share_place() -> None:
    """Rules page / ruling 2: players eliminated in the same round share one place,
    1 + the number still alive after that round."""

    def p1_wins_others_draw(t: Tournament, duel: Duel) -> str | None:
        return "p1" if "p1" in duel.players else None

    t, dealer, _ = start(4)
    t, events = run(t, dealer, p1_wins_others_draw)
    assert places(t) == {"p1": 1, "p2": 2, "p3": 2, "p4": 2}
    [round_end] = [e for e in events_of(events, RoundEnded) if e.placed]
    assert round_end.round_no == 3
    assert {x.place for x in round_end.placed} == {2}
    # rating: p1 beats 3 (+25), each other: 1 loss and 2 draws -> 50/3 * -0.5 = -8.3 -> -8
    assert {p.player_id: p.rating_change for p in t.players} == {
        "p1": 25,
        "p2": -8,
        "p3": -8,
        "p4": -8,
    }


def test_round_eliminating_everyone_shares_place_and_is_not_replayed() -> None:
    """Rules page: if a round eliminates everyone who was left, they all share that place, and
    the round is not replayed (ruling 2: possibly place 1)."""
    t, dealer, events = start(8)
    t, more = run(t, dealer, draw_all)
    events += more
    assert t.over
    assert t.round_no == 3
    assert max(e.round_no for e in events_of(events, RoundStarted)) == 3
    assert set(places(t).values()) == {1}
    [ended] = events_of(events, TournamentEnded)
    assert sorted(ended.winners) == player_ids(8)
    assert all(p.rating_change == 0 for p in t.players)


def test_round_eliminating_the_last_two_shares_first_place() -> None:
    """Ruling 2: the last two going out together share place 1; earlier players keep theirs."""

    def scripted(t: Tournament, duel: Duel) -> str | None:
        if "p3" in duel.players:
            return min(p for p in duel.players if p != "p3")  # p3 loses every duel
        return None  # p1 vs p2 always draw

    t, dealer, _ = start(3, seed=5)
    t, events = run(t, dealer, scripted)
    assert places(t)["p3"] == 3
    assert places(t)["p1"] == places(t)["p2"] == 1
    assert sorted(events_of(events, TournamentEnded)[0].winners) == ["p1", "p2"]


def test_place_fixed_at_round_end_and_rating_applied_once() -> None:
    """Ruling 2: told *eliminated* the moment the last life goes; the place is fixed and the
    rating change applied when the round ends, once (rules page: "changes when your place is
    fixed")."""
    t, dealer = after_two_drawn_rounds()
    t, _, now = begin_round(t, dealer)
    duels = list(t.duels)
    first = duels[0]
    loser = max(first.players)
    t, events, now = decide(t, dealer, first.duel_id, min(first.players), now)
    assert PlayerEliminated(loser, 3, "lives") in events
    assert not t.player(loser).alive
    assert t.player(loser).place is None  # not yet: others may still share it
    assert t.player(loser).rating_change is None
    assert not events_of(events, Placed)
    assert not events_of(events, RoundEnded)
    all_events = list(events)
    for duel in duels[1:]:
        t, events, now = decide(t, dealer, duel.duel_id, min(duel.players), now)
        all_events += events
    [round_end] = [e for e in events_of(all_events, RoundEnded) if e.round_no == 3]
    placed = {x.player_id: x for x in round_end.placed}
    assert set(placed) == {max(d.players) for d in duels}
    assert {x.place for x in placed.values()} == {5}  # 4 still alive
    assert placed[loser].change == t.player(loser).rating_change
    t, more = run(t, dealer)
    all_events += more
    ids_in_round_ends = [x.player_id for e in events_of(all_events, RoundEnded) for x in e.placed]
    assert Counter(ids_in_round_ends)[loser] == 1
    assert t.player(loser).rating_change == placed[loser].change  # never re-applied


def test_winner_place_fixed_when_the_tournament_ends() -> None:
    """Ruling 2: the winner's place is fixed when the tournament ends."""
    t, dealer, _ = start(2)
    t, _, now = begin_round(t, dealer)
    for _ in range(2):
        t, _, now = decide(t, dealer, t.duels[0].duel_id, "p1", now)
        assert t.player("p1").place is None
        t, _, now = begin_round(t, dealer)
    t, events, _ = decide(t, dealer, t.duels[0].duel_id, "p1", now)
    assert places(t) == {"p1": 1, "p2": 2}
    [ended] = events_of(events, TournamentEnded)
    assert ended.placed == (Placed("p1", 1, 25, 1025), Placed("p2", 2, -25, 975))


def test_rating_table_in_a_tournament() -> None:
    """Rules page table: an equal-rated lobby with 8 distinct places gets +25 ... -25.

    One player leaves in each round's intro (so each round places one player) and the duels
    are lost by whoever has more lives, so nobody runs out of lives."""

    def more_lives_loses(t: Tournament, duel: Duel) -> str | None:
        return min(duel.players, key=lambda pid: (t.player(pid).lives, pid))

    t, dealer, _ = start(8, seed=1)
    now = 0
    while not t.over:
        leaver = max(p.player_id for p in t.alive)
        t, _ = t.leave(leaver, now, dealer)
        if t.over:
            break
        round_no = t.round_no
        t, _, now = begin_round(t, dealer)
        for duel in list(t.duels):
            if t.round_no == round_no and not t.duel(duel.duel_id).over:
                t, _, now = decide(t, dealer, duel.duel_id, more_lives_loses(t, duel), now)
    assert places(t) == {f"p{i}": i for i in range(1, 9)}  # p8 left first, p1 won
    assert [t.player(f"p{i}").rating_change for i in range(1, 9)] == TABLE


def test_rating_uses_the_snapshot_and_final_places() -> None:
    """Ruling 1: ratings are snapshotted at the start; each change equals rating_changes of
    the snapshot and the final places; the new rating is snapshot + change."""
    ratings = [1000, 1150, 870, 1190, 1000, 1010, 905, 1099]
    t, dealer, events = start(8, seed=7, ratings=ratings)
    assert [p.rating for p in t.players] == ratings
    t, more = run(t, dealer, lower_id_wins)
    events += more
    final = [p.place or 0 for p in t.players]
    expected = rating_changes(ratings, final)
    assert [p.rating_change for p in t.players] == expected
    [ended] = events_of(events, TournamentEnded)
    by_id = {x.player_id: x for x in ended.placed}
    for p, r, change in zip(t.players, ratings, expected, strict=True):
        assert by_id[p.player_id].rating == r + change
        assert by_id[p.player_id].change == change


# ------------------------------------------------------------------ turns and the clock
def test_turn_lasts_thirty_seconds() -> None:
    """Rules page: each turn lasts 30 seconds; the clock starts when the turn starts (ruling 5)."""
    t, dealer, _ = start(2)
    assert dealer.turn_ms == 30_000
    t, [ds], now = begin_round(t, dealer)
    assert isinstance(ds, DuelStarted)
    assert ds.deadline_ms == now + 30_000
    t, events = play(t, dealer, ds.first, wrong_word(t.duels[0]), now + 4_000)
    [turn] = events
    assert isinstance(turn, TurnPlayed)
    assert turn.deadline_ms == now + 34_000
    assert turn.next_player != ds.first


def test_timed_out_turn_is_a_skip_and_passes() -> None:
    """Rules page: if your time runs out, the turn is skipped: used up, passes to the opponent."""
    t, dealer, _ = start(2)
    t, [ds], _now = begin_round(t, dealer)
    assert isinstance(ds, DuelStarted)
    t, events = t.expire(ds.deadline_ms, dealer)
    [turn] = events
    assert isinstance(turn, TurnPlayed)
    assert turn.row.skipped
    assert turn.row.player == ds.first
    assert turn.turn == 1
    assert turn.next_player != ds.first
    assert turn.deadline_ms == ds.deadline_ms + 30_000


def test_guess_after_deadline_is_a_skip() -> None:
    """Ruling 5 / time model: a guess arriving after the deadline meets the skip (expire first):
    the row is a skip and the late guess is refused as "your turn was skipped" (turn_over)."""
    t, dealer, _ = start(2)
    t, [ds], _ = begin_round(t, dealer)
    assert isinstance(ds, DuelStarted)
    late = ds.deadline_ms + 1
    t, _ = t.expire(late, dealer)
    duel = t.duel(ds.duel_id)
    with pytest.raises(TurnOverError):
        t.guess(ds.first, ds.duel_id, duel.word, tuple(duel.word), late, dealer)
    assert len(t.duel(ds.duel_id).rows) == 1
    assert t.duel(ds.duel_id).rows[0].skipped


def test_skips_alone_do_not_lose() -> None:
    """Rules page: skips alone do not lose the duel — a duel of skips is a draw (both -1 life),
    and a tournament of nothing but timeouts still ends."""
    t, dealer, _ = start(2)
    t, events = t.expire(t.intro_deadline_ms + 12 * 30_000, dealer)
    [ended] = [e for e in events if isinstance(e, DuelEnded)][:1]
    assert ended.result is DuelResult.DRAW
    assert len([e for e in events if isinstance(e, TurnPlayed) and e.duel_id == ended.duel_id]) == (
        12
    )
    t, events = t.expire(10**9, dealer)
    assert t.over


def test_disconnected_players_turns_run_out_as_skips() -> None:
    """Rules page: if your connection drops, your turns run out as skips."""
    t, dealer, _ = start(2)
    t, [ds], now = begin_round(t, dealer)
    assert isinstance(ds, DuelStarted)
    t, events = t.set_connected(ds.first, False, now + 60_000)
    assert events == [ConnectionChanged(ds.first, False, now + 60_000)]
    t, events = t.expire(ds.deadline_ms, dealer)
    assert events_of(events, TurnPlayed)[0].row.skipped
    assert t.player(ds.first).alive


def test_invalid_guess_changes_nothing() -> None:
    """Rules page: a guess of the wrong length is refused and the turn and the clock keep going
    (the tournament is unchanged)."""
    t, dealer, _ = start(2)
    t, [ds], now = begin_round(t, dealer)
    assert isinstance(ds, DuelStarted)
    before = t
    with pytest.raises(WrongLengthError):
        t.guess(ds.first, ds.duel_id, "zz", ("z", "z"), now + 10, dealer)
    assert t == before
    assert t.next_deadline() == ds.deadline_ms


def test_guess_in_someone_elses_duel_is_refused() -> None:
    """Only a duel's own players guess in it; unknown players are refused."""
    t, dealer, _ = start(4)
    t, _, now = begin_round(t, dealer)
    d1, d2 = t.duels
    mover = d1.next_player
    assert mover is not None
    with pytest.raises(NotInDuelError):
        t.guess(mover, d2.duel_id, "abcd", tuple("abcd"), now, dealer)
    with pytest.raises(NotInDuelError):
        t.guess(mover, "t1.9.9", "abcd", tuple("abcd"), now, dealer)
    with pytest.raises(NotInTournamentError):
        t.guess("stranger", d1.duel_id, "abcd", tuple("abcd"), now, dealer)


def test_random_first_mover() -> None:
    """Rules page / ruling 5: a random player moves first — over seeds both players do."""
    firsts: Counter[str] = Counter()
    for seed in range(200):
        t, dealer, _ = start(2, seed)
        t, [ds], _ = begin_round(t, dealer)
        assert isinstance(ds, DuelStarted)
        assert ds.first == t.duels[0].first
        firsts[ds.first] += 1
    assert set(firsts) == {"p1", "p2"}
    assert 60 <= firsts["p1"] <= 140


# ------------------------------------------------------------------ leaving (ruling 3)
def test_leaver_loses_current_duel_and_is_placed_below_round() -> None:
    """Rules page / ruling 3: leaving after the start is an automatic defeat: the current duel is
    lost (the opponent wins it), the leaver is eliminated at once and placed below the others
    eliminated in that round."""
    t, dealer = after_two_drawn_rounds()
    t, _, now = begin_round(t, dealer)
    d1, d2, d3, d4 = t.duels
    leaver, opponent = d1.players
    t, events = t.leave(leaver, now + 5, dealer)
    assert events[0] == PlayerEliminated(leaver, 3, "left")
    [ended] = events_of(events, DuelEnded)
    assert (ended.result, ended.winner, ended.reason) == (DuelResult.WIN, opponent, EndReason.LEFT)
    assert t.player(opponent).lives == 1  # the winner keeps their life
    assert t.player(leaver).left
    t, _, now = decide(t, dealer, d2.duel_id, None, now + 10)  # both out on lives
    t, _, now = decide(t, dealer, d3.duel_id, min(d3.players), now)
    t, events, now = decide(t, dealer, d4.duel_id, min(d4.players), now)
    [round_end] = events_of(events, RoundEnded)
    got = {x.player_id: x.place for x in round_end.placed}
    # 3 alive after the round: the 4 out on lives share 4th, the leaver is 8th
    assert got == {
        leaver: 8,
        d2.players[0]: 4,
        d2.players[1]: 4,
        max(d3.players): 4,
        max(d4.players): 4,
    }


def test_leavers_of_a_round_share_one_place() -> None:
    """Ruling 3: leavers of a round share one place below the others eliminated in it."""
    t, dealer, _ = start(8)
    t, _, now = begin_round(t, dealer)
    d1, d2, *_ = t.duels
    t, _ = t.leave(d1.players[0], now + 1, dealer)
    t, _ = t.leave(d2.players[1], now + 2, dealer)
    t, events = run(t, dealer)
    round_one = next(e for e in events_of(events, RoundEnded) if e.round_no == 1)
    assert {x.player_id: x.place for x in round_one.placed} == {
        d1.players[0]: 7,
        d2.players[1]: 7,
    }


def test_leaver_after_own_duel_is_over_keeps_the_result() -> None:
    """Ruling 3: leaving goes out at once; a duel already over keeps its result."""
    t, dealer, _ = start(4)
    t, _, now = begin_round(t, dealer)
    d1 = t.duels[0]
    winner = min(d1.players)
    t, _, now = decide(t, dealer, d1.duel_id, winner, now)
    t, events = t.leave(winner, now + 1, dealer)
    assert events == [PlayerEliminated(winner, 1, "left")]
    assert t.duel(d1.duel_id).winner == winner
    assert t.player(max(d1.players)).lives == 2


def test_leaver_during_intro() -> None:
    """Ruling 3: leaving during the round intro also loses that round's duel at once; the other
    duels start normally."""
    t, dealer, _ = start(8)
    leaver = "p1"
    duel = t.duel_of(leaver)
    assert duel is not None
    t, events = t.leave(leaver, 10, dealer)
    assert events[0] == PlayerEliminated(leaver, 1, "left")
    [ended] = events_of(events, DuelEnded)
    assert ended.winner == duel.opponent_of(leaver)
    assert ended.reason is EndReason.LEFT
    t, events, _ = begin_round(t, dealer)
    started = events_of(events, DuelStarted)
    assert len(started) == 3
    assert duel.duel_id not in {e.duel_id for e in started}


def test_leaver_during_intro_of_the_final_ends_the_tournament() -> None:
    """Ruling 3 + rules page: with two left, the leaver's opponent is the last alive and wins."""
    t, dealer, _ = start(2)
    t, events = t.leave("p2", 10, dealer)
    assert t.over
    assert places(t) == {"p1": 1, "p2": 2}
    assert events_of(events, TournamentEnded)[0].winners == ("p1",)


def test_leaver_with_bye_simply_goes_out() -> None:
    """Ruling 3: a leaver who had the bye simply goes out (no duel to lose); placed below the
    round's others when the round ends."""
    t, dealer, [started] = start(3, seed=2)
    assert isinstance(started, RoundStarted)
    bye = started.bye
    assert bye is not None
    t, _, now = begin_round(t, dealer)
    duel_before = t.duels[0]
    t, events = t.leave(bye, now + 1, dealer)
    assert events == [PlayerEliminated(bye, 1, "left")]
    assert t.duels[0] == duel_before
    t, events, _ = decide(t, dealer, duel_before.duel_id, None, now + 2)
    [round_end] = events_of(events, RoundEnded)
    assert [(x.player_id, x.place) for x in round_end.placed] == [(bye, 3)]
    [nxt] = events_of(events, RoundStarted)
    assert nxt.bye is None
    assert len(nxt.pairs) == 1


def test_reconnect_timeout_counts_as_leaving() -> None:
    """Rules page: you have 60 seconds to come back; after that you are treated as having left
    (ruling 3: leave(..., reason="timeout"))."""
    t, dealer, _ = start(2)
    t, [ds], now = begin_round(t, dealer)
    assert isinstance(ds, DuelStarted)
    t, _ = t.set_connected("p1", False, now + 60_000)
    assert t.player("p1").reconnect_deadline_ms == now + 60_000
    t, _ = t.expire(now + 60_000, dealer)  # turns run out as skips meanwhile
    t, events = t.leave("p1", now + 60_000, dealer, reason="timeout")
    assert events[0] == PlayerEliminated("p1", 1, "timeout")
    assert t.player("p1").left
    assert places(t) == {"p1": 2, "p2": 1}


def test_reconnect_in_time_keeps_the_player() -> None:
    """Rules page: coming back within 60 s keeps you in (the deadline is cleared)."""
    t, _, _ = start(2)
    t, _ = t.set_connected("p1", False, 60_000)
    t, events = t.set_connected("p1", True)
    assert events == [ConnectionChanged("p1", True, None)]
    assert t.player("p1").reconnect_deadline_ms is None
    assert t.player("p1").alive
    assert t.set_connected("p1", True) == (t, [])


def test_eliminated_player_can_leave_or_keep_watching() -> None:
    """Rules page: once you are out you can leave or keep watching (leaving changes nothing)."""
    t, dealer = after_two_drawn_rounds()
    t, _, now = begin_round(t, dealer)
    d1 = t.duels[0]
    loser = max(d1.players)
    t, _, now = decide(t, dealer, d1.duel_id, min(d1.players), now)
    assert t.is_spectator(loser)
    assert t.leave(loser, now + 1, dealer) == (t, [])
    assert not t.player(loser).left


# ------------------------------------------------------------------ words (ruling 5)
def test_every_duel_gets_a_different_secret() -> None:
    """Rules page / ruling 5: every duel of a tournament (every pair) gets a different word."""
    t, dealer, events = start(8, seed=11)
    t, more = run(t, dealer, draw_all)
    words = [e.word for e in events_of(events + more, DuelEnded)]
    assert len(words) == 12
    assert len(set(words)) == 12


def test_different_secrets_even_from_a_tiny_list() -> None:
    """Ruling 5: with only 4 words in the list, the 4 duels still get 4 different ones."""
    words = TinyWords({4: ["abcd"], 5: ["abcde"], 6: ["abcdef", "bcdefg"]})
    for seed in range(20):
        dealer = make_dealer(seed, words=words)
        t, _ = Tournament.start("t1", "en", entrants(8), 0, dealer)
        assert sorted(d.word for d in t.duels) == ["abcd", "abcde", "abcdef", "bcdefg"]


def test_secret_length_uniform_4_5_6() -> None:
    """Rules page / ruling 5: the length is drawn per duel, 4, 5 or 6 with equal chances."""
    counts: Counter[int] = Counter()
    for seed in range(150):
        t, _, _ = start(8, seed)
        counts.update(d.length for d in t.duels)
    assert set(counts) == {4, 5, 6}
    # 600 duels, 200 expected each, standard deviation about 11.5: a loose 4-sigma bound
    assert all(150 <= c <= 250 for c in counts.values()), counts


# ------------------------------------------------------------------ rulings 6 and 7
def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return set().union(*(_strings(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if isinstance(value, tuple | list):
        return set().union(set(), *(_strings(v) for v in value))
    return set()


def test_secret_never_sent_before_its_duel_is_over() -> None:
    """Ruling 6: the secret is in no event before its duel is over; DuelEnded reveals it."""
    t, dealer, events = start(8, seed=4)
    t, more = run(t, dealer, lower_id_wins)
    events += more
    secrets = {e.duel_id: e.word for e in events_of(events, DuelEnded)}
    open_duels: set[str] = set()
    for e in events:
        if isinstance(e, RoundStarted):
            open_duels |= {duel_id for duel_id, _, _ in e.pairs}
        if isinstance(e, TurnPlayed) and e.deadline_ms is None:
            open_duels.discard(e.duel_id)  # the solving row ends the duel
        if isinstance(e, DuelEnded):
            assert e.word == secrets[e.duel_id]
            open_duels.discard(e.duel_id)
            continue
        leaked = _strings(e) & {secrets[d] for d in open_duels}
        assert not leaked, (e, leaked)


def test_spectators_are_players_out_with_bye_or_done() -> None:
    """Ruling 7: players whose duel is over, who have the bye, or who are out spectate."""
    t, dealer, [started] = start(5, seed=1)
    assert isinstance(started, RoundStarted)
    assert started.bye is not None
    assert t.is_spectator(started.bye)
    t, _, now = begin_round(t, dealer)
    d1, d2 = t.duels
    assert not any(t.is_spectator(p) for p in (*d1.players, *d2.players))
    t, _, now = decide(t, dealer, d1.duel_id, min(d1.players), now)
    assert all(t.is_spectator(p) for p in d1.players)
    assert not any(t.is_spectator(p) for p in d2.players)
    t, _ = t.leave(d2.players[0], now, dealer)
    assert t.is_spectator(d2.players[0])


def test_tournament_usually_takes_8_to_10_rounds() -> None:
    """Rules page: "A tournament usually takes 8 to 10 rounds" — with random winners and a few
    draws, the median tournament of 8 lasts 8 to 10 rounds."""
    rng = random.Random(99)

    def random_outcome(t: Tournament, duel: Duel) -> str | None:
        return None if rng.random() < 0.05 else rng.choice(duel.players)

    rounds = []
    for seed in range(41):
        t, dealer, _ = start(8, seed)
        t, _ = run(t, dealer, random_outcome)
        rounds.append(t.round_no)
    rounds.sort()
    assert 8 <= rounds[len(rounds) // 2] <= 10, Counter(rounds)


# ------------------------------------------------------------------ clocks, results, details
def test_next_deadline_is_the_earliest_running_turn() -> None:
    """The round's clock wakes at the *earliest* pending turn deadline (``next_deadline``), so
    no skip waits for a later duel's deadline; a finished duel's deadline no longer counts."""
    t, dealer, _ = start(4)
    t, _, now = begin_round(t, dealer)
    early, late = t.duels
    mover = late.next_player
    assert mover is not None
    t, _ = play(t, dealer, mover, wrong_word(late), now + 7_000)  # late's clock restarts
    assert t.duel(late.duel_id).turn_deadline_ms == now + 7_000 + 30_000
    assert t.duel(early.duel_id).turn_deadline_ms == now + 30_000
    assert t.next_deadline() == now + 30_000
    assert t.next_due(1_000) == now + 31_000
    t, _, _ = decide(t, dealer, early.duel_id, min(early.players), now + 8_000)
    assert t.next_deadline() == t.duel(late.duel_id).turn_deadline_ms


def test_expire_applies_due_skips_earliest_first() -> None:
    """``expire`` applies every due deadline in time order: the duel whose turn ran out first
    is skipped first, even when it comes later on the board."""
    t, dealer, _ = start(4)
    t, _, now = begin_round(t, dealer)
    first_on_board, second_on_board = t.duels
    mover = first_on_board.next_player
    assert mover is not None
    t, _ = play(t, dealer, mover, wrong_word(first_on_board), now + 5_000)
    # first_on_board's turn now runs out at now + 35 s, second_on_board's at now + 30 s
    t, events = t.expire(now + 35_000, dealer)
    skips = [(e.duel_id, e.row.at_ms) for e in events_of(events, TurnPlayed)]
    assert skips == [
        (second_on_board.duel_id, now + 30_000),
        (first_on_board.duel_id, now + 35_000),
    ]
    assert all(e.row.skipped for e in events_of(events, TurnPlayed))


def test_round_end_places_carry_the_new_rating_best_place_first() -> None:
    """Ruling 2: ``RoundEnded.placed`` holds each player placed that round with their change
    and their *new* rating (snapshot + change), best place first, ties by player id."""
    ratings = [1200, 1000, 900, 1100, 1000, 950, 1050, 1150]
    t, dealer, _ = start(8, ratings=ratings)
    snapshot = {p.player_id: p.rating for p in t.players}
    for _ in range(2):  # two rounds of draws: everyone on one life
        t, _, now = begin_round(t, dealer)
        for duel in list(t.duels):
            t, _, now = decide(t, dealer, duel.duel_id, None, now)
    t, _, now = begin_round(t, dealer)
    duel_of_p1 = t.duel_of("p1")
    assert duel_of_p1 is not None
    winner = duel_of_p1.opponent_of("p1")
    t, _ = t.leave("p1", now + 1, dealer)  # p1 leaves: the opponent wins, p1 placed last
    events: list[Event] = []
    for duel in list(t.duels):
        if not t.duel(duel.duel_id).over:
            t, more, now = decide(t, dealer, duel.duel_id, None, now)  # all others draw: out
            events += more
    [round_end] = events_of(events, RoundEnded)
    placed = list(round_end.placed)
    others = [pid for pid in player_ids(8) if pid not in ("p1", winner)]
    assert [x.player_id for x in placed] == [*others, "p1"]  # p1 would come first unsorted
    assert [x.place for x in placed] == [2] * 6 + [8]
    final = {pid: 8 if pid == "p1" else 1 if pid == winner else 2 for pid in player_ids(8)}
    changes = rating_changes(ratings, [final[pid] for pid in player_ids(8)])
    for x in placed:
        assert x.change == changes[int(x.player_id[1:]) - 1]
        assert x.rating == snapshot[x.player_id] + x.change
    assert placed[-1].change < 0
    assert all(x.change != 0 for x in placed)


def test_a_zero_rating_change_is_reported_as_zero() -> None:
    """Ruling 1: equal ratings sharing one place change by 0, and the tournament's end reports
    exactly that (change 0, the rating unchanged), not a point either way."""
    t, dealer, events = start(2)
    t, more = run(t, dealer, draw_all)  # three drawn duels: both out together, place 1
    events += more
    [ended] = events_of(events, TournamentEnded)
    assert ended.placed == (Placed("p1", 1, 0, 1000), Placed("p2", 1, 0, 1000))
    assert [p.rating_change for p in t.players] == [0, 0]


def test_a_leaver_keeps_no_life() -> None:
    """Ruling 3: leaving eliminates at once: the leaver has no life left and is out this
    round, even with all three lives unused."""
    t, dealer, _ = start(4)
    t, _, now = begin_round(t, dealer)
    t, _ = t.leave("p1", now + 1, dealer)
    p1 = t.player("p1")
    assert (p1.lives, p1.out_round, p1.left, p1.alive) == (0, 1, True, False)
    assert t.player("p1").timed_out is False
    t2, _ = start(4)[0].leave("p2", 1, dealer, reason="timeout")
    assert t2.player("p2").timed_out is True
    assert t2.player("p2").lives == 0


def test_a_second_disconnect_with_a_new_deadline_is_recorded() -> None:
    """Ruling 9: a player who drops again (a later reconnect deadline) gets the new deadline,
    and the others are told; the same drop twice changes nothing."""
    t, _, _ = start(2)
    t, first = t.set_connected("p1", False, 60_000)
    assert first == [ConnectionChanged("p1", False, 60_000)]
    t, second = t.set_connected("p1", False, 90_000)
    assert second == [ConnectionChanged("p1", False, 90_000)]
    assert t.player("p1").reconnect_deadline_ms == 90_000
    assert not t.player("p1").connected
    assert t.set_connected("p1", False, 90_000) == (t, [])
    # a connected player's deadline is always cleared, whatever is passed
    t, back = t.set_connected("p1", True, 120_000)
    assert back == [ConnectionChanged("p1", True, None)]


def test_running_out_of_unused_secrets_is_a_domain_error() -> None:
    """Ruling 5: every duel gets a different secret; when no unused secret is left at any
    length, opening the round is refused with a domain error (not an IndexError)."""
    dealer = make_dealer(words=TinyWords({4: ["abcd"], 5: ["abcde"]}))
    with pytest.raises(DomainError, match="no unused secret word left"):
        Tournament.start("t1", "en", entrants(6), 0, dealer)
    t, _ = Tournament.start(
        "t1", "en", entrants(4), 0, make_dealer(words=TinyWords({4: ["abcd"], 5: ["abcde"]}))
    )
    assert {d.word for d in t.duels} == {"abcd", "abcde"}


def test_dealer_defaults_are_the_rules_page_clocks() -> None:
    """Rules page: a turn lasts 30 s and the round intro 6 s; no skip grace unless asked."""
    dealer = Dealer(rng=random.Random(0), words=TinyWords({4: ["abcd"]}))
    assert (dealer.turn_ms, dealer.intro_ms, dealer.skip_grace_ms) == (30_000, 6_000, 0)
    t, _ = Tournament.start("t1", "en", entrants(2), 1_000, dealer)
    assert t.intro_deadline_ms == 7_000
    assert t.duels[0].turn_deadline_ms == 37_000


def test_duel_ids_name_tournament_round_and_board_index() -> None:
    """Duel ids are ``{tournament_id}.{round}.{index}`` (round and index from 1, board order):
    what a guess carries to find its tournament."""
    t, dealer, [started] = start(8)
    assert isinstance(started, RoundStarted)
    assert [d.duel_id for d in t.duels] == ["t1.1.1", "t1.1.2", "t1.1.3", "t1.1.4"]
    assert [duel_id for duel_id, _, _ in started.pairs] == [d.duel_id for d in t.duels]
    t, _ = play_round(t, dealer, {})
    assert [d.duel_id for d in t.duels] == ["t1.2.1", "t1.2.2", "t1.2.3", "t1.2.4"]


def test_a_turn_reports_the_next_mover_and_a_duels_end_its_players_and_time() -> None:
    """``TurnPlayed`` names who moves next; ``DuelEnded`` names both duelists; the duel and,
    when it is the last, the tournament record when they ended."""
    t, dealer, _ = start(2)
    t, _, now = begin_round(t, dealer)
    duel = t.duels[0]
    mover = duel.next_player
    assert mover is not None
    t, events = play(t, dealer, mover, wrong_word(duel), now + 10)
    [turn] = events_of(events, TurnPlayed)
    assert turn.next_player == duel.opponent_of(mover)
    assert turn.deadline_ms == now + 10 + 30_000
    t, events = play(t, dealer, duel.opponent_of(mover), duel.word, now + 20)
    [ended] = events_of(events, DuelEnded)
    assert ended.players == duel.players
    assert ended.winner == duel.opponent_of(mover)
    for _ in range(2):  # two more rounds, the same winner: the loser's lives run out
        t, _, now = begin_round(t, dealer)
        t, _, now = decide(t, dealer, t.duels[0].duel_id, duel.opponent_of(mover), now)
    assert t.over
    assert t.ended_ms == now


def test_a_leaver_stays_as_connected_as_they_were_and_their_duel_ends_then() -> None:
    """Ruling 3: leaving changes the player's standing, not their connection; the forfeited
    duel ends at the moment of leaving, for the reason given (left, or the reconnect
    deadline: timeout)."""
    t, dealer, _ = start(4)
    t, _, now = begin_round(t, dealer)
    t, _ = t.set_connected("p2", False, now + 60_000)
    t, events = t.leave("p1", now + 5, dealer)
    assert t.player("p1").connected is True
    [ended] = events_of(events, DuelEnded)
    assert ended.reason is EndReason.LEFT
    duel_of_p1 = next(d for d in t.duels if "p1" in d.players)
    assert duel_of_p1.ended_ms == now + 5
    t, events = t.leave("p2", now + 60_000, dealer, reason="timeout")
    assert t.player("p2").connected is False
    if events_of(events, DuelEnded):  # p2's duel was still running (not against p1)
        [ended] = events_of(events, DuelEnded)
        assert ended.reason is EndReason.TIMEOUT


def test_a_timed_out_duelist_loses_the_duel_for_timeout() -> None:
    """Rulings 3 and 9: a duelist who missed the reconnect deadline loses the running duel,
    which ends then, for ``timeout``."""
    t, dealer, _ = start(2)
    t, _, now = begin_round(t, dealer)
    t, events = t.leave("p1", now + 7, dealer, reason="timeout")
    [ended] = events_of(events, DuelEnded)
    assert (ended.reason, ended.winner) == (EndReason.TIMEOUT, "p2")
    assert events[0] == PlayerEliminated("p1", 1, "timeout")


class _AnyWord(AllowedWords):
    """Allowed words that take any typed text as its own play form (these tests leave the
    word check aside)."""

    def check(self, raw: str, length: int) -> tuple[str, tuple[str, ...]]:
        return raw, tuple(raw)


ANY_WORD = _AnyWord(get_language("en"), {})


def test_a_late_guess_meets_the_skip_that_was_due_and_the_skip_is_in_the_outcome() -> None:
    """Ruling 13: a guess received after its turn's deadline meets the skip (due at the
    deadline plus the grace), which the outcome carries to be committed, and is refused."""
    t, _, _ = start(2)
    dealer = Dealer(rng=random.Random(1), words=make_dealer().words, skip_grace_ms=1_000)
    t, _, _ = begin_round(t, dealer)
    duel = t.duels[0]
    mover = duel.next_player
    assert mover is not None
    deadline = duel.turn_deadline_ms
    outcome = t.play(
        mover,
        duel.duel_id,
        wrong_word(duel),
        ANY_WORD,
        received_ms=deadline + 100,
        now_ms=deadline + 1_500,
        dealer=dealer,
    )
    assert isinstance(outcome.refusal, TurnOverError)
    [skip] = events_of(list(outcome.events), TurnPlayed)
    assert (skip.row.player, skip.row.skipped, skip.row.at_ms) == (mover, True, deadline)
    assert outcome.tournament.duel(duel.duel_id).rows == (skip.row,)


def test_a_guess_is_checked_as_typed_and_played_in_its_checked_form() -> None:
    """``play`` hands the typed text to the word check and plays what the check returns."""
    t, dealer, _ = start(2)
    t, _, now = begin_round(t, dealer)
    duel = t.duels[0]
    mover = duel.next_player
    assert mover is not None
    typed = wrong_word(duel).upper()
    seen: list[tuple[str, int]] = []

    class Seen(AllowedWords):
        def check(self, raw: str, length: int) -> tuple[str, tuple[str, ...]]:
            seen.append((raw, length))
            return raw.lower(), tuple(raw.lower())

    check = Seen(get_language("en"), {})
    outcome = t.play(
        mover, duel.duel_id, typed, check, received_ms=now + 1, now_ms=now + 1, dealer=dealer
    )
    assert outcome.refusal is None
    assert seen == [(typed, duel.length)]
    assert outcome.tournament.duel(duel.duel_id).rows[-1].word == typed.lower()


def test_a_refused_guess_with_nothing_due_leaves_the_tournament_as_it_was() -> None:
    t, dealer, _ = start(4)
    t, _, now = begin_round(t, dealer)
    duel = t.duels[0]
    waiting = duel.opponent_of(duel.next_player or "")
    outcome = t.play(
        waiting,
        duel.duel_id,
        wrong_word(duel),
        ANY_WORD,
        received_ms=now + 1,
        now_ms=now + 1,
        dealer=dealer,
    )
    assert outcome.tournament is t
    assert outcome.events == ()
    assert outcome.refusal is not None


def test_refusals_tell_the_player_what_happened() -> None:
    """The refusals' codes are the contract; their messages are what a player reads."""
    t, dealer, _ = start(4)
    duel, other = t.duels
    stranger = other.players[0]
    check = ANY_WORD
    # during the intro: a duelist is told to wait, someone else that it is not their duel
    own = t.play(
        duel.players[0], duel.duel_id, "abcd", check, received_ms=1, now_ms=1, dealer=dealer
    )
    assert isinstance(own.refusal, DuelNotStartedError)
    assert own.refusal.message == "the round intro is still running"
    theirs = t.play(stranger, duel.duel_id, "abcd", check, received_ms=1, now_ms=1, dealer=dealer)
    assert isinstance(theirs.refusal, NotInDuelError)
    with pytest.raises(NotInDuelError, match=r"^no such duel in the current round$"):
        t.duel("t1.9.9")
    t2, _ = t.leave(stranger, 1, dealer)
    out = t2.play(stranger, other.duel_id, "abcd", check, received_ms=2, now_ms=2, dealer=dealer)
    assert isinstance(out.refusal, AlreadyEliminatedError)
    assert out.refusal.message == "you are out of this tournament"
    done, _ = run(t, dealer)
    over = done.play("p1", duel.duel_id, "abcd", check, received_ms=1, now_ms=1, dealer=dealer)
    assert isinstance(over.refusal, TournamentOverError)
    assert over.refusal.message == "the tournament is over"
