"""One post per recipient per change: ``frames`` packs a connection's events into
``batch`` messages under API Gateway's message quota, ``unpack`` gives them back in order, and
the outbox posts once per connection."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from shared.protocol.examples import OUTBOUND_EXAMPLES
from shared.protocol.framing import dump_event, frames, unpack
from shared.protocol.outbound import BatchEvent, PongEvent, error_event, parse_outbound
from shared.services.outbox import Outbox, Request


def _text(i: int, pad: int = 0) -> str:
    return json.dumps({"type": "pong", "request_id": f"r{i}" + "x" * pad, "server_time_ms": i})


def test_one_event_goes_alone_unwrapped() -> None:
    assert frames([_text(1)]) == [_text(1)]
    assert frames([]) == []


def test_several_events_go_as_one_batch_in_order() -> None:
    texts = [_text(i) for i in range(5)]
    (message,) = frames(texts)
    assert json.loads(message)["type"] == "batch"
    assert unpack(message) == [json.loads(t) for t in texts]
    batch = parse_outbound(message)
    assert isinstance(batch, BatchEvent)
    assert [e.request_id for e in batch.events] == [f"r{i}" for i in range(5)]


@given(
    sizes=st.lists(st.integers(0, 400), min_size=1, max_size=30),
    limit=st.integers(600, 3_000),
)
def test_batches_stay_under_the_limit_and_keep_every_event_in_order(
    sizes: list[int], limit: int
) -> None:
    texts = [_text(i, pad) for i, pad in enumerate(sizes)]
    messages = frames(texts, limit=limit)
    assert [e for m in messages for e in unpack(m)] == [json.loads(t) for t in texts]
    for m in messages:
        assert len(m.encode("utf-8")) <= limit or len(unpack(m)) == 1
    assert len(messages) <= len(texts)


def test_a_single_event_over_the_limit_still_goes_alone() -> None:
    big = _text(0, pad=2_000)
    assert frames([_text(1), big, _text(2)], limit=1_000) == [_text(1), big, _text(2)]


def test_unpack_reads_a_plain_message_and_refuses_what_is_not_json() -> None:
    assert unpack(_text(3)) == [json.loads(_text(3))]
    assert unpack('{"message": "Internal server error"}') == [{"message": "Internal server error"}]
    with pytest.raises(json.JSONDecodeError):
        unpack("not json")


def test_a_batch_never_nests_and_never_holds_fewer_than_two_events() -> None:
    inner = OUTBOUND_EXAMPLES["batch"]
    with pytest.raises(ValidationError):
        parse_outbound(json.dumps({"type": "batch", "request_id": None, "events": [inner, inner]}))
    with pytest.raises(ValidationError):
        parse_outbound(
            json.dumps({"type": "batch", "request_id": None, "events": [OUTBOUND_EXAMPLES["pong"]]})
        )


def test_the_outbox_posts_once_per_connection_with_the_reply_first_for_the_requester() -> None:
    box = Outbox(reply_to=Request("a", "req-1"))
    box.add(["a", "b"], PongEvent(server_time_ms=1))
    box.add(["b", "c"], PongEvent(server_time_ms=2))
    box.add(["a"], error_event("not_your_turn"))
    posts = box.posts()
    assert [cid for cid, _ in posts] == ["a", "b", "c"]
    by = {cid: unpack(text) for cid, text in posts}
    assert [m["server_time_ms"] for m in by["b"]] == [1, 2]
    assert by["a"][0]["request_id"] == "req-1"  # the reply carries the request id
    assert by["a"][1]["code"] == "not_your_turn"
    assert by["c"] == [json.loads(dump_event(PongEvent(server_time_ms=2)))]
    assert posts[2][1] == dump_event(PongEvent(server_time_ms=2))  # alone: no envelope
