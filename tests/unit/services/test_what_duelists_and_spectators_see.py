"""Unit: ruling 7 as the messages show it — a duel's turns and end reach its duelists and
the spectators only, a board hides whose turn it is during the intro and shows the result,
winner, secret and its display form once over — in a German tournament (whose secrets have
display forms: capitalised nouns), on the fakes."""

from __future__ import annotations

from typing import Any

from shared.services import duels, matchmaking
from shared.services.deps import Deps
from shared.services.outbox import Request
from tests.fakes import fake_deps, open_session, sent_of, stored_player


def _seat_german(deps: Deps) -> list[tuple[str, str, str]]:
    seated = []
    for i in range(8):
        reply = open_session(deps, f"c{i}")
        matchmaking.join(deps, Request(f"c{i}"), reply["player"]["id"], "de")
        seated.append((f"c{i}", reply["player"]["id"], reply["token"]))
    return seated


def _tournament(deps: Deps, pid: str) -> Any:
    rec = deps.store.get_tournament(stored_player(deps, pid).tournament_id or "")
    assert rec is not None
    return rec.tournament


def _wrong(deps: Deps, duel: Any) -> str:
    return next(w for w in sorted(deps.lexicon.allowed("de", duel.length)) if w != duel.word)


def test_a_duels_messages_and_boards_show_each_player_what_ruling_7_allows() -> None:
    deps = fake_deps()
    seated = _seat_german(deps)
    cid = {pid: c for c, pid, _ in seated}
    token = {pid: tok for _, pid, tok in seated}
    t = _tournament(deps, seated[0][1])

    # during the intro a board names no mover and no deadline
    during = open_session(deps, "intro", token[seated[7][1]])["snapshot"]["duel"]
    assert (during["next_player"], during["deadline_ms"]) == (None, None)
    cid[seated[7][1]] = "intro"

    deps.clock.advance_to(t.intro_deadline_ms)  # type: ignore[attr-defined]
    t = _tournament(deps, seated[0][1])
    for c, pid, _ in seated[:7]:
        starts = sent_of(deps, c, "duel_start")
        assert [s["duel_id"] for s in starts] == [t.duel_of(pid).duel_id]

    # a duel whose secret has a display form, and another duel still running
    solved = next(d for d in t.duels if deps.lexicon.display("de", d.word) is not None)
    running = next(d for d in t.duels if d.duel_id != solved.duel_id)
    mover, other = solved.next_player, solved.opponent_of(solved.next_player)
    deps.clock.now += 100  # type: ignore[attr-defined]
    duels.guess(deps, Request(cid[mover]), solved.duel_id, _wrong(deps, solved))
    [turn] = sent_of(deps, cid[other], "turn")
    assert turn["next_player"] == other
    deps.clock.now += 100  # type: ignore[attr-defined]
    duels.guess(deps, Request(cid[other]), solved.duel_id, solved.word)
    over = _tournament(deps, mover).duel(solved.duel_id)
    [end] = sent_of(deps, cid[mover], "duel_end")
    assert (end["winner"], end["word"]) == (other, solved.word)
    assert end["display"] == deps.lexicon.display("de", solved.word)
    assert end["result"] == over.result.value
    for pid in running.players:  # still dueling: none of another duel's turns or end
        assert sent_of(deps, cid[pid], "turn") == []
        assert sent_of(deps, cid[pid], "duel_end") == []

    third = next(d for d in t.duels if d.duel_id not in (solved.duel_id, running.duel_id))
    deps.clock.now += 100  # type: ignore[attr-defined]
    duels.guess(deps, Request(cid[third.next_player]), third.duel_id, third.word)

    # a resume shows the over duels whole and a running one without its secret
    snap = open_session(deps, "back", token[mover])["snapshot"]
    mine = snap["duel"]
    assert mine["duel_id"] == solved.duel_id
    assert (mine["over"], mine["result"], mine["winner"]) == (True, over.result.value, other)
    assert mine["word"] == solved.word
    assert mine["display"] == deps.lexicon.display("de", solved.word)
    assert mine["deadline_ms"] is None
    now = _tournament(deps, mover)
    board = next(b for b in snap["spectating"] if b["duel_id"] == running.duel_id)
    live = now.duel(running.duel_id)
    assert (board["next_player"], board["deadline_ms"]) == (live.next_player, live.turn_deadline_ms)
    ended = next(b for b in snap["spectating"] if b["duel_id"] == third.duel_id)
    assert (ended["over"], ended["winner"], ended["word"]) == (True, third.next_player, third.word)
    assert ended["display"] == deps.lexicon.display("de", third.word)
    assert (board["result"], board["winner"], board["word"], board["display"]) == (
        None,
        None,
        None,
        None,
    )
