"""Benchmark, figure 3c: what the table stores, per player and per tournament, how long, and
what it costs to keep (storage and point-in-time recovery, billed per GB-month).

The items are the table as the play left it (``StoredItem``, scanned on moto at its end), sized
by DynamoDB's rules (``infra.benchmarks.units``) plus the 100 bytes of overhead DynamoDB bills
per item ("DynamoDB item sizes and formats", https://docs.aws.amazon.com/amazondynamodb/latest/
developerguide/CapacityUnitCalculations.html), each kept until its TTL (``ttl``) or, without
one, ``KEPT_MONTHS`` (a horizon: such items are never deleted). Per tournament: its tournament
and lobby items, its connections, its players' ``RATING#`` items, and one token item per player
(the resume a player makes per tournament under the capacity plan's method, kept a token
lifetime); a player's profile and current token are counted per player at rest. Index entries
(``gsi_due``, ``gsi_lobbies``) are removed when a tournament ends and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infra.benchmarks import units
from shared.adapters.dynamo import schema

TARGET_PLAYERS = 1_000_000
"""The capacity plan's largest level (``infra/CAPACITY.md``): concurrent players."""
ITEM_OVERHEAD_BYTES = 100
MONTH_S = 730 * 3600
"""A billing month (730 hours, as AWS prices a month)."""
KEPT_MONTHS = 12
"""How long an item without a TTL (``RATING#``) is billed in the cost per tournament: a year
of keeping it (it is kept for ever; the monthly growth says how much accrues)."""
PER_TOURNAMENT = ("TOURN", "LOBBY", "CONN", "RATING", "TOKEN")
"""Item kinds a tournament adds (``StoredItem.kind``)."""
PER_PLAYER = ("PROFILE", "TOKEN")
"""What a player keeps at rest: its profile and its current token's item."""


@dataclass(frozen=True)
class StoredItem:
    kind: str
    """``PROFILE``, ``RATING``, ``TOKEN``, ``CONN``, ``LOBBY``, ``TOURN``, ``OPENER``,
    ``NEWPLAYERS``, ... (the key's prefix; a player's ``sk`` tells a profile from a rating)."""
    bytes: int
    """Billed size: DynamoDB's item size + ``ITEM_OVERHEAD_BYTES``."""
    kept_s: float | None
    """Seconds until its TTL removes it, from the end of the play; None: no TTL."""


def kind_of(item: dict[str, Any]) -> str:
    pk = str(item[schema.PK]["S"])
    sk = str(item[schema.SK]["S"])
    if pk.startswith("PLAYER#"):
        return "RATING" if sk.startswith("RATING#") else "PROFILE"
    return pk.split("#", 1)[0]


def stored_items(client: Any, table: str, now_ms: int) -> list[StoredItem]:
    """Every item of ``table`` (a Scan of raw attribute values) as ``StoredItem``s."""
    out: list[StoredItem] = []
    kwargs: dict[str, Any] = {"TableName": table}
    while True:
        resp = client.scan(**kwargs)
        for item in resp.get("Items", []):
            ttl = item.get(schema.TTL_ATTRIBUTE)
            kept = None if ttl is None else max(0.0, int(ttl["N"]) - now_ms / 1000)
            out.append(StoredItem(kind_of(item), units.item_size(item) + ITEM_OVERHEAD_BYTES, kept))
        if "LastEvaluatedKey" not in resp:
            return out
        kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]


@dataclass
class Storage:
    items: list[StoredItem]
    players: int
    duration_s: float
    """The tournament's length (the capacity plan's per-tournament time)."""

    def _of(self, kind: str) -> list[StoredItem]:
        return [i for i in self.items if i.kind == kind]

    def mean_bytes(self, kind: str) -> float:
        found = self._of(kind)
        return sum(i.bytes for i in found) / len(found) if found else 0.0

    @property
    def per_player_bytes(self) -> float:
        """A player at rest: its profile and its current token's item."""
        return sum(self.mean_bytes(k) for k in PER_PLAYER)

    def per_tournament(self) -> dict[str, tuple[float, float]]:
        """Kind -> (bytes a tournament adds, GB-months it holds them). ``TOKEN``: one per
        player (its resume for this tournament); the rest as stored."""
        out: dict[str, tuple[float, float]] = {}
        for kind in PER_TOURNAMENT:
            found = self._of(kind)
            if kind == "TOKEN":
                found = found[: self.players]
            size = float(sum(i.bytes for i in found))
            held = sum(
                i.bytes / 1e9 * ((i.kept_s / MONTH_S) if i.kept_s is not None else KEPT_MONTHS)
                for i in found
            )
            out[kind] = (size, held)
        return out

    @property
    def per_tournament_bytes(self) -> float:
        return sum(b for b, _ in self.per_tournament().values())

    @property
    def gb_months(self) -> float:
        """GB-months one tournament's items are billed for (TTL'd: until their TTL; kept:
        ``KEPT_MONTHS``)."""
        return sum(h for _, h in self.per_tournament().values())

    @property
    def kept_bytes_per_tournament(self) -> float:
        """Bytes a tournament adds for good (items without a TTL)."""
        return float(sum(i.bytes for k in PER_TOURNAMENT for i in self._of(k) if i.kept_s is None))

    def tournaments_per_month(self, concurrent_players: int) -> float:
        """At the capacity plan's method: N / 8 tournaments running, one after another."""
        return concurrent_players / self.players / self.duration_s * MONTH_S

    def monthly_growth_gb(self, concurrent_players: int) -> float:
        """GB the kept items add each month at ``concurrent_players``."""
        return self.kept_bytes_per_tournament * self.tournaments_per_month(concurrent_players) / 1e9

    def steady_gb(self, concurrent_players: int) -> float:
        """GB the TTL'd items of a tournament hold at steady state (each held until its TTL)
        at ``concurrent_players``."""
        per_s = self.tournaments_per_month(concurrent_players) / MONTH_S
        return sum(
            i.bytes * i.kept_s * per_s / 1e9
            for k in PER_TOURNAMENT
            for i in (self._of(k)[: self.players] if k == "TOKEN" else self._of(k))
            if i.kept_s is not None
        )

    def usd_per_month_gb(self, prices: dict[str, Any]) -> float:
        """Storage + continuous backups (PITR), per GB-month."""
        ddb = prices["dynamodb"]
        return float(ddb["storage_gb_month"]) + float(ddb["pitr_gb_month"])

    def abandoned_players_gb(self, creates_per_s: float) -> float:
        """The most a script creating and abandoning players at ``creates_per_s`` can hold:
        a token lifetime of creates (then TTL removes them), per player at rest."""
        lifetime_s = schema.IDLE_PLAYER_TTL_SECONDS
        return creates_per_s * lifetime_s * self.per_player_bytes / 1e9


def summary(storage: Storage, prices: dict[str, Any]) -> dict[str, Any]:
    """The storage figures the docs quote (``infra.benchmarks.figures``)."""
    from infra.cdk.stack import STAGES

    creates_per_s = float(STAGES["prod"].route_throttles["$connect"][0])
    per_gb = storage.usd_per_month_gb(prices)
    growth = storage.monthly_growth_gb(TARGET_PLAYERS)
    abuse = storage.abandoned_players_gb(creates_per_s)
    return {
        "per_player_bytes": storage.per_player_bytes,
        "profile_bytes": storage.mean_bytes("PROFILE"),
        "token_bytes": storage.mean_bytes("TOKEN"),
        "per_tournament_bytes": storage.per_tournament_bytes,
        "per_tournament_by_kind": {k: b for k, (b, _) in storage.per_tournament().items()},
        "kept_bytes_per_tournament": storage.kept_bytes_per_tournament,
        "target_players": TARGET_PLAYERS,
        "tournaments_per_month": storage.tournaments_per_month(TARGET_PLAYERS),
        "steady_gb": storage.steady_gb(TARGET_PLAYERS),
        "monthly_growth_gb": growth,
        "monthly_growth_usd": growth * per_gb,
        "abuse_creates_per_s": creates_per_s,
        "abuse_gb": abuse,
        "abuse_usd": abuse * per_gb,
    }
