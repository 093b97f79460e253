"""Adapters layer: the DynamoDB data model, written down once.

The CDK stack (``infra/``), the local runtime and the tests all build the table from this module.

One table (single-table design), on-demand, keys ``pk`` / ``sk`` (strings), TTL attribute ``ttl``
(epoch seconds; cleanup of finished lobbies, tournaments and closed connections only, never a
timer), point-in-time recovery on.

Items (``pk`` / ``sk``):

=========================  ===========  =========================================================
``PLAYER#<player_id>``     ``PROFILE``  nickname, rating, token hash, status (idle/queued/playing),
                                        lobby/tournament/party ids, connection, disconnect seq,
                                        reconnect deadline; ``version`` (optimistic)
``PLAYER#<player_id>``     ``RATING#<t>``  one per rated tournament: place, change, before/after —
                                        its conditional put makes each rating change exactly-once
``TOKEN#<sha256>``         ``TOKEN``    player id for a session token (stored hashed, ruling 11)
``CONN#<connection_id>``   ``CONN``     the player bound to an API Gateway connection
``LOBBY#<lobby_id>``       ``LOBBY``    language, seats, party, status; ``version``
``OPENER#<lang>#<bucket>`` ``OPENER`` the lobby that solo players of a language and rating bucket
                                        open into when no waiting lobby admits them; ``version``
``TOURN#<tournament_id>``  ``STATE``    the tournament aggregate (rounds, current duels, lives,
                                        places), connections and parties by player, as one
                                        zlib-compressed document (``codec.STATE_SCHEMA``);
                                        ``version``
``PARTY#<party_id>``       ``PARTY``    invite, members in joining order; ``version``
``INVITE#<invite>``        ``INVITE``   party id for an invite token
=========================  ===========  =========================================================

Indexes:

- ``gsi_waiting`` (``waiting_pk`` = ``WAITING#<language>``, ``waiting_sk`` = zero-padded created
  ms): waiting lobbies of a language, oldest first. Sparse: the attributes are removed when the
  lobby starts. Access pattern: *join* finds candidate lobbies with one Query (never a Scan).
- ``gsi_due`` (``due_pk`` = ``DUE#<shard>``, ``due_ms`` number): items with a pending deadline —
  running tournaments (their next turn/intro deadline) and disconnected players (their reconnect
  deadline). Sparse, 4 shards. Access pattern: the *watchdog* queries ``due_ms < now - grace`` in
  each shard to apply deadlines whose timer never fired.

Access patterns: session by token (GetItem TOKEN), player by connection (GetItem CONN), player
(GetItem PROFILE), lobby / tournament / party by id (GetItem), waiting lobbies (Query
gsi_waiting), overdue deadlines (Query gsi_due). Every write is conditional (``version``,
existence, status) or a ``TransactWriteItems`` of conditional writes.
"""

from __future__ import annotations

import zlib
from typing import Any

PK = "pk"
SK = "sk"
TTL_ATTRIBUTE = "ttl"
GSI_WAITING = "gsi_waiting"
GSI_DUE = "gsi_due"
DUE_SHARDS = 4

KEY_SCHEMA = [{"AttributeName": PK, "KeyType": "HASH"}, {"AttributeName": SK, "KeyType": "RANGE"}]
ATTRIBUTE_DEFINITIONS = [
    {"AttributeName": PK, "AttributeType": "S"},
    {"AttributeName": SK, "AttributeType": "S"},
    {"AttributeName": "waiting_pk", "AttributeType": "S"},
    {"AttributeName": "waiting_sk", "AttributeType": "S"},
    {"AttributeName": "due_pk", "AttributeType": "S"},
    {"AttributeName": "due_ms", "AttributeType": "N"},
]
GLOBAL_SECONDARY_INDEXES = [
    {
        "IndexName": GSI_WAITING,
        "KeySchema": [
            {"AttributeName": "waiting_pk", "KeyType": "HASH"},
            {"AttributeName": "waiting_sk", "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "ALL"},
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

FINISHED_TTL_SECONDS = 7 * 24 * 3600
"""Finished lobbies and tournaments are kept a week, then removed by TTL."""


def player_key(player_id: str) -> dict[str, str]:
    return {PK: f"PLAYER#{player_id}", SK: "PROFILE"}


def rating_key(player_id: str, tournament_id: str) -> dict[str, str]:
    return {PK: f"PLAYER#{player_id}", SK: f"RATING#{tournament_id}"}


def token_key(token_hash: str) -> dict[str, str]:
    return {PK: f"TOKEN#{token_hash}", SK: "TOKEN"}


def connection_key(connection_id: str) -> dict[str, str]:
    return {PK: f"CONN#{connection_id}", SK: "CONN"}


def lobby_key(lobby_id: str) -> dict[str, str]:
    return {PK: f"LOBBY#{lobby_id}", SK: "LOBBY"}


def opener_key(language: str, bucket: int) -> dict[str, str]:
    return {PK: f"OPENER#{language}#{bucket}", SK: "OPENER"}


def tournament_key(tournament_id: str) -> dict[str, str]:
    return {PK: f"TOURN#{tournament_id}", SK: "STATE"}


def party_key(party_id: str) -> dict[str, str]:
    return {PK: f"PARTY#{party_id}", SK: "PARTY"}


def invite_key(invite: str) -> dict[str, str]:
    return {PK: f"INVITE#{invite}", SK: "INVITE"}


def waiting_pk(language: str) -> str:
    return f"WAITING#{language}"


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
