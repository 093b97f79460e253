"""Unit tests: the generated AsyncAPI 3.0 document (shared/protocol/asyncapi.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared.protocol.asyncapi import ASYNCAPI_PATH, REGENERATE_COMMAND, build_asyncapi, main, render
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


def test_check_mode_reports_a_stale_file(tmp_path: Path) -> None:
    target = tmp_path / "asyncapi.json"
    assert main(["--output", str(target), "--check"]) == 1
    assert main(["--output", str(target)]) == 0
    assert main(["--output", str(target), "--check"]) == 0


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
