"""The services' use cases and building blocks on the in-memory fakes (``tests/fakes.py``):
fast, no moto; the store contract tests keep ``InMemoryStore`` honest. What a player sees is
read from the recording notifier, what is saved from the store."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from shared.domain.errors import NotYourTurnError, TurnOverError
from shared.protocol import outbound as out
from shared.services import deadlines, duels, matchmaking, parties, sessions
from shared.services.change import Change, run
from shared.services.deps import Deps
from shared.services.errors import ConflictError, TryAgainError
from shared.services.model import Player, PlayerStatus
from shared.services.outbox import Outbox, Request
from shared.services.presence import drop
from tests.fakes import fake_deps


def _sent(deps: Deps, cid: str) -> list[dict[str, Any]]:
    return deps.notifier.sent[cid]  # type: ignore[attr-defined, no-any-return]


def _connect(deps: Deps, cid: str, token: str | None = None) -> dict[str, Any]:
    sessions.connect(deps, cid)
    sessions.session(deps, Request(cid, "s1"), token)
    reply = _sent(deps, cid)[-1]
    assert reply["type"] == "session", reply
    return reply


def _lobby_of_8(deps: Deps) -> list[tuple[str, str]]:
    """8 players joined in English: a tournament started. Returns [(connection, player)]."""
    seated = []
    for i in range(8):
        cid = f"c{i}"
        pid = _connect(deps, cid)["player"]["id"]
        matchmaking.join(deps, Request(cid), pid, "en")
        seated.append((cid, pid))
    return seated


def _tournament(deps: Deps, pid: str) -> Any:
    player = deps.store.get_player(pid)
    assert player is not None
    assert player.tournament_id is not None
    rec = deps.store.get_tournament(player.tournament_id)
    assert rec is not None
    return rec


# ------------------------------------------------------------------ the one retry primitive
def test_run_commits_then_pushes_and_a_lost_race_reruns_the_step_from_fresh_reads() -> None:
    deps = fake_deps()
    _connect(deps, "c")
    tries: list[int] = []

    def step() -> Change[int]:
        tries.append(1)
        box = Outbox()
        box.add(["c"], out.PongEvent(server_time_ms=len(tries)))
        if len(tries) == 1:
            raise ConflictError("someone else wrote first")
        return Change(len(tries), [], box)

    done = run(deps, step)
    assert done.value == 2
    pongs = [m for m in _sent(deps, "c") if m["type"] == "pong"]
    assert [p["server_time_ms"] for p in pongs] == [2]  # the lost try pushed nothing


def test_run_saves_and_pushes_nothing_for_a_refused_step_and_gives_up_with_try_again() -> None:
    deps = dataclasses.replace(fake_deps(), max_attempts=3)
    before = deps.store.commits  # type: ignore[attr-defined]

    def refused() -> Change[None]:
        raise NotYourTurnError("no")

    with pytest.raises(NotYourTurnError):
        run(deps, refused)

    def always_lost() -> Change[None]:
        raise ConflictError("again")

    with pytest.raises(TryAgainError):
        run(deps, always_lost)
    assert deps.store.commits == before  # type: ignore[attr-defined]


def test_the_reply_echoes_the_request_id_once_and_only_to_the_requester() -> None:
    box = Outbox(reply_to=Request("me", "r-7"))
    box.add(["other", "me"], out.PongEvent(server_time_ms=1))
    box.add(["me"], out.PongEvent(server_time_ms=2))
    ids = [(cid, json.loads(text)["request_id"]) for cid, text in box.messages]
    assert ids == [("other", None), ("me", "r-7"), ("me", None)]


# ------------------------------------------------------------------ sessions
def test_a_resume_binds_the_new_connection_and_closes_the_old_one() -> None:
    deps = fake_deps()
    first = _connect(deps, "old")
    assert first["request_id"] == "s1"
    again = _connect(deps, "new", first["token"])
    assert again["resumed"] is True
    assert again["player"]["id"] == first["player"]["id"]
    assert _sent(deps, "old")[-1]["code"] == "session_replaced"
    assert "old" in deps.notifier.closed  # type: ignore[attr-defined]
    player = deps.store.get_player(first["player"]["id"])
    assert player is not None
    assert (player.connection_id, player.connected) == ("new", True)


# ------------------------------------------------------------------ matchmaking
def test_the_eighth_join_starts_the_tournament_with_everyone_playing() -> None:
    deps = fake_deps()
    seated = _lobby_of_8(deps)
    rec = _tournament(deps, seated[0][1])
    assert {p.player_id for p in rec.tournament.players} == {pid for _, pid in seated}
    for cid, pid in seated:
        player = deps.store.get_player(pid)
        assert player is not None
        assert player.status is PlayerStatus.PLAYING
        assert [m["type"] for m in _sent(deps, cid)].count("round") == 1
    assert deps.clock.pending()  # type: ignore[attr-defined]  # the round's clock loop


# ------------------------------------------------------------------ duels
def _mover(deps: Deps, seated: list[tuple[str, str]]) -> tuple[str, str, Any]:
    deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]  # the intro ends
    rec = _tournament(deps, seated[0][1])
    duel = rec.tournament.duels[0]
    cid = next(c for c, p in seated if p == duel.next_player)
    return cid, duel.next_player, duel


def _word(deps: Deps, duel: Any) -> str:
    return next(w for w in sorted(deps.lexicon.allowed("en", duel.length)) if w != duel.word)


def test_a_guess_received_before_its_deadline_counts_though_handled_after_it() -> None:
    deps = fake_deps()
    seated = _lobby_of_8(deps)
    cid, pid, duel = _mover(deps, seated)
    deps.clock.now = duel.turn_deadline_ms + 500  # type: ignore[attr-defined]
    duels.guess(deps, Request(cid, "g", duel.turn_deadline_ms - 1), duel.duel_id, _word(deps, duel))
    after = _tournament(deps, pid).tournament.duel(duel.duel_id)
    assert [r.skipped for r in after.rows] == [False]
    turn = [m for m in _sent(deps, cid) if m["type"] == "turn"][-1]
    assert turn["request_id"] == "g"


def test_a_late_guess_is_refused_after_the_due_skip_is_committed_and_pushed() -> None:
    """Ruling 5: a guess received after the skip was due meets the skip — which is saved and
    pushed in the same change — and is refused ``turn_over`` (one commit, no second expire)."""
    deps = fake_deps()
    seated = _lobby_of_8(deps)
    cid, pid, duel = _mover(deps, seated)
    late = duel.turn_deadline_ms + deps.timing.skip_grace_ms + 10
    deps.clock.now = late  # type: ignore[attr-defined]  # the clock loop has not woken yet
    commits = deps.store.commits  # type: ignore[attr-defined]
    with pytest.raises(TurnOverError):
        duels.guess(deps, Request(cid, "g", late), duel.duel_id, _word(deps, duel))
    assert deps.store.commits == commits + 1  # type: ignore[attr-defined]
    after = _tournament(deps, pid).tournament.duel(duel.duel_id)
    assert [r.skipped for r in after.rows] == [True]
    assert [m for m in _sent(deps, cid) if m["type"] == "turn"][-1]["row"]["word"] is None


# ------------------------------------------------------------------ gone connections
def test_a_connection_a_push_finds_gone_is_disconnected_with_its_reconnect_deadline() -> None:
    deps = fake_deps()
    seated = _lobby_of_8(deps)
    gone_cid, gone_pid = seated[3]
    deps.notifier.gone.add(gone_cid)  # type: ignore[attr-defined]  # vanished, no $disconnect
    box = Outbox()
    box.add([gone_cid], out.PongEvent(server_time_ms=0))
    drop(deps, box.flush(deps.clock, deps.notifier))
    player = deps.store.get_player(gone_pid)
    assert player is not None
    assert player.connected is False
    assert player.reconnect_deadline_ms == deps.clock.now_ms() + deps.timing.reconnect_ms
    status = [m for m in _sent(deps, seated[0][0]) if m["type"] == "player_status"]
    assert status[-1]["player_id"] == gone_pid


def test_a_missed_reconnect_deadline_eliminates_the_player() -> None:
    deps = fake_deps()
    seated = _lobby_of_8(deps)
    cid, pid = seated[5]
    sessions.disconnect(deps, cid)
    player = deps.store.get_player(pid)
    assert isinstance(player, Player)
    assert deadlines.reconnect_deadline(deps, pid, player.disconnect_seq) is not None  # early
    deps.clock.now = player.reconnect_deadline_ms  # type: ignore[attr-defined]
    assert deadlines.reconnect_deadline(deps, pid, player.disconnect_seq) is None
    state = _tournament(deps, seated[0][1]).tournament.player(pid)
    assert (state.alive, state.timed_out) == (False, True)


# ------------------------------------------------------------------ parties
def test_a_party_start_seats_every_member_in_one_new_lobby() -> None:
    deps = fake_deps()
    leader = _connect(deps, "lead")["player"]["id"]
    parties.create(deps, Request("lead"), leader)
    invite = _sent(deps, "lead")[-1]["invite"]
    member = _connect(deps, "mem")["player"]["id"]
    parties.join(deps, Request("mem"), member, invite)
    parties.start(deps, Request("lead", "go"), leader, "en")
    a, b = deps.store.get_player(leader), deps.store.get_player(member)
    assert a is not None
    assert b is not None
    assert a.status is b.status is PlayerStatus.QUEUED
    assert a.lobby_id == b.lobby_id is not None
    assert [m["type"] for m in _sent(deps, "lead") if m.get("request_id") == "go"] == ["lobby"]
