"""The tournament export format's JSON Schema (``shared/protocol/tournament-record.schema.json``):
generated from the ``TournamentRecord`` model like its AsyncAPI component, committed up to
date, and what it accepts is what the ``replay`` reply carries."""

from __future__ import annotations

import copy
import json

from jsonschema import Draft202012Validator

from shared.protocol.asyncapi import RECORD_SCHEMA_PATH, build_asyncapi, render_record_schema
from shared.protocol.examples import OUTBOUND_EXAMPLES

RECORD = OUTBOUND_EXAMPLES["replay"]["record"]


def _validator() -> Draft202012Validator:
    schema = json.loads(RECORD_SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_the_committed_schema_is_what_the_model_generates():
    assert RECORD_SCHEMA_PATH.read_text(encoding="utf-8") == render_record_schema(), (
        "run: python -m shared.protocol.asyncapi"
    )


def test_the_replay_example_is_a_valid_record_and_a_changed_one_is_not():
    validator = _validator()
    assert list(validator.iter_errors(RECORD)) == []
    extra = {**copy.deepcopy(RECORD), "comment": "x"}
    assert list(validator.iter_errors(extra))
    wrong_format = {**copy.deepcopy(RECORD), "format": "other"}
    assert list(validator.iter_errors(wrong_format))
    bad_mark = copy.deepcopy(RECORD)
    bad_mark["rounds"][0]["duels"][0]["rows"][0]["marks"][0] = "purple"
    assert list(validator.iter_errors(bad_mark))


def test_the_file_and_the_asyncapi_component_describe_the_same_fields():
    component = build_asyncapi()["components"]["schemas"]
    schema = json.loads(RECORD_SCHEMA_PATH.read_text(encoding="utf-8"))
    for name in ("TournamentRecord", "RecordPlayer", "RecordRound", "RecordDuel", "RecordRow"):
        mine = schema if name == "TournamentRecord" else schema["$defs"][name]
        assert set(mine["properties"]) == set(component[name]["properties"]), name
        assert set(mine["required"]) == set(component[name]["required"]), name
