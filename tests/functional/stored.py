"""Helpers for the backend flow tests: raw stored items and small setups."""

from __future__ import annotations

from typing import Any

from shared.adapters.dynamo import schema


def player_item(backend: Any, player: Any) -> dict[str, Any]:
    """The raw PROFILE item of a ScriptedPlayer (or player id)."""
    pid = player if isinstance(player, str) else player.id
    item = backend.item(schema.player_key(pid))
    assert item is not None, f"no player item for {pid}"
    return item


def lobby_item(backend: Any, lobby_id: str) -> dict[str, Any]:
    item = backend.item(schema.lobby_key(lobby_id))
    assert item is not None, f"no lobby item {lobby_id}"
    return item


def party_item(backend: Any, party_id: str) -> dict[str, Any]:
    item = backend.item(schema.party_key(party_id))
    assert item is not None, f"no party item {party_id}"
    return item


def types(player: Any) -> list[str]:
    """The types of every message the player's connection received, in order."""
    return [m["type"] for m in player.messages]


def set_rating(backend: Any, player: Any, rating: int) -> None:
    """Give a player a rating (as earlier tournaments would have), with a versioned save."""
    p = backend.store.get_player(player.id)
    p.rating = rating
    backend.store.commit([p])
