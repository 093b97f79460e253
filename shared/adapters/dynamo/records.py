"""Adapters layer: the other records <-> DynamoDB items (players, connections, lobbies, openers,
parties, waiting-lobby index entries), as plain Python values: boto3's TypeSerializer does the
attribute-value typing. ``*_to_item`` returns the item to put, its ``version`` one above the
record's; ``*_from_item`` reads one back (``KeyError`` when a required attribute is missing)."""

from __future__ import annotations

from typing import Any

from shared.adapters.dynamo import schema
from shared.domain.matchmaking import Lobby, LobbyStatus, Seat, WaitingLobby, waiting_lobby
from shared.domain.party import Party
from shared.services.model import (
    Connection,
    LobbyOpener,
    LobbyRecord,
    PartyRecord,
    Player,
    PlayerStatus,
)


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
    if p.token_generation:
        item["token_generation"] = p.token_generation
    for name in (
        "lobby_id",
        "tournament_id",
        "party_id",
        "connection_id",
        "token_used_ms",
        "token_grace_until_ms",
    ):
        value = getattr(p, name)
        if value is not None:
            item[name] = value
    if p.token_used_ms is not None:
        # the player goes with its current token's item, whose TTL is the same: only issuing a
        # token moves it (a session create, a resume, sign_out_everywhere), so no other save
        # adds a write. A player saved before ``token_used_ms`` was kept gets one when it next
        # resumes, with its new token's.
        item[schema.TTL_ATTRIBUTE] = schema.idle_player_ttl(p.token_used_ms)
    if p.recent_requests:
        item["recent"] = [list(r) for r in p.recent_requests]
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
        token_generation=int(item.get("token_generation", 0)),
        token_grace_until_ms=(
            int(item["token_grace_until_ms"]) if "token_grace_until_ms" in item else None
        ),
        recent_requests=tuple((str(r[0]), str(r[1]), str(r[2])) for r in item.get("recent") or ()),
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
    if c.source is not None:
        item["source"] = c.source
    if c.strikes:
        item["strikes"] = c.strikes
    if c.closed_ms is not None:
        item["closed_ms"] = c.closed_ms
        item[schema.TTL_ATTRIBUTE] = schema.tombstone_ttl(c.closed_ms)
    return item


def connection_from_item(item: dict[str, Any]) -> Connection:
    return Connection(
        connection_id=item["connection_id"],
        connected_ms=int(item["connected_ms"]),
        player_id=item.get("player_id"),
        version=int(item["version"]),
        source=item.get("source"),
        strikes=int(item.get("strikes", 0)),
        closed_ms=int(item["closed_ms"]) if "closed_ms" in item else None,
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
        item[schema.TTL_ATTRIBUTE] = schema.finished_ttl(now_ms)
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
