"""Bad input through the real handlers: each refusal has its stable error code, goes to the
caller only, echoes the request_id when it can, and changes nothing (the whole table is
scanned before and after — fine in a test, never in the product).

Refusals that need a bigger setup are checked the same way next to their flow: party full
(test_parties), join while playing (test_matchmaking).
"""

from __future__ import annotations

import json
from typing import Any

from shared.protocol.inbound import ACTIONS

MINIMAL = {
    "session": {},
    "join": {"language": "en"},
    "leave": {},
    "guess": {"duel_id": "id0001.1.0", "word": "crane"},
    "nickname": {"nickname": "Valid Name"},
    "party_create": {},
    "party_join": {"invite": "A" * 43},
    "party_leave": {},
    "party_start": {"language": "en"},
    "party_remove": {"player_id": "id0001"},
    "party_reset_invite": {},
    "sign_out_everywhere": {},
    "ping": {},
    "profile": {},
    "leaderboard": {"board": "rating"},
    "history": {},
    "replay": {"tournament_id": "id0001"},
}


def _check(backend, player, cases, bystanders=()):
    """Send each ``(body, code, request_id)``; the caller alone gets exactly that error and
    the table is unchanged. Collects every mismatch before failing."""
    before = backend.snapshot()
    watched = [b.connection_id for b in bystanders]
    heard = {c: len(backend.notifier.sent[c]) for c in watched}
    problems = []
    for body, code, request_id in cases:
        player.clear()
        player.send_raw(body)
        got = [(m["type"], m.get("code"), m.get("request_id")) for m in player.messages]
        if got != [("error", code, request_id)]:
            problems.append(f"{body[:60]!r}: expected {code}/{request_id}, got {got}")
        if backend.snapshot() != before:
            problems.append(f"{body[:60]!r}: the table changed")
            before = backend.snapshot()
    for c in watched:
        if len(backend.notifier.sent[c]) != heard[c]:
            problems.append(f"bystander {c} was told something")
    assert not problems, "\n".join(problems)


def test_malformed_messages_get_their_parse_codes(backend):
    a = backend.player("a")
    b = backend.player("b")
    b.join("en")
    a.join("en")
    big = json.dumps({"action": "nickname", "nickname": "x", "pad": "y" * 33_000})
    _check(
        backend,
        a,
        [
            ("{", "invalid_json", None),
            ("nope", "invalid_json", None),
            ('{"action":"ping",}', "invalid_json", None),
            ("", "invalid_json", None),
            ("[]", "not_an_object", None),
            ('"join"', "not_an_object", None),
            ("1", "not_an_object", None),
            ("null", "not_an_object", None),
            ('{"action":"dance","request_id":"d1"}', "unknown_action", "d1"),
            ('{"language":"en"}', "unknown_action", None),
            ('{"action":5}', "unknown_action", None),
            ('{"action":"join","request_id":"m1"}', "missing_field", "m1"),
            ('{"action":"party_join"}', "missing_field", None),
            ('{"action":"nickname"}', "missing_field", None),
            ('{"action":"guess","word":"crane"}', "missing_field", None),
            ('{"action":"leave","language":"en","request_id":"x1"}', "unknown_field", "x1"),
            ('{"action":"party_leave","colour":"red"}', "unknown_field", None),
            ('{"action":"party_remove"}', "missing_field", None),
            ('{"action":"party_reset_invite","invite":"x"}', "unknown_field", None),
            ('{"action":"session","player_id":"p"}', "unknown_field", None),
            ('{"action":"join","language":5}', "wrong_type", None),
            ('{"action":"nickname","nickname":["Zoe"]}', "wrong_type", None),
            ('{"action":"session","token":12345}', "wrong_type", None),
            ('{"action":"party_join","invite":null}', "wrong_type", None),
            ('{"action":"leave","request_id":7}', "wrong_type", None),
            (big, "message_too_large", None),
            ('{"action":"join","language":"' + "e" * 9 + '"}', "field_too_long", None),
            ('{"action":"nickname","nickname":"' + "n" * 65 + '"}', "field_too_long", None),
            ('{"action":"party_join","invite":"' + "A" * 65 + '"}', "field_too_long", None),
            ('{"action":"session","token":"' + "t" * 129 + '"}', "field_too_long", None),
            ('{"action":"guess","duel_id":"d","word":"' + "w" * 65 + '"}', "field_too_long", None),
            ('{"action":"leave","request_id":"' + "r" * 65 + '"}', "field_too_long", None),
            ('{"action":"join","language":"e"}', "invalid_value", None),
        ],
        bystanders=[b],
    )


def test_json_nested_too_deep_to_parse_is_invalid_json_after_the_size_check(backend):
    """Nested deeper than Python's json goes (``RecursionError``, not ``ValueError``) is
    malformed JSON like any other, whichever function's route it reaches; past 32 KB the size
    check answers first. Nothing changes, and the connection's next message is handled."""
    a = backend.player("a")
    b = backend.player("b")
    b.join("en")
    a.join("en")
    deep = 16_000
    _check(
        backend,
        a,
        [
            ("[" * 32_000, "invalid_json", None),
            ("[" * deep + "]" * deep, "invalid_json", None),
            ('{"action":"guess","x":' + "[" * deep + "]" * deep + "}", "invalid_json", None),
            ('{"action":"leave","request_id":"r1","x":' + "[" * 30_000, "invalid_json", None),
            ('{"action":"ping","x":' + "[" * 20_000, "invalid_json", None),  # not a pong
            ("[" * 100_000, "message_too_large", None),
        ],
        bystanders=[b],
    )
    a.send("nickname", nickname="Still Here", request_id="n1")
    assert a.last("player")["player"]["nickname"] == "Still Here"


def test_a_message_just_under_the_frame_limit_is_parsed(backend):
    a = backend.player("a")
    body = json.dumps({"action": "nickname", "nickname": "  Zoe  "})
    body = body[:-1] + " " * (32 * 1024 - len(body.encode())) + "}"
    assert len(body.encode()) == 32 * 1024
    a.send_raw(body)
    assert a.last("player")["player"]["nickname"] == "Zoe"


def test_every_action_before_session_is_no_session(backend):
    idle = backend.player("idle")
    stranger = backend.player("stranger", session=False)
    cases = [
        (json.dumps({"action": action, **fields, "request_id": f"q-{action}"}), "no_session")
        for action, fields in MINIMAL.items()
        if action not in ("session", "ping")
    ]
    assert {json.loads(b)["action"] for b, _ in cases} == set(ACTIONS) - {"session", "ping"}
    _check(
        backend,
        stranger,
        [(body, code, json.loads(body)["request_id"]) for body, code in cases],
        bystanders=[idle],
    )


def test_ping_is_answered_by_the_gateway_without_a_session_and_changes_nothing(backend):
    """Ruling 14: ``ping`` is a MOCK route — API Gateway answers ``pong`` (the receipt time,
    the request id echoed) and no function runs: nothing is read, written or checked, so a
    ping needs no session and even one with odd fields gets its ``pong``."""
    stranger = backend.player("stranger", session=False)
    before = backend.snapshot()
    backend.clock.advance(1_500)
    calls: list[str] = []
    original = backend.client._make_api_call

    def spy(operation: str, params: dict[str, Any]) -> Any:
        calls.append(operation)
        return original(operation, params)

    backend.client._make_api_call = spy
    try:
        stranger.send("ping", request_id="p1")
        stranger.send_raw('{"action":"ping","colour":"red"}')
    finally:
        backend.client._make_api_call = original
    assert calls == []
    assert stranger.messages == [
        {"type": "pong", "server_time_ms": backend.clock.now, "request_id": "p1", "seq": None},
        {"type": "pong", "server_time_ms": backend.clock.now, "request_id": None, "seq": None},
    ]
    assert backend.snapshot() == before
    assert backend.notifier.active[stranger.connection_id] == backend.clock.now


def test_domain_refusals_change_nothing(backend):
    leader, member, queued, loner = (backend.player(n) for n in ("leader", "m", "q", "loner"))
    leader.send("party_create")
    invite = leader.last("party")["invite"]
    member.send("party_join", invite=invite)
    queued.join("de")
    forged = invite[:-2] + ("AA" if invite[-2:] != "AA" else "BB")
    _check(
        backend,
        loner,
        [
            ('{"action":"join","language":"xx","request_id":"u"}', "unknown_language", "u"),
            ('{"action":"join","language":"zz-zz"}', "unknown_language", None),
            ('{"action":"party_start","language":"en"}', "not_in_party", None),
            ('{"action":"party_leave"}', "not_in_party", None),
            ('{"action":"party_remove","player_id":"x"}', "not_in_party", None),
            ('{"action":"party_reset_invite"}', "not_in_party", None),
            ('{"action":"leave"}', "not_queued", None),
            (json.dumps({"action": "party_join", "invite": forged}), "unknown_invite", None),
            ('{"action":"party_join","invite":"' + "Z" * 43 + '"}', "unknown_invite", None),
            ('{"action":"party_join","invite":"tiny"}', "unknown_invite", None),
            ('{"action":"nickname","nickname":""}', "invalid_nickname", None),
            ('{"action":"nickname","nickname":"     "}', "invalid_nickname", None),
            ('{"action":"nickname","nickname":"' + "x" * 21 + '"}', "invalid_nickname", None),
            ('{"action":"nickname","nickname":"ctrl\\u0000char"}', "invalid_nickname", None),
            ('{"action":"nickname","nickname":"new\\nline"}', "invalid_nickname", None),
            ('{"action":"session","token":"' + "A" * 43 + '"}', "invalid_token", None),
        ],
        bystanders=[leader, member, queued],
    )
    _check(
        backend,
        member,
        [
            ('{"action":"party_start","language":"en","request_id":"s"}', "not_party_leader", "s"),
            (
                json.dumps({"action": "party_remove", "player_id": leader.id}),
                "not_party_leader",
                None,
            ),
            ('{"action":"party_reset_invite","request_id":"r"}', "not_party_leader", "r"),
            ('{"action":"join","language":"en"}', "already_in_party", None),
            (json.dumps({"action": "party_join", "invite": invite}), "already_in_party", None),
        ],
        bystanders=[leader, queued],
    )
    _check(
        backend,
        queued,
        [
            ('{"action":"join","language":"de"}', "already_queued", None),
            ('{"action":"join","language":"en"}', "already_queued", None),
            (json.dumps({"action": "party_join", "invite": invite}), "already_playing", None),
        ],
        bystanders=[leader, member],
    )


def test_a_message_on_another_actions_route_is_refused_and_changes_nothing(backend):
    """Route-bound functions (``functions.messages``): each Lambda takes only its own actions,
    whatever body reaches it — a ``join`` body on the ``guess`` route, or any known action on
    ``$default``, is ``unknown_action`` (request id echoed); nothing is stored or pushed."""
    a = backend.player("a")
    b = backend.player("b")
    b.join("en")
    before = backend.snapshot()
    heard = len(b.messages)
    for route, action in [("guess", "join"), ("$default", "join"), ("party", "ping")]:
        a.clear()
        body = json.dumps({"action": action, **MINIMAL[action], "request_id": "r1"})
        backend.invoke(route if route != "party" else "party_create", a.connection_id, body)
        assert [(m["type"], m["code"], m["request_id"]) for m in a.messages] == [
            ("error", "unknown_action", "r1")
        ], route
    assert backend.snapshot() == before
    assert len(b.messages) == heard
