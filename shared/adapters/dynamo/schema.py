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
``OPENER#<lang>#<bucket>#<lane>``  ``OPENER``  the lobby that solo players of a language,
                                        rating bucket (``rating // 200``) and lane open into when
                                        no waiting lobby admits them; ``version``
``TOURN#<tournament_id>``  ``STATE``    the tournament aggregate (rounds, current duels, lives,
                                        places), connections and parties by player, as one
                                        zlib-compressed document
                                        (``tournament_document.STATE_SCHEMA``); ``version``
``PARTY#<party_id>``       ``PARTY``    invite, members in joining order; ``version``
``INVITE#<invite>``        ``INVITE``   party id for an invite token
=========================  ===========  =========================================================

Indexes:

- ``gsi_lobbies`` (``waiting_pk`` = ``WAITING#<language>#<shard>``, ``waiting_lo`` number):
  waiting lobbies that admit somebody, by the lower end of their admission range. Sparse: the
  attributes are removed when the lobby starts or empties. Projection ``INCLUDE`` of
  ``lobby_id``, ``created_ms``, ``seat_count``, ``waiting_hi`` only (an entry is ~200 bytes).
  Access pattern: *join* finds every lobby that admits a rating (below).
- ``gsi_due`` (``due_pk`` = ``DUE#<shard>``, ``due_ms`` number): items with a pending deadline —
  running tournaments (their next turn/intro deadline) and disconnected players (their reconnect
  deadline). Sparse, ``DUE_SHARDS`` shards. Access pattern: the *watchdog* queries
  ``due_ms < now - grace`` in each shard to apply deadlines whose timer never fired.

Matchmaking without a blind spot (ruling 8; issue 17). The ratings a waiting lobby admits form
one interval ``[lo, hi]`` (``domain.matchmaking.admission_range``), stored on the lobby item as
``waiting_lo`` / ``waiting_hi`` with ``seat_count``. Because ``hi - lo <= 400``, a lobby admits
rating ``R`` exactly when ``R - 400 <= lo <= R`` and ``hi >= R`` (and it is not full: a stored
waiting lobby never is). So *join* sends, for each of the ``WAITING_SHARDS`` shards of the
language, one Query (eventually consistent; ``LastEvaluatedKey`` followed to the end)::

    IndexName=gsi_lobbies
    KeyConditionExpression="waiting_pk = :w AND waiting_lo BETWEEN :lo AND :r"
    FilterExpression="waiting_hi >= :r"
    :w = "WAITING#<lang>#<shard>", :lo = R - 400, :r = R

and gets exactly the waiting lobbies that admit ``R``, however many lobbies wait in the
language. What is read and dropped by the filter are lobbies whose ``lo`` is within 400 below
``R`` but whose ``hi`` is below ``R``: lobbies of players rated up to 400 below (their range
ends before ``R``); nothing far away is ever read. A lobby's shard is ``crc32(lobby_id) %
WAITING_SHARDS``, so index writes spread over the shards (a lobby item's index entry is
rewritten at every seat taken: ``seat_count`` changes).

Cost per join (on-demand units; an eventually consistent Query costs 0.5 RRU per 4 KB read,
at least 0.5): ``WAITING_SHARDS`` Queries = 2 RRU while the entries read stay under 4 KB per
shard (~20 lobbies per shard with ``lo`` in ``[R-400, R]``), +0.5 RRU per further 4 KB; one
page holds 1 MB (~5,000 entries), so paging only starts beyond that. Then one strongly
consistent GetItem of the chosen lobby (1 RRU), the player's GetItem (1 RRU), and the seat's
TransactWriteItems (lobby + player: 2 WRU per KB each, ~6 WRU) plus its index entry (1 WRU,
2 when ``waiting_lo`` moves). Opening a lobby adds one BatchGetItem of 3 opener items (3 RRU)
and, in the transaction, the opener put and 2 ConditionChecks (~6 WRU).

Partition load (1,000 WCU and 3,000 RCU per second per partition key, GSI partitions
included): at ``J`` joins/s in one language each ``gsi_lobbies`` shard takes about
``1.25 * J / WAITING_SHARDS`` WCU/s (one entry update per seat; one put and one removal per
lobby of 8) and ``0.5 * J`` RCU/s per Query round (every join queries every shard once; a
retry after a conflict re-reads the lobbies it listed and queries again only when all are
taken). At 2,000 joins/s: ~625 WCU/s and ~1,000-1,500 RCU/s per
shard. The table partitions are one lobby item each (a handful of writes per second) and the
opener items (one write per lobby opened in that bucket and lane).

The index by admission range is named ``gsi_lobbies``; the one before it (``gsi_waiting``,
``waiting_pk`` = ``WAITING#<language>``, ``waiting_sk`` = created ms, projection ALL) is
``LEGACY_WAITING_INDEX``. CloudFormation adds or deletes one GSI per stack update, never both
(AWS CloudFormation, ``AWS::DynamoDB::Table`` GlobalSecondaryIndexes:
https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-dynamodb-table.html),
so a stack created with the legacy index upgrades in two deployments: first with
``-c legacyWaitingIndex=true`` (adds ``gsi_lobbies``, keeps ``gsi_waiting``), then without
(deletes it). New lobby items carry no ``waiting_sk``, so the legacy index stays empty of them.
- ``gsi_due`` (``due_pk`` = ``DUE#<shard>``, ``due_ms`` number): items with a pending deadline —
  running tournaments (their next turn/intro deadline) and disconnected players (their reconnect
  deadline). Sparse, ``DUE_SHARDS`` shards. Access pattern: the *watchdog* queries
  ``due_ms < now - grace`` in each shard to apply deadlines whose timer never fired.

Access patterns: session by token (GetItem TOKEN), player by connection (GetItem CONN), player
(GetItem PROFILE), lobby / tournament / party by id (GetItem), waiting lobbies (Query
gsi_lobbies, one per shard), openers (BatchGetItem), overdue deadlines (Query gsi_due). Every
write is conditional (``version``, existence, status) or a ``TransactWriteItems`` of
conditional writes (and ``ConditionCheck`` s of openers, unchanged).
"""

from __future__ import annotations

import zlib
from typing import Any

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
"""Partition keys of ``gsi_lobbies`` per language (see the module docstring's partition load)."""
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
of the two upgrade deployments (``-c legacyWaitingIndex=true``; module docstring)."""
LEGACY_ATTRIBUTE_DEFINITIONS = [{"AttributeName": "waiting_sk", "AttributeType": "S"}]
"""The key attribute only ``LEGACY_WAITING_INDEX`` uses."""

FINISHED_TTL_SECONDS = 7 * 24 * 3600
"""Finished lobbies and tournaments are kept a week, then removed by TTL."""


def finished_ttl(now_ms: int) -> int:
    """The TTL attribute's value (epoch seconds) for a lobby or tournament finished at
    ``now_ms`` (epoch ms): ``FINISHED_TTL_SECONDS`` later."""
    return now_ms // 1000 + FINISHED_TTL_SECONDS


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
