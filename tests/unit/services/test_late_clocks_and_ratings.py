"""Unit: clocks that come late or never (the watchdog, ruling 13's recovery; an early
reconnect wake, ruling 9) and the ratings of players placed after they left (rulings 1-3),
on the fakes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from shared.services import deadlines, matchmaking, sessions
from shared.services.deps import Deps
from shared.services.errors import NotFoundError
from shared.services.model import PlayerStatus, RatingApplied, TournamentRecord
from shared.services.outbox import Request
from shared.services.ports import Timer, TimerKind
from shared.services.tournament_change import Decision, change_tournament
from tests.fakes import fake_deps, new_player, open_session, sent_of, stored_player


def _seat(deps: Deps, n: int, first: int = 0) -> list[tuple[str, str]]:
    seated = []
    for i in range(first, first + n):
        pid = new_player(deps, f"c{i}")
        matchmaking.join(deps, Request(f"c{i}"), pid, "en")
        seated.append((f"c{i}", pid))
    return seated


def _record(deps: Deps, pid: str) -> TournamentRecord:
    rec = deps.store.get_tournament(stored_player(deps, pid).tournament_id or "")
    assert rec is not None
    return rec


class _LostStarts:
    """The clock, except that every timer it is given is lost (a start that failed)."""

    def __init__(self, clock: Any) -> None:
        self._clock = clock

    def __getattr__(self, name: str) -> Any:
        return getattr(self._clock, name)

    def schedule(self, timer: Timer) -> None:
        pass


# ------------------------------------------------------------------ the watchdog
def test_a_very_late_watchdog_announces_every_round_it_ran_through_as_it_was_opened() -> None:
    deps = fake_deps()
    seated = _seat(deps, 8)
    c0, p0 = seated[0]
    tid = _record(deps, p0).tournament.tournament_id
    deps.clock.now += 30 * 60_000  # type: ignore[attr-defined]  # no wake came for 30 min
    deadlines.watchdog(deps, 0)
    t = _record(deps, p0).tournament
    assert t.over
    assert t.round_no == 3
    rounds = sent_of(deps, c0, "round")
    assert [r["round"] for r in rounds] == [1, 2, 3]
    first, passed, last = rounds
    assert passed["tournament_id"] == tid
    assert [p["duel_id"] for p in passed["pairs"]] == [f"{tid}.2.{i}" for i in range(1, 5)]
    players = [pid for p in passed["pairs"] for pid in p["players"]]
    assert sorted(players) == sorted(pid for _, pid in seated)
    assert passed["bye"] is None
    assert first["intro_deadline_ms"] < passed["intro_deadline_ms"] < last["intro_deadline_ms"]
    assert passed["standings"] == last["standings"]
    assert len(passed["standings"]) == 8


def test_the_watchdog_restarts_the_clock_of_a_round_whose_start_was_lost() -> None:
    deps = fake_deps()
    lossy = dataclasses.replace(deps, clock=_LostStarts(deps.clock))
    seated = _seat(lossy, 8)
    p0 = seated[0][1]
    assert deps.clock.pending() == []  # type: ignore[attr-defined]  # no round clock runs
    t = _record(deps, p0).tournament
    deps.clock.now = t.intro_deadline_ms + 5_000  # type: ignore[attr-defined]
    assert deadlines.watchdog(deps, 10_000) == 0  # overdue by less than the grace
    assert _record(deps, p0).tournament.phase.value == "intro"
    deps.clock.now = t.intro_deadline_ms + 10_001  # type: ignore[attr-defined]
    assert deadlines.watchdog(deps, 10_000) == 1
    t = _record(deps, p0).tournament
    assert t.phase.value == "playing"
    due = t.next_due(deps.timing.skip_grace_ms)
    assert due is not None
    assert deps.clock.pending() == [  # type: ignore[attr-defined]
        Timer(TimerKind.INTRO, t.tournament_id, 1, due)
    ]
    deps.clock.advance_to(due)  # type: ignore[attr-defined]  # the restarted loop applies it
    assert _record(deps, p0).tournament.duels[0].rows


# ------------------------------------------------------------------ reconnect wakes
def test_an_early_reconnect_wake_waits_for_the_deadline_then_frees_the_seat() -> None:
    deps = fake_deps()
    (c0, p0), (c1, p1) = _seat(deps, 2)
    sessions.disconnect(deps, c1)
    player = stored_player(deps, p1)
    deadline = player.reconnect_deadline_ms
    assert deadline is not None
    timer = Timer(TimerKind.RECONNECT, p1, player.disconnect_seq, deadline)
    deps.notifier.gone.add(c0)  # type: ignore[attr-defined]  # the freed seat's push finds out
    assert deadlines.fire_round(deps, timer) == deadlines.Fired(None, deadline)
    assert stored_player(deps, p1).status is PlayerStatus.QUEUED
    deps.clock.now = deadline  # type: ignore[attr-defined]
    assert deadlines.fire_round(deps, timer) == deadlines.Fired(None, None)
    assert stored_player(deps, p1).status is PlayerStatus.IDLE
    assert stored_player(deps, p0).connected is False


def test_a_round_wake_whose_push_finds_a_connection_gone_disconnects_it() -> None:
    deps = fake_deps()
    seated = _seat(deps, 8)
    c5, p5 = seated[5]
    deps.notifier.gone.add(c5)  # type: ignore[attr-defined]
    deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]  # intro ends
    player = stored_player(deps, p5)
    assert (player.connected, player.status) == (False, PlayerStatus.PLAYING)


# ------------------------------------------------------------------ ratings of leavers
def test_a_leaver_playing_elsewhere_keeps_playing_and_still_gets_the_first_rating() -> None:
    """Rulings 1-3: a leaver is placed when their round ends; the rating is applied once
    to their player item (wherever they are by then) and told to their connection."""
    deps = fake_deps()
    seated = _seat(deps, 8)
    c0, p0 = seated[0]
    first = _record(deps, p0).tournament.tournament_id
    deps.clock.now += 2_000  # type: ignore[attr-defined]  # during the intro
    matchmaking.leave(deps, Request(c0), p0)
    matchmaking.join(deps, Request(c0), p0, "en")  # a new lobby, with 7 newcomers
    _seat(deps, 7, first=8)
    second = stored_player(deps, p0).tournament_id
    assert second not in (None, first)
    rec = deps.store.get_tournament(first)
    assert rec is not None
    while rec.tournament.round_no == 1:  # the first tournament's round 1 runs out
        deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]
        rec = deps.store.get_tournament(first)
        assert rec is not None
    me = rec.tournament.player(p0)
    assert me.place is not None
    assert me.rating_change is not None
    applied = deps.store.ratings[(p0, first)]  # type: ignore[attr-defined]
    closed_ms = deps.clock.now_ms()  # the wake that closed the round
    assert applied == RatingApplied(
        p0, first, me.place, me.rating_change, 1000, update_player=True, at_ms=closed_ms
    )
    player = stored_player(deps, p0)
    assert (player.status, player.tournament_id) == (PlayerStatus.PLAYING, second)
    assert player.rating == 1000 + me.rating_change
    ratings = [m for m in sent_of(deps, c0, "rating") if m["tournament_id"] == first]
    assert [(m["place"], m["change"]) for m in ratings] == [(me.place, me.rating_change)]


def test_a_change_of_no_such_tournament_is_not_found() -> None:
    deps = fake_deps()
    with pytest.raises(NotFoundError, match=r"^no such tournament$"):
        change_tournament(deps, "ghost", lambda rec, now, dealer: Decision(rec.tournament))


class _ResumeBeforeTheTournamentRead:
    """The store, except that the first read of a tournament is preceded by ``resume``: a
    resume landing between a reconnect deadline's player read and its tournament change."""

    def __init__(self, store: Any, resume: Any) -> None:
        self._store = store
        self._resume = resume

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def get_tournament(self, tournament_id: str) -> TournamentRecord | None:
        if self._resume is not None:
            resume, self._resume = self._resume, None
            resume()
        return self._store.get_tournament(tournament_id)  # type: ignore[no-any-return]


def test_a_reconnect_deadline_that_meets_a_resume_leaves_the_player_in() -> None:
    deps = fake_deps()
    tokens = {}
    for i in range(8):
        reply = open_session(deps, f"c{i}")
        matchmaking.join(deps, Request(f"c{i}"), reply["player"]["id"], "en")
        tokens[reply["player"]["id"]] = reply["token"]
    pid = stored_player(deps, next(iter(tokens))).player_id
    sessions.disconnect(deps, "c0")
    player = stored_player(deps, pid)
    racing = dataclasses.replace(
        deps,
        store=_ResumeBeforeTheTournamentRead(
            deps.store, lambda: open_session(deps, "back", tokens[pid])
        ),
    )
    racing.clock.now = player.reconnect_deadline_ms  # type: ignore[attr-defined]
    assert deadlines.reconnect_deadline(racing, pid, player.disconnect_seq) is None
    assert stored_player(deps, pid).status is PlayerStatus.PLAYING
    assert _record(deps, pid).tournament.player(pid).alive


def test_a_skipped_player_whose_connection_is_gone_is_disconnected_by_the_wake() -> None:
    """Ruling 14: the skip's liveness check (GetConnection) finds the connection gone (410: it
    dropped and its $disconnect was lost): the player is away from now."""
    deps = fake_deps(heartbeat_ms=20_000)
    seated = _seat(deps, 8)
    deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]  # intro ends
    duel = _record(deps, seated[0][1]).tournament.duels[0]
    mover = duel.next_player
    deps.notifier.gone.add(next(c for c, p in seated if p == mover))  # type: ignore[attr-defined]
    deps.clock.advance_to(duel.turn_deadline_ms + deps.timing.skip_grace_ms)  # type: ignore[attr-defined]
    assert mover is not None
    player = stored_player(deps, mover)
    assert (player.connected, player.connection_id) == (False, None)
    assert player.reconnect_deadline_ms == deps.clock.now_ms() + deps.timing.reconnect_ms
