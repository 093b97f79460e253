"""Engine: whole 8-player tournaments through the real handlers (moto, manual clock).

Each test plays a tournament to its end and checks lives, places (rulings 2-3), the rating items
(``PLAYER#id``/``RATING#tid`` exactly once, the profile's rating) and the messages every
connection received (``support.check_final`` / ``check_messages``).
"""

from __future__ import annotations

from collections import Counter

from shared.domain.duel import Duel
from tests.functional.driver import (
    Game,
    always,
    check_final,
    check_messages,
    messages,
    peek_player,
    resume,
    solve_on,
)


def fewer_lives_wins(game: Game, duel: Duel, mover: str) -> str:
    """The duelist with fewer lives wins (ties: the lower id): keeps many players alive long."""
    t = game.t
    stronger = min(duel.players, key=lambda p: (t.player(p).lives, p))
    return "solve" if mover == stronger else "wrong"


def lives_from_results(game: Game) -> dict[str, int]:
    """Lives recomputed from the ``duel_end`` messages anyone received (ruling: a loss or a
    draw costs a life)."""
    ends: dict[str, dict] = {}
    for p in game.players:
        for m in messages(p):
            if m["type"] == "duel_end":
                ends[m["duel_id"]] = m
    lost: Counter[str] = Counter()
    t = game.t
    by_duel_players = {}
    for p in game.players:
        for m in messages(p):
            if m["type"] == "round":
                for pair in m["pairs"]:
                    by_duel_players[pair["duel_id"]] = pair["players"]
    for duel_id, m in ends.items():
        for pid in by_duel_players[duel_id]:
            if m["result"] == "draw" or m["winner"] != pid:
                lost[pid] += 1
    return {p.player_id: max(0, 3 - lost[p.player_id]) for p in t.players}


def test_normal_play_ends_with_one_winner_and_consistent_ratings(backend):
    game = Game.start(backend)
    game.play(solve_on(3))
    end = check_final(game)
    check_messages(game)
    t = game.t
    assert len(end["winners"]) == 1
    assert sorted(p.place for p in t.players)[0] == 1
    lives = lives_from_results(game)
    for p in t.players:
        assert p.lives == lives[p.player_id]
        assert (p.lives == 0) == (p.place != 1)
    # every player but the winner was told when they went out
    winner = end["winners"][0]
    for sp in game.players:
        got = [m for m in messages(sp) if m["type"] == "eliminated"]
        assert {m["player_id"] for m in got} == {p.player_id for p in t.players} - {winner}
    assert not any(m["type"] == "error" for sp in game.players for m in messages(sp))


def test_every_duel_a_draw_eliminates_everyone_together_on_shared_first_place(backend):
    game = Game.start(backend)
    game.play(always("wrong"))
    end = check_final(game)
    check_messages(game)
    t = game.t
    assert t.round_no == 3  # three draws each cost everyone their three lives
    assert all(p.place == 1 and p.rating_change == 0 and p.lives == 0 for p in t.players)
    assert sorted(end["winners"]) == sorted(p.player_id for p in t.players)
    for sp in game.players:
        ends = [m for m in messages(sp) if m["type"] == "duel_end"]
        assert all(m["result"] == "draw" and m["reason"] == "turns_used" for m in ends)


def test_every_turn_a_skip_is_a_draw_by_the_clock(backend):
    game = Game.start(backend)
    game.play(always("skip"))
    check_final(game)
    check_messages(game)
    t = game.t
    assert all(p.place == 1 for p in t.players)
    for sp in game.players:
        turns = [m for m in messages(sp) if m["type"] == "turn"]
        assert turns
        assert all(m["row"]["skipped"] for m in turns)
    # one loop per round: each wake applies the skips of all four duels due then (their
    # deadlines coincide), so a round of 12 skipped turns takes 12 wakes plus its intro's;
    # nothing was applied twice (check_final) although stale wakes only read
    assert 3 * (12 + 1) <= len(backend.clock.fired) < 3 * 4 * 12


def test_final_round_eliminating_both_finalists_shares_first_place(backend):
    game = Game.start(backend)

    def policy(g: Game, duel: Duel, mover: str) -> str:
        t = g.t
        if len(t.alive) == 2 and len({p.lives for p in t.alive}) == 1:
            return "wrong"  # the last two draw until both are out in the same round
        if len(t.alive) == 2:
            weaker = max(duel.players, key=lambda p: (t.player(p).lives, p))
            return "solve" if mover != weaker else "wrong"
        return fewer_lives_wins(g, duel, mover)

    game.play(policy)
    end = check_final(game)
    t = game.t
    firsts = [p for p in t.players if p.place == 1]
    assert len(firsts) == 2
    assert sorted(end["winners"]) == sorted(p.player_id for p in firsts)
    assert firsts[0].out_round == firsts[1].out_round == t.round_no
    assert 2 not in {p.place for p in t.players}  # competition ranking: 1, 1, 3, ...


def test_byes_with_seven_five_and_three_players_alive(backend):
    from infra.emulator.testing import Backend

    del backend  # a seed whose pairings pass through 7, 5 and 3 alive with this policy
    b = Backend(seed=5)
    game = Game.start(b)
    rounds = []
    while not game.t.over:
        t = game.t
        rounds.append((t.round_no, len(t.alive), t.bye, {p.player_id: p.lives for p in t.alive}))
        game.play_round(fewer_lives_wins)
    check_final(game)
    check_messages(game)
    alive_counts = {n for _, n, _, _ in rounds}
    assert {7, 5, 3} <= alive_counts, rounds
    round_msgs = {m["round"]: m for m in messages(game.players[0]) if m["type"] == "round"}
    previous_bye = None
    for i, (no, n, bye, lives) in enumerate(rounds):
        assert round_msgs[no]["bye"] == bye
        if n % 2:
            assert bye is not None
            assert bye != previous_bye
            assert all(bye not in pair["players"] for pair in round_msgs[no]["pairs"])
            after = rounds[i + 1][3] if i + 1 < len(rounds) else {}
            if bye in after:
                assert after[bye] == lives[bye]  # a bye costs no life
        else:
            assert bye is None
        previous_bye = bye


def _leave_check(game: Game, leaver: str, reason: str) -> None:
    t = game.t
    p = t.player(leaver)
    assert p.left
    assert p.lives == 0
    same_round = [q for q in t.players if q.out_round == p.out_round and q is not p]
    assert all(q.place < p.place for q in same_round if not q.left)
    profile = peek_player(leaver)
    assert profile.status.value == "idle"
    eliminated = [m for sp in game.players for m in messages(sp) if m["type"] == "eliminated"]
    assert any(m["player_id"] == leaver and m["reason"] == reason for m in eliminated)


def test_leaver_in_a_duel_loses_it_and_is_placed_below_the_round(backend):
    game = Game.start(backend)
    game.end_intro()
    duel = game.t.duels[0]
    game.act(duel, "wrong")
    leaver = duel.next_player or ""
    opponent = duel.opponent_of(leaver)
    game.by_id[leaver].send("leave")
    d = game.t.duel(duel.duel_id) if game.t.round_no == 1 else None
    assert d is None or (d.over and d.winner == opponent and d.reason.value == "left")
    game.play(solve_on(2))
    check_final(game)
    check_messages(game)
    _leave_check(game, leaver, "left")
    assert game.t.player(leaver).place == 8


def test_leaver_during_the_intro_loses_the_duel_before_it_starts(backend):
    game = Game.start(backend)
    t = game.t
    assert t.phase.value == "intro"
    duel = t.duels[1]
    leaver, opponent = duel.players
    game.by_id[leaver].send("leave")
    d = game.t.duel(duel.duel_id)
    assert d.over
    assert d.winner == opponent
    assert d.rows == ()
    game.end_intro()
    starts = [m for sp in game.players for m in messages(sp) if m["type"] == "duel_start"]
    assert starts  # the other duels start ...
    assert all(m["duel_id"] != duel.duel_id for m in starts)  # ... this one never does
    game.play(solve_on(3))
    check_final(game)
    check_messages(game)
    _leave_check(game, leaver, "left")


def test_leaver_holding_the_bye_simply_goes_out(backend):
    from infra.emulator.testing import Backend

    del backend
    game = Game.start(Backend(seed=5))
    while not game.t.over and game.t.bye is None:
        game.play_round(fewer_lives_wins)
    t = game.t
    bye = t.bye
    assert bye is not None
    out_before = {p.player_id for p in t.players if not p.alive}
    game.by_id[bye].send("leave")
    t = game.t
    assert t.player(bye).left
    assert all(not d.over for d in t.duels)
    game.play(fewer_lives_wins)
    check_final(game)
    check_messages(game)
    _leave_check(game, bye, "left")
    assert out_before.isdisjoint({bye})


def test_disconnect_and_return_within_sixty_seconds_resumes_with_a_full_snapshot(backend):
    game = Game.start(backend)
    game.end_intro()
    duel = game.t.duels[0]
    away = game.by_id[duel.next_player or ""]
    other = game.by_id[duel.opponent_of(away.id)]
    away.disconnect()
    status = other.last("player_status")
    assert status["player_id"] == away.id
    assert status["status"] == "disconnected"
    deadline = status["reconnect_deadline_ms"]
    assert deadline == backend.clock.now + 60_000
    # the player's turn runs out as a skip meanwhile
    game.act(game.t.duel(duel.duel_id), "skip")
    d = game.t.duel(duel.duel_id)
    assert d.rows[0].skipped
    assert d.rows[0].player == away.id
    game.act(d, "wrong")  # the opponent plays on
    backend.clock.advance_to(deadline - 1_000)
    assert game.t.player(away.id).alive
    resume(away)
    snap = away.last("session")["snapshot"]
    t = game.t
    assert snap["round"]["round"] == t.round_no
    assert {s["player_id"]: s["lives"] for s in snap["standings"]["players"]} == {
        p.player_id: p.lives for p in t.players
    }
    board = snap["duel"]
    d = t.duel(duel.duel_id)
    assert board["duel_id"] == d.duel_id
    assert len(board["rows"]) == len(d.rows)
    assert board["next_player"] == d.next_player
    assert board["deadline_ms"] == d.turn_deadline_ms
    assert board["word"] is None
    assert other.last("player_status")["status"] == "connected"
    assert game.rec.connections[away.id] == away.connection_id
    # the old reconnect timer fires later and changes nothing
    game.play(solve_on(3))
    check_final(game)
    check_messages(game)
    assert not game.t.player(away.id).left


def test_disconnect_past_sixty_seconds_counts_as_leaving(backend):
    game = Game.start(backend)
    game.end_intro()
    duel = game.t.duels[2]
    away = game.by_id[duel.players[0]]
    opponent = duel.players[1]
    away.disconnect()
    backend.clock.advance(60_000)
    t = game.t
    p = t.player(away.id)
    if t.round_no == 1:
        d = t.duel(duel.duel_id)
        assert d.over
        assert d.winner == opponent
        assert d.reason.value == "timeout"
    assert p.left
    assert p.timed_out
    assert p.out_round == 1
    game.play(solve_on(3))
    check_final(game)
    check_messages(game)
    _leave_check(game, away.id, "timeout")


def test_party_members_are_back_in_their_party_after_the_tournament(backend):
    leader, friend = backend.player("leader"), backend.player("friend")
    leader.send("party_create")
    friend.send("party_join", invite=leader.last("party")["invite"])
    leader.send("party_start", language="en")
    solos = [backend.player(f"solo{i}") for i in range(6)]
    for p in solos:
        p.join("en")
    players = [leader, friend, *solos]
    tid = leader.last("round")["tournament_id"]
    assert all(p.last("round")["tournament_id"] == tid for p in players)
    game = Game(backend, players, tid, {p.id: p for p in players})
    game.play(solve_on(3))
    check_final(game)
    check_messages(game)
    for p in (leader, friend):
        types = [m["type"] for m in p.messages]
        after_end = p.messages[types.index("tournament_end") :]
        party = [m for m in after_end if m["type"] == "party"]
        assert len(party) == 1, types
        assert party[0]["status"] == "open"
        assert {m["id"] for m in party[0]["members"]} == {leader.id, friend.id}
        assert peek_player(p.id).party_id == party[0]["party_id"]
    for p in solos:
        assert not [m for m in p.messages if m["type"] == "party"]
