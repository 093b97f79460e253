"""Adapters layer: the DynamoDB data model, written down once (CDK, the local runtime and the
tests build the table from it): one on-demand table, keys ``pk`` / ``sk``, TTL ``ttl`` (epoch
seconds, cleanup only), the sparse indexes ``gsi_lobbies`` (waiting lobbies by admission range,
ruling 8) and ``gsi_due`` (pending deadlines, for the watchdog). Items, access patterns, costs and
partition load: ``shared/domain/RULINGS.md``, "Persistence".
"""

from __future__ import annotations

import zlib
from typing import Any

from shared.services.deps import TOKEN_IDLE_MS

PK = "pk"
SK = "sk"
TTL_ATTRIBUTE = "ttl"
GSI_WAITING = "gsi_lobbies"
GSI_DUE = "gsi_due"
DUE_SHARDS = 64
"""Partition keys of ``gsi_due``. Each running tournament rewrites its entry at every deadline
move, about 0.26 WCU/s (``infra/CAPACITY.md``): at 1 M concurrent players (125 k tournaments)
that is ~516 WCU/s per shard with 64 shards, half a partition's 1,000 WCU/s (with 4 it was
8,256: throttled). The price is the watchdog's 64 small Queries a minute (0.5 RRU each). Raising
it later is safe (entries on the old shards are still queried); lowering it strands entries on
the shards no longer queried until their item is next written."""
WAITING_SHARDS = 4
"""Partition keys of ``gsi_lobbies`` per language (partition load: RULINGS.md, "Persistence")."""
WAITING_SPAN = 400
"""``hi - lo`` of a lobby's admission range never exceeds this (2 x the 200 window, ruling 8)."""
WAITING_PROJECTION = ["lobby_id", "created_ms", "seat_count", "waiting_hi"]
"""The non-key attributes ``gsi_lobbies`` carries: what choosing a lobby needs."""

KEY_SCHEMA = [{"AttributeName": PK, "KeyType": "HASH"}, {"AttributeName": SK, "KeyType": "RANGE"}]
ATTRIBUTE_DEFINITIONS = [
    {"AttributeName": PK, "AttributeType": "S"},
    {"AttributeName": SK, "AttributeType": "S"},
    {"AttributeName": "waiting_pk", "AttributeType": "S"},
    {"AttributeName": "waiting_lo", "AttributeType": "N"},
    {"AttributeName": "due_pk", "AttributeType": "S"},
    {"AttributeName": "due_ms", "AttributeType": "N"},
]
GLOBAL_SECONDARY_INDEXES = [
    {
        "IndexName": GSI_WAITING,
        "KeySchema": [
            {"AttributeName": "waiting_pk", "KeyType": "HASH"},
            {"AttributeName": "waiting_lo", "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": WAITING_PROJECTION},
    },
    {
        "IndexName": GSI_DUE,
        "KeySchema": [
            {"AttributeName": "due_pk", "KeyType": "HASH"},
            {"AttributeName": "due_ms", "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
    },
]

LEGACY_WAITING_INDEX: dict[str, Any] = {
    "IndexName": "gsi_waiting",
    "KeySchema": [
        {"AttributeName": "waiting_pk", "KeyType": "HASH"},
        {"AttributeName": "waiting_sk", "KeyType": "RANGE"},
    ],
    "Projection": {"ProjectionType": "ALL"},
}
"""The waiting index before ``gsi_lobbies``: read by no code, kept in a stack only for the first
of the two upgrade deployments (``-c legacyWaitingIndex=true``; RULINGS.md, "Persistence")."""
LEGACY_ATTRIBUTE_DEFINITIONS = [{"AttributeName": "waiting_sk", "AttributeType": "S"}]
"""The key attribute only ``LEGACY_WAITING_INDEX`` uses."""

FINISHED_TTL_SECONDS = 7 * 24 * 3600
"""Finished lobbies and tournaments are kept a week, then removed by TTL."""


CONNECTION_TOMBSTONE_SECONDS = 600
"""A closed connection's item stays this long as a tombstone (``Connection.closed_ms``): far
longer than a message can wait for its handler (API Gateway's integration timeout, 29 s) and
run (the function timeout). DynamoDB's TTL deletes it later, at no write cost; readers go by
``closed_ms``, never by the item's absence (TTL deletion may lag by days)."""


def tombstone_ttl(closed_ms: int) -> int:
    """The TTL attribute's value (epoch seconds) of a connection closed at ``closed_ms``."""
    return closed_ms // 1000 + CONNECTION_TOMBSTONE_SECONDS


def finished_ttl(now_ms: int) -> int:
    """The TTL attribute's value (epoch seconds) for a lobby or tournament finished at
    ``now_ms`` (epoch ms): ``FINISHED_TTL_SECONDS`` later."""
    return now_ms // 1000 + FINISHED_TTL_SECONDS


IDLE_PLAYER_TTL_SECONDS = TOKEN_IDLE_MS // 1000
"""A player and its current token's item are removed by TTL this long after the token was
issued (30 days: the token's lifetime, ``shared.services.deps.TOKEN_IDLE_MS``). Past it the
token is refused anyway, and it is the only key to an anonymous profile (ruling 11): nothing can
reach the items again. Only a session create, a resume or ``sign_out_everywhere`` (each issues a
token) moves it."""


def idle_player_ttl(used_ms: int) -> int:
    """The TTL attribute's value (epoch seconds) for a player whose token was issued at
    ``used_ms`` (epoch ms), and for that token's item: ``IDLE_PLAYER_TTL_SECONDS`` later,
    rounded up to the second, so DynamoDB never counts them expired while the token works."""
    return expiry_ttl(used_ms + TOKEN_IDLE_MS)


def expiry_ttl(expires_ms: int) -> int:
    """The TTL attribute's value (epoch seconds) for an item kept until ``expires_ms`` (epoch
    ms) inclusive: rounded up, never a second early."""
    return -(-expires_ms // 1000)


def player_key(player_id: str) -> dict[str, str]:
    return {PK: f"PLAYER#{player_id}", SK: "PROFILE"}


def rating_key(player_id: str, tournament_id: str) -> dict[str, str]:
    return {PK: f"PLAYER#{player_id}", SK: f"RATING#{tournament_id}"}


def token_key(token_hash: str) -> dict[str, str]:
    return {PK: f"TOKEN#{token_hash}", SK: "TOKEN"}


def new_players_key(source: str, window_start_ms: int) -> dict[str, str]:
    """The counter of new players created from ``source`` in one window (ruling 17)."""
    return {PK: f"NEWPLAYERS#{source}#{window_start_ms}", SK: "NEWPLAYERS"}


def switch_key() -> dict[str, str]:
    """The operators' kill switch: one item, present while the game is paused."""
    return {PK: "SWITCH", SK: "SWITCH"}


def connection_key(connection_id: str) -> dict[str, str]:
    return {PK: f"CONN#{connection_id}", SK: "CONN"}


def lobby_key(lobby_id: str) -> dict[str, str]:
    return {PK: f"LOBBY#{lobby_id}", SK: "LOBBY"}


def opener_key(language: str, bucket: int, lane: int = 0) -> dict[str, str]:
    return {PK: f"OPENER#{language}#{bucket}#{lane}", SK: "OPENER"}


def tournament_key(tournament_id: str) -> dict[str, str]:
    return {PK: f"TOURN#{tournament_id}", SK: "STATE"}


def party_key(party_id: str) -> dict[str, str]:
    return {PK: f"PARTY#{party_id}", SK: "PARTY"}


def invite_key(invite: str) -> dict[str, str]:
    return {PK: f"INVITE#{invite}", SK: "INVITE"}


def waiting_pk(language: str, shard: int) -> str:
    return f"WAITING#{language}#{shard}"


def waiting_shard(lobby_id: str) -> int:
    """The ``gsi_lobbies`` shard of a lobby (stable hash of its id)."""
    return zlib.crc32(lobby_id.encode()) % WAITING_SHARDS


def due_pk(ref: str) -> str:
    """The watchdog shard of an item (stable hash of its id)."""
    return f"DUE#{zlib.crc32(ref.encode()) % DUE_SHARDS}"


def table_definition(table_name: str) -> dict[str, Any]:
    """``CreateTable`` arguments for the table (on-demand)."""
    return {
        "TableName": table_name,
        "KeySchema": KEY_SCHEMA,
        "AttributeDefinitions": ATTRIBUTE_DEFINITIONS,
        "GlobalSecondaryIndexes": GLOBAL_SECONDARY_INDEXES,
        "BillingMode": "PAY_PER_REQUEST",
    }


def create_tables(client: Any, table_name: str) -> None:
    """Create the table (and TTL) if it does not exist; waits until it is active.

    ``client`` is a boto3 DynamoDB client. Used by the local runtime and the tests; production
    tables come from CDK.
    """
    existing = client.list_tables().get("TableNames", [])
    if table_name not in existing:
        client.create_table(**table_definition(table_name))
        client.get_waiter("table_exists").wait(
            TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 60}
        )
        client.update_time_to_live(
            TableName=table_name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE},
        )
