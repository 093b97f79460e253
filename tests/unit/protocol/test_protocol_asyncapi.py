"""Unit tests: the generated AsyncAPI 3.0 document and client guide (shared/protocol/asyncapi.py,
asyncapi.json, README.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared.protocol import asyncapi, limits
from shared.protocol.asyncapi import (
    ASYNCAPI_PATH,
    README_PATH,
    REGENERATE_COMMAND,
    build_asyncapi,
    client_guide,
    error_table,
    main,
    render,
    render_readme,
)
from shared.protocol.errors import RECOVERY, ErrorCode, Recovery, describe
from shared.protocol.inbound import ACTIONS, MODEL_BY_ACTION
from shared.protocol.outbound import EVENT_BY_TYPE, TYPES


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return build_asyncapi()


def _resolve(doc: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = doc
    for part in ref[2:].split("/"):
        assert part in node, f"dangling $ref {ref}"
        node = node[part]
    return node


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for value in node.values() for r in _refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in _refs(value)]
    return []


def test_committed_asyncapi_is_up_to_date() -> None:
    committed = ASYNCAPI_PATH.read_text(encoding="utf-8") if ASYNCAPI_PATH.exists() else ""
    assert committed == render(), (
        f"{ASYNCAPI_PATH.name} is out of date with the protocol models; "
        f"regenerate it with: {REGENERATE_COMMAND}"
    )


def test_committed_client_guide_is_up_to_date() -> None:
    committed = README_PATH.read_text(encoding="utf-8") if README_PATH.exists() else ""
    assert committed == render_readme(), (
        f"{README_PATH.name} is out of date with the protocol code; "
        f"regenerate it with: {REGENERATE_COMMAND}"
    )


def test_check_mode_reports_a_stale_file(tmp_path: Path) -> None:
    files = ["--output", str(tmp_path / "asyncapi.json"), "--readme", str(tmp_path / "README.md")]
    assert main([*files, "--check"]) == 1
    assert main(files) == 0
    assert main([*files, "--check"]) == 0
    (tmp_path / "README.md").write_text("edited by hand\n", encoding="utf-8")
    assert main([*files, "--check"]) == 1


def test_readme_carries_the_documents_description_verbatim(doc: dict[str, Any]) -> None:
    assert doc["info"]["description"] == client_guide()
    assert doc["info"]["description"] in render_readme(doc)


def test_the_guide_takes_its_numbers_from_the_limits_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    guide = client_guide()
    for needle in (
        f"every {limits.PING_INTERVAL_SECONDS} s",
        f"for {limits.HEARTBEAT_TIMEOUT_SECONDS} s",
        f"has {limits.RECONNECT_SECONDS} s to resume",
        f"{limits.MAX_FRAME_BYTES // 1024} KB",
        f"{limits.MAX_MESSAGE_BYTES // 1024} KB",
        f"after {limits.IDLE_TIMEOUT_SECONDS // 60} minutes",
        f"at {limits.MAX_CONNECTION_SECONDS // 3600} hours",
        f"{limits.RATE_LIMIT_PER_SECOND:g} messages per second",
        f"bursts of up to {limits.RATE_LIMIT_BURST}",
    ):
        assert needle in guide, needle
    # Change a constant: the guide follows (nothing repeats the number by hand).
    monkeypatch.setattr(asyncapi, "PING_INTERVAL_SECONDS", 17)
    monkeypatch.setattr(asyncapi, "IDLE_TIMEOUT_SECONDS", 15 * 60)
    changed = client_guide()
    assert "every 17 s" in changed
    assert "after 15 minutes" in changed


def test_the_guide_states_resume_deadlines_and_turn_over() -> None:
    guide = client_guide()
    for needle in (
        "`session` with the token",
        "`snapshot`",
        "`session_replaced`",
        "absolute UTC time in milliseconds",
        "at or after the deadline gets an `error` `turn_over`",
        "status 1009",
        "`rate_limited`",
    ):
        assert needle in guide, needle


def test_error_table_lists_every_code_in_order_with_its_description() -> None:
    rows = error_table().splitlines()[2:]
    assert len(rows) == len(ErrorCode)
    for row, code in zip(rows, ErrorCode, strict=True):
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        assert cells[0].split()[0] == f"`{code.value}`"
        assert cells[1], f"no 'sent when' text for {code.value}"
        assert cells[2] == f"`{RECOVERY[code].value}`"
        assert cells[3] == describe(code).replace("|", "\\|")


def test_every_error_code_says_when_it_is_sent() -> None:
    # A new code cannot ship undocumented: the guide's table needs a when-text for it.
    assert set(asyncapi._ERROR_WHEN) == set(ErrorCode)


def test_operations_carry_the_client_notes(doc: dict[str, Any]) -> None:
    operations = doc["operations"]
    assert "`snapshot`" in operations["receiveSession"]["description"]
    assert f"{limits.PING_INTERVAL_SECONDS} s" in operations["receivePing"]["description"]
    assert "`turn_over`" in operations["receiveGuess"]["description"]
    assert "reconnect" in operations["sendPlayerStatus"]["description"]
    for code in ErrorCode:
        assert f"`{code.value}`" in operations["sendError"]["description"]


def test_document_is_asyncapi_3(doc: dict[str, Any]) -> None:
    assert doc["asyncapi"] == "3.0.0"
    assert doc["info"]["title"]
    assert doc["info"]["version"]
    assert set(doc) <= {
        "asyncapi",
        "id",
        "info",
        "servers",
        "defaultContentType",
        "channels",
        "operations",
        "components",
    }
    for server in doc["servers"].values():
        assert {"host", "protocol"} <= set(server)


def test_every_action_and_type_has_a_message_and_an_operation(doc: dict[str, Any]) -> None:
    messages = doc["components"]["messages"]
    names = {(m["name"], m["payload"]["$ref"].rsplit("/", 1)[1]) for m in messages.values()}
    for action in ACTIONS:
        assert (action, MODEL_BY_ACTION[action].__name__) in names
    for type_ in TYPES:
        assert (type_, EVENT_BY_TYPE[type_].__name__) in names
    received = {
        _resolve(doc, m["$ref"])["$ref"].rsplit("/", 1)[1]
        for op in doc["operations"].values()
        if op["action"] == "receive"
        for m in op["messages"]
    }
    sent = {
        _resolve(doc, m["$ref"])["$ref"].rsplit("/", 1)[1]
        for op in doc["operations"].values()
        if op["action"] == "send"
        for m in op["messages"]
    }
    assert received == {m.__name__ for m in MODEL_BY_ACTION.values()}
    assert sent == {m.__name__ for m in EVENT_BY_TYPE.values()}


def test_operations_reference_their_channel_and_its_messages(doc: dict[str, Any]) -> None:
    for name, op in doc["operations"].items():
        assert op["action"] in {"send", "receive"}, name
        channel_ref = op["channel"]["$ref"]
        assert channel_ref.startswith("#/channels/")
        channel = _resolve(doc, channel_ref)
        for message in op["messages"] + op.get("reply", {}).get("messages", []):
            # AsyncAPI 3: an operation's messages must be the channel's messages.
            assert message["$ref"].startswith(channel_ref + "/messages/"), name
        assert set(op["messages"][0]) == {"$ref"}
    assert {c["address"] for c in doc["channels"].values()} == {"/"}
    assert channel["messages"]


def test_every_ref_resolves(doc: dict[str, Any]) -> None:
    refs = _refs(doc)
    assert refs
    for ref in refs:
        _resolve(doc, ref)


def test_schemas_carry_field_descriptions(doc: dict[str, Any]) -> None:
    turn = doc["components"]["schemas"]["TurnEvent"]
    assert "absolute UTC ms" in turn["properties"]["deadline_ms"]["description"]
    guess = doc["components"]["schemas"]["GuessAction"]
    assert guess["properties"]["word"]["maxLength"] == 64
    assert guess["additionalProperties"] is False
    # outbound: every key is always sent
    assert set(turn["required"]) == set(turn["properties"])


def test_examples_validate_against_their_payload_schemas(doc: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for message in doc["components"]["messages"].values():
        schema = {**_resolve(doc, message["payload"]["$ref"]), "components": doc["components"]}
        for example in message["examples"]:
            jsonschema.validate(example["payload"], schema)


def test_committed_file_is_valid_json_with_a_trailing_newline() -> None:
    text = ASYNCAPI_PATH.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert json.loads(text)["asyncapi"] == "3.0.0"


def test_every_action_declares_its_reply_with_a_correlation_id(doc: dict[str, Any]) -> None:
    """Issue 37: a generator can produce "send X, await its reply or error" for every action,
    matched on ``request_id`` (also inside a batch)."""
    from shared.protocol.inbound import MODEL_BY_ACTION
    from shared.protocol.replies import REPLIES

    assert set(REPLIES) == set(MODEL_BY_ACTION)
    location = doc["components"]["correlationIds"]["requestId"]["location"]
    assert location == "$message.payload#/request_id"
    for action in MODEL_BY_ACTION:
        op = doc["operations"][f"receive{''.join(w.capitalize() for w in action.split('_'))}"]
        names = {ref["$ref"].rsplit("/", 1)[1] for ref in op["reply"]["messages"]}
        wanted = {EVENT_BY_TYPE[t].__name__ for t in (*REPLIES[action], "error", "batch")}
        assert names == wanted, action
    for name, message in doc["components"]["messages"].items():
        assert message["correlationId"] == {"$ref": "#/components/correlationIds/requestId"}, name


def test_each_error_code_publishes_its_recovery(doc: dict[str, Any]) -> None:
    """Issue 37: retry semantics as data: ``x-retry`` on the ``ErrorCode`` schema, one of the
    recoveries for every code, retry exactly for the codes that carry ``retry_after_ms``."""
    published = doc["components"]["schemas"]["ErrorCode"]["x-retry"]
    assert published == {code.value: RECOVERY[code].value for code in ErrorCode}
    assert set(published.values()) <= {r.value for r in Recovery}
    retry = {code for code, how in published.items() if how == "retry"}
    assert retry == {"rate_limited", "try_again", "paused"}
    assert published["invalid_token"] == "start_over"
    assert published["no_session"] == "resume"
    guide = doc["info"]["description"]
    assert all(f"- `{r.value}`:" in guide for r in Recovery)


def test_the_guide_tells_old_clients_how_to_read_new_messages(doc: dict[str, Any]) -> None:
    guide = doc["info"]["description"]
    for needle in ("Unknown `type`", "Unknown enum value", "Swift", "Kotlin", "CHANGELOG.md"):
        assert needle in guide, needle
    assert doc["info"]["version"] == "1.3"


def test_each_languages_normalisation_in_the_guide_is_what_the_code_does(
    doc: dict[str, Any],
) -> None:
    """Issue 37 drift: word normalisation per language was undocumented."""
    from shared.domain.languages import LANGUAGE_CODES, get_language

    covered = {c.strip() for codes, *_ in asyncapi.NORMALISATION for c in codes.split(",")}
    assert covered == set(LANGUAGE_CODES)
    for codes, _rule, typed, play in asyncapi.NORMALISATION:
        for code in codes.split(","):
            assert get_language(code.strip()).normalise(typed) == play, (code, typed)
    assert asyncapi.normalisation_table() in doc["info"]["description"]
    assert "`length` (in `duel_start` and a board) counts tiles" in doc["info"]["description"]


def test_ping_schema_takes_unknown_fields_like_the_gateway(doc: dict[str, Any]) -> None:
    """Issue 37 drift: the guide says a ping's unknown fields are ignored (API Gateway answers
    it unchecked); the schema said ``additionalProperties: false``. Every other action stays
    strict."""
    schemas = doc["components"]["schemas"]
    assert "additionalProperties" not in schemas["PingAction"]
    assert schemas["JoinAction"]["additionalProperties"] is False


def test_the_batch_schema_refuses_a_nested_batch_and_a_request_id(doc: dict[str, Any]) -> None:
    """Issue 37 drift: what ``BatchEvent.__post_init__`` refuses, the schema refuses too."""
    import jsonschema
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    uri = "urn:doc"
    registry = Registry().with_resource(uri, DRAFT202012.create_resource(doc))
    validator = jsonschema.Draft202012Validator(
        {"$ref": uri + "#/components/schemas/BatchEvent"}, registry=registry
    )
    pong = {"type": "pong", "request_id": None, "seq": None, "server_time_ms": 1}
    good = {"type": "batch", "request_id": None, "seq": None, "events": [pong, pong]}
    assert validator.is_valid(good)
    assert not validator.is_valid({**good, "request_id": "r-1"})
    assert not validator.is_valid({**good, "seq": 1})
    assert not validator.is_valid({**good, "events": [pong, good]})


def test_every_error_message_is_the_guides_unless_detailed() -> None:
    """Issue 37 drift: 27 of 32 codes sent a message other than the guide's table. The guide
    marks the detailed codes; the table holds ``describe`` for every code."""
    from shared.protocol.errors import DETAILED_CODES, PARSE_CODES

    assert PARSE_CODES <= DETAILED_CODES
    for row, code in zip(error_table().splitlines()[2:], ErrorCode, strict=True):
        assert ("(detailed)" in row) == (code in DETAILED_CODES), code
