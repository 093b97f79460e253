"""Unit: a whole tournament played through the use cases on the in-memory fakes, and what each
player was sent checked against the committed state (``presenter``, ``tournament_change``,
``duels``, ``deadlines``, ``matchmaking``, ``seating``).

Eight players join in English; in every duel the player with the smaller id solves the secret on
their first turn and the other guesses a wrong word (some turns run out as skips), until one
player is left. The messages are then read as a client would: every ``duel_start``, ``turn``,
``duel_end``, ``rating``, ``standings`` and ``tournament_end`` must agree with the domain's
state and with the rules (rulings 1, 2, 6 and 7).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from functions import apply_deadlines
from shared.domain.duel import DuelId
from shared.domain.rating import INITIAL_RATING
from shared.domain.tournament import Phase, Tournament
from shared.services import duels, matchmaking, sessions
from shared.services.deps import Deps
from shared.services.model import PlayerStatus
from shared.services.outbox import Request
from tests.fakes import fake_deps

COUNTED: Counter[str] = Counter()
"""The operational metrics counted over the played tournament."""


def _sent(deps: Deps, cid: str) -> list[dict[str, Any]]:
    return deps.notifier.sent[cid]  # type: ignore[attr-defined, no-any-return]


def _of(deps: Deps, cid: str, kind: str) -> list[dict[str, Any]]:
    return [m for m in _sent(deps, cid) if m["type"] == kind]


def _seat_eight(deps: Deps) -> dict[str, str]:
    """8 players joined in English: player id -> connection id."""
    seated = {}
    for i in range(8):
        cid = f"c{i}"
        sessions.connect(deps, cid)
        sessions.session(deps, Request(cid, "s"), None)
        pid = _sent(deps, cid)[-1]["player"]["id"]
        matchmaking.join(deps, Request(cid, "j"), pid, "en")
        seated[pid] = cid
    return seated


def _tournament(deps: Deps, pid: str) -> Tournament:
    player = deps.store.get_player(pid)
    assert player is not None
    tid = player.tournament_id
    assert tid is not None
    rec = deps.store.get_tournament(tid)
    assert rec is not None
    return rec.tournament


def _wrong(deps: Deps, length: int, secrets: set[str]) -> str:
    return next(w for w in sorted(deps.lexicon.allowed("en", length)) if w not in secrets)


def _play_to_the_end() -> tuple[Deps, dict[str, str], Tournament, list[Tournament]]:
    """The tournament played to its end; returns (deps, player -> connection, final state,
    the state at the start of every round)."""
    base = fake_deps(seed=11)
    counted: Counter[str] = Counter()

    def count(name: str, value: float) -> None:
        counted[name] += int(value)

    deps = dataclasses.replace(base, metrics=count)
    deps.clock.fire = lambda state: apply_deadlines.handle(state, deps)  # type: ignore[attr-defined]
    COUNTED.clear()
    seated = _seat_eight(deps)
    first = next(iter(seated))
    tid = _tournament(deps, first).tournament_id
    secrets: set[str] = set()
    rounds: list[Tournament] = []
    for step in range(2_000):
        rec = deps.store.get_tournament(tid)
        assert rec is not None
        t = rec.tournament
        if not rounds or rounds[-1].round_no != t.round_no:
            rounds.append(t)  # its pairs, bye and intro deadline stay as they were opened
            secrets |= {d.word for d in t.duels}
        if t.over:
            COUNTED.update(counted)
            return deps, seated, t, rounds
        if t.phase is Phase.INTRO:
            deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]
            continue
        running = [d for d in t.duels if not d.over]
        duel = running[0]
        mover = duel.next_player
        assert mover is not None
        if mover != min(duel.players) and step % 5 == 0:
            # a turn runs out: the clock loop wakes and applies the skip
            deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]
            continue
        word = duel.word if mover == min(duel.players) else _wrong(deps, duel.length, secrets)
        deps.clock.now += 100  # type: ignore[attr-defined]
        duels.guess(deps, Request(seated[mover], f"g{step}"), duel.duel_id, word)
    raise AssertionError("the tournament did not end")


def _the_tournament_ends_with_one_winner_rated_and_everyone_idle(played: Any) -> None:
    deps, seated, t, _ = played
    assert t.over
    winners = [p for p in t.players if p.place == 1]
    assert len(winners) == 1
    for p in t.players:
        player = deps.store.get_player(p.player_id)
        assert player is not None
        assert player.status is PlayerStatus.IDLE
        assert player.rating == INITIAL_RATING + p.rating_change
        ratings = _of(deps, seated[p.player_id], "rating")
        assert len(ratings) == 1, p.player_id  # a place's rating is sent once
        [rating] = ratings
        assert rating["tournament_id"] == t.tournament_id
        assert (rating["place"], rating["change"]) == (p.place, p.rating_change)
        assert (rating["previous"], rating["rating"]) == (
            INITIAL_RATING,
            INITIAL_RATING + p.rating_change,
        )
    assert sum(p.rating_change for p in t.players) in range(-4, 5)


def _everyone_gets_the_end_with_places_best_first_and_the_winner(played: Any) -> None:
    deps, seated, t, _ = played
    [winner] = [p.player_id for p in t.players if p.place == 1]
    for cid in seated.values():
        [end] = _of(deps, cid, "tournament_end")
        assert end["tournament_id"] == t.tournament_id
        assert end["winners"] == [winner]
        places = [(s["place"], s["player_id"]) for s in end["places"]]
        assert sorted(places) == sorted((p.place, p.player_id) for p in t.players)
        assert [s["place"] for s in end["places"]] == sorted(s["place"] for s in end["places"])
        for s in end["places"]:
            p = t.player(s["player_id"])
            assert (s["nickname"], s["lives"], s["eliminated"], s["left"]) == (
                p.nickname,
                p.lives,
                not p.alive,
                p.left,
            )
            assert (s["connected"], s["rating_change"]) == (p.connected, p.rating_change)


def _each_round_is_announced_to_everyone_with_its_pairs_and_intro(played: Any) -> None:
    deps, seated, _, rounds = played
    for cid in seated.values():
        announced = _of(deps, cid, "round")
        assert [r["round"] for r in announced] == [t.round_no for t in rounds]
        for msg, t in zip(announced, rounds, strict=True):
            assert msg["intro_deadline_ms"] == t.intro_deadline_ms
            assert msg["bye"] == t.bye
            assert msg["pairs"] == [
                {"duel_id": d.duel_id, "players": list(d.players)} for d in t.duels
            ]
            alive = {s["player_id"] for s in msg["standings"] if not s["eliminated"]}
            assert alive == {p.player_id for p in t.alive}


def _a_duel_starts_for_its_duelists_with_the_opponent_and_for_spectators_without(
    played: Any,
) -> None:
    deps, seated, _, rounds = played
    for t in rounds:
        for d in t.duels:
            for pid in d.players:
                [start] = [
                    m for m in _of(deps, seated[pid], "duel_start") if m["duel_id"] == d.duel_id
                ]
                assert start["opponent"] == d.opponent_of(pid)
                assert start["round"] == t.round_no == DuelId.parse(d.duel_id).round_no
                assert (start["turn"], start["first"], start["next_player"]) == (
                    1,
                    d.first,
                    d.first,
                )
                assert start["players"] == list(d.players)
                assert start["length"] == d.length
                assert start["deadline_ms"] == t.intro_deadline_ms + deps.timing.turn_ms
                assert start["tournament_id"] == t.tournament_id
            if t.bye is not None:
                [seen] = [
                    m for m in _of(deps, seated[t.bye], "duel_start") if m["duel_id"] == d.duel_id
                ]
                assert seen["opponent"] is None


def _turns_reach_the_duelists_and_spectators_and_never_show_a_running_secret(played: Any) -> None:
    deps, seated, _, rounds = played
    shown = 0
    for t in rounds:
        for d in t.duels:
            for pid in d.players:
                turns = [m for m in _of(deps, seated[pid], "turn") if m["duel_id"] == d.duel_id]
                assert [m["turn"] for m in turns] == list(range(1, len(turns) + 1))
                for m in turns:
                    row = m["row"]
                    assert m["tournament_id"] == t.tournament_id
                    if row["skipped"]:
                        assert row["word"] is None
                    else:
                        assert len(row["tiles"]) == len(row["marks"]) == d.length
                        assert set(row["marks"]) <= {"correct", "present", "absent"}
                    if m["next_player"] is not None:
                        assert m["deadline_ms"] > row.get("at_ms", 0)
                ends = [m for m in _of(deps, seated[pid], "duel_end") if m["duel_id"] == d.duel_id]
                assert len(ends) == 1
                [end] = ends
                assert end["word"] == d.word
                assert end["display"] == deps.lexicon.display("en", d.word)
                assert end["winner"] in d.players
                assert end["result"] == "win"
                # the duelists spectate from now on: they get the round's other boards (none
                # when this duel closed the round)
                others = [b["duel_id"] for b in end["spectating"]]
                assert others in ([], [x.duel_id for x in t.duels if x.duel_id != d.duel_id])
                shown += len(others)
                for b in end["spectating"]:
                    if not b["over"]:
                        assert b["word"] is None
                        assert b["display"] is None
                        assert b["winner"] is None
    assert shown > 0


def _the_loser_of_the_last_life_is_told_and_standings_follow_every_duel(played: Any) -> None:
    deps, seated, t, _ = played
    for cid in seated.values():
        eliminated = [m["player_id"] for m in _of(deps, cid, "eliminated")]
        assert Counter(eliminated) == Counter(p.player_id for p in t.players if p.place != 1)
        for m in _of(deps, cid, "eliminated"):
            assert m["reason"] == "lives"
            assert m["round"] == t.player(m["player_id"]).out_round
        standings = _of(deps, cid, "standings")
        assert len(standings) >= len(_of(deps, cid, "duel_end"))
        for s in standings:
            key = [(x["place"] or 0, -x["lives"], x["nickname"]) for x in s["players"]]
            assert key == sorted(key)


def _the_clock_loop_skips_turns_that_run_out(played: Any) -> None:
    deps, seated, _, _ = played
    skips = [m for cid in seated.values() for m in _of(deps, cid, "turn") if m["row"]["skipped"]]
    assert skips


def _every_committed_change_is_counted_in_the_metrics(played: Any) -> None:
    deps, seated, _, rounds = played
    rows = {}
    for cid in seated.values():
        for m in _of(deps, cid, "turn"):
            rows[(m["duel_id"], m["turn"])] = m["row"]["skipped"]
    assert COUNTED["Guesses"] == sum(1 for skipped in rows.values() if not skipped)
    assert COUNTED["Skips"] == sum(1 for skipped in rows.values() if skipped) > 0
    assert COUNTED["DuelsEnded"] == sum(len(r.duels) for r in rounds)
    assert COUNTED["RoundsClosed"] == len(rounds)
    assert COUNTED["TournamentsEnded"] == 1
    assert COUNTED["Eliminations"] == 7


def test_a_played_tournament_tells_every_player_what_the_state_says() -> None:
    """One test plays the tournament and reads every message (one test, so that a mutation
    run credits it with every function the tournament runs)."""
    played = _play_to_the_end()
    _the_tournament_ends_with_one_winner_rated_and_everyone_idle(played)
    _everyone_gets_the_end_with_places_best_first_and_the_winner(played)
    _each_round_is_announced_to_everyone_with_its_pairs_and_intro(played)
    _a_duel_starts_for_its_duelists_with_the_opponent_and_for_spectators_without(played)
    _turns_reach_the_duelists_and_spectators_and_never_show_a_running_secret(played)
    _the_loser_of_the_last_life_is_told_and_standings_follow_every_duel(played)
    _the_clock_loop_skips_turns_that_run_out(played)
    _every_committed_change_is_counted_in_the_metrics(played)
