"""Versioning (issue 37): a client written against protocol 1.0 keeps working.

``recorded_1_0/`` holds the conformance kit and ``asyncapi.json`` as they were at protocol 1.0
(copied before the 1.1 changes, never re-recorded). Two directions:

- everything a 1.0 client sent still validates against today's document and is accepted by
  today's parser (a new field of a client message is always optional);
- everything today's server sends in the committed kit still validates against the 1.0
  document, so a 1.0 client reads it (new fields are extra keys, which the published server
  schemas allow: clients ignore unknown fields).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from shared.protocol.asyncapi import build_asyncapi
from shared.protocol.inbound import parse_inbound
from tests.contract.record import KIT_DIR, SCENARIOS

OLD_DIR = Path(__file__).with_name("recorded_1_0")
URI = "urn:wordle-tournament:asyncapi"
LATER_SCENARIOS = frozenset({"progression"})
"""Scenarios of actions added after 1.0 (``progression``: 1.3), which a 1.0 client never
sends, so it never gets their replies: no 1.0 recording."""
OLD_SCENARIOS = [s for s in SCENARIOS if s not in LATER_SCENARIOS]


def _validators(doc: dict[str, Any]) -> dict[tuple[str, str], Draft202012Validator]:
    registry: Registry[Any] = Registry().with_resource(URI, DRAFT202012.create_resource(doc))
    found = {}
    for message in doc["components"]["messages"].values():
        sender = "client" if message["title"].startswith("action ") else "server"
        schema = {"$ref": URI + message["payload"]["$ref"]}
        found[(sender, message["name"])] = Draft202012Validator(schema, registry=registry)
    return found


def _messages(path: Path, sender: str) -> Iterator[dict[str, Any]]:
    recording = json.loads(path.read_text(encoding="utf-8"))
    for connection in recording["connections"]:
        for entry in connection["transcript"]:
            if entry.get("from") == sender:
                message = entry["message"]
                yield message
                if sender == "server" and message.get("type") == "batch":
                    yield from message["events"]


def test_the_old_recordings_are_all_there() -> None:
    assert {p.stem for p in OLD_DIR.glob("*.json")} == {*OLD_SCENARIOS, "asyncapi"}
    old = json.loads((OLD_DIR / "asyncapi.json").read_text(encoding="utf-8"))
    assert old["info"]["version"] == "1"


@pytest.mark.parametrize("scenario", OLD_SCENARIOS)
def test_what_a_1_0_client_sent_is_still_valid(scenario: str) -> None:
    validators = _validators(build_asyncapi())
    sent = list(_messages(OLD_DIR / f"{scenario}.json", "client"))
    assert sent
    for message in sent:
        errors = [e.message for e in validators[("client", message["action"])].iter_errors(message)]
        assert not errors, (scenario, message, errors)
        parse_inbound(json.dumps(message))  # raises ProtocolError if refused


@pytest.mark.parametrize("scenario", OLD_SCENARIOS)
def test_a_1_0_client_reads_what_the_server_sends_today(scenario: str) -> None:
    old = json.loads((OLD_DIR / "asyncapi.json").read_text(encoding="utf-8"))
    validators = _validators(old)
    received = list(_messages(KIT_DIR / f"{scenario}.json", "server"))
    assert received
    for message in received:
        key = ("server", message["type"])
        errors = [e.message for e in validators[key].iter_errors(message)]
        assert not errors, (scenario, message["type"], errors)
