"""The stored tournament document (``shared.adapters.dynamo.codec``): versioned, read back
exactly, and a document of another layout refused rather than misread."""

from __future__ import annotations

import json

import pytest

from shared.adapters.dynamo.codec import (
    STATE_SCHEMA,
    StateSchemaError,
    tournament_from_json,
    tournament_to_json,
)
from tests.unit.domain.helpers import begin_round, play, start, wrong_word


def _played():
    t, dealer, _ = start(8, seed=3)
    t, _, now = begin_round(t, dealer)
    duel = t.duels[0]
    assert duel.next_player is not None
    t, _ = play(t, dealer, duel.next_player, wrong_word(duel), now + 1_000)
    return t


def test_the_document_carries_its_schema_and_reads_back_the_same_tournament() -> None:
    t = _played()
    raw = tournament_to_json(t)
    assert json.loads(raw)["schema"] == STATE_SCHEMA == 1
    assert tournament_from_json(raw) == t


def test_a_document_written_before_the_schema_key_reads_as_schema_1() -> None:
    t = _played()
    doc = json.loads(tournament_to_json(t))
    del doc["schema"]
    assert tournament_from_json(json.dumps(doc)) == t


@pytest.mark.parametrize("other", [0, 2, "1", None])
def test_a_document_of_another_schema_is_refused(other: object) -> None:
    doc = json.loads(tournament_to_json(_played()))
    doc["schema"] = other
    with pytest.raises(StateSchemaError, match="schema"):
        tournament_from_json(json.dumps(doc))
