"""Unit tests: inbound messages and parse_inbound (shared/protocol/inbound.py)."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest

from shared.protocol.errors import PARSE_CODES, ErrorCode, ProtocolError
from shared.protocol.examples import INBOUND_EXAMPLES
from shared.protocol.inbound import (
    ACTIONS,
    MODEL_BY_ACTION,
    GuessAction,
    InboundMessage,
    JoinAction,
    PingAction,
    SessionAction,
    parse_inbound,
)


def _raw(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _error(raw: str | bytes, **kwargs: Any) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        parse_inbound(raw, **kwargs)
    return info.value


# --- the action list --------------------------------------------------------------------------
def test_actions_are_the_design_vocabulary() -> None:
    assert set(ACTIONS) == {
        "session",
        "join",
        "leave",
        "guess",
        "nickname",
        "party_create",
        "party_join",
        "party_leave",
        "party_start",
        "party_remove",
        "party_reset_invite",
        "ping",
        "sign_out_everywhere",
        "profile",  # issue 38: the read-only progression actions
        "leaderboard",
        "history",
        "replay",
    }
    assert len(ACTIONS) == len(set(ACTIONS))


def test_actions_are_derived_from_the_union_members() -> None:
    members = get_args(get_args(InboundMessage)[0])
    assert tuple(get_args(m.model_fields["action"].annotation)[0] for m in members) == ACTIONS
    assert tuple(MODEL_BY_ACTION.values()) == members


# --- round trips ------------------------------------------------------------------------------
@pytest.mark.parametrize("action", ACTIONS)
def test_every_action_round_trips(action: str) -> None:
    example = INBOUND_EXAMPLES[action]
    message = parse_inbound(_raw(example))
    assert type(message) is MODEL_BY_ACTION[action]
    assert message.action == action
    again = parse_inbound(message.model_dump_json())
    assert again == message
    assert message.model_dump(exclude_unset=True) == example


@pytest.mark.parametrize("action", ACTIONS)
def test_every_action_accepts_bytes_and_a_request_id(action: str) -> None:
    example = {**INBOUND_EXAMPLES[action], "request_id": "r" * 64}
    message = parse_inbound(_raw(example).encode("utf-8"))
    assert message.request_id == "r" * 64


def test_minimal_messages_parse() -> None:
    assert parse_inbound('{"action":"ping"}') == PingAction(action="ping")
    assert parse_inbound('{"action":"session"}') == SessionAction(action="session", token=None)
    assert parse_inbound('{"action":"session","token":null}') == SessionAction(action="session")


def test_guess_keeps_the_word_as_typed() -> None:
    message = parse_inbound(_raw({"action": "guess", "duel_id": "d", "word": " Ĳsje "}))
    assert isinstance(message, GuessAction)
    assert message.word == " Ĳsje "  # normalising is the domain's job (ruling 12), not ours


def test_models_are_frozen() -> None:
    message = parse_inbound('{"action":"join","language":"en"}')
    assert isinstance(message, JoinAction)
    with pytest.raises(ValueError, match="frozen"):
        message.language = "nl"


# --- one named test per parse error code ------------------------------------------------------
def test_message_too_large() -> None:
    raw = "x" * 40_000  # not even JSON: the raw size is checked first
    assert _error(raw).code is ErrorCode.MESSAGE_TOO_LARGE


def test_message_too_large_counts_utf8_bytes_not_characters() -> None:
    body = _raw({"action": "guess", "duel_id": "d", "word": "ж"})
    raw = body + " " * (100 - len(body.encode()))
    assert len(raw.encode()) == 100
    parse_inbound(raw, max_bytes=100)
    multibyte = _raw({"action": "ping", "request_id": "ж" * 20})  # 40 bytes of Cyrillic
    assert len(multibyte) <= 70 < len(multibyte.encode())
    assert _error(multibyte, max_bytes=70).code is ErrorCode.MESSAGE_TOO_LARGE
    assert _error(multibyte.encode(), max_bytes=70).code is ErrorCode.MESSAGE_TOO_LARGE
    assert parse_inbound(multibyte, max_bytes=len(multibyte.encode())).request_id == "ж" * 20


def test_message_exactly_at_the_limit_is_accepted() -> None:
    body = '{"action":"ping"}'
    raw = body + " " * (32768 - len(body))
    assert isinstance(parse_inbound(raw), PingAction)
    assert _error(raw + " ").code is ErrorCode.MESSAGE_TOO_LARGE


@pytest.mark.parametrize(
    "raw",
    ["", "nope", "{", '{"action":"ping",}', "{'action':'ping'}", b"\xff\xfe", "[" * 5000, "NaN"],
)
def test_invalid_json(raw: str | bytes) -> None:
    error = _error(raw)
    assert error.code is ErrorCode.INVALID_JSON
    assert error.request_id is None


def test_json_nested_deeper_than_the_parser_goes_is_invalid_json_not_a_crash() -> None:
    """``json.loads`` raises RecursionError (not a ValueError) past some thousands of levels."""
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(RecursionError):
        json.loads(deep)
    for raw in (deep, '{"action":"guess","request_id":"g","x":' + "[" * 100_000, "[" * 30_000):
        error = _error(raw, max_bytes=len(raw))
        assert (error.code, error.request_id) == (ErrorCode.INVALID_JSON, None)
    assert _error(deep).code is ErrorCode.MESSAGE_TOO_LARGE  # the size is checked first


def test_invalid_json_for_nan_and_infinity_inside_an_object() -> None:
    assert _error('{"action":"ping","request_id":"r","x":Infinity}').code is ErrorCode.INVALID_JSON


@pytest.mark.parametrize("raw", ["[]", '["ping"]', '"ping"', "1", "null", "true"])
def test_not_an_object(raw: str) -> None:
    assert _error(raw).code is ErrorCode.NOT_AN_OBJECT


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"request_id": "r"},
        {"action": "jump"},
        {"action": "PING"},
        {"action": 5},
        {"action": None},
        {"action": ["ping"]},
        {"action": "$connect"},
    ],
)
def test_unknown_action(obj: dict[str, Any]) -> None:
    error = _error(_raw(obj))
    assert error.code is ErrorCode.UNKNOWN_ACTION
    assert error.field == "action"


def test_missing_field() -> None:
    error = _error('{"action":"guess","duel_id":"d-1"}')
    assert (error.code, error.field) == (ErrorCode.MISSING_FIELD, "word")
    assert "word" in error.message


def test_unknown_field() -> None:
    error = _error('{"action":"ping","colour":"red"}')
    assert (error.code, error.field) == (ErrorCode.UNKNOWN_FIELD, "colour")


def test_unknown_field_names_are_truncated_in_the_message() -> None:
    error = _error(_raw({"action": "ping", "k" * 5000: 1}))
    assert error.code is ErrorCode.UNKNOWN_FIELD
    assert len(error.message) < 200


@pytest.mark.parametrize(
    "obj",
    [
        {"action": "join", "language": 5},
        {"action": "join", "language": None},
        {"action": "join", "language": ["en"]},
        {"action": "guess", "duel_id": 1, "word": "crane"},
        {"action": "guess", "duel_id": "d", "word": {"w": 1}},
        {"action": "session", "token": 123},
        {"action": "ping", "request_id": 7},
    ],
)
def test_wrong_type(obj: dict[str, Any]) -> None:
    assert _error(_raw(obj)).code is ErrorCode.WRONG_TYPE


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        ({"action": "guess", "duel_id": "d", "word": "a" * 65}, "word"),
        ({"action": "guess", "duel_id": "d" * 65, "word": "a"}, "duel_id"),
        ({"action": "session", "token": "t" * 129}, "token"),
        ({"action": "join", "language": "e" * 9}, "language"),
        ({"action": "nickname", "nickname": "n" * 65}, "nickname"),
        ({"action": "party_join", "invite": "i" * 65}, "invite"),
        ({"action": "party_start", "language": "l" * 9}, "language"),
        ({"action": "ping", "request_id": "r" * 65}, "request_id"),
    ],
)
def test_field_too_long(obj: dict[str, Any], field: str) -> None:
    error = _error(_raw(obj))
    assert (error.code, error.field) == (ErrorCode.FIELD_TOO_LONG, field)


def test_fields_at_their_limit_are_accepted() -> None:
    parse_inbound(_raw({"action": "guess", "duel_id": "d" * 64, "word": "a" * 64}))
    parse_inbound(_raw({"action": "session", "token": "t" * 128}))
    parse_inbound(_raw({"action": "join", "language": "e" * 8}))


def test_invalid_value() -> None:
    error = _error('{"action":"join","language":"e"}')  # below the 2-character minimum
    assert (error.code, error.field) == (ErrorCode.INVALID_VALUE, "language")


def test_every_parse_code_has_a_named_test() -> None:
    names = set(globals())
    for code in PARSE_CODES:
        assert f"test_{code.value}" in names, f"no test named test_{code.value}"


def test_first_error_wins() -> None:
    error = _error('{"action":"guess","duel_id":5}')  # wrong type and a missing word
    assert error.code is ErrorCode.WRONG_TYPE
    assert error.field == "duel_id"


def test_no_coercion_of_numbers_or_bytes_to_strings() -> None:
    assert _error('{"action":"guess","duel_id":"d","word":12345}').code is ErrorCode.WRONG_TYPE


# --- request_id salvage -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ('{"request_id":"r-1","action":"fly"}', ErrorCode.UNKNOWN_ACTION),
        ('{"request_id":"r-1"}', ErrorCode.UNKNOWN_ACTION),
        ('{"request_id":"r-1","action":"guess"}', ErrorCode.MISSING_FIELD),
        ('{"request_id":"r-1","action":"ping","x":1}', ErrorCode.UNKNOWN_FIELD),
        ('{"request_id":"r-1","action":"join","language":1}', ErrorCode.WRONG_TYPE),
        ('{"request_id":"r-1","action":"join","language":"englishes"}', ErrorCode.FIELD_TOO_LONG),
        ('{"request_id":"r-1","action":"join","language":"e"}', ErrorCode.INVALID_VALUE),
    ],
)
def test_request_id_is_echoed_into_the_error(raw: str, code: ErrorCode) -> None:
    error = _error(raw)
    assert (error.code, error.request_id) == (code, "r-1")


@pytest.mark.parametrize("request_id", [5, None, ["r"], "r" * 65])
def test_unusable_request_id_is_not_echoed(request_id: object) -> None:
    error = _error(_raw({"action": "fly", "request_id": request_id}))
    assert error.code is ErrorCode.UNKNOWN_ACTION
    assert error.request_id is None


def test_error_messages_never_echo_field_values() -> None:
    secret = "hunter2-token-value"
    error = _error(_raw({"action": "session", "token": secret, "x": 1}))
    assert secret not in error.message
    error = _error(_raw({"action": "guess", "duel_id": "d", "word": secret * 10}))
    assert secret not in error.message
