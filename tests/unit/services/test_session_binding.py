"""Unit: what ``$connect`` and ``session`` save about a connection (its item, bound to the
player) — also when the ``$connect`` item is missing — and a
resume whose notice to the replaced connection finds it gone; on the fakes."""

from __future__ import annotations

import pytest

from shared.services import matchmaking, sessions
from shared.services.deps import Deps
from shared.services.errors import SessionBoundError
from shared.services.model import PlayerStatus
from shared.services.outbox import Request
from tests.fakes import fake_deps, open_session, sent, stored_player


def test_connect_saves_the_connection_with_its_time_and_no_player() -> None:
    deps = fake_deps()
    sessions.connect(deps, "c")
    conn = deps.store.get_connection("c")
    assert conn is not None
    assert (conn.connection_id, conn.connected_ms, conn.player_id) == (
        "c",
        deps.clock.now_ms(),
        None,
    )


def test_a_new_session_without_a_connect_item_saves_the_connection_bound() -> None:
    deps = fake_deps()
    now = deps.clock.now_ms()
    sessions.session(deps, Request("c", "s"), None)  # its $connect item never landed
    pid = sent(deps, "c")[-1]["player"]["id"]
    conn = deps.store.get_connection("c")
    assert conn is not None
    assert (conn.connection_id, conn.connected_ms, conn.player_id) == ("c", now, pid)
    player = stored_player(deps, pid)
    assert (player.created_ms, player.token_used_ms, player.connection_id) == (now, now, "c")


def test_a_resume_without_a_connect_item_saves_the_connection_bound() -> None:
    deps = fake_deps()
    first = open_session(deps, "old")
    deps.clock.now += 5_000  # type: ignore[attr-defined]
    now = deps.clock.now_ms()
    sessions.session(deps, Request("new", "s"), first["token"])
    conn = deps.store.get_connection("new")
    assert conn is not None
    assert (conn.connected_ms, conn.player_id) == (now, first["player"]["id"])


def test_a_resume_clears_the_reconnect_deadline() -> None:
    deps = fake_deps()
    reply = open_session(deps, "c0")
    pid = reply["player"]["id"]
    matchmaking.join(deps, Request("c0"), pid, "en")
    sessions.disconnect(deps, "c0")
    assert stored_player(deps, pid).reconnect_deadline_ms is not None
    open_session(deps, "back", reply["token"])
    player = stored_player(deps, pid)
    assert player.reconnect_deadline_ms is None
    assert (player.connected, player.status) == (True, PlayerStatus.QUEUED)


def _resume_with_the_old_connection_gone(deps: Deps, cid: str, token: str) -> None:
    deps.notifier.gone.add(cid)  # type: ignore[attr-defined]  # vanished, no $disconnect
    open_session(deps, f"{cid}-back", token)
    assert deps.store.get_connection(cid).closed_ms is not None  # found gone: a tombstone


def test_a_resume_whose_replaced_connection_is_gone_forgets_it_wherever_the_player_is() -> None:
    idle = fake_deps()
    _resume_with_the_old_connection_gone(idle, "c", open_session(idle, "c")["token"])

    queued = fake_deps()
    reply = open_session(queued, "c")
    matchmaking.join(queued, Request("c"), reply["player"]["id"], "en")
    _resume_with_the_old_connection_gone(queued, "c", reply["token"])

    playing = fake_deps()
    tokens = []
    for i in range(8):
        reply = open_session(playing, f"c{i}")
        matchmaking.join(playing, Request(f"c{i}"), reply["player"]["id"], "en")
        tokens.append(reply["token"])
    _resume_with_the_old_connection_gone(playing, "c3", tokens[3])


def test_a_new_session_whose_reply_finds_the_connection_gone_disconnects_the_player() -> None:
    deps = fake_deps()
    sessions.connect(deps, "c")
    deps.notifier.gone.add("c")  # type: ignore[attr-defined]
    sessions.session(deps, Request("c"), None)
    [player] = [p for (kind, _), p in deps.store.items.items() if kind == "player"]  # type: ignore[attr-defined]
    assert (player.connected, player.connection_id) == (False, None)
    assert deps.store.get_connection("c").closed_ms is not None  # kept as a tombstone


def test_a_leaver_resuming_does_not_get_the_tournament_back() -> None:
    deps = fake_deps()
    tokens = []
    for i in range(8):
        reply = open_session(deps, f"c{i}")
        matchmaking.join(deps, Request(f"c{i}"), reply["player"]["id"], "en")
        tokens.append((reply["player"]["id"], reply["token"]))
    pid, token = tokens[0]
    matchmaking.leave(deps, Request("c0"), pid)
    open_session(deps, "back", token)
    rec = deps.store.get_tournament(stored_player(deps, pid).tournament_id or "")
    assert rec is not None
    assert rec.connections[pid] is None
    assert rec.tournament.player(pid).left


def test_a_new_session_on_a_connection_whose_player_resumed_elsewhere_is_session_bound() -> None:
    deps = fake_deps()
    first = open_session(deps, "c")
    open_session(deps, "elsewhere", first["token"])  # the player moved on ("c" item stays)
    with pytest.raises(SessionBoundError):  # "c" belongs to that player for its whole life
        sessions.session(deps, Request("c", "again"), None)
    player = stored_player(deps, first["player"]["id"])
    assert (player.connected, player.connection_id) == (True, "elsewhere")


def test_a_token_whose_player_ttl_removed_is_refused_as_expired() -> None:
    """TTL deletes a player and its token item independently (within days of their expiry):
    a token item left without its player is an expired token, not a crash; nothing changes."""
    from shared.services.errors import InvalidTokenError

    deps = fake_deps()
    first = open_session(deps, "c0")
    deps.store.items.pop(("player", first["player"]["id"]))  # type: ignore[attr-defined]
    commits = deps.store.commits  # type: ignore[attr-defined]
    with pytest.raises(InvalidTokenError, match="expired"):
        sessions.session(deps, Request("c1", "s"), first["token"])
    assert deps.store.commits == commits  # type: ignore[attr-defined]
