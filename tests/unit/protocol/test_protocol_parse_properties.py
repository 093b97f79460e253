"""Property tests: parse_inbound never raises anything but ProtocolError (hypothesis)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from shared.protocol.errors import PARSE_CODES, ProtocolError
from shared.protocol.inbound import ACTIONS, MODEL_BY_ACTION, parse_inbound

_FIELD_NAMES = ["action", "request_id", "token", "language", "duel_id", "word", "nickname",
                "invite"]  # fmt: skip

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=80),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)

# Objects that look like real messages, so validation (not just JSON parsing) gets exercised.
near_messages = st.fixed_dictionaries(
    {"action": st.sampled_from(ACTIONS) | json_values},
    optional={name: json_values | st.text(max_size=130) for name in _FIELD_NAMES[1:]},
)


def _check(raw: str | bytes, max_bytes: int = 32768) -> None:
    error: ProtocolError | None = None
    try:
        message = parse_inbound(raw, max_bytes=max_bytes)
    except ProtocolError as exc:  # anything else propagates and fails the test
        error = exc
    if error is not None:
        assert error.code in PARSE_CODES
        assert error.request_id is None or len(error.request_id) <= 64
    else:
        assert isinstance(message, BaseModel)
        assert type(message) is MODEL_BY_ACTION[message.action]


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_arbitrary_json_only_raises_protocol_error(value: Any) -> None:
    _check(json.dumps(value))


@settings(max_examples=300, deadline=None)
@given(near_messages)
def test_message_shaped_objects_only_raise_protocol_error(obj: dict[str, Any]) -> None:
    _check(json.dumps(obj))
    _check(json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass"))


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_only_raises_protocol_error(text: str) -> None:
    _check(text)
    _check(text, max_bytes=8)


@settings(max_examples=200, deadline=None)
@given(st.binary())
def test_arbitrary_bytes_only_raise_protocol_error(data: bytes) -> None:
    _check(data)
