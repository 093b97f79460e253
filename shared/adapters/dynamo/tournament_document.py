"""Adapters layer: the tournament item, its aggregate stored as one versioned document.

``tournament_to_item`` writes a schema-``STATE_SCHEMA`` document (zlib-compressed positional
JSON, Binary); ``tournament_from_item`` reads it and schema 1 (plain JSON, String) and raises
``StateSchemaError`` for any other layout. Times are epoch ms; the document holds the secrets."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from typing import Any

from shared.adapters.dynamo import schema
from shared.domain.duel import Duel, DuelResult, EndReason, Row
from shared.domain.scoring import Mark
from shared.domain.tournament import ClosedRound, Phase, PlayerState, Tournament
from shared.services.model import TournamentRecord

STATE_SCHEMA = 2
"""The version of the stored tournament document's layout (its ``"schema"`` key). Bump it with
every change a reader of the previous layout would misread, and teach ``tournament_from_state``
to migrate the old one (or refuse it).

- 1: the aggregate as plain JSON in a String attribute, named fields, every row carrying its
  player id, tiles and absolute time; connections and party ids as separate Map attributes.
- 2: the same facts, positional and without redundant fields (a row's player as its index in the
  duel, its time relative to the one before, its tiles only when they are not the word's letters),
  with the connections and party ids inside, as zlib-compressed JSON in a Binary attribute: the
  worst item (8 players, 4 duels of 12 rows, production id lengths) stays under 2 KB, so a write
  costs at most 2 WRU and a consistent read 1 RRU (the cost goal per tournament;
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
  Schema-1 items are still read (a tournament running across the deployment); the next write
  stores them as schema 2.

  Later, still schema 2: an optional ``"byes"`` key, each player's bye count in the order of
  ``"players"`` (ruling 4 gives the bye to the fewest). A key a reader does not know is ignored,
  so this needs no new version: a reader from before it reads the rest unchanged (and its next
  write drops the counts), and a document without it (schema 1, or schema 2 written before it)
  reads with the counts ``_derived_byes`` gives.

  Later again, still schema 2: an optional ``"paused"`` key (``Tournament.paused_ms``, the kill
  switch), written only while a tournament is paused. A reader from before it plays the
  tournament on as if it were not paused (the rollback rule: RULINGS.md, "Persistence").

  Later again, still schema 2: an optional ``"seq"`` key, each player's last event sequence
  number (``TournamentRecord.seqs``, player id to int), written once any event was numbered.
  A reader from before it ignores it (and its next write drops it: numbering then restarts
  at 1, which a client sees as a gap and resyncs from; RULINGS.md, "Event sequence numbers").

  Later again, still schema 2: an optional ``"closed"`` key, ``[round_no, bye, [duels]]``
  (``Tournament.closed``, the duels as in ``"duels"``), written from the round-closing write
  until the next round's duels start, for the history function (RULINGS.md, "Progression:
  history"). A reader from before it ignores it (and its next write drops it: that round's
  record is then written from the round-closing write's stream record all the same).
"""

COMPRESSION_LEVEL = 6
"""zlib's level for the state document: level 9 saves under 1% more on these documents for about
twice the CPU (measured by ``python -m infra.benchmarks --only items``)."""


HISTORY_ATTRIBUTE = "hist"
"""The tournament item's top-level Number, present only in writes that carry a closed round
(its number) or a finished tournament (its last round's number): the stream's event filter
selects those records by it without decoding the document (RULINGS.md, "Progression:
history")."""


class StateSchemaError(ValueError):
    """A stored tournament document of a layout this code cannot read (a newer deployment
    wrote it, or it is corrupt)."""


def _derived_byes(d: dict[str, Any]) -> dict[str, int]:
    """Bye counts for a document stored without them: the current and previous round's bye
    holders have had at least that one, the rest are taken as none. Older byes are not in the
    document, so this is a lower bound; the rule still never repeats the previous bye, and the
    counts are exact again for every bye drawn after the read."""
    return {pid: 1 for pid in (d["bye"], d["prev_bye"]) if pid is not None}


def _history(d: dict[str, Any]) -> dict[str, Any]:
    """The fields both schemas store under the same keys: the bye, the previous round's pairs
    and bye, the used secrets, start and end times (``Tournament`` keyword arguments)."""
    return {
        "bye": d["bye"],
        "previous_pairs": frozenset(frozenset(p) for p in d["prev_pairs"]),
        "previous_bye": d["prev_bye"],
        "used_words": frozenset(d["used"]),
        "started_ms": d["started"],
        "ended_ms": d["ended"],
    }


# ---------------------------------------------------------------------------- schema 1 (read)
_MARK = {"c": Mark.CORRECT, "p": Mark.PRESENT, "a": Mark.ABSENT}


def _row_from(d: dict[str, Any]) -> Row:
    if "w" not in d:
        return Row(player=d["p"], at_ms=d["at"])
    return Row(
        player=d["p"],
        word=d["w"],
        tiles=tuple(d["t"]),
        marks=tuple(_MARK[c] for c in d["m"]),
        at_ms=d["at"],
    )


def _duel_from(d: dict[str, Any]) -> Duel:
    return Duel(
        duel_id=d["id"],
        players=(d["players"][0], d["players"][1]),
        first=d["first"],
        word=d["word"],
        answer=tuple(d["answer"]),
        starts_ms=d["starts"],
        turn_deadline_ms=d["deadline"],
        rows=tuple(_row_from(r) for r in d["rows"]),
        result=DuelResult(d["result"]) if d["result"] else None,
        winner=d["winner"],
        reason=EndReason(d["reason"]) if d["reason"] else None,
        ended_ms=d["ended"],
    )


def tournament_from_json(raw: str) -> Tournament:
    """The aggregate from a schema-1 document. A document without ``"schema"`` was written
    before the layout was versioned, in the same layout as schema 1: it is read as such.
    Raises StateSchemaError for any other schema (nothing is guessed)."""
    d = json.loads(raw)
    schema_version = d.get("schema", 1)
    if schema_version != 1:
        raise StateSchemaError(f"tournament document schema {schema_version!r}; expected 1")
    byes = _derived_byes(d)
    return Tournament(
        tournament_id=d["id"],
        language=d["language"],
        players=tuple(
            PlayerState(
                player_id=p["id"],
                nickname=p["nick"],
                rating=p["rating"],
                lives=p["lives"],
                byes=byes.get(p["id"], 0),
                out_round=p["out"],
                left=p["left"],
                timed_out=bool(p.get("timeout", False)),
                place=p["place"],
                rating_change=p["change"],
                connected=p["conn"],
                reconnect_deadline_ms=p["rdl"],
            )
            for p in d["players"]
        ),
        round_no=d["round"],
        phase=Phase(d["phase"]),
        intro_deadline_ms=d["intro"],
        duels=tuple(_duel_from(x) for x in d["duels"]),
        **_history(d),
    )


# ---------------------------------------------------------------------------- schema 2
_REASONS = {r.value: r for r in EndReason}
_RESULTS = {r.value: r for r in DuelResult}


_MARK_DIGIT = {Mark.ABSENT: 0, Mark.PRESENT: 1, Mark.CORRECT: 2}
_DIGIT_MARK = (Mark.ABSENT, Mark.PRESENT, Mark.CORRECT)


def _marks_number(marks: Sequence[Mark]) -> int:
    """A row's marks as a base-3 number, the first tile the most significant digit (absent 0,
    present 1, correct 2): at most 3^6 - 1 = 728 for 6 tiles."""
    n = 0
    for m in marks:
        n = n * 3 + _MARK_DIGIT[m]
    return n


def _marks_from_number(n: int, length: int) -> tuple[Mark, ...]:
    """The inverse of ``_marks_number`` for ``length`` tiles."""
    digits = []
    for _ in range(length):
        n, d = divmod(n, 3)
        digits.append(_DIGIT_MARK[d])
    return tuple(reversed(digits))


def _compact_duel(x: Duel, first_ms: int) -> list[Any]:
    """``[id, a, b, first (0/1), word, answer | "", starts - first_ms, deadline, rows, result,
    winner (0/1/None), reason, ended]``; a row ``[i, dt]`` (skip) or ``[i, dt, word, marks]``
    (+ ``tiles`` when they are not the word's letters or a ``request_id`` follows; + the
    guess's ``request_id``, ruling 18), ``i`` the player's index, ``dt`` ms
    after the previous row (the first: after ``starts``), ``marks`` the tiles' marks as one
    base-3 number (``_marks_number``)."""
    players = list(x.players)
    rows: list[list[Any]] = []
    last = x.starts_ms
    for r in x.rows:
        row: list[Any] = [players.index(r.player), r.at_ms - last]
        last = r.at_ms
        if r.word is not None:
            row.append(r.word)
            row.append(_marks_number(r.marks or ()))
            tiles = list(r.tiles or ())
            if tiles != list(r.word) or r.request_id is not None:
                # the tiles, even when they are the word's letters: the release before request
                # ids reads a fifth element as the tiles (the rollback rule, RULINGS.md)
                row.append(tiles)
            if r.request_id is not None:
                row.append(r.request_id)
        rows.append(row)
    answer = list(x.answer)
    return [
        x.duel_id,
        players[0],
        players[1],
        players.index(x.first),
        x.word,
        "" if answer == list(x.word) else answer,
        x.starts_ms - first_ms,
        x.turn_deadline_ms,
        rows,
        x.result.value if x.result else None,
        players.index(x.winner) if x.winner is not None else None,
        x.reason.value if x.reason else None,
        x.ended_ms,
    ]


def _duel_from_compact(c: list[Any], first_ms: int) -> Duel:
    (
        duel_id,
        a,
        b,
        first,
        word,
        answer,
        starts,
        deadline,
        raw_rows,
        result,
        winner,
        reason,
        ended,
    ) = c
    players = (a, b)
    starts_ms = starts + first_ms
    rows: list[Row] = []
    last = starts_ms
    for raw in raw_rows:
        at = last + raw[1]
        last = at
        if len(raw) == 2:
            rows.append(Row(player=players[raw[0]], at_ms=at))
            continue
        tiles = tuple(raw[4]) if len(raw) > 4 and raw[4] is not None else tuple(raw[2])
        rows.append(
            Row(
                player=players[raw[0]],
                word=raw[2],
                tiles=tiles,
                marks=_marks_from_number(raw[3], len(tiles)),
                at_ms=at,
                request_id=raw[5] if len(raw) > 5 else None,
            )
        )
    return Duel(
        duel_id=duel_id,
        players=players,
        first=players[first],
        word=word,
        answer=tuple(answer) if answer else tuple(word),
        starts_ms=starts_ms,
        turn_deadline_ms=deadline,
        rows=tuple(rows),
        result=_RESULTS[result] if result else None,
        winner=players[winner] if winner is not None else None,
        reason=_REASONS[reason] if reason else None,
        ended_ms=ended,
    )


def tournament_to_state(rec: TournamentRecord) -> bytes:
    """The record's aggregate, connections and party ids as a schema-2 document: positional
    JSON, zlib-compressed (``COMPRESSION_LEVEL``). It holds the secrets: never log it.

    Layout (JSON before compression)::

        {"schema": 2, "id", "lang", "round", "phase", "intro", "started", "ended",
         "players": [[id, nickname, rating, lives, out_round, left, timed_out, place,
                      rating_change, connected, reconnect_deadline_ms], ...],
         "duels": [see _compact_duel], "bye", "prev_pairs": [[a, b], ...], "prev_bye",
         "used": [word, ...], "conn": {player_id: connection_id}, "party": {player_id: party_id},
         "byes": [bye count, ...], "paused": ms, "seq": {player_id: last seq},
         "closed": [round_no, bye, [see _compact_duel]]}

    ``"byes"``, in the order of ``"players"``, came later (see ``STATE_SCHEMA``); ``"paused"``
    (``Tournament.paused_ms``), only while paused; ``"seq"``, once an event was numbered;
    ``"closed"`` (``Tournament.closed``), only while a just-closed round is kept.
    """
    t = rec.tournament
    doc = {
        "schema": STATE_SCHEMA,
        "id": t.tournament_id,
        "lang": t.language,
        "round": t.round_no,
        "phase": t.phase.value,
        "intro": t.intro_deadline_ms,
        "started": t.started_ms,
        "ended": t.ended_ms,
        "players": [
            [
                p.player_id,
                p.nickname,
                p.rating,
                p.lives,
                p.out_round,
                int(p.left),
                int(p.timed_out),
                p.place,
                p.rating_change,
                int(p.connected),
                p.reconnect_deadline_ms,
            ]
            for p in t.players
        ],
        "duels": [_compact_duel(d, t.started_ms) for d in t.duels],
        "bye": t.bye,
        "prev_pairs": sorted(sorted(p) for p in t.previous_pairs),
        "prev_bye": t.previous_bye,
        "used": sorted(t.used_words),
        "conn": dict(rec.connections),
        "party": dict(rec.party_ids),
        "byes": [p.byes for p in t.players],
    }
    if t.paused_ms is not None:
        doc["paused"] = t.paused_ms
    if rec.seqs:
        doc["seq"] = dict(rec.seqs)
    if t.closed is not None:
        doc["closed"] = [
            t.closed.round_no,
            t.closed.bye,
            [_compact_duel(d, t.started_ms) for d in t.closed.duels],
        ]
    raw = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return zlib.compress(raw, COMPRESSION_LEVEL)


def _tournament_from_compact(d: dict[str, Any]) -> Tournament:
    ids = [row[0] for row in d["players"]]
    byes = dict(zip(ids, d["byes"], strict=True)) if "byes" in d else _derived_byes(d)
    return Tournament(
        tournament_id=d["id"],
        language=d["lang"],
        players=tuple(
            PlayerState(
                player_id=pid,
                nickname=nick,
                rating=rating,
                lives=lives,
                byes=byes.get(pid, 0),
                out_round=out,
                left=bool(left),
                timed_out=bool(timed_out),
                place=place,
                rating_change=change,
                connected=bool(connected),
                reconnect_deadline_ms=rdl,
            )
            for (
                pid,
                nick,
                rating,
                lives,
                out,
                left,
                timed_out,
                place,
                change,
                connected,
                rdl,
            ) in d["players"]
        ),
        round_no=d["round"],
        phase=Phase(d["phase"]),
        intro_deadline_ms=d["intro"],
        duels=tuple(_duel_from_compact(x, d["started"]) for x in d["duels"]),
        paused_ms=d.get("paused"),
        closed=_closed_from_compact(d.get("closed"), d["started"]),
        **_history(d),
    )


def _closed_from_compact(c: list[Any] | None, first_ms: int) -> ClosedRound | None:
    """``Tournament.closed`` from the document's ``"closed"`` (None when absent)."""
    if c is None:
        return None
    round_no, bye, duels = c
    return ClosedRound(round_no, tuple(_duel_from_compact(x, first_ms) for x in duels), bye)


def tournament_from_state(
    state: str | bytes,
    connections: dict[str, str | None] | None = None,
    party_ids: dict[str, str] | None = None,
) -> tuple[Tournament, dict[str, str | None], dict[str, str]]:
    """The aggregate, connections and party ids from a stored ``state`` attribute.

    ``bytes``: a schema-2 document (zlib-compressed JSON, connections inside). ``str``: a
    schema-1 document (plain JSON); its connections and party ids are the item's separate
    attributes, passed in. Raises StateSchemaError for a document of any other schema, or
    one that is not valid zlib/JSON (nothing is guessed)."""
    t, conn, party, _ = _from_state(state, connections, party_ids)
    return t, conn, party


def _from_state(
    state: str | bytes,
    connections: dict[str, str | None] | None,
    party_ids: dict[str, str] | None,
) -> tuple[Tournament, dict[str, str | None], dict[str, str], dict[str, int]]:
    """``tournament_from_state`` and the players' last event sequence numbers (``"seq"``;
    empty for schema 1 and for a document written before any was numbered)."""
    if isinstance(state, str):
        return tournament_from_json(state), dict(connections or {}), dict(party_ids or {}), {}
    try:
        d = json.loads(zlib.decompress(state))
    except (zlib.error, ValueError) as exc:
        raise StateSchemaError(f"tournament document unreadable: {exc}") from exc
    version = d.get("schema") if isinstance(d, dict) else None
    if version != STATE_SCHEMA:
        raise StateSchemaError(
            f"tournament document schema {version!r}; this code reads 1 and {STATE_SCHEMA}"
        )
    seqs = {str(k): int(v) for k, v in d.get("seq", {}).items()}
    return _tournament_from_compact(d), dict(d["conn"]), dict(d["party"]), seqs


# ------------------------------------------------------------------------------ the item
def tournament_to_item(rec: TournamentRecord, now_ms: int) -> dict[str, Any]:
    """The tournament item: keys, ``state`` (schema-2 document, Binary), ``version`` and, while a
    deadline is pending, the ``gsi_due`` keys; a finished tournament gets its TTL. Ruling 17's
    marks sit beside the document: ``fresh_seats`` (a bit per player, in the document's order,
    while any fresh player has not played; a few bytes) and ``flagged``."""
    t = rec.tournament
    item: dict[str, Any] = {
        **schema.tournament_key(t.tournament_id),
        "kind": "tournament",
        "state": tournament_to_state(rec),
        "version": rec.version + 1,
    }
    due = t.next_deadline()
    if due is not None:
        item["due_pk"] = schema.due_pk(t.tournament_id)
        item["due_ms"] = due
    if t.over:
        item[schema.TTL_ATTRIBUTE] = schema.finished_ttl(now_ms)
    seats = sum(1 << i for i, p in enumerate(t.players) if p.player_id in rec.fresh)
    if seats:
        item["fresh_seats"] = seats
    if rec.flagged:
        item["flagged"] = True
    if t.over:
        item[HISTORY_ATTRIBUTE] = t.round_no
    elif t.closed is not None:
        item[HISTORY_ATTRIBUTE] = t.closed.round_no
    return item


def tournament_from_item(item: dict[str, Any]) -> TournamentRecord:
    """A tournament item of schema 2 or 1 (see ``STATE_SCHEMA``). boto3's deserializer gives
    a Binary attribute as ``boto3.dynamodb.types.Binary``: its ``.value`` is the bytes."""
    state = item["state"]
    if not isinstance(state, (str, bytes)):
        state = bytes(getattr(state, "value", state))
    tournament, connections, party_ids, seqs = _from_state(
        state, item.get("connections"), item.get("party_ids")
    )
    seats = int(item.get("fresh_seats", 0))
    return TournamentRecord(
        tournament=tournament,
        connections=connections,
        party_ids=party_ids,
        version=int(item["version"]),
        fresh=frozenset(p.player_id for i, p in enumerate(tournament.players) if seats >> i & 1),
        flagged=bool(item.get("flagged", False)),
        seqs=seqs,
    )
