"""Flows: ruling 15 — ``tournament_end`` reaches every player of the tournament still
connected, leavers and timed-out players included; ``rating`` carries the previous and the
new rating; ``duel_end`` and ``eliminated`` tell "left" from "timeout" (rulings 3, 9)."""

from __future__ import annotations

from typing import Any


def _leave_all_but_first(players: list[Any]) -> None:
    for p in players[1:]:
        p.send("leave")


def test_leavers_still_connected_see_how_the_tournament_ended(backend):
    players = backend.fill_lobby("en")
    tid = players[0].last("round")["tournament_id"]
    _leave_all_but_first(players)
    assert backend.tournament(tid).tournament.over

    ends = [p.all("tournament_end") for p in players]
    assert all(len(e) == 1 for e in ends), [len(e) for e in ends]
    # the same end for everyone, each numbered in its own player's sequence
    same = [{**e[0], "seq": None} for e in ends]
    assert all(e == same[0] for e in same)
    assert ends[0][0]["winners"] == [players[0].id]


def test_a_leaver_now_in_another_lobby_is_not_sent_the_old_end(backend):
    players = backend.fill_lobby("en")
    elsewhere = players[1]
    elsewhere.send("leave")
    elsewhere.join("en")  # waits in a new lobby
    _leave_all_but_first([players[0], *players[2:]])
    assert elsewhere.all("tournament_end") == []
    assert all(len(p.all("tournament_end")) == 1 for p in [players[0], *players[2:]])


def test_a_timed_out_player_who_came_back_sees_the_end(backend):
    players = backend.fill_lobby("en")
    backend.end_intro()
    late = players[2]
    opponent_id = next(i for i in late.current_duel().players if i != late.id)
    opponent = next(p for p in players if p.id == opponent_id)
    late.disconnect()
    backend.clock.advance(60_000)  # the reconnect deadline passes: treated as having left

    others = [p for p in players if p is not late]
    gone = [m for m in others[0].all("eliminated") if m["player_id"] == late.id]
    assert [m["reason"] for m in gone] == ["timeout"]
    ends = [m for m in opponent.all("duel_end") if m["reason"] == "timeout"]
    assert len(ends) == 1
    assert ends[0]["winner"] == opponent_id

    late.resume()
    _leave_all_but_first(others)
    assert len(late.all("tournament_end")) == 1


def test_a_duel_lost_by_leaving_says_left(backend):
    players = backend.fill_lobby("en")
    backend.end_intro()
    leaver = players[0]
    opponent_id = next(i for i in leaver.current_duel().players if i != leaver.id)
    opponent = next(p for p in players if p.id == opponent_id)
    leaver.send("leave")
    end = opponent.last("duel_end")
    assert (end["reason"], end["winner"]) == ("left", opponent_id)
    assert leaver.last("eliminated")["reason"] == "left"


def test_rating_messages_carry_the_previous_and_the_new_rating(backend):
    players = backend.fill_lobby("en")
    _leave_all_but_first(players)
    ratings = [m for p in players for m in p.all("rating")]
    assert len(ratings) == 8
    for m in ratings:
        assert m["previous"] == 1000  # everyone's first tournament (ruling 1)
        assert m["rating"] == m["previous"] + m["change"]
