"""Every request answered (the client guide; issue 37): each action, sent in each state a
client can be in, gets exactly one answer carrying its ``request_id`` — one event of
``shared.protocol.replies.REPLIES[action]`` or an ``error`` — inside a ``batch`` or alone.

One fresh backend per (state, action): an action that changes the state (``join``, ``leave``,
``party_*``) cannot spoil the next one. A whole tournament runs in well under a second here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from shared.protocol.errors import DETAILED_CODES, describe
from shared.protocol.inbound import ACTIONS
from shared.protocol.replies import REPLIES
from tests.functional.driver import Game, solve_on, wrong_word


def _idle(backend: Any) -> Any:
    return backend.player("idle")


def _queued(backend: Any) -> Any:
    p = backend.player("queued")
    p.join("en")
    return p


def _party(backend: Any) -> tuple[Any, Any]:
    leader, member = backend.player("leader"), backend.player("member")
    leader.send("party_create")
    member.send("party_join", invite=leader.last("party")["invite"])
    return leader, member


def _playing(backend: Any) -> Any:
    game = Game.start(backend)
    game.end_intro()
    return game.by_id[game.t.duels[0].next_player]


def _spectating(backend: Any) -> Any:
    """The winner of the round's first duel to end: alive, watching the others."""
    game = Game.start(backend)
    game.end_intro()
    duel = game.t.duels[0]
    game.by_id[duel.next_player].send("guess", duel_id=duel.duel_id, word=duel.word)
    assert not game.t.over
    assert any(not d.over for d in game.t.duels)
    return game.by_id[game.t.duels[0].winner]


def _eliminated(backend: Any) -> Any:
    """A player out of lives who still watches the running tournament (ruling 7)."""
    game = Game.start(backend)
    for _ in range(12):
        game.play_round(solve_on(2))
        t = game.t
        out = [p for p in t.players if not p.alive and not p.left]
        if out and not t.over:
            game.end_intro()
            return game.by_id[out[0].player_id]
    raise AssertionError("nobody was eliminated before the end")


def _left(backend: Any) -> Any:
    """A player who left the running tournament (ruling 3): out, no longer watching."""
    players = backend.fill_lobby("en")
    players[1].send("leave")
    assert not backend.tournament(players[1].tournament_id()).tournament.over
    return players[1]


def _after_end(backend: Any) -> Any:
    """The winner of a tournament that ended (everybody else left)."""
    players = backend.fill_lobby("en")
    for p in players[1:]:
        p.send("leave")
    assert backend.tournament(players[0].tournament_id()).tournament.over
    return players[0]


def _leader(backend: Any) -> Any:
    return _party(backend)[0]


def _member(backend: Any) -> Any:
    return _party(backend)[1]


STATES: dict[str, Callable[[Any], Any]] = {
    "idle": _idle,
    "queued": _queued,
    "playing": _playing,
    "spectating": _spectating,
    "eliminated": _eliminated,
    "left": _left,
    "after_end": _after_end,
    "party_leader": _leader,
    "party_member": _member,
}


def _body(backend: Any, player: Any, action: str) -> dict[str, Any]:
    """A well-formed message of ``action`` with the player's real ids where it names any."""
    if action in ("join", "party_start"):
        return {"language": "en"}
    if action == "guess":
        duel = player.current_duel()
        if duel is None:
            return {"duel_id": "id0001.1.0", "word": "crane"}
        t = backend.tournament(player.tournament_id()).tournament
        return {"duel_id": duel.duel_id, "word": wrong_word(backend, t.language, duel)}
    if action == "nickname":
        return {"nickname": "Fresh Name"}
    if action == "session":
        return {"token": player.token}
    if action == "party_join":
        other = backend.player("host")
        other.send("party_create")
        return {"invite": other.last("party")["invite"]}
    if action == "party_remove":
        members = [p for p in backend.players if p is not player and p.name == "member"]
        return {"player_id": members[0].id if members else "id0001"}
    return {}


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("state", list(STATES))
def test_every_action_in_every_state_gets_exactly_one_answer(backend, state, action):
    player = STATES[state](backend)
    player.clear()
    rid = f"{state}-{action}"
    player.send(action, request_id=rid, **_body(backend, player, action))
    answers = [m for m in player.messages if m.get("request_id") == rid]
    assert len(answers) == 1, (state, action, [m["type"] for m in player.messages])
    assert answers[0]["type"] in (*REPLIES[action], "error"), (state, action, answers[0])
    if answers[0]["type"] == "error" and answers[0]["code"] not in DETAILED_CODES:
        # the guide's table gives this very text (issue 37: it differed for 27 codes)
        assert answers[0]["message"] == describe(answers[0]["code"]), answers[0]
