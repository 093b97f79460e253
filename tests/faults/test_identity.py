"""Identity and cheating: forged or borrowed ids, replayed and stolen
connection ids, a token used while its player is connected, guessing in someone else's duel,
fishing for the secret in messages, errors, snapshots and INFO logs, and the per-connection
rate limit. Every attempt is refused with a stable code and changes nothing."""

from __future__ import annotations

import json
import logging

from shared.adapters.dynamo import schema
from tests.faults.support import record, started


def _refused(backend, player, body, code):
    before = backend.snapshot()
    player.clear()
    player.send_raw(json.dumps(body))
    got = [(m["type"], m.get("code")) for m in player.messages]
    assert got == [("error", code)], (body, got)
    assert backend.snapshot() == before, body


def test_forged_and_borrowed_duel_ids_are_not_in_duel(backend):
    _players, mover, _opponent, tid = started(backend)
    t = record(backend, tid).tournament
    mine = mover.current_duel().duel_id
    other = next(d for d in t.duels if mover.id not in d.players)
    word = mover.any_valid_word()
    for duel_id in [
        other.duel_id,  # a real duel of this tournament, not theirs
        f"{tid}.1.9",  # no such index
        f"{tid}.2.0",  # a later round
        f"{tid}.0.0",
        "nosuchtournament.1.0",  # a tournament that does not exist
        f"{tid}",  # malformed
        f"{tid}.1",
        f"{tid}.1.0.0",
        ".1.0",
        mine.replace(".", "/"),
        f"PLAYER#{mover.id}.1.0",  # another item's key shape
    ]:
        _refused(
            backend, mover, {"action": "guess", "duel_id": duel_id, "word": word}, "not_in_duel"
        )


def test_guessing_in_someone_elses_duel_on_their_turn_is_refused(backend):
    _players, mover, opponent, tid = started(backend)
    t = record(backend, tid).tournament
    mine = mover.current_duel().duel_id
    other = next(d for d in t.duels if mover.id not in d.players)
    # it is somebody's turn there, just not this player's: still not_in_duel
    _refused(
        backend,
        mover,
        {"action": "guess", "duel_id": other.duel_id, "word": mover.any_valid_word()},
        "not_in_duel",
    )
    # and the opponent cannot play the mover's turn in their shared duel
    _refused(
        backend,
        opponent,
        {"action": "guess", "duel_id": mine, "word": "abcd"},
        "not_your_turn",
    )


def test_a_connection_without_a_session_cannot_act_even_with_real_ids(backend):
    _players, mover, _opponent, _tid = started(backend)
    duel_id = mover.current_duel().duel_id
    word = mover.any_valid_word()
    stranger = backend.player("stranger", session=False)  # $connect only
    for body in [
        {"action": "guess", "duel_id": duel_id, "word": word},
        {"action": "leave"},
        {"action": "join", "language": "en"},
        {"action": "nickname", "nickname": "Thief"},
        {"action": "party_create"},
    ]:
        _refused(backend, stranger, body, "no_session")
    # a connection id API Gateway never announced ($connect never ran): same
    ghost = type(mover)(backend, "ghost-conn=", "ghost")
    backend.notifier.sent["ghost-conn="]
    for body in [{"action": "guess", "duel_id": duel_id, "word": word}, {"action": "leave"}]:
        _refused(backend, ghost, body, "no_session")


def test_an_old_connection_after_resume_is_dead(backend):
    _players, mover, _opponent, tid = started(backend)
    old = mover.connection_id
    duel_id = mover.current_duel().duel_id
    word = mover.any_valid_word()
    mover.resume()  # the old socket is still open: it is replaced
    assert backend.notifier.sent[old][-1]["code"] == "session_replaced"
    assert old in backend.notifier.closed
    replay = type(mover)(backend, old, "replay")
    for body in [
        {"action": "guess", "duel_id": duel_id, "word": word},
        {"action": "leave"},
        {"action": "nickname", "nickname": "Replayed"},
        {"action": "party_create"},
    ]:
        backend.notifier.gone.discard(old)  # even if the socket were somehow still writable
        _refused(backend, replay, body, "no_session")
    assert record(backend, tid).connections[mover.id] == mover.connection_id
    mover.send("guess", duel_id=duel_id, word=word)
    assert mover.last("turn")["row"]["player"] == mover.id


def test_a_token_presented_while_its_player_is_connected_replaces_the_old_connection(backend):
    victim = backend.player("victim")
    victim.join("en")
    old = victim.connection_id
    thief = backend.player("thief", session=False)
    thief.send("session", token=victim.token)
    # the token is the identity (ruling 11): the newest connection holding it wins, and the
    # previous one is told so and closed — a stolen token shows up on the victim's screen
    assert thief.last("session")["player"]["id"] == victim.id
    # rotated: the victim's token now resumes only for the grace, then is refused and flagged
    assert thief.last("session")["token"] not in (None, victim.token)
    assert backend.notifier.sent[old][-1]["code"] == "session_replaced"
    assert old in backend.notifier.closed
    item = backend.item(schema.player_key(victim.id))
    assert item["connection_id"] == thief.connection_id
    assert backend.item(schema.lobby_key(item["lobby_id"]))["connections"][victim.id] == (
        thief.connection_id
    )


def test_forged_and_borrowed_invites(backend):
    leader, member, outsider = (backend.player(n) for n in ("leader", "member", "outsider"))
    leader.send("party_create")
    invite = leader.last("party")["invite"]
    member.send("party_join", invite=invite)
    for forged in [invite[:-1] + ("A" if invite[-1] != "A" else "B"), invite.lower(), "A" * 43]:
        _refused(backend, outsider, {"action": "party_join", "invite": forged}, "unknown_invite")
    # a member cannot start for the leader, nor can an outsider
    _refused(backend, member, {"action": "party_start", "language": "en"}, "not_party_leader")
    _refused(backend, outsider, {"action": "party_start", "language": "en"}, "not_in_party")
    # and the stored invite item is keyed by the invite itself, never shown to non-members
    assert invite not in json.dumps(outsider.messages)


def test_no_secret_in_messages_snapshots_errors_or_info_logs(backend, capfd, caplog):
    caplog.set_level(logging.INFO)
    players, mover, opponent, _tid = started(backend)
    duel = mover.current_duel()
    secret = duel.word
    spectators = [p for p in players if p not in (mover, opponent)]
    # fishing: wrong lengths, near misses, other duels, refusals, a resume snapshot, a spectator
    for body in [
        {"action": "guess", "duel_id": duel.duel_id, "word": secret[:-1]},
        {"action": "guess", "duel_id": duel.duel_id, "word": secret + "s"},
        {"action": "guess", "duel_id": duel.duel_id, "word": secret[::-1]},
        {"action": "guess", "duel_id": duel.duel_id, "word": "zzzz"},
    ]:
        mover.send_raw(json.dumps(body))
        opponent.send_raw(json.dumps(body))
    mover.guess()
    opponent.disconnect()
    opponent.resume()
    spectators[0].send("leave")  # eliminated: a spectator now
    spectators[0].disconnect()
    spectators[0].resume()
    events = [m for _, m in backend.notifier.events]
    assert events
    for m in events:
        if m["type"] == "turn" and m["duel_id"] == duel.duel_id:
            continue  # the duel's own rows are guesses, not the secret (checked below)
        assert f'"{secret}"' not in json.dumps(m, ensure_ascii=False), m["type"]
    for m in events:
        if m["type"] == "turn" and m["duel_id"] == duel.duel_id:
            assert m["row"]["word"] != secret
    out, err = capfd.readouterr()
    logs = out + err + "\n".join(r.getMessage() + str(r.__dict__) for r in caplog.records)
    assert "refused" in logs
    assert secret not in logs.replace(mover.any_valid_word(), "")


def test_the_rate_limit_refuses_a_flood_per_connection(limited_backend):
    backend = limited_backend
    a, b = backend.player("a"), backend.player("b")  # each used 1 token for its session
    before = backend.snapshot()
    for i in range(19):  # refused by the game (idle: not queued), but each takes a token
        a.send("leave", request_id=f"p{i}")
    assert [m.get("code") for m in a.messages].count("not_queued") == 19
    a.clear()
    a.send("join", language="en", request_id="flood")
    assert [(m["type"], m.get("code"), m.get("request_id")) for m in a.messages] == [
        ("error", "rate_limited", "flood")
    ]
    assert backend.snapshot() == before  # refused before any table access
    # another connection has its own bucket
    b.join("en")
    assert b.last("lobby")["status"] == "waiting"
    # 5 tokens a second come back
    backend.clock.advance(1_000)
    a.clear()
    for i in range(6):
        a.send("leave", request_id=f"q{i}")
    assert [m["code"] for m in a.messages] == ["not_queued"] * 5 + ["rate_limited"]


def test_ttl_removing_the_player_during_a_resume_refuses_the_token_as_expired(backend, monkeypatch):
    """DynamoDB's TTL deletes items on its own schedule (an idle player a token lifetime after
    its last session; ``shared.adapters.dynamo.schema.idle_player_ttl``): here the player goes
    between the resume's token lookup and its player read. The token is refused
    (``invalid_token``), nothing is written, and the connection can start a new player."""
    from shared.adapters.dynamo.store import to_av

    a = backend.player("a")
    a.disconnect()
    store = backend.deps.store
    lookup = store.get_token

    def get_token_then_expire(token_hash):
        issued = lookup(token_hash)
        backend.client.delete_item(TableName=backend.table_name, Key=to_av(schema.player_key(a.id)))
        return issued

    monkeypatch.setattr(store, "get_token", get_token_then_expire)
    p = backend.player("again", session=False)
    profile = schema.player_key(a.id)
    left = [i for i in backend.items() if (i["pk"], i["sk"]) != (profile["pk"], profile["sk"])]
    p.send("session", token=a.token, request_id="r")
    monkeypatch.undo()

    assert [(m["type"], m.get("code")) for m in p.messages] == [("error", "invalid_token")]
    assert backend.items() == left  # only the TTL's delete
    p.send("session")
    assert p.last("session")["resumed"] is False
