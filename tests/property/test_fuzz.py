"""Fuzzed input through the real handlers: random JSON, near-valid messages
built from the real action schemas, and unicode edge cases (combining marks, RTL and
zero-width characters, lone surrogates as JSON escapes, very long strings).

Whatever arrives: the handler returns normally, the caller gets a reply, every ``error`` has a
code from ``ErrorCode`` (never ``internal_error``) and an English text that never echoes the
input, and an input answered by an ``error`` changed nothing in the table.

One backend per test (moto setup is the slow part), many examples on it: the player sits in a
running tournament, so guesses meet real duels.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.protocol.errors import ErrorCode
from shared.protocol.inbound import MODEL_BY_ACTION
from tests.faults.support import started

EXAMPLES = 1000 if os.environ.get("WT_HARDENING_NIGHTLY") == "1" else 70
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("WT_HARDENING_NIGHTLY") != "1",
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
CODES = {c.value for c in ErrorCode}
FIELD_NAMES = {name for model in MODEL_BY_ACTION.values() for name in model.model_fields}
"""The protocol's own field names: a parse error names the field at fault (``tournament_id``,
since 1.3, is the first one of 12 characters or more); only what the client put in a message
must never come back in an error."""

EDGE = [
    "e\u0301",  # combining acute
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629",  # Arabic (RTL)
    "\u202e",  # RIGHT-TO-LEFT OVERRIDE
    "\u200f",  # RTL mark
    "\u200b",  # zero-width space
    "\u200d",  # zero-width joiner
    "\ufeff",  # BOM
    "\u0000",
    "\ud83d\ude00",  # an emoji (a surrogate pair in JSON)
    "\U0001f469\u200d\U0001f4bb",  # ZWJ sequence
    "I\u0307",  # Turkish dotted capital, decomposed
    "\u1e9e",  # capital sharp s
    "ǅ",  # titlecase digraph
    "ﬁ",  # ligature
    "\u3000",  # ideographic space
]

edge_text = st.lists(
    st.one_of(st.sampled_from(EDGE), st.text(max_size=6), st.just("a")), max_size=12
).map("".join)
long_text = st.integers(60, 40_000).map(lambda n: "ä" * n)
texts = st.one_of(st.text(max_size=40), edge_text, long_text)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
LONE = ['"\\ud800"', '"\\udfff"', '"a\\udc00b"', '"\\ud83d"']  # lone surrogates, escaped


@st.composite
def near_valid(draw: Any, duel_ids: list[str]) -> str:
    """A message from a real action schema with a field or two bent out of shape."""
    action = draw(st.sampled_from(sorted(set(MODEL_BY_ACTION) - {"session", "leave"})))
    model = MODEL_BY_ACTION[action]
    body: dict[str, Any] = {"action": action}
    for name in model.model_fields:
        if name == "action":
            continue
        if name == "duel_id":
            body[name] = draw(st.sampled_from(duel_ids) | texts)
        elif name == "request_id":
            if draw(st.booleans()):
                body[name] = draw(st.text(max_size=70))
        else:
            body[name] = draw(texts)
    mutation = draw(st.integers(0, 5))
    keys = [k for k in body if k != "action"]
    if mutation == 1 and keys:
        del body[draw(st.sampled_from(keys))]
    elif mutation == 2:
        body[draw(st.text(min_size=1, max_size=10))] = draw(json_values)
    elif mutation == 3 and keys:
        body[draw(st.sampled_from(keys))] = draw(json_values)
    elif mutation == 4:
        body["action"] = draw(st.sampled_from([action.upper(), action + "\u200b", f" {action}"]))
    text = json.dumps(body, ensure_ascii=draw(st.booleans()))
    if mutation == 5 and keys:
        # a lone surrogate, as a JSON escape, in a string field
        field = draw(st.sampled_from(keys))
        body[field] = "@@"
        text = json.dumps(body).replace('"@@"', draw(st.sampled_from(LONE)))
    return text


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _check(backend: Any, player: Any, body: str) -> None:
    before = backend.snapshot()
    player.clear()
    player.send_raw(body)  # raises if the handler did
    replies = list(player.messages)
    assert replies, body[:200]
    errors = [m for m in replies if m["type"] == "error"]
    for e in errors:
        assert e["code"] in CODES, e
        assert e["code"] != "internal_error", (body[:200], e)
        try:
            sent = json.loads(body)
            _strings(sent)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than json goes
            sent = None
        for s in _strings(sent):
            if len(s) >= 12 and s not in FIELD_NAMES:
                assert s not in e["message"], (s, e)
    if errors:
        assert backend.snapshot() == before, (body[:200], errors)


def test_random_json_and_text(backend):
    _players, mover, _, _ = started(backend)

    @FUZZ
    @given(
        body=st.one_of(
            json_values.map(json.dumps),
            json_values.map(lambda v: json.dumps(v, ensure_ascii=False)),
            st.text(max_size=200),
            st.sampled_from([*LONE, '{"action": "ping"', '{"action": NaN}', "�"]),
            st.dictionaries(st.text(max_size=10), json_values, max_size=4).map(json.dumps),
        )
    )
    def run(body: str) -> None:
        _check(backend, mover, body)

    run()


def test_near_valid_messages_from_the_real_schemas(backend):
    _players, mover, _, tid = started(backend)
    duel_ids = [mover.current_duel().duel_id, f"{tid}.1.0", f"{tid}.1.3", f"{tid}.9.9"]

    @FUZZ
    @given(body=near_valid(duel_ids))
    def run(body: str) -> None:
        _check(backend, mover, body)

    run()


@st.composite
def deeply_nested(draw: Any) -> str:
    """JSON nested some thousands deep (arrays or objects, closed or not), alone or as a field
    of a real action: past what Python's json parses it raises RecursionError, not ValueError."""
    depth = draw(st.integers(1_000, 40_000))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    value = opener * depth
    if draw(st.booleans()):
        value += ("1" if opener != "[" else "") + closer * depth
    if draw(st.booleans()):
        action = draw(st.sampled_from(sorted(MODEL_BY_ACTION)))
        return json.dumps({"action": action, "request_id": "deep"})[:-1] + ',"x":' + value + "}"
    return value


def test_json_nested_too_deep_is_refused_like_malformed_json(backend):
    """Whatever the depth: over the frame limit ``message_too_large``; too deep to parse
    ``invalid_json`` (no request_id: the body could not be read); else the usual refusal."""
    _players, mover, _, _tid = started(backend)

    @FUZZ
    @given(body=deeply_nested())
    def run(body: str) -> None:
        _check(backend, mover, body)
        (reply,) = mover.messages
        if len(body.encode()) > 32 * 1024:
            assert (reply["type"], reply["code"]) == ("error", "message_too_large")
            return
        try:
            json.loads(body)
        except RecursionError:
            assert (reply["type"], reply["code"], reply["request_id"]) == (
                "error",
                "invalid_json",
                None,
            )
        except ValueError:  # not closed, yet shallow enough to fail as plain bad JSON
            assert (reply["type"], reply["code"]) == ("error", "invalid_json")

    run()


def test_unicode_edge_cases_in_every_string_field(backend):
    _players, mover, _, _tid = started(backend)
    duel_id = mover.current_duel().duel_id

    @FUZZ
    @given(
        action=st.sampled_from(["guess", "nickname", "join", "party_join", "session"]),
        value=st.one_of(edge_text, long_text),
    )
    def run(action: str, value: str) -> None:
        field = {
            "guess": "word",
            "nickname": "nickname",
            "join": "language",
            "party_join": "invite",
            "session": "token",
        }[action]
        body: dict[str, Any] = {"action": action, field: value}
        if action == "guess":
            body["duel_id"] = duel_id
        _check(backend, mover, json.dumps(body, ensure_ascii=False))

    run()


def test_lone_surrogates_are_invalid_values_and_never_crash_the_reply(backend):
    """Found by this fuzzer: a ``request_id`` (or a field) holding a lone surrogate escape
    used to crash the handler while serialising the reply (UTF-8 cannot encode it)."""
    a = backend.player("a")
    for body, code, request_id in [
        ('{"action":"join","request_id":"\\ud800","language":""}', "invalid_value", None),
        ('{"action":"leave","request_id":"\\udfff"}', "invalid_value", None),
        ('{"action":"nickname","nickname":"ab\\ud800cd","request_id":"n"}', "invalid_value", "n"),
        ('{"action":"join","language":"e\\udc00"}', "invalid_value", None),
    ]:
        before = backend.snapshot()
        a.clear()
        a.send_raw(body)
        assert [(m["type"], m.get("code"), m.get("request_id")) for m in a.messages] == [
            ("error", code, request_id)
        ], body
        assert backend.snapshot() == before
