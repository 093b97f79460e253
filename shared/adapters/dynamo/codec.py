"""Adapters layer: records <-> DynamoDB items (plain Python values; boto3's TypeSerializer does
the attribute-value typing). The tournament aggregate is stored as one JSON document."""

from __future__ import annotations

import json
from typing import Any

from shared.adapters.dynamo import schema
from shared.domain.duel import Duel, DuelResult, EndReason, Row
from shared.domain.matchmaking import Lobby, LobbyStatus, Seat
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


STATE_SCHEMA = 1
"""The version of the stored tournament document's layout (its ``"schema"`` key). Bump it with
every change a reader of the previous layout would misread, and teach
``tournament_from_json`` to migrate the old one (or refuse it)."""


class StateSchemaError(ValueError):
    """A stored tournament document of a layout this code cannot read (a newer deployment
    wrote it, or it is corrupt)."""


def tournament_to_json(t: Tournament) -> str:
    """The aggregate as compact JSON, ``{"schema": STATE_SCHEMA, ...}`` (it holds the secrets:
    never log it)."""
    doc = {
        "schema": STATE_SCHEMA,
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
    """The aggregate from its stored document. A document without ``"schema"`` was written
    before the layout was versioned, in the same layout as schema 1: it is read as such.
    Raises StateSchemaError for any other schema (nothing is guessed)."""
    d = json.loads(raw)
    schema_version = d.get("schema", 1)
    if schema_version != STATE_SCHEMA:
        raise StateSchemaError(
            f"tournament document schema {schema_version!r}; this code reads {STATE_SCHEMA}"
        )
    return Tournament(
        tournament_id=d["id"],
        language=d["language"],
        players=tuple(
            PlayerState(
                player_id=p["id"],
                nickname=p["nick"],
                rating=p["rating"],
                lives=p["lives"],
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
        bye=d["bye"],
        previous_pairs=frozenset(frozenset(p) for p in d["prev_pairs"]),
        previous_bye=d["prev_bye"],
        used_words=frozenset(d["used"]),
        started_ms=d["started"],
        ended_ms=d["ended"],
    )


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
    if c.heard_ms is not None:
        item["heard_ms"] = c.heard_ms
    return item


def connection_from_item(item: dict[str, Any]) -> Connection:
    return Connection(
        connection_id=item["connection_id"],
        connected_ms=int(item["connected_ms"]),
        player_id=item.get("player_id"),
        version=int(item["version"]),
        heard_ms=int(item["heard_ms"]) if item.get("heard_ms") is not None else None,
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
    if lobby.party_id is not None:
        item["party_id"] = lobby.party_id
    if lobby.tournament_id is not None:
        item["tournament_id"] = lobby.tournament_id
    if lobby.status is LobbyStatus.WAITING:
        item["waiting_pk"] = schema.waiting_pk(lobby.language)
        item["waiting_sk"] = f"{lobby.created_ms:015d}#{lobby.lobby_id}"
    else:
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
        lobby, connections=dict(item.get("connections", {})), version=int(item["version"])
    )


def tournament_to_item(rec: TournamentRecord, now_ms: int) -> dict[str, Any]:
    t = rec.tournament
    item: dict[str, Any] = {
        **schema.tournament_key(t.tournament_id),
        "kind": "tournament",
        "tournament_id": t.tournament_id,
        "state": tournament_to_json(t),
        "connections": dict(rec.connections),
        "party_ids": dict(rec.party_ids),
        "over": t.over,
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
    return TournamentRecord(
        tournament=tournament_from_json(item["state"]),
        connections=dict(item.get("connections", {})),
        party_ids=dict(item.get("party_ids", {})),
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


def opener_to_item(o: LobbyOpener) -> dict[str, Any]:
    return {
        **schema.opener_key(o.language, o.bucket),
        "kind": "opener",
        "language": o.language,
        "bucket": o.bucket,
        "lobby_id": o.lobby_id,
        "version": o.version + 1,
    }


def opener_from_item(item: dict[str, Any]) -> LobbyOpener:
    return LobbyOpener(
        language=item["language"],
        bucket=int(item["bucket"]),
        lobby_id=item["lobby_id"],
        version=int(item["version"]),
    )
