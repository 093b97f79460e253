"""Unit: a connection going away (``presence.disconnect``, ``presence.drop``; ruling 9) for
each kind of player — idle, in a lobby, playing, watching — and when its notices cannot be
saved or find other connections gone, on the fakes."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from functions import apply_deadlines
from shared.services import duels, matchmaking, sessions
from shared.services.deps import Deps
from shared.services.errors import ConflictError
from shared.services.model import LobbyRecord, Player, PlayerStatus, TournamentRecord
from shared.services.outbox import Request
from shared.services.presence import drop
from tests.fakes import fake_deps, new_player, open_session, sent_of, stored_player


def _seat(deps: Deps, n: int) -> list[tuple[str, str, str]]:
    """``n`` players joined in English: [(connection, player, token)]."""
    seated = []
    for i in range(n):
        cid = f"c{i}"
        reply = open_session(deps, cid)
        pid = reply["player"]["id"]
        matchmaking.join(deps, Request(cid), pid, "en")
        seated.append((cid, pid, reply["token"]))
    return seated


def _tournament(deps: Deps, pid: str) -> TournamentRecord:
    rec = deps.store.get_tournament(stored_player(deps, pid).tournament_id or "")
    assert rec is not None
    return rec


class _Refusing:
    """The store, except that every commit holding a record of ``kinds`` loses its race."""

    def __init__(self, store: Any, kinds: tuple[type, ...]) -> None:
        self._store = store
        self._kinds = kinds

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def commit(self, writes: Sequence[Any]) -> None:
        if any(isinstance(w, self._kinds) for w in writes):
            raise ConflictError("another writer got there first")
        self._store.commit(writes)


def _counting(deps: Deps) -> tuple[Deps, Counter[str]]:
    counted: Counter[str] = Counter()

    def count(name: str, value: float) -> None:
        counted[name] += value  # type: ignore[assignment]

    counting = dataclasses.replace(deps, metrics=count)
    counting.clock.fire = lambda state: apply_deadlines.handle(state, counting)  # type: ignore[attr-defined]
    return counting, counted


# ------------------------------------------------------------------ who went away
def test_an_idle_player_who_goes_away_gets_no_reconnect_deadline() -> None:
    deps = fake_deps()
    pid = new_player(deps, "c")
    sessions.disconnect(deps, "c")
    player = stored_player(deps, pid)
    assert (player.connected, player.connection_id) == (False, None)
    assert player.reconnect_deadline_ms is None
    assert deps.clock.pending() == []  # type: ignore[attr-defined]  # no reconnect timer


def test_a_players_old_connection_closing_after_a_resume_changes_nothing() -> None:
    deps = fake_deps()
    (c0, _, _), (c1, p1, token) = _seat(deps, 2)
    open_session(deps, "back", token)  # the resume replaces c1 (closed, item still there)
    seq = stored_player(deps, p1).disconnect_seq
    sessions.disconnect(deps, c1)  # its $disconnect arrives after the resume
    player = stored_player(deps, p1)
    assert (player.connected, player.connection_id) == (True, "back")
    assert (player.disconnect_seq, player.reconnect_deadline_ms) == (seq, None)
    assert sent_of(deps, c0, "player_status")[-1]["status"] == "connected"


def test_a_reconnect_deadline_of_an_earlier_disconnect_keeps_the_seat() -> None:
    """Ruling 9: each disconnect starts its own 60 s; a resume in between makes the first
    one's timer stale, so the seat is kept until the second one's deadline."""
    deps = fake_deps()
    (c0, _, _), (c1, p1, token) = _seat(deps, 2)
    sessions.disconnect(deps, c1)
    open_session(deps, "back", token)
    deps.clock.advance(30_000)  # type: ignore[attr-defined]
    sessions.disconnect(deps, "back")
    second = stored_player(deps, p1).reconnect_deadline_ms
    assert second == deps.clock.now_ms() + deps.timing.reconnect_ms
    deps.clock.advance(30_000)  # type: ignore[attr-defined]  # the first deadline passes
    player = stored_player(deps, p1)
    assert (player.status, player.reconnect_deadline_ms) == (PlayerStatus.QUEUED, second)
    deps.clock.advance_to(second)  # type: ignore[attr-defined]
    assert stored_player(deps, p1).status is PlayerStatus.IDLE
    assert len(sent_of(deps, c0, "lobby")[-1]["players"]) == 1


def test_a_playing_player_who_goes_away_is_out_when_the_reconnect_timer_fires() -> None:
    deps = fake_deps()
    seated = _seat(deps, 8)
    (c0, _, _), (c3, p3, _) = seated[0], seated[3]
    sessions.disconnect(deps, c3)
    deadline = deps.clock.now_ms() + deps.timing.reconnect_ms
    status = sent_of(deps, c0, "player_status")[-1]
    assert (status["player_id"], status["status"]) == (p3, "disconnected")
    assert status["reconnect_deadline_ms"] == deadline
    assert status["tournament_id"] == _tournament(deps, p3).tournament.tournament_id
    assert _tournament(deps, p3).tournament.player(p3).reconnect_deadline_ms == deadline
    deps.clock.advance_to(deadline)  # type: ignore[attr-defined]  # the timer fires on time
    out = [m for m in sent_of(deps, c0, "eliminated") if m["player_id"] == p3]
    assert [m["reason"] for m in out] == ["timeout"]
    assert stored_player(deps, p3).status is PlayerStatus.IDLE


def _wrong(deps: Deps, duel: Any) -> str:
    return next(w for w in sorted(deps.lexicon.allowed("en", duel.length)) if w != duel.word)


def _guess(deps: Deps, cid: str, duel_id: str, word: str) -> None:
    deps.clock.now += 100  # type: ignore[attr-defined]
    duels.guess(deps, Request(cid), duel_id, word)


def _spectator(deps: Deps) -> tuple[list[tuple[str, str, str]], str, str]:
    """8 seated; the first loses a duel three rounds running (out on lives, ruling 7) and
    watches the rest: (seated, its connection, its player)."""
    seated = _seat(deps, 8)
    loser_cid, loser, _ = seated[0]
    for _ in range(3):
        deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]
        t = _tournament(deps, loser).tournament
        duel = t.duel_of(loser)
        assert duel is not None
        if duel.next_player == loser:
            _guess(deps, loser_cid, duel.duel_id, _wrong(deps, duel))
        winner = duel.opponent_of(loser)
        _guess(deps, next(c for c, p, _ in seated if p == winner), duel.duel_id, duel.word)
        while _tournament(deps, loser).tournament.round_no == t.round_no:  # the rest: skips
            deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]
    return seated, loser_cid, loser


def test_a_spectator_who_goes_away_stops_receiving_the_tournament() -> None:
    deps = fake_deps()
    _, cid, pid = _spectator(deps)
    player = stored_player(deps, pid)
    assert (player.status, player.tournament_id is not None) == (PlayerStatus.IDLE, True)
    assert _tournament(deps, pid).connections[pid] == cid
    sessions.disconnect(deps, cid)
    player = stored_player(deps, pid)
    assert (player.connected, player.reconnect_deadline_ms) == (False, None)
    assert _tournament(deps, pid).connections[pid] is None


# ------------------------------------------------------------------ notices that fail
def test_a_disconnect_whose_lobby_notice_cannot_be_saved_keeps_the_deadline_and_counts_it() -> None:
    deps, counted = _counting(fake_deps())
    (c0, _, _), (c1, p1, _) = _seat(deps, 2)
    busy = dataclasses.replace(deps, store=_Refusing(deps.store, (LobbyRecord,)), max_attempts=2)
    before = len(sent_of(deps, c0, "player_status"))
    sessions.disconnect(busy, c1)
    player = stored_player(deps, p1)
    deadline = deps.clock.now_ms() + deps.timing.reconnect_ms
    assert (player.connected, player.reconnect_deadline_ms) == (False, deadline)
    assert len(sent_of(deps, c0, "player_status")) == before  # the badge is lost
    assert dict(counted) == {"DisconnectNoticeLost": 1}
    deps.clock.advance_to(deadline)  # type: ignore[attr-defined]  # the deadline settles it
    assert stored_player(deps, p1).status is PlayerStatus.IDLE


def test_a_disconnect_whose_tournament_notice_cannot_be_saved_counts_it() -> None:
    deps, counted = _counting(fake_deps())
    seated = _seat(deps, 8)
    busy = dataclasses.replace(
        deps, store=_Refusing(deps.store, (TournamentRecord,)), max_attempts=2
    )
    sessions.disconnect(busy, seated[6][0])
    assert stored_player(deps, seated[6][1]).connected is False
    assert counted["DisconnectNoticeLost"] == 1


# ------------------------------------------------------------------ connections found gone
def test_every_connection_found_gone_is_disconnected_once_even_when_notices_find_it_again() -> None:
    deps = fake_deps()
    seated = _seat(deps, 8)
    for cid, _, _ in seated[:3]:
        deps.notifier.gone.add(cid)  # type: ignore[attr-defined]
    # c0's notice finds c1 and c2 gone; c1's finds c2 again
    drop(deps, (seated[0][0], seated[1][0]))
    for _, pid, _ in seated[:3]:
        assert stored_player(deps, pid).connected is False
    for _, pid, _ in seated[3:]:
        assert stored_player(deps, pid).connected is True


def test_unrelated_connections_found_gone_are_each_disconnected() -> None:
    deps = fake_deps()
    a, b = new_player(deps, "a"), new_player(deps, "b")
    drop(deps, ("a", "b"))
    assert stored_player(deps, a).connected is False
    assert stored_player(deps, b).connected is False
    assert deps.store.get_connection("b").closed_ms is not None  # kept as a tombstone


def test_a_disconnect_notice_that_finds_a_connection_gone_disconnects_it_too() -> None:
    deps = fake_deps()
    (c0, p0, _), (c1, _, _) = _seat(deps, 2)
    deps.notifier.gone.add(c0)  # type: ignore[attr-defined]
    sessions.disconnect(deps, c1)
    assert stored_player(deps, p0).connected is False


# ------------------------------------------------- a resume between a disconnect's two writes
class _ResumeAfterTheDisconnectIsSaved:
    """The store, except that right after the commit that saves ``player_id`` disconnected,
    ``resume`` runs (once): a resume landing between a disconnect's player write and its
    lobby / tournament write."""

    def __init__(self, store: Any, player_id: str, resume: Callable[[], object]) -> None:
        self._store = store
        self._player_id = player_id
        self._resume: Callable[[], object] | None = resume

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def commit(self, writes: Sequence[Any]) -> None:
        self._store.commit(writes)
        saved = any(
            isinstance(w, Player) and w.player_id == self._player_id and not w.connected
            for w in writes
        )
        if saved and self._resume is not None:
            resume, self._resume = self._resume, None
            resume()


def _disconnect_racing_a_resume(deps: Deps, cid: str, pid: str, token: str) -> None:
    racing = dataclasses.replace(
        deps,
        store=_ResumeAfterTheDisconnectIsSaved(
            deps.store, pid, lambda: open_session(deps, "back", token)
        ),
    )
    sessions.disconnect(racing, cid)
    player = stored_player(deps, pid)
    assert (player.connected, player.connection_id) == (True, "back")


def test_a_lobby_keeps_the_connection_a_resume_bound_during_the_disconnect() -> None:
    deps = fake_deps()
    (c0, _, _), (c1, p1, token) = _seat(deps, 2)
    _disconnect_racing_a_resume(deps, c1, p1, token)
    lobby = deps.store.get_lobby(stored_player(deps, p1).lobby_id or "")
    assert lobby is not None
    assert lobby.connections[p1] == "back"
    assert sent_of(deps, c0, "player_status")[-1]["status"] == "connected"


def test_a_tournament_keeps_the_connection_a_resume_bound_during_the_disconnect() -> None:
    deps = fake_deps()
    seated = _seat(deps, 8)
    (c0, _, _), (c2, p2, token) = seated[0], seated[2]
    _disconnect_racing_a_resume(deps, c2, p2, token)
    rec = _tournament(deps, p2)
    assert rec.connections[p2] == "back"
    assert rec.tournament.player(p2).connected is True
    assert [m for m in sent_of(deps, c0, "player_status") if m["player_id"] == p2] == []


def test_a_spectator_keeps_the_connection_a_resume_bound_during_the_disconnect() -> None:
    deps = fake_deps()
    seated, cid, pid = _spectator(deps)
    token = seated[0][2]
    _disconnect_racing_a_resume(deps, cid, pid, token)
    assert _tournament(deps, pid).connections[pid] == "back"
