"""Adapters layer: records <-> DynamoDB items (plain Python values; boto3's TypeSerializer does
the attribute-value typing). The tournament aggregate is stored as one JSON document."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from typing import Any

from shared.adapters.dynamo import schema
from shared.domain.duel import Duel, DuelResult, EndReason, Row
from shared.domain.matchmaking import Lobby, LobbyStatus, Seat, WaitingLobby, waiting_lobby
from shared.domain.party import Party
from shared.domain.scoring import Mark
from shared.domain.tournament import Phase, PlayerState, Tournament
from shared.services.model import (
    Connection,
    LobbyOpener,
    LobbyRecord,
    PartyRecord,
    Player,
    PlayerStatus,
    TournamentRecord,
)


# ------------------------------------------------------------------------------ tournament
def _row_to(r: Row) -> dict[str, Any]:
    d: dict[str, Any] = {"p": r.player, "at": r.at_ms}
    if r.word is not None:
        d["w"] = r.word
        d["t"] = list(r.tiles or ())
        d["m"] = "".join(m.value[0] for m in r.marks or ())
    return d


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


def _duel_to(x: Duel) -> dict[str, Any]:
    return {
        "id": x.duel_id,
        "players": list(x.players),
        "first": x.first,
        "word": x.word,
        "answer": list(x.answer),
        "starts": x.starts_ms,
        "deadline": x.turn_deadline_ms,
        "rows": [_row_to(r) for r in x.rows],
        "result": x.result.value if x.result else None,
        "winner": x.winner,
        "reason": x.reason.value if x.reason else None,
        "ended": x.ended_ms,
    }


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
  costs at most 2 WRU and a consistent read 1 RRU (issue 16;
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
  Schema-1 items are still read (a tournament running across the deployment); the next write
  stores them as schema 2.

  Later, still schema 2: an optional ``"byes"`` key, each player's bye count in the order of
  ``"players"`` (ruling 4 gives the bye to the fewest). A key a reader does not know is ignored,
  so this needs no new version: a reader from before it reads the rest unchanged (and its next
  write drops the counts), and a document without it (schema 1, or schema 2 written before it)
  reads with the counts ``_derived_byes`` gives.
"""

COMPRESSION_LEVEL = 6
"""zlib's level for the state document: level 9 saves under 1% more on these documents for about
twice the CPU (measured by ``python -m infra.benchmarks --only codec``)."""


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
def tournament_to_json(t: Tournament) -> str:
    """The aggregate as schema-1 JSON (named fields; it holds the secrets: never log it).
    Kept to read and to test the migration from schema 1; new items are written as schema 2
    (``tournament_to_state``)."""
    doc = {
        "schema": 1,
        "id": t.tournament_id,
        "language": t.language,
        "players": [
            {
                "id": p.player_id,
                "nick": p.nickname,
                "rating": p.rating,
                "lives": p.lives,
                "out": p.out_round,
                "left": p.left,
                **({"timeout": True} if p.timed_out else {}),
                "place": p.place,
                "change": p.rating_change,
                "conn": p.connected,
                "rdl": p.reconnect_deadline_ms,
            }
            for p in t.players
        ],
        "round": t.round_no,
        "phase": t.phase.value,
        "intro": t.intro_deadline_ms,
        "duels": [_duel_to(d) for d in t.duels],
        "bye": t.bye,
        "prev_pairs": sorted(sorted(p) for p in t.previous_pairs),
        "prev_bye": t.previous_bye,
        "used": sorted(t.used_words),
        "started": t.started_ms,
        "ended": t.ended_ms,
    }
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


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
    (+ ``tiles`` when they are not the word's letters), ``i`` the player's index, ``dt`` ms
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
            if tiles != list(r.word):
                row.append(tiles)
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
        tiles = tuple(raw[4]) if len(raw) > 4 else tuple(raw[2])
        rows.append(
            Row(
                player=players[raw[0]],
                word=raw[2],
                tiles=tiles,
                marks=_marks_from_number(raw[3], len(tiles)),
                at_ms=at,
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
         "byes": [bye count, ...]}

    ``"byes"``, in the order of ``"players"``, came last (see ``STATE_SCHEMA``).
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
        **_history(d),
    )


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
    if isinstance(state, str):
        return tournament_from_json(state), dict(connections or {}), dict(party_ids or {})
    try:
        d = json.loads(zlib.decompress(state))
    except (zlib.error, ValueError) as exc:
        raise StateSchemaError(f"tournament document unreadable: {exc}") from exc
    version = d.get("schema") if isinstance(d, dict) else None
    if version != STATE_SCHEMA:
        raise StateSchemaError(
            f"tournament document schema {version!r}; this code reads 1 and {STATE_SCHEMA}"
        )
    return _tournament_from_compact(d), dict(d["conn"]), dict(d["party"])


# ------------------------------------------------------------------------------ records
def _ttl(now_ms: int) -> int:
    return now_ms // 1000 + schema.FINISHED_TTL_SECONDS


def player_to_item(p: Player) -> dict[str, Any]:
    item: dict[str, Any] = {
        **schema.player_key(p.player_id),
        "kind": "player",
        "player_id": p.player_id,
        "nickname": p.nickname,
        "rating": p.rating,
        "created_ms": p.created_ms,
        "status": p.status.value,
        "connected": p.connected,
        "disconnect_seq": p.disconnect_seq,
        "language": p.language,
        "version": p.version + 1,
    }
    for name in ("lobby_id", "tournament_id", "party_id", "connection_id", "token_used_ms"):
        value = getattr(p, name)
        if value is not None:
            item[name] = value
    if p.reconnect_deadline_ms is not None:
        item["reconnect_deadline_ms"] = p.reconnect_deadline_ms
        if not p.connected:
            item["due_pk"] = schema.due_pk(p.player_id)
            item["due_ms"] = p.reconnect_deadline_ms
    return item


def player_from_item(item: dict[str, Any]) -> Player:
    rdl = item.get("reconnect_deadline_ms")
    return Player(
        player_id=item["player_id"],
        nickname=item["nickname"],
        rating=int(item["rating"]),
        created_ms=int(item["created_ms"]),
        status=PlayerStatus(item["status"]),
        lobby_id=item.get("lobby_id"),
        tournament_id=item.get("tournament_id"),
        party_id=item.get("party_id"),
        connection_id=item.get("connection_id"),
        connected=bool(item["connected"]),
        disconnect_seq=int(item["disconnect_seq"]),
        reconnect_deadline_ms=int(rdl) if rdl is not None else None,
        language=item.get("language", "en"),
        version=int(item["version"]),
        token_used_ms=int(item["token_used_ms"]) if "token_used_ms" in item else None,
    )


def connection_to_item(c: Connection) -> dict[str, Any]:
    item: dict[str, Any] = {
        **schema.connection_key(c.connection_id),
        "kind": "connection",
        "connection_id": c.connection_id,
        "connected_ms": c.connected_ms,
        "version": c.version + 1,
        schema.TTL_ATTRIBUTE: c.connected_ms // 1000 + 3 * 3600,  # API GW caps a connection at 2 h
    }
    if c.player_id is not None:
        item["player_id"] = c.player_id
    return item


def connection_from_item(item: dict[str, Any]) -> Connection:
    return Connection(
        connection_id=item["connection_id"],
        connected_ms=int(item["connected_ms"]),
        player_id=item.get("player_id"),
        version=int(item["version"]),
    )


def lobby_to_item(rec: LobbyRecord, now_ms: int) -> dict[str, Any]:
    lobby = rec.lobby
    item: dict[str, Any] = {
        **schema.lobby_key(lobby.lobby_id),
        "kind": "lobby",
        "lobby_id": lobby.lobby_id,
        "language": lobby.language,
        "created_ms": lobby.created_ms,
        "seats": [
            {
                "player_id": s.player_id,
                "nickname": s.nickname,
                "rating": s.rating,
                "party_id": s.party_id,
            }
            for s in lobby.seats
        ],
        "status": lobby.status.value,
        "connections": dict(rec.connections),
        "version": rec.version + 1,
    }
    if rec.streak:
        item["streak"] = rec.streak
    if lobby.party_id is not None:
        item["party_id"] = lobby.party_id
    if lobby.tournament_id is not None:
        item["tournament_id"] = lobby.tournament_id
    summary = waiting_lobby(lobby)
    if summary is not None:  # in gsi_lobbies while it admits somebody (schema docstring)
        item["waiting_pk"] = schema.waiting_pk(lobby.language, schema.waiting_shard(lobby.lobby_id))
        item["waiting_lo"] = summary.lo
        item["waiting_hi"] = summary.hi
        item["seat_count"] = summary.seats
    if lobby.status is not LobbyStatus.WAITING:
        item[schema.TTL_ATTRIBUTE] = _ttl(now_ms)
    return item


def lobby_from_item(item: dict[str, Any]) -> LobbyRecord:
    lobby = Lobby(
        lobby_id=item["lobby_id"],
        language=item["language"],
        created_ms=int(item["created_ms"]),
        seats=tuple(
            Seat(s["player_id"], int(s["rating"]), s.get("party_id"), s["nickname"])
            for s in item["seats"]
        ),
        party_id=item.get("party_id"),
        status=LobbyStatus(item["status"]),
        tournament_id=item.get("tournament_id"),
    )
    return LobbyRecord(
        lobby,
        connections=dict(item.get("connections", {})),
        version=int(item["version"]),
        streak=int(item.get("streak", 0)),
    )


def tournament_to_item(rec: TournamentRecord, now_ms: int) -> dict[str, Any]:
    """The tournament item: keys, ``state`` (schema-2 document, Binary), ``version`` and, while a
    deadline is pending, the ``gsi_due`` keys; a finished tournament gets its TTL."""
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
        item[schema.TTL_ATTRIBUTE] = _ttl(now_ms)
    return item


def tournament_from_item(item: dict[str, Any]) -> TournamentRecord:
    """A tournament item of schema 2 or 1 (see ``STATE_SCHEMA``). boto3's deserializer gives
    a Binary attribute as ``boto3.dynamodb.types.Binary``: its ``.value`` is the bytes."""
    state = item["state"]
    if not isinstance(state, (str, bytes)):
        state = bytes(getattr(state, "value", state))
    tournament, connections, party_ids = tournament_from_state(
        state, item.get("connections"), item.get("party_ids")
    )
    return TournamentRecord(
        tournament=tournament,
        connections=connections,
        party_ids=party_ids,
        version=int(item["version"]),
    )


def party_to_item(rec: PartyRecord) -> dict[str, Any]:
    item: dict[str, Any] = {
        **schema.party_key(rec.party.party_id),
        "kind": "party",
        "party_id": rec.party.party_id,
        "invite": rec.party.invite,
        "members": list(rec.party.members),
        "version": rec.version + 1,
    }
    if rec.language is not None:
        item["language"] = rec.language
    if rec.lobby_id is not None:
        item["lobby_id"] = rec.lobby_id
    return item


def party_from_item(item: dict[str, Any]) -> PartyRecord:
    return PartyRecord(
        party=Party(
            party_id=item["party_id"], invite=item["invite"], members=tuple(item["members"])
        ),
        language=item.get("language"),
        lobby_id=item.get("lobby_id"),
        version=int(item["version"]),
    )


def waiting_from_entry(entry: dict[str, Any]) -> WaitingLobby:
    """A ``gsi_lobbies`` entry (its projection) as the domain's ``WaitingLobby``."""
    return WaitingLobby(
        lobby_id=entry["lobby_id"],
        seats=int(entry["seat_count"]),
        created_ms=int(entry["created_ms"]),
        lo=int(entry["waiting_lo"]),
        hi=int(entry["waiting_hi"]),
    )


def opener_to_item(o: LobbyOpener) -> dict[str, Any]:
    return {
        **schema.opener_key(o.language, o.bucket, o.lane),
        "kind": "opener",
        "language": o.language,
        "bucket": o.bucket,
        "lane": o.lane,
        "lobby_id": o.lobby_id,
        "opened_ms": o.opened_ms,
        "streak": o.streak,
        "version": o.version + 1,
    }


def opener_from_item(item: dict[str, Any]) -> LobbyOpener:
    return LobbyOpener(
        language=item["language"],
        bucket=int(item["bucket"]),
        lobby_id=item["lobby_id"],
        version=int(item["version"]),
        lane=int(item.get("lane", 0)),
        opened_ms=int(item.get("opened_ms", 0)),
        streak=int(item.get("streak", 0)),
    )
