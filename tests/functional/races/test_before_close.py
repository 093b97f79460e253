"""Races: a message API Gateway received just before its connection closed, whose invocation
runs after (or during) the connection's ``$disconnect`` — nothing orders them on AWS.

Ruling 13: every message received before the close is judged on its own merits. Its reply
cannot be delivered; it never marks the player connected again nor binds anything to the closed
connection; nothing else is lost. ``ScriptedPlayer.send_before_close`` runs ``$disconnect``
to the end first; ``Interleaver`` pauses the message at its tournament commit, runs
``$disconnect``, then lets the message commit (it conflicts, re-reads and decides again).
"""

from __future__ import annotations

from shared.adapters.dynamo import schema
from shared.services.ports import TimerKind
from tests.functional.driver import Game, Interleaver, wrong_word
from tests.functional.stored import lobby_item, party_item, player_item

RECONNECT_MS = 60_000


def _started(backend) -> Game:
    game = Game.start(backend)
    game.end_intro()
    return game


def _mover(game: Game):
    duel = game.t.duels[0]
    return duel, game.by_id[duel.next_player], game.by_id[duel.opponent_of(duel.next_player)]


def _gone(player) -> None:
    """The player's closed connection stays closed and unbound to anything new."""
    me = player_item(player.backend, player)
    assert me["connected"] is False
    assert "connection_id" not in me
    conn = player.backend.item(schema.connection_key(player.connection_id))
    assert conn["closed_ms"] is not None


def _reconnect_timers(backend, player) -> list[int]:
    return [
        t.due_ms
        for t in backend.clock.pending()
        if t.kind is TimerKind.RECONNECT and t.ref == player.id
    ]


# ---------------------------------------------------------------------------------- guess
def test_a_guess_received_3_s_into_the_turn_counts_though_disconnect_ran_first(backend):
    """The issue's case: a valid guess sent 3 s into the turn, the tab closed 200 ms later,
    ``$disconnect`` handled first: the guess is on the board and the opponent's turn runs."""
    game = _started(backend)
    duel, mover, opponent = _mover(game)
    backend.clock.now = duel.turn_deadline_ms - 27_000
    word = wrong_word(backend, game.t.language, duel)
    received = backend.clock.now
    backend.clock.now += 200  # the close, 200 ms later

    mover.disconnect()
    mover.send("guess", duel_id=duel.duel_id, word=word, received_ms=received)

    d = game.t.duel(duel.duel_id)
    assert [(r.player, r.word) for r in d.rows] == [(mover.id, word)]
    assert d.next_player == opponent.id
    turns = [m for m in opponent.messages if m["type"] == "turn"]
    assert [m["turn"] for m in turns] == [1]
    assert game.rec.connections[mover.id] is None  # not bound again
    _gone(mover)
    assert all(m["type"] != "turn" for m in mover.messages)  # its reply went nowhere


def test_a_guess_paused_before_its_commit_while_disconnect_runs_still_counts(backend):
    """The guess has read and decided; ``$disconnect`` clears its connection in the
    tournament (a conflicting write); the guess re-reads, finds the player by the tombstone."""
    game = _started(backend)
    duel, mover, opponent = _mover(game)
    word = wrong_word(backend, game.t.language, duel)
    received = backend.clock.now
    race = Interleaver(backend)

    def close() -> None:
        mover.disconnect()

    race.run(
        lambda: mover.send("guess", duel_id=duel.duel_id, word=word, received_ms=received),
        close,
    )

    d = game.t.duel(duel.duel_id)
    assert [(r.player, r.word) for r in d.rows] == [(mover.id, word)]
    assert race.commits == [True, False, True]  # disconnect's notice, the guess conflicts, wins
    assert d.next_player == opponent.id
    _gone(mover)


def test_a_guess_received_after_the_close_changes_nothing(backend):
    game = _started(backend)
    duel, mover, _ = _mover(game)
    word = wrong_word(backend, game.t.language, duel)
    mover.disconnect()
    backend.clock.now += 1
    before = backend.snapshot()

    mover.send("guess", duel_id=duel.duel_id, word=word)  # received after the close

    assert backend.snapshot() == before
    assert game.t.duel(duel.duel_id).rows == ()


# ---------------------------------------------------------------------------------- leave
def test_a_leave_from_a_tournament_received_before_the_close_takes_effect(backend):
    game = _started(backend)
    duel, mover, opponent = _mover(game)

    mover.send_before_close("leave")

    assert game.t.player(mover.id).left
    d = game.t.duel(duel.duel_id)
    assert (d.winner, d.reason.value) == (opponent.id, "left")
    assert player_item(backend, mover)["status"] == "idle"
    assert any(m["type"] == "duel_end" for m in opponent.messages)
    _gone(mover)


def test_a_leave_from_a_lobby_received_before_the_close_frees_the_seat(backend):
    a, b = backend.player("a"), backend.player("b")
    a.join("en")
    b.join("en")
    lobby_id = a.last("lobby")["lobby_id"]

    b.send_before_close("leave")

    assert [s["player_id"] for s in lobby_item(backend, lobby_id)["seats"]] == [a.id]
    assert [p["id"] for p in a.last("lobby")["players"]] == [a.id]
    me = player_item(backend, b)
    assert me["status"] == "idle"
    _gone(b)


# ----------------------------------------------------------------------------------- join
def test_a_join_received_before_the_close_is_seated_with_the_reconnect_deadline(backend):
    """As if it had run before ``$disconnect``: seated, disconnected, and freed when the
    60 s reconnect window from the close passes (ruling 9)."""
    a, b = backend.player("a"), backend.player("b")
    a.join("en")
    closed = backend.clock.now

    b.send_before_close("join", language="en")

    lobby_id = a.last("lobby")["lobby_id"]
    item = lobby_item(backend, lobby_id)
    assert [s["player_id"] for s in item["seats"]] == [a.id, b.id]
    assert item["connections"][b.id] is None
    me = player_item(backend, b)
    assert (me["status"], me["reconnect_deadline_ms"]) == ("queued", closed + RECONNECT_MS)
    assert _reconnect_timers(backend, b) == [closed + RECONNECT_MS]
    _gone(b)

    backend.clock.advance_to(closed + RECONNECT_MS)
    assert [s["player_id"] for s in lobby_item(backend, lobby_id)["seats"]] == [a.id]
    assert player_item(backend, b)["status"] == "idle"


# ------------------------------------------------------------------------------- sessions
def test_a_new_session_received_before_the_close_makes_no_player(backend):
    stranger = backend.player("stranger", session=False)
    before = [i for i in backend.items() if not i["pk"].startswith("CONN#")]

    stranger.send_before_close("session")

    assert [i for i in backend.items() if not i["pk"].startswith("CONN#")] == before


def test_a_resume_received_before_the_close_binds_nothing_and_rotates_nothing(backend):
    a = backend.player("a")
    a.disconnect()
    old_token = a.token
    before = player_item(backend, a)
    cid = "connlate="
    backend.invoke("$connect", cid)
    a.connection_id = cid

    a.send_before_close("session", token=old_token)

    after = player_item(backend, a)
    assert after == before  # not connected, not bound, token generation unchanged
    a.resume()  # the token still resumes
    assert a.last("session")["resumed"] is True


def test_sign_out_everywhere_received_before_the_close_is_not_applied(backend):
    """Its point is the new token in its reply, which cannot be delivered: refused, so the
    player is not locked out; the client sends it again once connected."""
    a = backend.player("a")

    a.send_before_close("sign_out_everywhere")

    a.resume()  # a revocation would have refused this token (invalid_token)
    assert a.errors == []
    assert a.last("session")["resumed"] is True


def test_a_nickname_received_before_the_close_is_saved(backend):
    a = backend.player("a")

    a.send_before_close("nickname", nickname="Latecomer")

    assert player_item(backend, a)["nickname"] == "Latecomer"
    _gone(a)


# -------------------------------------------------------------------------------- parties
def _party(backend, n):
    players = [backend.player(f"m{i}") for i in range(n)]
    players[0].send("party_create")
    invite = players[0].last("party")["invite"]
    for p in players[1:]:
        p.send("party_join", invite=invite)
    return players, invite


def test_party_create_received_before_the_close_makes_a_party_with_a_deadline(backend):
    a = backend.player("a")
    closed = backend.clock.now

    a.send_before_close("party_create")

    me = player_item(backend, a)
    assert me["party_id"] is not None
    assert party_item(backend, me["party_id"])["members"] == [a.id]
    assert me["reconnect_deadline_ms"] == closed + RECONNECT_MS  # ruling 10: then they leave
    assert _reconnect_timers(backend, a) == [closed + RECONNECT_MS]
    _gone(a)


def test_party_join_received_before_the_close_joins_and_tells_the_members(backend):
    (leader,), invite = _party(backend, 1)
    b = backend.player("b")
    closed = backend.clock.now

    b.send_before_close("party_join", invite=invite)

    party_id = leader.last("party")["party_id"]
    assert party_item(backend, party_id)["members"] == [leader.id, b.id]
    assert [m["id"] for m in leader.last("party")["members"]] == [leader.id, b.id]
    assert player_item(backend, b)["reconnect_deadline_ms"] == closed + RECONNECT_MS
    _gone(b)


def test_party_leave_received_before_the_close_leaves(backend):
    (leader, member), _ = _party(backend, 2)
    party_id = leader.last("party")["party_id"]

    member.send_before_close("party_leave")

    assert party_item(backend, party_id)["members"] == [leader.id]
    assert player_item(backend, member).get("party_id") is None
    assert [m["id"] for m in leader.last("party")["members"]] == [leader.id]


def test_party_start_received_before_the_leader_closes_starts_the_party(backend):
    (leader, member), _ = _party(backend, 2)
    party_id = leader.last("party")["party_id"]

    leader.send_before_close("party_start", language="en")

    lobby_id = member.last("lobby")["lobby_id"]
    assert [s["player_id"] for s in lobby_item(backend, lobby_id)["seats"]] == [
        leader.id,
        member.id,
    ]
    assert party_item(backend, party_id)["lobby_id"] == lobby_id
    me = player_item(backend, leader)
    assert me["status"] == "queued"
    assert me["reconnect_deadline_ms"] is not None  # from the close (held by the party)
    _gone(leader)


def test_party_remove_received_before_the_close_removes_the_member(backend):
    (leader, member), _ = _party(backend, 2)
    party_id = leader.last("party")["party_id"]

    leader.send_before_close("party_remove", player_id=member.id)

    assert party_item(backend, party_id)["members"] == [leader.id]
    assert player_item(backend, member).get("party_id") is None


def test_party_reset_invite_received_before_the_close_replaces_the_invite(backend):
    (leader, member), invite = _party(backend, 2)
    party_id = leader.last("party")["party_id"]

    leader.send_before_close("party_reset_invite")

    fresh = party_item(backend, party_id)["invite"]
    assert fresh != invite
    assert member.last("party")["invite"] == fresh


def test_a_leave_paused_before_its_commit_while_disconnect_runs_still_applies(backend):
    """The leave has read and decided; ``$disconnect`` marks the player away in the
    tournament (a conflicting write); the leave re-reads and still eliminates them."""
    game = _started(backend)
    duel, mover, opponent = _mover(game)
    received = backend.clock.now
    race = Interleaver(backend)

    race.run(lambda: mover.send("leave", received_ms=received), mover.disconnect)

    assert game.t.player(mover.id).left
    d = game.t.duel(duel.duel_id)
    assert (d.winner, d.reason.value) == (opponent.id, "left")
    assert race.commits == [True, False, True]  # disconnect's notice, the leave conflicts, wins
    me = player_item(backend, mover)
    assert (me["status"], me["connected"]) == ("idle", False)
    assert "reconnect_deadline_ms" not in me  # left: no window to come back to
