"""Unit tests: the conformance kit (shared/protocol/conformance/, recorded by
tests/contract/record.py) — every recorded message conforms to the AsyncAPI document, the
committed recordings are what the server says today, and each scenario shows what it is for."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from shared.protocol.asyncapi import build_asyncapi
from shared.protocol.inbound import ACTIONS
from shared.protocol.outbound import TYPES
from tests.contract.record import KIT_DIR, RECORD_COMMAND, SCENARIOS, check, record_all

DOCUMENT_URI = "urn:wordle-tournament:asyncapi"
"""Where the validators find the document: every ``$ref`` resolves inside it."""


@pytest.fixture(scope="module")
def recorded() -> dict[str, str]:
    """A fresh recording of the whole kit (file name -> text): a few seconds."""
    return record_all()


@pytest.fixture(scope="module")
def scenarios(recorded: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {name: json.loads(recorded[f"{name}.json"]) for name in SCENARIOS}


def _entries(recording: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for connection in recording["connections"]:
        for entry in connection["transcript"]:
            yield connection["connection"], entry


def _wire(recording: dict[str, Any], sender: str) -> list[dict[str, Any]]:
    """The messages as they crossed the connection (a ``batch`` is one)."""
    return [e["message"] for _, e in _entries(recording) if e.get("from") == sender]


def _messages(recording: dict[str, Any], sender: str) -> list[dict[str, Any]]:
    """The messages as a client handles them: each ``batch`` unpacked into its events."""
    return [
        event
        for m in _wire(recording, sender)
        for event in (m["events"] if m.get("type") == "batch" else [m])
    ]


def _validators() -> dict[tuple[str, str], Draft202012Validator]:
    """(``client`` / ``server``, action or type) -> a Draft 2020-12 validator of that
    message's payload schema, read from the document's operations: the server *receives*
    what clients send and *sends* what they receive."""
    doc = build_asyncapi()
    registry: Registry[Any] = Registry().with_resource(
        DOCUMENT_URI, DRAFT202012.create_resource(doc)
    )
    found: dict[tuple[str, str], Draft202012Validator] = {}
    for operation in doc["operations"].values():
        sender = "client" if operation["action"] == "receive" else "server"
        for ref in operation["messages"]:
            channel_message = _resolve(doc, ref["$ref"])
            message = _resolve(doc, channel_message["$ref"])
            schema = {"$ref": DOCUMENT_URI + message["payload"]["$ref"]}
            found[(sender, message["name"])] = Draft202012Validator(schema, registry=registry)
    return found


def _resolve(doc: dict[str, Any], ref: str) -> Any:
    node: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def test_the_committed_kit_is_up_to_date(recorded: dict[str, str]) -> None:
    stale = check(KIT_DIR, recorded)
    assert not stale, (
        f"the conformance kit differs from what the server says now ({', '.join(stale)}); "
        f"re-record it with: {RECORD_COMMAND}"
    )


def test_recording_is_deterministic(recorded: dict[str, str]) -> None:
    from tests.contract.record import record_scenario

    assert record_scenario("resume") == recorded["resume.json"]


def test_every_recorded_message_validates_against_the_asyncapi_document(
    scenarios: dict[str, dict[str, Any]],
) -> None:
    validators = _validators()
    checked = 0
    for name, recording in scenarios.items():
        for connection, entry in _entries(recording):
            if "message" not in entry:
                continue
            message = entry["message"]
            sender = entry["from"]
            key = (sender, message["action"] if sender == "client" else message["type"])
            assert key in validators, f"{name} {connection} #{entry['seq']}: no schema for {key}"
            errors = [e.message for e in validators[key].iter_errors(message)]
            assert not errors, f"{name} {connection} #{entry['seq']} ({key}): {errors}"
            checked += 1
            # and each event of a batch against its own type's schema, as a client handles it
            for event in message.get("events", []) if key == ("server", "batch") else []:
                errors = [
                    e.message for e in validators[("server", event["type"])].iter_errors(event)
                ]
                assert not errors, (
                    f"{name} {connection} #{entry['seq']} ({event['type']}): {errors}"
                )
                checked += 1
    assert checked > 1000


def test_the_kit_shows_every_action_and_every_event_type(
    scenarios: dict[str, dict[str, Any]],
) -> None:
    sent = {m["action"] for r in scenarios.values() for m in _messages(r, "client")}
    received = {m["type"] for r in scenarios.values() for m in _messages(r, "server")}
    batched = {m["type"] for r in scenarios.values() for m in _wire(r, "server")} - received
    assert sent == set(ACTIONS)
    assert received | batched == set(TYPES)
    assert batched == {"batch"}  # a batch never nests: only its events are handled


def test_each_transcript_is_one_connection_in_order(scenarios: dict[str, dict[str, Any]]) -> None:
    for name, recording in scenarios.items():
        seqs = [e["seq"] for _, e in _entries(recording)]
        assert sorted(seqs) == list(range(1, len(seqs) + 1)), name
        for connection in recording["connections"]:
            entries = connection["transcript"]
            assert entries[0]["event"] == "open", (name, connection["connection"])
            assert [e["seq"] for e in entries] == sorted(e["seq"] for e in entries)
            assert [e["at_ms"] for e in entries] == sorted(e["at_ms"] for e in entries)


def _types(recording: dict[str, Any]) -> set[str]:
    return {m["type"] for m in _messages(recording, "server")}


def test_join_fills_a_lobby_and_starts_the_duels(scenarios: dict[str, dict[str, Any]]) -> None:
    join = scenarios["join"]
    assert len(join["connections"]) == 8
    assert {"session", "pong", "lobby", "round", "duel_start"} <= _types(join)
    for connection in join["connections"]:
        statuses = [
            m["status"]
            for m in _messages({"connections": [connection]}, "server")
            if m["type"] == "lobby"
        ]
        assert statuses[-1] == "started"
    echoed = [m for m in _messages(join, "server") if m["request_id"] is not None]
    assert {m["request_id"] for m in echoed} == {"s-1", "ping-1", "j-1"}


def test_play_is_a_whole_tournament(scenarios: dict[str, dict[str, Any]]) -> None:
    play = scenarios["play"]
    assert {"turn", "duel_end", "standings", "eliminated", "rating", "tournament_end"} <= _types(
        play
    )
    for connection in play["connections"]:
        last = _messages({"connections": [connection]}, "server")[-1]
        assert last["type"] == "tournament_end", connection["connection"]


def test_skip_shows_a_late_guess_and_a_skipped_turn(scenarios: dict[str, dict[str, Any]]) -> None:
    skip = scenarios["skip"]
    errors = [m["code"] for m in _messages(skip, "server") if m["type"] == "error"]
    assert errors == ["turn_over"]
    rows = [m["row"] for m in _messages(skip, "server") if m["type"] == "turn"]
    assert any(row["skipped"] for row in rows)
    assert any(not row["skipped"] for row in rows)


def test_leave_eliminates_and_ends_the_duel(scenarios: dict[str, dict[str, Any]]) -> None:
    server = _messages(scenarios["leave"], "server")
    assert any(m["type"] == "eliminated" and m["reason"] == "left" for m in server)
    assert any(m["type"] == "duel_end" and m["reason"] == "left" for m in server)
    assert any(m["type"] == "rating" for m in server)


def test_resume_redraws_from_the_snapshot_and_replaces_older_connections(
    scenarios: dict[str, dict[str, Any]],
) -> None:
    resume = scenarios["resume"]
    server = _messages(resume, "server")
    statuses = [m for m in server if m["type"] == "player_status"]
    assert any(m["status"] == "disconnected" and m["reconnect_deadline_ms"] for m in statuses)
    assert any(m["status"] == "connected" for m in statuses)
    resumed = [m for m in server if m["type"] == "session" and m["resumed"]]
    assert len(resumed) == 3  # two resumes, then the reply to sign_out_everywhere
    assert all(m["snapshot"] is not None for m in resumed)
    assert resumed[0]["snapshot"]["duel"] is not None
    # tokens rotate (ruling 11): every reply carries a new one, and the client sends the newest
    tokens = [m["token"] for m in resumed]
    assert None not in tokens
    assert len(set(tokens)) == 3
    sent = [m.get("token") for m in _messages(resume, "client") if m["action"] == "session"]
    assert sent[-1] == tokens[0]
    assert resumed[-1]["request_id"] == "out"
    replaced = [
        c
        for c in resume["connections"]
        if any(
            m.get("code") == "session_replaced" for m in _messages({"connections": [c]}, "server")
        )
    ]
    assert len(replaced) == 1
    last = replaced[0]["transcript"][-1]
    assert (last.get("event"), last.get("by")) == ("close", "server")
    players = [c["player"] for c in resume["connections"]]
    assert len(players) == len(set(players)) + 2  # one player, three connections


def test_party_creates_joins_and_starts(scenarios: dict[str, dict[str, Any]]) -> None:
    party = scenarios["party"]
    sent = [m["action"] for m in _messages(party, "client")]
    assert {"party_create", "party_join", "party_start"} <= set(sent)
    statuses = {m["status"] for m in _messages(party, "server") if m["type"] == "party"}
    assert {"open", "queued"} <= statuses
    assert any(m["type"] == "lobby" and m["party_id"] for m in _messages(party, "server"))


def test_refusals_answer_the_requester_with_stable_codes(
    scenarios: dict[str, dict[str, Any]],
) -> None:
    errors = [m for m in _messages(scenarios["refusals"], "server") if m["type"] == "error"]
    assert [(m["request_id"], m["code"]) for m in errors] == [
        ("e-1", "no_session"),
        ("e-2", "invalid_token"),
        ("e-3", "unknown_language"),
        ("e-4", "not_your_turn"),
        ("e-5", "wrong_length"),
        ("e-6", "not_in_word_list"),
    ]


def test_at_the_start_each_duelist_gets_only_their_own_duel_start(
    scenarios: dict[str, dict[str, Any]],
) -> None:
    """Issue 37 drift: the kit's README once said every player gets every duel's
    ``duel_start``; duelists get their own, spectators (ruling 7) all of the round's."""
    for connection in scenarios["join"]["connections"]:
        starts = [
            m
            for m in _messages({"connections": [connection]}, "server")
            if m["type"] == "duel_start"
        ]
        assert len(starts) == 1, connection["connection"]
        assert starts[0]["opponent"] is not None
    readme = (KIT_DIR / "README.md").read_text(encoding="utf-8")
    assert "for their own duel only" in readme
