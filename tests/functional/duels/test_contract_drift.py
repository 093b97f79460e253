"""Contract drift found by a client developer (issue 37), each pinned through the real
handlers: what the guide and the schema descriptions say is what the server sends."""

from __future__ import annotations

from typing import Any

from shared.domain.languages import get_language
from tests.functional.driver import Game, solve_on


def _order_key(s: dict[str, Any]) -> tuple[int, int, str]:
    # the documented order: no fixed place first (most lives first), then best place first,
    # ties by nickname in code point order
    return (s["place"] or 0, -s["lives"], s["nickname"])


def test_a_snapshots_round_holds_the_current_standings(backend):
    game = Game.start(backend)
    game.play_round(solve_on(2))  # round 1 closes: lives changed, round 2 is paired
    game.end_intro()
    duel = game.t.duels[0]
    game.by_id[duel.next_player].send("guess", duel_id=duel.duel_id, word=duel.word)
    back = game.by_id[duel.players[0]]
    back.resume()
    snapshot = back.last("session")["snapshot"]
    assert snapshot["round"]["standings"] == snapshot["standings"]["players"]
    # ... which is what the contract says (it once said "at the start of the round")
    from shared.protocol.outbound import RoundEvent, Snapshot

    assert "current" in Snapshot.__dataclass_fields__["round"].metadata["description"]
    said = RoundEvent.__dataclass_fields__["standings"].metadata["description"]
    assert "in a snapshot's round, the current standings" in said


def test_standings_come_in_the_documented_order(backend):
    game = Game.start(backend)
    for _ in range(3):
        game.play_round(solve_on(2))
    for p in game.players:
        for m in p.all("standings"):
            assert m["players"] == sorted(m["players"], key=_order_key)
        for m in p.all("round"):
            assert m["standings"] == sorted(m["standings"], key=_order_key)


def test_a_guess_in_ones_own_duel_of_an_earlier_round_is_duel_over(backend):
    game = Game.start(backend)
    game.end_intro()
    first = {pid: game.t.duel_of(pid).duel_id for pid in game.by_id}
    game.play_round(solve_on(2))
    game.end_intro()
    still_in = [p for p in game.t.players if p.alive]
    p = game.by_id[still_in[0].player_id]
    p.clear()
    p.send("guess", duel_id=first[p.id], word="crane", request_id="old")
    assert [(m["type"], m.get("code"), m["request_id"]) for m in p.messages] == [
        ("error", "duel_over", "old")
    ]


def test_the_lobby_carries_the_languages_tiles_and_direction(backend):
    p = backend.player("uz")
    p.join("uz")
    info = p.last("lobby")["language_info"]
    uz = get_language("uz")
    assert info["code"] == "uz"
    assert set(info["multi_letter_tiles"]) == {"oʻ", "gʻ", "sh", "ch"}
    assert info["direction"] == "ltr"
    assert info["alphabet"] == list(uz.alphabet)


def test_length_counts_tiles_not_characters(backend):
    """A guess longer in characters than ``length`` but with ``length`` tiles is played."""
    backend.fill_lobby("uz")
    backend.end_intro()
    uz = get_language("uz")
    mover = backend.to_move()[0]
    length = mover.last("duel_start")["length"]
    secret = mover.secret()
    words = sorted(backend.deps.lexicon.allowed("uz", length))
    word = next(w for w in words if len(w) > length and w != secret)
    assert len(uz.tiles(word)) == length
    mover.clear()
    mover.guess(word)
    (turn,) = mover.all("turn")
    assert turn["row"]["word"] == word
    assert len(turn["row"]["tiles"]) == len(turn["row"]["marks"]) == length
