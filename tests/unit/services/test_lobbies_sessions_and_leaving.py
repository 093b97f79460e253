"""Unit: the use cases around a tournament on the in-memory fakes — sessions (create, resume,
nickname, ping), joining and leaving lobbies (ruling 8, 9), leaving a tournament (ruling 3),
disconnects and reconnect deadlines (rulings 9, 14), and what each refusal tells the player.
"""

from __future__ import annotations

import pytest

from shared.domain.errors import (
    AlreadyPlayingError,
    AlreadyQueuedError,
    InvalidNicknameError,
    NotQueuedError,
    UnknownLanguageError,
)
from shared.services import deadlines, matchmaking, sessions
from shared.services.deps import Deps
from shared.services.errors import InvalidTokenError, NoSessionError, SessionBoundError
from shared.services.model import PlayerStatus
from shared.services.outbox import Request
from shared.services.presence import player_for_connection
from tests.fakes import fake_deps, new_player, open_session, sent, sent_of, stored_player


def _seat(deps: Deps, n: int, first: int = 0) -> list[tuple[str, str]]:
    seated = []
    for i in range(first, first + n):
        cid = f"c{i}"
        pid = new_player(deps, cid)
        matchmaking.join(deps, Request(cid, f"j{i}"), pid, "en")
        seated.append((cid, pid))
    return seated


# ------------------------------------------------------------------ sessions
def test_a_new_session_gets_a_player_a_token_and_a_nickname() -> None:
    deps = fake_deps()
    reply = open_session(deps, "c")
    assert reply["request_id"] == "s"
    assert reply["resumed"] is False
    assert len(reply["token"]) >= 32
    player = stored_player(deps, reply["player"]["id"])
    assert (player.rating, player.connection_id, player.connected) == (1000, "c", True)
    assert reply["player"] == {"id": player.player_id, "nickname": player.nickname, "rating": 1000}
    assert (
        deps.store.get_player(
            deps.store.player_id_for_token(sessions.hash_token(reply["token"])) or ""
        )
        == player
    )
    conn = deps.store.get_connection("c")
    assert conn is not None
    assert conn.player_id == player.player_id


def test_a_second_new_session_on_one_connection_is_session_bound_and_changes_nothing() -> None:
    deps = fake_deps()
    first = open_session(deps, "c")["player"]["id"]
    players = dict(deps.store.items)  # type: ignore[attr-defined]
    with pytest.raises(SessionBoundError):
        sessions.session(deps, Request("c", "again"), None)
    assert deps.store.items == players  # type: ignore[attr-defined]
    assert player_for_connection(deps, "c").player_id == first


def test_an_unknown_token_is_refused_and_changes_nothing() -> None:
    deps = fake_deps()
    sessions.connect(deps, "c")
    with pytest.raises(InvalidTokenError, match=r"^unknown session token$"):
        sessions.session(deps, Request("c"), "not-a-token")
    with pytest.raises(NoSessionError, match=r"^send a session message first$"):
        player_for_connection(deps, "c")


def test_a_resumed_session_replaces_the_old_connection() -> None:
    deps = fake_deps()
    token = open_session(deps, "old")["token"]
    again = open_session(deps, "new", token)
    assert again["resumed"] is True
    assert again["token"] not in (None, token)  # rotated (ruling 11)
    with pytest.raises(NoSessionError, match=r"^this connection's session was replaced$"):
        player_for_connection(deps, "old")
    pid = again["player"]["id"]
    assert stored_player(deps, pid).disconnect_seq == 1
    assert again["request_id"] == "s"
    assert player_for_connection(deps, "new").player_id == pid
    conn = deps.store.get_connection("new")
    assert conn is not None
    assert conn.player_id == pid
    assert sent_of(deps, "old", "error")[-1]["code"] == "session_replaced"
    # a second resume on the same connection (the newest token) replaces nothing
    same = open_session(deps, "new", again["token"])
    assert same["resumed"] is True
    assert stored_player(deps, pid).disconnect_seq == 2
    assert not sent_of(deps, "new", "error")
    assert "new" not in deps.notifier.closed  # type: ignore[attr-defined]


def test_a_nickname_is_cleaned_saved_and_echoed() -> None:
    deps = fake_deps()
    pid = new_player(deps, "c")
    sessions.nickname(deps, Request("c", "n"), pid, "  Wordle   Fan ")
    reply = sent(deps, "c")[-1]
    assert reply["type"] == "player"
    assert reply["request_id"] == "n"
    assert reply["player"]["nickname"] == "Wordle Fan"
    assert stored_player(deps, pid).nickname == "Wordle Fan"
    with pytest.raises(InvalidNicknameError):
        sessions.nickname(deps, Request("c"), pid, "x")
    assert stored_player(deps, pid).nickname == "Wordle Fan"


# ------------------------------------------------------------------ lobbies
def test_joining_seats_the_player_and_shows_everyone_the_lobby() -> None:
    deps = fake_deps()
    (c0, p0), (c1, p1) = _seat(deps, 2)
    lobby = sent_of(deps, c0, "lobby")[-1]
    assert lobby["language"] == "en"
    assert lobby["seats"] == 8
    assert lobby["status"] == "waiting"
    assert [p["id"] for p in lobby["players"]] == [p0, p1]
    assert lobby["alphabet"] == list("abcdefghijklmnopqrstuvwxyz")
    assert lobby["keyboard"][0] == list("qwertyuiop")
    assert lobby["party_id"] is None
    assert lobby["tournament_id"] is None
    assert sent_of(deps, c1, "lobby")[-1]["request_id"] == "j1"
    player = stored_player(deps, p1)
    assert (player.status, player.lobby_id) == (PlayerStatus.QUEUED, lobby["lobby_id"])


def test_join_refusals_say_why() -> None:
    deps = fake_deps()
    [(c0, p0)] = _seat(deps, 1)
    with pytest.raises(AlreadyQueuedError, match=r"^you are already waiting in a lobby$"):
        matchmaking.join(deps, Request(c0), p0, "en")
    with pytest.raises(UnknownLanguageError):
        matchmaking.join(deps, Request(c0), p0, "xx")
    seated = _seat(deps, 7, first=1)
    with pytest.raises(AlreadyPlayingError, match=r"^you are already in a tournament$"):
        matchmaking.join(deps, Request(seated[0][0]), seated[0][1], "en")
    idle = new_player(deps, "late")
    sessions.disconnect(deps, "late")
    with pytest.raises(NoSessionError, match=r"^your connection closed; send session again$"):
        matchmaking.join(deps, Request("late"), idle, "en")


def test_a_rating_far_from_the_lobby_opens_another_lobby() -> None:
    deps = fake_deps()
    [(c0, _)] = _seat(deps, 1)
    far = new_player(deps, "far")
    p = stored_player(deps, far)
    p.rating = 1_300
    deps.store.commit([p])
    matchmaking.join(deps, Request("far"), far, "en")
    assert (
        sent_of(deps, "far", "lobby")[-1]["lobby_id"] != sent_of(deps, c0, "lobby")[-1]["lobby_id"]
    )
    near = new_player(deps, "near")
    matchmaking.join(deps, Request("near"), near, "en")
    assert (
        sent_of(deps, "near", "lobby")[-1]["lobby_id"] == sent_of(deps, c0, "lobby")[-1]["lobby_id"]
    )


def test_leaving_a_lobby_is_free_and_the_others_see_it() -> None:
    deps = fake_deps()
    (c0, p0), (c1, p1) = _seat(deps, 2)
    matchmaking.leave(deps, Request(c1, "l"), p1)
    assert sent_of(deps, c1, "lobby")[-1]["status"] == "left"
    assert sent_of(deps, c1, "lobby")[-1]["request_id"] == "l"
    assert [p["id"] for p in sent_of(deps, c0, "lobby")[-1]["players"]] == [p0]
    player = stored_player(deps, p1)
    assert (player.status, player.lobby_id) == (PlayerStatus.IDLE, None)
    with pytest.raises(NotQueuedError, match=r"^you are not in a lobby or tournament$"):
        matchmaking.leave(deps, Request(c1), p1)


def test_a_seat_is_kept_for_the_reconnect_window_then_freed() -> None:
    """Ruling 9: a player who drops in a lobby keeps the seat for 60 s; the others see them
    disconnected, then the seat freed when the deadline passes."""
    deps = fake_deps()
    (c0, _), (c1, p1) = _seat(deps, 2)
    sessions.disconnect(deps, c1)
    status = sent_of(deps, c0, "player_status")[-1]
    deadline = deps.clock.now_ms() + deps.timing.reconnect_ms
    assert (status["player_id"], status["status"]) == (p1, "disconnected")
    assert status["reconnect_deadline_ms"] == deadline
    player = stored_player(deps, p1)
    assert (player.status, player.reconnect_deadline_ms) == (PlayerStatus.QUEUED, deadline)
    assert deadlines.reconnect_deadline(deps, p1, player.disconnect_seq) == deadline  # early
    deps.clock.now = deadline  # type: ignore[attr-defined]
    assert deadlines.reconnect_deadline(deps, p1, player.disconnect_seq) is None
    player = stored_player(deps, p1)
    assert (player.status, player.lobby_id, player.reconnect_deadline_ms) == (
        PlayerStatus.IDLE,
        None,
        None,
    )
    assert len(sent_of(deps, c0, "lobby")[-1]["players"]) == 1


def test_a_player_back_in_time_keeps_the_seat_and_the_others_see_them_back() -> None:
    deps = fake_deps()
    (c0, _), (c1, p1) = _seat(deps, 2)
    token = None
    # the player's token is in their first session reply
    token = next(m["token"] for m in sent(deps, c1) if m["type"] == "session")
    sessions.disconnect(deps, c1)
    seq = stored_player(deps, p1).disconnect_seq
    reply = open_session(deps, "back", token)
    assert reply["resumed"] is True
    status = sent_of(deps, c0, "player_status")[-1]
    assert (status["status"], status["reconnect_deadline_ms"]) == ("connected", None)
    deps.clock.now += deps.timing.reconnect_ms  # type: ignore[attr-defined]
    assert deadlines.reconnect_deadline(deps, p1, seq) is None  # stale: nothing freed
    assert stored_player(deps, p1).status is PlayerStatus.QUEUED


# ------------------------------------------------------------------ leaving a tournament
def test_a_leaver_is_eliminated_told_alone_afterwards_and_released() -> None:
    deps = fake_deps()
    seated = _seat(deps, 8)
    (c0, p0), (c1, _) = seated[0], seated[1]
    deps.clock.now += 2_000  # type: ignore[attr-defined]  # during the round's intro
    matchmaking.leave(deps, Request(c0, "bye"), p0)
    forfeited = deps.store.get_tournament(stored_player(deps, p0).tournament_id)
    assert forfeited is not None
    duel = next(d for d in forfeited.tournament.duels if p0 in d.players)
    assert (duel.ended_ms, duel.winner) == (deps.clock.now_ms(), duel.opponent_of(p0))
    [mine] = sent_of(deps, c0, "eliminated")
    assert (mine["player_id"], mine["reason"], mine["round"]) == (p0, "left", 1)
    assert mine["request_id"] == "bye"
    assert sent_of(deps, c1, "eliminated")[-1]["player_id"] == p0
    player = stored_player(deps, p0)
    assert player.status is PlayerStatus.IDLE
    rec = deps.store.get_tournament(player.tournament_id)
    assert rec is not None
    assert rec.connections[p0] is None
    assert not rec.tournament.player(p0).alive
    before = len(sent(deps, c0))
    deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]  # intro ends
    assert not [m for m in sent(deps, c0)[before:] if m["type"] == "duel_start"]


def test_a_missed_reconnect_deadline_in_a_tournament_tells_the_others_timeout() -> None:
    deps = fake_deps()
    seated = _seat(deps, 8)
    (c0, _), (c5, p5) = seated[0], seated[5]
    sessions.disconnect(deps, c5)
    status = sent_of(deps, c0, "player_status")[-1]
    assert (status["player_id"], status["status"]) == (p5, "disconnected")
    player = stored_player(deps, p5)
    c2, p2 = seated[2]
    deps.notifier.gone.add(c2)  # type: ignore[attr-defined]  # vanished: the push finds out
    deps.clock.now = player.reconnect_deadline_ms  # type: ignore[attr-defined]
    assert deadlines.reconnect_deadline(deps, p5, player.disconnect_seq) is None
    out = sent_of(deps, c0, "eliminated")[-1]
    assert (out["player_id"], out["reason"]) == (p5, "timeout")
    assert stored_player(deps, p5).status is PlayerStatus.IDLE
    assert stored_player(deps, p5).reconnect_deadline_ms is None
    assert stored_player(deps, p2).connected is False


# ------------------------------------------------------------------ the 8th seat (ruling 9, 14)
def test_the_eighth_seat_releases_an_offline_holder_and_the_lobby_waits() -> None:
    deps = fake_deps()
    seated = _seat(deps, 7)
    (c0, _), (c3, p3) = seated[0], seated[3]
    sessions.disconnect(deps, c3)
    seq = stored_player(deps, p3).disconnect_seq
    _seat(deps, 1, first=7)
    released = stored_player(deps, p3)
    assert (released.status, released.lobby_id, released.reconnect_deadline_ms) == (
        PlayerStatus.IDLE,
        None,
        None,
    )
    assert released.disconnect_seq == seq + 1  # the pending reconnect deadline is stale
    lobby = sent_of(deps, c0, "lobby")[-1]
    assert lobby["status"] == "waiting"
    assert len(lobby["players"]) == 7
    assert p3 not in [p["id"] for p in lobby["players"]]
    assert stored_player(deps, seated[0][1]).status is PlayerStatus.QUEUED


def test_the_eighth_seat_closes_a_silent_holder_and_the_lobby_waits() -> None:
    deps = fake_deps(heartbeat_ms=20_000)
    seated = _seat(deps, 7)
    silent_cid, silent = seated[2]
    deps.clock.now += 30_000  # type: ignore[attr-defined]
    for cid, _ in seated:
        if cid != silent_cid:  # the others' pings: API Gateway's LastActiveAt moves
            deps.notifier.activity(cid, deps.clock.now_ms())  # type: ignore[attr-defined]
    _seat(deps, 1, first=7)
    player = stored_player(deps, silent)
    assert (player.status, player.connected, player.connection_id) == (
        PlayerStatus.IDLE,
        False,
        None,
    )
    assert silent_cid in deps.notifier.closed  # type: ignore[attr-defined]
    assert len(sent_of(deps, seated[0][0], "lobby")[-1]["players"]) == 7


# ------------------------------------------------------------------ spectators
def test_an_eliminated_spectator_joining_a_new_lobby_stops_watching() -> None:
    deps = fake_deps()
    seated = _seat(deps, 8)
    c0, p0 = seated[0]
    matchmaking.leave(deps, Request(c0), p0)  # out: a spectator of nothing (left)
    player = stored_player(deps, p0)
    tid = player.tournament_id
    rec = deps.store.get_tournament(tid)
    assert rec is not None
    rec.connections[p0] = c0  # as if still watching
    deps.store.commit([rec])
    matchmaking.join(deps, Request(c0), p0, "en")
    rec = deps.store.get_tournament(tid)
    assert rec is not None
    assert rec.connections[p0] is None
    assert stored_player(deps, p0).tournament_id is None


def test_a_spectator_leaving_stops_watching() -> None:
    deps = fake_deps()
    seated = _seat(deps, 8)
    c0, p0 = seated[0]
    matchmaking.leave(deps, Request(c0), p0)
    assert stored_player(deps, p0).tournament_id is not None  # still watching the end
    matchmaking.leave(deps, Request(c0), p0)
    assert stored_player(deps, p0).tournament_id is None


# ------------------------------------------------------------------ a push finds a connection gone
def test_a_reply_that_finds_its_connection_gone_disconnects_the_player() -> None:
    deps = fake_deps()
    seated = _seat(deps, 2)
    c1, p1 = seated[1]
    deps.notifier.gone.add(c1)  # type: ignore[attr-defined]
    sessions.nickname(deps, Request(c1), p1, "Gone Away")
    player = stored_player(deps, p1)
    assert (player.connected, player.connection_id) == (False, None)
    assert player.reconnect_deadline_ms is not None  # seated: the reconnect window runs
    status = sent_of(deps, seated[0][0], "player_status")[-1]
    assert (status["player_id"], status["status"]) == (p1, "disconnected")


def test_new_ids_and_secrets_are_random_and_long_enough() -> None:
    from shared.services.deps import new_id, new_secret

    ids = {new_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(len(i) == 16 and int(i, 16) >= 0 for i in ids)
    secrets = {new_secret() for _ in range(50)}
    assert len(secrets) == 50
    assert all(len(s) >= 43 for s in secrets)


def test_free_seat_frees_only_a_waiting_seat_and_only_for_the_current_disconnect() -> None:
    from shared.services.seating import free_seat

    deps = fake_deps()
    (c0, p0), (c1, p1) = _seat(deps, 2)
    idle = new_player(deps, "idle")
    assert free_seat(deps, idle).value is False
    sessions.disconnect(deps, c1)
    seq = stored_player(deps, p1).disconnect_seq
    assert free_seat(deps, p1, only_if_disconnect_seq=seq + 1).value is False  # stale
    assert stored_player(deps, p1).status is PlayerStatus.QUEUED
    assert (
        free_seat(deps, p0, only_if_disconnect_seq=stored_player(deps, p0).disconnect_seq).value
        is False
    )  # connected
    assert free_seat(deps, p1, only_if_disconnect_seq=seq).value is True
    assert stored_player(deps, p1).reconnect_deadline_ms is None
    assert free_seat(deps, p0).value is True
    left = sent_of(deps, c0, "lobby")[-1]
    assert (left["status"], left["players"]) == ("left", [])


def test_a_player_back_in_a_lobby_gets_its_messages_on_the_new_connection() -> None:
    deps = fake_deps()
    (c0, _), (c1, p1) = _seat(deps, 2)
    token = next(m["token"] for m in sent(deps, c1) if m["type"] == "session")
    sessions.disconnect(deps, c1)
    lobby_id = stored_player(deps, p1).lobby_id
    open_session(deps, "back", token)
    status = sent_of(deps, c0, "player_status")[-1]
    assert (status["lobby_id"], status["tournament_id"]) == (lobby_id, None)
    _seat(deps, 1, first=5)
    assert [p["id"] for p in sent_of(deps, "back", "lobby")[-1]["players"]][1] == p1
    assert len(sent_of(deps, "back", "lobby")[-1]["players"]) == 3


def test_a_stale_leave_changes_nothing() -> None:
    """A reconnect deadline's leave finds the player back (connected, or another disconnect),
    or a leave finds the player no longer in that tournament: nothing is committed."""
    from shared.services.tournament_change import leave_tournament

    deps = fake_deps()
    seated = _seat(deps, 8)
    _, p5 = seated[5]
    here = stored_player(deps, p5)
    committed = leave_tournament(
        deps, here, reason="timeout", only_if_disconnect_seq=here.disconnect_seq
    )
    assert committed is not None
    assert committed.changed is False
    assert committed.record.tournament.player(p5).alive
    stranger = stored_player(deps, new_player(deps, "x"))
    stranger.tournament_id = here.tournament_id  # an outdated copy of someone elsewhere
    committed = leave_tournament(deps, stranger)
    assert committed is not None
    assert committed.changed is False
    assert (
        leave_tournament(deps, stored_player(deps, new_player(deps, "y"))) is None
    )  # no tournament
