"""Unit tests: outbound events (shared/protocol/outbound.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from shared.protocol.errors import ErrorCode
from shared.protocol.examples import OUTBOUND_EXAMPLES
from shared.protocol.framing import dump_event
from shared.protocol.outbound import (
    EVENT_BY_TYPE,
    TYPES,
    DuelBoard,
    DuelEndEvent,
    ErrorEvent,
    LanguageInfo,
    LobbyEvent,
    OutboundEvent,
    Pair,
    PlayerView,
    PongEvent,
    Row,
    SessionEvent,
    Standing,
    error_event,
    parse_outbound,
)
from shared.protocol.version import PROTOCOL_VERSION

ANA = PlayerView(id="p-ana", nickname="Ana", rating=1000)


def validate(cls: type, data: dict[str, Any]) -> Any:
    """``data`` validated as ``cls`` by pydantic, as clients and tests read the server."""
    return TypeAdapter(cls).validate_python(data)


def test_types_are_the_design_vocabulary() -> None:
    assert set(TYPES) == {
        "session",
        "player",
        "lobby",
        "round",
        "duel_start",
        "turn",
        "duel_end",
        "standings",
        "eliminated",
        "rating",
        "tournament_end",
        "party",
        "player_status",
        "pong",
        "error",
        "profile",  # issue 38: the replies of the read-only progression actions
        "leaderboard",
        "history",
        "replay",
        "batch",  # the envelope of one change's events for a connection
    }


def test_every_type_has_an_example() -> None:
    assert set(OUTBOUND_EXAMPLES) == set(TYPES)


@pytest.mark.parametrize("type_", TYPES)
def test_every_outbound_model_validates_its_sample(type_: str) -> None:
    sample = OUTBOUND_EXAMPLES[type_]
    event = validate(EVENT_BY_TYPE[type_], sample)
    assert event.type == type_  # type: ignore[attr-defined]


@pytest.mark.parametrize("type_", TYPES)
def test_discriminator_picks_the_model_and_dump_round_trips(type_: str) -> None:
    sample = OUTBOUND_EXAMPLES[type_]
    event = parse_outbound(json.dumps(sample))
    assert type(event) is EVENT_BY_TYPE[type_]
    text = dump_event(event)
    assert json.loads(text) == sample  # every key present, nulls included
    assert parse_outbound(text) == event


def test_dump_event_is_compact_utf8_json_with_nulls() -> None:
    event = SessionEvent(player=PlayerView(id="p", nickname="Жена", rating=1000), resumed=False)
    text = dump_event(event)
    assert " " not in text
    assert "Жена" in text
    assert json.loads(text)["snapshot"] is None
    assert json.loads(text)["protocol"] == PROTOCOL_VERSION


def test_unknown_type_is_refused() -> None:
    with pytest.raises(ValidationError):
        parse_outbound('{"type":"teleport"}')


def test_extra_fields_are_refused() -> None:
    with pytest.raises(ValidationError, match="Unexpected keyword argument"):
        validate(PongEvent, {"type": "pong", "server_time_ms": 1, "colour": "red"})


def test_type_defaults_to_the_literal_so_services_need_not_repeat_it() -> None:
    assert PongEvent(server_time_ms=5).type == "pong"
    assert PongEvent(server_time_ms=5).request_id is None


def test_outbound_union_adapter_is_usable() -> None:
    adapter: TypeAdapter[OutboundEvent] = TypeAdapter(OutboundEvent)
    rating = adapter.validate_python(OUTBOUND_EXAMPLES["rating"])
    assert type(rating) is EVENT_BY_TYPE["rating"]


# --- invariants -------------------------------------------------------------------------------
def test_duel_board_never_carries_the_secret_before_the_duel_is_over() -> None:
    board: dict[str, Any] = {"duel_id": "d", "players": ["a", "b"], "length": 5, "rows": []}
    with pytest.raises(ValueError, match="only once the duel is over"):
        DuelBoard(**board, word="slate")
    with pytest.raises(ValueError, match="only once the duel is over"):
        DuelBoard(**board, result="win", winner="a")
    with pytest.raises(ValidationError, match="only once the duel is over"):
        validate(DuelBoard, {**board, "word": "slate"})
    assert DuelBoard(**board, over=True, result="win", winner="a", word="slate").word == "slate"


def test_row_is_a_guess_or_a_skip() -> None:
    assert Row(player="a", skipped=True).word is None
    Row(player="a", word="abcd", tiles=list("abcd"), marks=["absent"] * 4)
    with pytest.raises(ValueError, match="skipped row"):
        Row(player="a", word="abcd", marks=["absent"] * 4, skipped=True)
    with pytest.raises(ValueError, match="word and marks"):
        Row(player="a")
    with pytest.raises(ValueError, match="differ in length"):
        Row(player="a", word="abcd", tiles=list("abcd"), marks=["absent"] * 3)
    with pytest.raises(ValidationError, match="skipped row"):
        validate(Row, {"player": "a", "word": "abcd", "marks": ["absent"] * 4, "skipped": True})
    with pytest.raises(ValidationError, match="literal_error"):
        validate(Row, {"player": "a", "word": "abcd", "marks": ["grey"] * 4})


def test_duel_end_win_has_a_winner_and_draw_has_none() -> None:
    base: dict[str, Any] = {"tournament_id": "t", "duel_id": "d", "word": "slate"}
    DuelEndEvent(**base, result="draw", reason="turns_used")
    with pytest.raises(ValueError, match="winner"):
        DuelEndEvent(**base, result="draw", winner="a", reason="turns_used")
    with pytest.raises(ValueError, match="winner"):
        DuelEndEvent(**base, result="win", reason="solved")
    with pytest.raises(ValidationError, match="winner"):
        validate(DuelEndEvent, {**base, "result": "win", "reason": "solved"})


def test_ranges_are_enforced_by_the_contract() -> None:
    """Bounds live in each field's metadata: pydantic applies them when a message is read
    (``parse_outbound``, every test's notifier), and they are published in the schema."""
    standing = {"player_id": "a", "nickname": "n", "eliminated": False, "left": False}
    with pytest.raises(ValidationError, match="less than or equal to 3"):
        validate(Standing, {**standing, "lives": 4, "connected": True})
    with pytest.raises(ValidationError, match="at least 2 items"):
        validate(Pair, {"duel_id": "d", "players": ["a"]})
    with pytest.raises(ValidationError, match="less than or equal to 6"):
        validate(DuelBoard, {"duel_id": "d", "players": ["a", "b"], "length": 7, "rows": []})
    assert validate(Standing, {**standing, "lives": 3, "connected": True}).lives == 3


def test_nested_events_are_checked_too() -> None:
    turn = OUTBOUND_EXAMPLES["turn"]
    bad_row = {**turn, "row": {**turn["row"], "marks": ["grey"] * len(turn["row"]["marks"])}}
    with pytest.raises(ValidationError, match=r"batch\.events\.1\.turn\.row\.marks"):
        parse_outbound(json.dumps({"type": "batch", "events": [turn, bad_row]}))
    batch = {"type": "batch", "request_id": None, "events": [turn, turn]}
    with pytest.raises(ValidationError, match="never holds a batch"):
        parse_outbound(json.dumps({**batch, "events": [turn, batch]}))


def test_lobby_seats_default_to_eight() -> None:
    english = LanguageInfo(
        code="en",
        name="English",
        native_name="English",
        alphabet=[],
        keyboard=[],
        direction="ltr",
        multi_letter_tiles=[],
    )
    lobby = LobbyEvent(
        lobby_id="l",
        language="en",
        players=[ANA],
        status="waiting",
        alphabet=[],
        keyboard=[],
        language_info=english,
    )
    assert lobby.seats == 8


# --- errors -----------------------------------------------------------------------------------
def test_error_event_defaults_its_message_and_echoes_request_id() -> None:
    event = error_event("not_your_turn", request_id="r-1")
    assert event == ErrorEvent(
        code=ErrorCode.NOT_YOUR_TURN, message="It is your opponent's turn.", request_id="r-1"
    )
    assert json.loads(dump_event(event)) == {
        "type": "error",
        "request_id": "r-1",
        "seq": None,
        "code": "not_your_turn",
        "message": "It is your opponent's turn.",
        "retry_after_ms": None,
    }


def test_error_event_refuses_codes_outside_the_enum() -> None:
    with pytest.raises(ValueError, match="not_a_code"):
        error_event("not_a_code")
    with pytest.raises(ValidationError):
        validate(ErrorEvent, {"type": "error", "code": "not_a_code", "message": "m"})


def test_only_retry_codes_carry_retry_after_ms() -> None:
    """Issue 37: ``rate_limited``, ``try_again`` and ``paused`` say when to send again (ms);
    no other code does, even when a caller passes a value."""
    from shared.protocol.errors import RETRY_AFTER_CODES
    from shared.protocol.limits import PAUSED_RETRY_AFTER_MS, TRY_AGAIN_AFTER_MS

    assert error_event("try_again").retry_after_ms == TRY_AGAIN_AFTER_MS
    assert error_event("paused").retry_after_ms == PAUSED_RETRY_AFTER_MS
    assert error_event("rate_limited", retry_after_ms=180).retry_after_ms == 180
    assert error_event("not_your_turn", retry_after_ms=180).retry_after_ms is None
    assert {c.value for c in RETRY_AFTER_CODES} == {"rate_limited", "try_again", "paused"}
