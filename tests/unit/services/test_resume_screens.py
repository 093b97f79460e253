"""Unit: what a resume's snapshot shows (ruling 15) in the cases the other resume tests leave
out — a lone seat holder, a lobby with one holder away among connected ones, a tournament
with a player away, a player out on timeout; on the fakes."""

from __future__ import annotations

from shared.services import matchmaking, sessions
from shared.services.deps import Deps
from shared.services.outbox import Request
from tests.fakes import fake_deps, open_session, stored_player


def _seat(deps: Deps, n: int) -> list[tuple[str, str, str]]:
    seated = []
    for i in range(n):
        reply = open_session(deps, f"c{i}")
        matchmaking.join(deps, Request(f"c{i}"), reply["player"]["id"], "en")
        seated.append((f"c{i}", reply["player"]["id"], reply["token"]))
    return seated


def test_a_lone_seat_holder_resuming_sees_the_lobby() -> None:
    deps = fake_deps()
    [(_, pid, token)] = _seat(deps, 1)
    snap = open_session(deps, "back", token)["snapshot"]
    assert [p["id"] for p in snap["lobby"]["players"]] == [pid]
    assert snap["statuses"] == []


def test_a_resume_in_a_lobby_lists_only_the_holders_who_are_away() -> None:
    deps = fake_deps()
    (_, _, token), (c1, p1, _), _ = _seat(deps, 3)
    sessions.disconnect(deps, c1)
    snap = open_session(deps, "back", token)["snapshot"]
    lobby_id = stored_player(deps, p1).lobby_id
    assert [
        (s["lobby_id"], s["player_id"], s["status"], s["reconnect_deadline_ms"])
        for s in snap["statuses"]
    ] == [(lobby_id, p1, "disconnected", stored_player(deps, p1).reconnect_deadline_ms)]


def test_a_resume_in_a_tournament_names_it_in_each_away_status() -> None:
    deps = fake_deps()
    seated = _seat(deps, 8)
    (_, _, token), (c1, p1, _) = seated[0], seated[1]
    sessions.disconnect(deps, c1)
    snap = open_session(deps, "back", token)["snapshot"]
    tid = stored_player(deps, p1).tournament_id
    assert [
        (s["tournament_id"], s["player_id"], s["status"], s["reconnect_deadline_ms"])
        for s in snap["statuses"]
    ] == [(tid, p1, "disconnected", stored_player(deps, p1).reconnect_deadline_ms)]


def test_a_player_out_on_the_reconnect_deadline_resuming_sees_timeout() -> None:
    deps = fake_deps()
    seated = _seat(deps, 8)
    c2, p2, token = seated[2]
    sessions.disconnect(deps, c2)
    deps.clock.advance_to(stored_player(deps, p2).reconnect_deadline_ms)  # type: ignore[attr-defined]
    snap = open_session(deps, "back", token)["snapshot"]
    out = snap["eliminated"]
    assert (out["player_id"], out["reason"], out["tournament_id"]) == (
        p2,
        "timeout",
        stored_player(deps, p2).tournament_id,
    )
