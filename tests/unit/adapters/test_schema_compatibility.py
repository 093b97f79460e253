"""Adapters: the rollback rule for the stored tournament document (RULINGS.md, "Persistence",
"Rollback: the previous release reads what this one writes") — a release adds only keys a
reader ignores within one ``STATE_SCHEMA``, so the release before it (rolled back to) reads
every item the new one wrote; a new layout is first only read, and written one release later.
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from typing import Any

from shared.adapters.dynamo import tournament_document
from shared.adapters.dynamo.tournament_document import (
    STATE_SCHEMA,
    tournament_from_item,
    tournament_from_state,
    tournament_to_item,
    tournament_to_state,
)
from shared.domain.duel import Mark, Row
from shared.domain.tournament import Tournament
from shared.services.model import TournamentRecord
from tests.unit.domain.helpers import begin_round, start

ADDED_IN_SCHEMA_2 = ("byes", "paused", "seq")
"""The optional keys added to schema 2 after it first shipped, oldest first."""


def _paused_record() -> TournamentRecord:
    t, dealer, _ = start(8, seed=5)
    t, _, now = begin_round(t, dealer)
    t = t.pause(now + 3_000)
    ids = [p.player_id for p in t.players]
    return TournamentRecord(t, {pid: f"c-{pid}" for pid in ids}, {}, version=3)


def _previous_release_reads(blob: bytes, unknown: tuple[str, ...]) -> Tournament:
    """What a reader from before ``unknown`` keys existed makes of ``blob``: this reader,
    given the document as that release sees it (a reader reads the keys it knows and no
    others: ``_tournament_from_compact`` looks keys up by name)."""
    doc: dict[str, Any] = json.loads(zlib.decompress(blob))
    assert doc["schema"] == STATE_SCHEMA  # the same layout version: nothing refuses it
    seen = {k: v for k, v in doc.items() if k not in unknown}
    t, _, _ = tournament_from_state(zlib.compress(json.dumps(seen).encode()))
    return t


def test_the_release_before_the_pause_reads_a_paused_tournament_as_running() -> None:
    rec = _paused_record()
    blob = tournament_to_state(rec)
    assert json.loads(zlib.decompress(blob))["paused"] == rec.tournament.paused_ms
    old = _previous_release_reads(blob, unknown=("paused",))
    assert old == dataclasses.replace(rec.tournament, paused_ms=None)


def test_the_release_before_sequence_numbers_reads_the_tournament_unchanged() -> None:
    """The players' last event ``seq`` rides in the document as ``"seq"``; a reader from before
    it reads the same tournament (its next write drops the counters: numbering restarts)."""
    rec = _paused_record()
    rec.seqs = {pid: n for n, pid in enumerate(rec.connections, start=3)}
    blob = tournament_to_state(rec)
    assert json.loads(zlib.decompress(blob))["seq"] == rec.seqs
    assert _previous_release_reads(blob, unknown=("seq",)) == rec.tournament
    item = tournament_to_item(rec, now_ms=0)
    assert tournament_from_item(item).seqs == rec.seqs
    rec.seqs = {}
    assert "seq" not in json.loads(zlib.decompress(tournament_to_state(rec)))


def test_this_release_reads_what_a_later_release_adds_to_the_same_schema() -> None:
    rec = _paused_record()
    doc = json.loads(zlib.decompress(tournament_to_state(rec)))
    doc["a_later_key"] = {"anything": [1, 2]}
    later = zlib.compress(json.dumps(doc).encode())
    t, connections, _ = tournament_from_state(later)
    assert t == rec.tournament
    assert connections == rec.connections


def test_each_added_key_is_optional_for_the_reader() -> None:
    """Every key added to schema 2 after it shipped can be missing (a document written
    before it), so adding one never needed a new ``STATE_SCHEMA``."""
    blob = tournament_to_state(_paused_record())
    for i in range(len(ADDED_IN_SCHEMA_2)):
        unknown = ADDED_IN_SCHEMA_2[i:]
        t = _previous_release_reads(blob, unknown=unknown)
        assert (t.paused_ms is None) == ("paused" in unknown)
    assert tournament_document.STATE_SCHEMA == 2


def _previous_release_row_tiles(raw: list[Any]) -> tuple[str, ...]:
    """How the release before ruling 18's request ids read a played row's tiles from its
    compact form (``_duel_from_compact`` then): a fifth element is the tiles, else the word."""
    return tuple(raw[4]) if len(raw) > 4 else tuple(raw[2])


def test_the_release_before_request_ids_reads_a_row_that_keeps_one() -> None:
    """A guess's ``request_id`` rides in its row (ruling 18) as a sixth element; the row
    still carries its tiles fifth, so the previous release reads the same tiles and ignores
    the id, whether or not the tiles are the word's letters."""
    t, _, now = begin_round(*start(8, seed=5)[:2])
    duel = t.duels[0]
    played = dataclasses.replace(
        duel,
        rows=(
            Row(
                duel.players[0],
                word="crane",
                tiles=tuple("crane"),
                marks=(Mark.ABSENT,) * 5,
                at_ms=now + 1_000,
                request_id="r-1",
            ),
        ),
    )
    compact = tournament_document._compact_duel(played, now)
    (raw,) = compact[8]
    assert raw[5] == "r-1"
    assert _previous_release_row_tiles(raw) == tuple("crane")
    back = tournament_document._duel_from_compact(compact, now)
    assert back.rows[0].request_id == "r-1"
    assert back.rows[0].tiles == tuple("crane")
