"""Unit: what a resume shows (``snapshot``, ruling 15) and what the clock's wakes do
(``deadlines``: the round loop, liveness, the watchdog; rulings 9, 13, 14), on the fakes."""

from __future__ import annotations

from typing import Any

from shared.services import deadlines, matchmaking, parties, sessions
from shared.services.deps import Deps
from shared.services.model import PlayerStatus
from shared.services.outbox import Request
from shared.services.ports import Timer, TimerKind
from tests.fakes import fake_deps, open_session, sent_of


def _eight(deps: Deps) -> list[tuple[str, str, str]]:
    """8 players joined in English: [(connection, player, token)]."""
    seated = []
    for i in range(8):
        reply = open_session(deps, f"c{i}")
        matchmaking.join(deps, Request(f"c{i}"), reply["player"]["id"], "en")
        seated.append((f"c{i}", reply["player"]["id"], reply["token"]))
    return seated


def duels_guess(deps: Deps, cid: str, duel_id: str, word: str) -> None:
    from shared.services import duels

    deps.clock.now += 100  # type: ignore[attr-defined]
    duels.guess(deps, Request(cid), duel_id, word)


def _wrong(deps: Deps, duel: Any) -> str:
    return next(w for w in sorted(deps.lexicon.allowed("en", duel.length)) if w != duel.word)


def _record(deps: Deps, pid: str) -> Any:
    player = deps.store.get_player(pid)
    assert player is not None
    rec = deps.store.get_tournament(player.tournament_id or "")
    assert rec is not None
    return rec


# ------------------------------------------------------------------ resume
def test_a_resume_in_a_lobby_shows_the_lobby_its_language_and_who_is_away() -> None:
    deps = fake_deps()
    a = open_session(deps, "a")
    matchmaking.join(deps, Request("a"), a["player"]["id"], "de")
    b = open_session(deps, "b")
    matchmaking.join(deps, Request("b"), b["player"]["id"], "de")
    sessions.disconnect(deps, "b")
    sessions.disconnect(deps, "a")
    snap = open_session(deps, "a2", a["token"])["snapshot"]
    assert snap["language"]["code"] == "de"
    assert snap["language"]["name"] == "German"
    assert snap["language"]["native_name"] == "Deutsch"
    assert snap["language"]["direction"] == "ltr"
    assert snap["language"]["multi_letter_tiles"] == []
    assert "ß" in snap["language"]["alphabet"]
    assert [p["id"] for p in snap["lobby"]["players"]] == [a["player"]["id"], b["player"]["id"]]
    b_player = deps.store.get_player(b["player"]["id"])
    assert b_player is not None
    assert snap["statuses"] == [
        {
            "type": "player_status",
            "request_id": None,
            "seq": None,
            "tournament_id": None,
            "lobby_id": snap["lobby"]["lobby_id"],
            "player_id": b["player"]["id"],
            "status": "disconnected",
            "reconnect_deadline_ms": b_player.reconnect_deadline_ms,
        }
    ]
    assert snap.get("round") is None


def test_a_resume_in_a_tournament_shows_the_round_the_duel_and_who_is_away() -> None:
    deps = fake_deps()
    seated = _eight(deps)
    deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]  # intro ends
    (c0, p0, token), (c1, p1, _) = seated[0], seated[1]
    sessions.disconnect(deps, c1)
    sessions.disconnect(deps, c0)
    snap = open_session(deps, "back", token)["snapshot"]
    back = sent_of(deps, seated[2][0], "player_status")[-1]
    assert (back["player_id"], back["status"], back["reconnect_deadline_ms"]) == (
        p0,
        "connected",
        None,
    )
    t = _record(deps, p0).tournament
    duel = t.duel_of(p0)
    assert snap["round"]["round"] == t.round_no == 1
    assert snap["duel"]["duel_id"] == duel.duel_id
    assert snap["duel"]["word"] is None
    assert snap["duel"]["deadline_ms"] == duel.turn_deadline_ms
    assert snap["duel"]["next_player"] == duel.next_player
    assert [s["player_id"] for s in snap["statuses"]] == [p1]
    assert snap["statuses"][0]["reconnect_deadline_ms"] == t.player(p1).reconnect_deadline_ms
    assert snap["spectating"] == []  # a duelist whose duel runs is no spectator (ruling 7)
    assert snap.get("eliminated") is None
    assert snap.get("rating") is None
    assert {s["player_id"] for s in snap["standings"]["players"]} == {p for _, p, _ in seated}


def test_a_leaver_resuming_sees_only_their_own_result() -> None:
    deps = fake_deps()
    seated = _eight(deps)
    c0, p0, token = seated[0]
    matchmaking.leave(deps, Request(c0), p0)
    # still the tournament's (as a spectator would be) until it ends
    player = deps.store.get_player(p0)
    assert player is not None
    assert player.status is PlayerStatus.IDLE
    snap = open_session(deps, "back", token)["snapshot"]
    assert snap["eliminated"]["player_id"] == p0
    assert (snap["eliminated"]["reason"], snap["eliminated"]["round"]) == ("left", 1)
    assert snap["eliminated"]["tournament_id"] == player.tournament_id
    assert snap["language"]["code"] == "en"
    assert snap.get("rating") is None  # the round has not ended: the place is still open
    assert snap.get("round") is None
    assert snap.get("duel") is None
    assert snap.get("standings") is None


def test_a_spectator_resuming_sees_the_other_duels() -> None:
    """Ruling 7: a player whose duel is over spectates: the resume shows the other boards,
    with the secret only of those that are over."""
    deps = fake_deps()
    seated = _eight(deps)
    deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]  # intro ends
    t = _record(deps, seated[0][1]).tournament
    duel = t.duels[0]
    mover = duel.next_player
    cid, _, token = next(x for x in seated if x[1] == mover)
    duels_guess(deps, cid, duel.duel_id, duel.word)
    snap = open_session(deps, "back", token)["snapshot"]
    assert snap["duel"]["duel_id"] == duel.duel_id
    assert snap["duel"]["word"] == duel.word
    boards = snap["spectating"]
    assert [b["duel_id"] for b in boards] == [d.duel_id for d in t.duels[1:]]
    assert all(b["word"] is None and not b["over"] for b in boards)
    assert boards[0]["deadline_ms"] == t.duels[1].turn_deadline_ms
    assert boards[0]["players"] == list(t.duels[1].players)


def test_a_player_out_on_lives_resuming_sees_the_reason_and_the_rating_once_placed() -> None:
    deps = fake_deps()
    seated = _eight(deps)
    loser_cid, loser, token = seated[0]
    for _ in range(3):  # the loser's opponent solves at once, three rounds running
        deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]
        t = _record(deps, loser).tournament
        duel = t.duel_of(loser)
        assert duel is not None
        mover = duel.next_player
        if mover == loser:
            duels_guess(deps, loser_cid, duel.duel_id, _wrong(deps, duel))
        winner = duel.opponent_of(loser)
        duels_guess(deps, next(c for c, p, _ in seated if p == winner), duel.duel_id, duel.word)
        while _record(deps, loser).tournament.round_no == t.round_no:  # the rest: skips
            deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]
    t = _record(deps, loser).tournament
    me = t.player(loser)
    assert not me.alive
    snap = open_session(deps, "back", token)["snapshot"]
    assert (snap["eliminated"]["reason"], snap["eliminated"]["round"]) == ("lives", me.out_round)
    assert snap["rating"]["place"] == me.place
    assert snap["rating"]["change"] == me.rating_change
    assert snap["rating"]["rating"] == 1000 + me.rating_change
    assert snap["rating"]["previous"] == 1000
    assert snap["round"]["round"] == t.round_no  # still watching the tournament


def test_a_resume_in_a_party_shows_the_party() -> None:
    deps = fake_deps()
    lead = open_session(deps, "lead")
    parties.create(deps, Request("lead"), lead["player"]["id"])
    sessions.disconnect(deps, "lead")
    snap = open_session(deps, "lead2", lead["token"])["snapshot"]
    assert snap["party"]["leader"] == lead["player"]["id"]
    assert snap["party"]["status"] == "open"


# ------------------------------------------------------------------ the clock
def test_a_round_wake_applies_what_is_due_and_names_the_next_wake() -> None:
    deps = fake_deps()
    seated = _eight(deps)
    t = _record(deps, seated[0][1]).tournament
    tid = t.tournament_id
    early = deadlines.fire_round(deps, Timer(TimerKind.INTRO, tid, 1, t.intro_deadline_ms))
    assert early.applied is False  # nothing due yet: an early wake changes nothing
    assert early.next_due_ms == t.intro_deadline_ms
    deps.clock.now = t.intro_deadline_ms  # type: ignore[attr-defined]
    fired = deadlines.fire_round(deps, Timer(TimerKind.INTRO, tid, 1, t.intro_deadline_ms))
    assert fired.applied is True
    t2 = _record(deps, seated[0][1]).tournament
    assert fired.next_due_ms == t2.next_due(deps.timing.skip_grace_ms)
    assert fired.next_due_ms == t.intro_deadline_ms + deps.timing.turn_ms + 1_000
    stale = deadlines.fire_round(deps, Timer(TimerKind.INTRO, tid, 7, t.intro_deadline_ms))
    assert stale.next_due_ms is None  # another round's loop ends
    gone = deadlines.fire_round(deps, Timer(TimerKind.INTRO, "nope", 1, 0))
    assert (gone.applied, gone.next_due_ms) == (False, None)


def test_a_silent_player_whose_turn_runs_out_is_disconnected_and_closed() -> None:
    """Ruling 14: a skip is when silence matters; a player not heard from for the heartbeat
    timeout counts as disconnected from the moment it passed, and their connection closes."""
    deps = fake_deps(heartbeat_ms=20_000)
    seated = _eight(deps)
    heard = deps.clock.now_ms()
    for c, _, _ in seated:  # their sessions: API Gateway's LastActiveAt
        deps.notifier.activity(c, heard)  # type: ignore[attr-defined]
    deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]  # intro ends
    t = _record(deps, seated[0][1]).tournament
    duel = t.duels[0]
    mover = duel.next_player
    cid = next(c for c, p, _ in seated if p == mover)
    others = [c for c, p, _ in seated if p not in duel.players]
    for c, _, _ in seated:  # everyone else keeps pinging (the gateway answers)
        if c != cid:
            deps.notifier.activity(c, duel.turn_deadline_ms)  # type: ignore[attr-defined]
    deps.clock.advance_to(duel.turn_deadline_ms + 1_000)  # type: ignore[attr-defined]
    assert cid in deps.notifier.closed  # type: ignore[attr-defined]
    player = deps.store.get_player(mover or "")
    assert player is not None
    assert player.connected is False
    assert player.reconnect_deadline_ms == heard + 20_000 + deps.timing.reconnect_ms
    status = sent_of(deps, others[0], "player_status")[-1]
    assert (status["player_id"], status["status"]) == (mover, "disconnected")


def test_the_watchdog_applies_an_overdue_round_and_restarts_its_clock() -> None:
    deps = fake_deps()
    seated = _eight(deps)
    t = _record(deps, seated[0][1]).tournament
    deps.clock.now = t.intro_deadline_ms + deps.watchdog_grace_ms + 1  # type: ignore[attr-defined]
    handled = deadlines.watchdog(deps, deps.watchdog_grace_ms)
    assert handled >= 1
    t2 = _record(deps, seated[0][1]).tournament
    assert t2.phase.value == "playing"
    assert deadlines.watchdog(deps, deps.watchdog_grace_ms) == 0  # nothing overdue now


def _won_while_away(deps: Deps) -> tuple[str, str]:
    """8 players; the last one drops, the 7 others leave: the tournament ends with the absent
    player as its winner. Returns (player, token)."""
    seated = _eight(deps)
    c7, p7, token = seated[7]
    sessions.disconnect(deps, c7)
    for cid, pid, _ in seated[:7]:
        matchmaking.leave(deps, Request(cid), pid)
    assert _record(deps, p7).tournament.over
    return p7, token


def test_a_resume_after_the_end_shows_the_end_once() -> None:
    """Ruling 15: a player away when their tournament ended sees its end on resume — the
    final standings and their own rating — once; then they are idle."""
    deps = fake_deps()
    p7, token = _won_while_away(deps)
    t = _record(deps, p7).tournament
    snap = open_session(deps, "back", token)["snapshot"]
    end = snap["tournament_end"]
    assert end["tournament_id"] == t.tournament_id
    assert end["winners"] == [p7]
    assert end["places"][0]["player_id"] == p7
    rating = snap["rating"]
    me = t.player(p7)
    assert (rating["place"], rating["change"]) == (1, me.rating_change)
    assert (rating["previous"], rating["rating"]) == (1000, 1000 + me.rating_change)
    assert snap.get("round") is None
    player = deps.store.get_player(p7)
    assert player is not None
    assert (player.tournament_id, player.status) == (None, PlayerStatus.IDLE)
    again = open_session(deps, "again", token)["snapshot"]
    assert again.get("tournament_end") is None
    assert again.get("rating") is None


def test_a_reconnect_deadline_of_a_player_whose_tournament_ended_is_forgotten() -> None:
    deps = fake_deps()
    p7, _ = _won_while_away(deps)
    player = deps.store.get_player(p7)
    assert player is not None
    assert player.status is PlayerStatus.IDLE
    assert player.reconnect_deadline_ms is not None
    deps.clock.now = player.reconnect_deadline_ms  # type: ignore[attr-defined]
    assert deadlines.reconnect_deadline(deps, p7, player.disconnect_seq) is None
    after = deps.store.get_player(p7)
    assert after is not None
    assert after.reconnect_deadline_ms is None
    assert after.status is PlayerStatus.IDLE
    assert (after.connected, after.rating) == (False, player.rating)


def test_the_watchdog_applies_an_overdue_reconnect_deadline_and_counts_what_it_handled() -> None:
    deps = fake_deps()
    seated = _eight(deps)
    c5, p5, _ = seated[5]
    sessions.disconnect(deps, c5)
    player = deps.store.get_player(p5)
    assert player is not None
    assert player.reconnect_deadline_ms is not None
    t = _record(deps, p5).tournament
    before = {(x.kind, x.ref, x.seq, x.due_ms) for x in deps.clock.pending()}  # type: ignore[attr-defined]
    # the clock never fired: the round's deadlines and the reconnect deadline are overdue
    deps.clock.now = player.reconnect_deadline_ms + deps.watchdog_grace_ms + 1  # type: ignore[attr-defined]
    # one deadline applied: the player's reconnect deadline (they left the tournament, which
    # applied the round's due turns too); the tournament's entry then found nothing left to
    # apply — not counted (OverdueDeadlines counts applied deadlines) — and restarts the clock
    assert deadlines.watchdog(deps, deps.watchdog_grace_ms) == 1
    after = _record(deps, p5).tournament
    assert not after.player(p5).alive
    assert after.player(p5).timed_out
    assert deps.store.get_player(p5).reconnect_deadline_ms is None  # type: ignore[union-attr]
    new = [(x.kind, x.ref, x.seq, x.due_ms) for x in deps.clock.pending()]  # type: ignore[attr-defined]
    assert {x for x in new if x not in before} == {
        (
            TimerKind.INTRO,
            t.tournament_id,
            after.round_no,
            after.next_due(deps.timing.skip_grace_ms),
        )
    }


def test_the_watchdog_leaves_what_its_budget_cannot_start_for_the_next_run() -> None:
    """An entry not started within the run's budget is left as it is (the run ends before the
    function's time-out) and the next run recovers it."""
    deps = fake_deps()
    seated = _eight(deps)
    t = _record(deps, seated[0][1]).tournament
    deps.clock.now = t.intro_deadline_ms + deps.watchdog_grace_ms + 1  # type: ignore[attr-defined]
    assert deadlines.watchdog(deps, deps.watchdog_grace_ms, budget_ms=-1) == 0
    assert _record(deps, seated[0][1]).tournament.phase == t.phase  # untouched
    assert deadlines.watchdog(deps, deps.watchdog_grace_ms) == 1
    assert _record(deps, seated[0][1]).tournament.phase.value == "playing"


def test_the_watchdog_counts_a_stale_index_entry_as_nothing_applied() -> None:
    """A due-time entry whose deadline the loop already applied (the index lagging its item)
    is not an overdue deadline: not counted, and it starts no second loop."""
    deps = fake_deps()
    seated = _eight(deps)
    t = _record(deps, seated[0][1]).tournament
    deps.clock.now = t.intro_deadline_ms + deps.watchdog_grace_ms + 1  # type: ignore[attr-defined]
    ref = t.tournament_id
    assert deadlines.recover(deps, "tournament", ref) == 1  # the intro applied
    loops = len(deps.clock.pending())  # type: ignore[attr-defined]
    assert deadlines.recover(deps, "tournament", ref) == 0  # the same entry again: stale
    assert len(deps.clock.pending()) == loops  # type: ignore[attr-defined]  # no second loop
