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
GSI_BOARD = "gsi_board"
"""The leaderboards' entries by score (issue 38): partition ``board_pk`` (a board's shard,
``rating_board_pk`` / ``weekly_board_pk``), sort ``board_score`` (rating, or points this week)."""
BOARD_PROJECTION = ["player_id", "nickname"]
"""The non-key attributes ``gsi_board`` carries: what a leaderboard line shows."""
RATING_BOARD_SHARDS = 16
"""Partition keys of the rating board in ``gsi_board``: at the plan's peak (2,000 rating
changes/s, each moving one entry: a GSI delete and put, 2 WCU) 250 WCU/s each, a quarter of a
partition's 1,000 WCU/s. A top-100 read queries each shard (Limit 100)."""
WEEKLY_BOARD_SHARDS = 16
"""Partition keys of one language's weekly board in ``gsi_board``: even if one language took
every rating change at the peak, 250 WCU/s each (as the rating board)."""
HISTOGRAM_SHARDS = 16
"""Copies of the rating histogram's counters, one chosen per update by the player's id: each
rank read sums them (``rank_blocks_key`` and ``rank_values_key``: 2 x 16 items, 16 RCU). At the
plan's peak every rating change rewrites one block-counter item in a transaction (2 WCU): 250
WCU/s per copy with 16, 500 (half the partition's limit, above it on the busiest copy) with 8
(``infra/simulation/RESULTS.md``, "leaderboards at the peak")."""
HISTOGRAM_BLOCK = 64
"""Rating points per block of the rating histogram: a rank is the count of entries in the blocks
above plus the exact counts above within the player's own block."""
RECORD_TTL_SECONDS = 365 * 24 * 3600
"""Tournament records (replays) and per-player history entries are kept a year, then removed by
TTL. Statistics, the rating board entry and the histogram live as long as the player."""
WEEKLY_TTL_SECONDS = 5 * 7 * 24 * 3600
"""A weekly board entry is kept five weeks after its week began (this week and last week are
served; the rest is slack for TTL's lag)."""
STREAM_VIEW_TYPE = "NEW_AND_OLD_IMAGES"
"""The table's stream (DynamoDB Streams): the history function reads the tournament item's new
image and the player item's old and new ones."""
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
    {"AttributeName": "board_pk", "AttributeType": "S"},
    {"AttributeName": "board_score", "AttributeType": "N"},
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
    {
        "IndexName": GSI_BOARD,
        "KeySchema": [
            {"AttributeName": "board_pk", "KeyType": "HASH"},
            {"AttributeName": "board_score", "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": BOARD_PROJECTION},
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


def stats_key(player_id: str) -> dict[str, str]:
    """A player's progression counters (tournaments, wins, podiums, places, best rating, per
    language), maintained by the history function."""
    return {PK: f"PLAYER#{player_id}", SK: "STATS"}


def player_history_key(player_id: str, ended_ms: int, tournament_id: str) -> dict[str, str]:
    """A player's entry for one finished tournament; the sort key orders them by end time."""
    return {PK: f"PLAYER#{player_id}", SK: f"HIST#{ended_ms:013d}#{tournament_id}"}


PLAYER_HISTORY_PREFIX = "HIST#"


def record_key(tournament_id: str) -> dict[str, str]:
    """A finished tournament's immutable summary (players, places, ratings, language, times)."""
    return {PK: f"TOURN#{tournament_id}", SK: "RECORD"}


def round_record_key(tournament_id: str, round_no: int) -> dict[str, str]:
    """One closed round of a tournament, immutable: pairs, bye, every duel's rows and secret."""
    return {PK: f"TOURN#{tournament_id}", SK: f"ROUND#{round_no:02d}"}


ROUND_RECORD_PREFIX = "ROUND#"


def rating_entry_key(player_id: str) -> dict[str, str]:
    """A player's entry on the rating board (``gsi_board``)."""
    return {PK: f"BOARD#{player_id}", SK: "RATING"}


def rating_board_pk(player_id: str) -> str:
    """The rating board shard (``board_pk``) of a player's entry (stable hash of the id)."""
    return f"RATING#{zlib.crc32(player_id.encode()) % RATING_BOARD_SHARDS}"


def weekly_entry_key(language: str, week: str, player_id: str) -> dict[str, str]:
    """A player's points in one language's week; ``week`` is the Monday, ``YYYY-MM-DD`` (UTC)."""
    return {PK: f"BOARD#{player_id}", SK: f"WEEK#{language}#{week}"}


def weekly_board_pk(language: str, week: str, player_id: str) -> str:
    """The weekly board shard (``board_pk``) of a player's entry."""
    return f"WEEK#{language}#{week}#{zlib.crc32(player_id.encode()) % WEEKLY_BOARD_SHARDS}"


def rank_blocks_key(shard: int) -> dict[str, str]:
    """One copy of the histogram's block counts: attribute ``blocks``, a map block -> count."""
    return {PK: f"RANKHIST#{shard}", SK: "BLOCKS"}


def rank_values_key(block: int, shard: int) -> dict[str, str]:
    """One copy of the exact counts within a block: attribute ``values``, rating -> count."""
    return {PK: f"RANKHIST#{block}#{shard}", SK: "VALUES"}


def histogram_shard(player_id: str) -> int:
    """The histogram copy a player's updates go to (stable hash of the id)."""
    return zlib.crc32(player_id.encode()) % HISTOGRAM_SHARDS


def record_ttl(ended_ms: int) -> int:
    """The TTL attribute's value (epoch seconds) for a record of a tournament ended at
    ``ended_ms``: ``RECORD_TTL_SECONDS`` later."""
    return ended_ms // 1000 + RECORD_TTL_SECONDS


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
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": STREAM_VIEW_TYPE},
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
