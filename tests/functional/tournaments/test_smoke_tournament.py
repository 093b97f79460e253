"""Flow: a whole 8-player tournament through the real handlers (moto, manual clock)."""

from __future__ import annotations


def test_full_tournament_by_guesses_and_skips(backend):
    players = backend.fill_lobby("en")
    tid = players[0].last("round")["tournament_id"]
    for _ in range(2000):
        rec = backend.tournament(tid)
        if rec.tournament.over:
            break
        movers = backend.to_move()
        if movers and backend.clock.now >= rec.tournament.intro_deadline_ms:
            p = movers[0]
            d = p.current_duel()
            if len(d.rows) % 3 == 2:
                p.solve()
            else:
                p.guess()
        else:
            backend.end_intro()
    rec = backend.tournament(tid)
    assert rec.tournament.over
    ends = [{**p.last("tournament_end"), "seq": None} for p in players]
    assert all(e == ends[0] for e in ends)
    places = sorted(s["place"] for s in ends[0]["places"])
    assert places[0] == 1


def test_resuming_after_the_tournament_ended_shows_no_stale_round(backend):
    """A finished tournament is history: a resumed session's snapshot carries no round, duel
    or standings of it (the client goes home instead of redrawing the last round)."""
    players = backend.fill_lobby("en")
    tid = players[0].last("round")["tournament_id"]
    for p in players[1:]:
        p.send("leave")
    assert backend.tournament(tid).tournament.over
    winner = players[0]
    winner.resume()
    snap = winner.last("session")["snapshot"]
    assert snap["round"] is None
    assert snap["duel"] is None
    assert snap["standings"] is None
