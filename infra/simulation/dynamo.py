"""Simulation: a fake in-memory DynamoDB *client* that behaves like DynamoDB under load.

``FakeDynamoClient`` offers the calls ``shared.adapters.dynamo.store.DynamoStore`` makes, each
waiting a sampled latency in simulated time, and raises botocore ``ClientError`` with DynamoDB's
shapes (``UnsupportedExpressionError`` for what it does not model); its accounting
(``partitions``, ``by_route``) feeds the report. What it models and how:
``shared/domain/RULINGS.md``, design notes, "The fake DynamoDB client".
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from infra.benchmarks.units import item_size, read_units, write_units
from infra.simulation.engine import Sim
from infra.simulation.expressions import (
    Condition,
    KeyCondition,
    UnsupportedExpressionError,
    Update,
    check_all_used,
    condition,
)
from shared.adapters.dynamo import schema
from shared.runtime.bootstrap import TOTAL_MAX_ATTEMPTS

AV = dict[str, Any]
Key = tuple[str, str]

BOTOCORE_MAX_ATTEMPTS = TOTAL_MAX_ATTEMPTS
"""``total_max_attempts`` of the client config (``shared.runtime.bootstrap``)."""


@dataclass(frozen=True)
class Limits:
    """Per-partition throughput (AWS, "Service, account, and table quotas": 3,000 RCU and 1,000
    WCU per partition; one partition key never exceeds them)."""

    wcu_per_s: float = 1000.0
    rcu_per_s: float = 3000.0
    burst_s: float = 1.0
    """A bucket holds this many seconds of capacity (unused capacity kept for bursts)."""
    throttle: bool = True


@dataclass(frozen=True)
class Latency:
    """Service-side latency of one call (lognormal: median, sigma), in seconds."""

    read: float = 0.005
    write: float = 0.008
    transaction: float = 0.015
    sigma: float = 0.5
    gsi_lag: float = 0.025
    """Median propagation lag of a global secondary index (lognormal, sigma ``gsi_sigma``)."""
    gsi_sigma: float = 0.7


@dataclass
class Partition:
    """One partition key's bucket and accounting."""

    name: str
    rcu_tokens: float
    wcu_tokens: float
    last: float = 0.0
    rcu_total: float = 0.0
    wcu_total: float = 0.0
    second: int = -1
    rcu_second: float = 0.0
    wcu_second: float = 0.0
    rcu_peak: float = 0.0
    wcu_peak: float = 0.0
    throttled: int = 0
    rcu_window: float = 0.0
    wcu_window: float = 0.0
    """Units consumed during the arrival window (``FakeDynamoClient.window_s``)."""


@dataclass
class _ThrottledError(Exception):
    partition: str


def _cerr(code: str, op: str, attempts: int, **extra: Any) -> ClientError:
    resp: dict[str, Any] = {
        "Error": {"Code": code, "Message": code},
        "ResponseMetadata": {"RetryAttempts": attempts, "HTTPStatusCode": 400},
        **extra,
    }
    return ClientError(resp, op)  # type: ignore[arg-type]


def _key_of(item_or_key: AV) -> Key:
    return (item_or_key[schema.PK]["S"], item_or_key[schema.SK]["S"])


def _strict(op: str, kwargs: dict[str, Any], allowed: set[str]) -> None:
    extra = set(kwargs) - allowed
    if extra:
        raise UnsupportedExpressionError(f"{op}: parameters not modelled: {sorted(extra)}")


@dataclass
class _Index:
    name: str
    hash_name: str
    range_name: str | None
    projection: str
    non_key: tuple[str, ...] = ()
    members: dict[str, set[Key]] = field(default_factory=lambda: defaultdict(set))

    def entry(self, item: AV | None) -> AV | None:
        if item is None or self.hash_name not in item:
            return None
        if self.range_name is not None and self.range_name not in item:
            return None
        if self.projection == "ALL":
            return item
        names = {schema.PK, schema.SK, self.hash_name, *self.non_key}
        if self.range_name:
            names.add(self.range_name)
        return {k: v for k, v in item.items() if k in names}


class FakeDynamoClient:
    """See the module docstring. ``sim``: the scheduler; ``rng``: this client's randomness."""

    def __init__(
        self,
        sim: Sim,
        rng: random.Random,
        table_name: str = "wordle-tournament",
        limits: Limits = Limits(),
        latency: Latency = Latency(),
    ) -> None:
        self.sim = sim
        self.rng = rng
        self.table = table_name
        self.limits = limits
        self.latency = latency
        self.items: dict[Key, AV] = {}
        self._before: dict[Key, tuple[AV | None, float]] = {}
        self._held: dict[Key, int] = {}
        self._tx_ids = iter(range(1, 1 << 62))
        self.indexes: dict[str, _Index] = {}
        for gsi in schema.GLOBAL_SECONDARY_INDEXES:
            ks: list[Any] = list(gsi["KeySchema"])
            hash_name = next(k["AttributeName"] for k in ks if k["KeyType"] == "HASH")
            range_name = next((k["AttributeName"] for k in ks if k["KeyType"] == "RANGE"), None)
            proj: Any = gsi["Projection"]
            self.indexes[str(gsi["IndexName"])] = _Index(
                str(gsi["IndexName"]),
                hash_name,
                range_name,
                proj["ProjectionType"],
                tuple(proj.get("NonKeyAttributes", ())),
            )
        self.partitions: dict[str, Partition] = {}
        self.by_route: dict[str, Counter[str]] = defaultdict(Counter)
        """route -> answer code (``ok:<op>`` or the error code) -> count."""
        self.route_units: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        """route -> [RCU, WCU] its requests consumed."""
        self.kind_units: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        """``table`` or an index name -> [RCU, WCU] consumed on its partitions."""
        self.window_from = 0.0
        self.window_s = float("inf")
        """``Partition.*_window`` count the units consumed in ``[window_from, window_s)``."""
        self.units: dict[str, float] = {"rcu": 0.0, "wcu": 0.0}
        """Units the requests consumed: ``rcu`` and ``wcu`` (summed per request)."""
        self.on_throttled: Any = None
        """Called with the operation's name per throttled request (each attempt counts in
        DynamoDB's ``ThrottledRequests``, a retried one too); None: not reported."""
        self.forced_throttles = 0
        """The next this many requests are throttled whatever the load (noise, faults)."""

    # ------------------------------------------------------------------ setup (no time, no units)
    def seed_item(self, item: AV) -> None:
        """Store ``item`` as is (a fixture: no latency, no units)."""
        self._write(_key_of(item), item)

    def set_attribute(self, key: Key, name: str, value: AV) -> None:
        """Change one attribute of a stored item (a fixture: no latency, no units)."""
        self._write(key, {**self.items[key], name: value})

    # ------------------------------------------------------------------ accounting
    def _route(self) -> str:
        return str(self.sim.ctx.get("route", "-"))

    def _count(self, code: str) -> None:
        self.by_route[self._route()][code] += 1
        ctx = self.sim.ctx
        if ctx is not None and "codes" in ctx:
            ctx["codes"][code] += 1

    def _partition(self, name: str) -> Partition:
        p = self.partitions.get(name)
        if p is None:
            lim = self.limits
            p = Partition(name, lim.rcu_per_s * lim.burst_s, lim.wcu_per_s * lim.burst_s)
            p.last = self.sim.now
            self.partitions[name] = p
        return p

    def _refill(self, p: Partition) -> None:
        lim, now = self.limits, self.sim.now
        dt = now - p.last
        if dt > 0:
            p.rcu_tokens = min(lim.rcu_per_s * lim.burst_s, p.rcu_tokens + dt * lim.rcu_per_s)
            p.wcu_tokens = min(lim.wcu_per_s * lim.burst_s, p.wcu_tokens + dt * lim.wcu_per_s)
            p.last = now

    def _consume(self, charges: list[tuple[str, float, float]]) -> None:
        """Charge ``(partition, rcu, wcu)`` for one request, or raise ``_ThrottledError`` (nothing
        charged) when a bucket lacks the units."""
        merged: dict[str, list[float]] = {}
        for name, r, w in charges:
            m = merged.setdefault(name, [0.0, 0.0])
            m[0] += r
            m[1] += w
        parts = [(self._partition(n), r, w) for n, (r, w) in merged.items()]
        request_rcu = sum(r for _, r, _ in charges)
        request_wcu = sum(w for _, _, w in charges)
        if self.forced_throttles > 0:
            self.forced_throttles -= 1
            raise _ThrottledError(parts[0][0].name if parts else "table:")
        if self.limits.throttle:
            for p, r, w in parts:
                self._refill(p)
                if p.rcu_tokens < r or p.wcu_tokens < w:
                    p.throttled += 1
                    raise _ThrottledError(p.name)
        second = int(self.sim.now)
        for p, r, w in parts:
            p.rcu_tokens -= r
            p.wcu_tokens -= w
            p.rcu_total += r
            p.wcu_total += w
            if p.second != second:
                p.second, p.rcu_second, p.wcu_second = second, 0.0, 0.0
            p.rcu_second += r
            p.wcu_second += w
            p.rcu_peak = max(p.rcu_peak, p.rcu_second)
            p.wcu_peak = max(p.wcu_peak, p.wcu_second)
            if self.window_from <= self.sim.now < self.window_s:
                p.rcu_window += r
                p.wcu_window += w
        self.units["rcu"] += request_rcu
        self.units["wcu"] += request_wcu
        route = self.route_units[self._route()]
        kind = self.kind_units
        for p, r, w in parts:
            route[0] += r
            route[1] += w
            k = kind[p.name.split(":", 1)[0]]
            k[0] += r
            k[1] += w

    def _write_charges(
        self, old: AV | None, new: AV | None, factor: int
    ) -> list[tuple[str, float, float]]:
        key_item = new if new is not None else old
        assert key_item is not None
        size = max(item_size(old), item_size(new))
        charges: list[tuple[str, float, float]] = [
            (f"table:{key_item[schema.PK]['S']}", 0.0, float(write_units(size) * factor))
        ]
        for ix in self.indexes.values():
            before, after = ix.entry(old), ix.entry(new)
            if before is None and after is None:
                continue
            if (
                before is not None
                and after is not None
                and before[ix.hash_name] == after[ix.hash_name]
                and (ix.range_name is None or before[ix.range_name] == after[ix.range_name])
            ):
                if before != after:
                    units = write_units(max(item_size(before), item_size(after)) + 100)
                    charges.append((self._ixpart(ix, after), 0.0, float(units)))
                continue
            if before is not None:
                charges.append(
                    (self._ixpart(ix, before), 0.0, float(write_units(item_size(before) + 100)))
                )
            if after is not None:
                charges.append(
                    (self._ixpart(ix, after), 0.0, float(write_units(item_size(after) + 100)))
                )
        return charges

    @staticmethod
    def _ixpart(ix: _Index, entry: AV) -> str:
        (_, v), *_ = entry[ix.hash_name].items()
        return f"{ix.name}:{v}"

    # ------------------------------------------------------------------ state
    def _write(self, key: Key, new: AV | None) -> None:
        old = self.items.get(key)
        if new is None:
            self.items.pop(key, None)
        else:
            self.items[key] = new
        changed = False
        for ix in self.indexes.values():
            before, after = ix.entry(old), ix.entry(new)
            if before == after:
                continue
            changed = True
            if after is not None:
                ix.members[self._hash_str(ix, after)].add(key)
        if changed:
            lag = self.latency.gsi_lag * math.exp(self.latency.gsi_sigma * self.rng.gauss(0, 1))
            self._before[key] = (old, self.sim.now + lag)

    @staticmethod
    def _hash_str(ix: _Index, entry: AV) -> str:
        (_, v), *_ = entry[ix.hash_name].items()
        return str(v)

    def _index_view(self, key: Key) -> AV | None:
        """The item as the indexes show it now (the previous version while the lag lasts)."""
        before = self._before.get(key)
        if before is not None:
            if self.sim.now < before[1]:
                return before[0]
            del self._before[key]
        return self.items.get(key)

    # ------------------------------------------------------------------ time
    def _lat(self, median: float) -> float:
        return median * math.exp(self.latency.sigma * self.rng.gauss(0, 1))

    def _plain(self, op: str, median: float, do: Any) -> Any:
        """One plain call with botocore's throttling retries: ``do(attempts)`` runs at the
        midpoint of each attempt's latency."""
        attempts = 0
        while True:
            lat = self._lat(median)
            self.sim.sleep(lat / 2)
            try:
                resp = do(attempts)
            except _ThrottledError:
                self._throttled(op)
                self.sim.defer(lat / 2)
                if attempts + 1 < BOTOCORE_MAX_ATTEMPTS:
                    self._count("retried:Throttled")
                    self.sim.sleep(self.rng.random() * 2**attempts)
                    attempts += 1
                    continue
                self._count("ProvisionedThroughputExceededException")
                raise _cerr("ProvisionedThroughputExceededException", op, attempts) from None
            except ClientError as err:
                self._count(str(err.response["Error"]["Code"]))
                self.sim.defer(lat / 2)
                raise
            self._count(f"ok:{op}")
            self.sim.defer(lat / 2)
            return resp

    def _throttled(self, op: str) -> None:
        if self.on_throttled is not None:
            self.on_throttled(op)

    def _check_table(self, name: Any) -> None:
        if name != self.table:
            raise _cerr("ResourceNotFoundException", "?", 0)

    # ------------------------------------------------------------------ reads
    def get_item(self, **kw: Any) -> dict[str, Any]:
        _strict("GetItem", kw, {"TableName", "Key", "ConsistentRead"})
        self._check_table(kw["TableName"])
        key = _key_of(kw["Key"])
        consistent = bool(kw.get("ConsistentRead", False))

        def do(attempts: int) -> dict[str, Any]:
            item = self.items.get(key)
            units = read_units(item_size(item), consistent=consistent)
            self._consume([(f"table:{key[0]}", units, 0.0)])
            return {"Item": dict(item)} if item is not None else {}

        return self._plain("GetItem", self.latency.read, do)  # type: ignore[no-any-return]

    def batch_get_item(self, **kw: Any) -> dict[str, Any]:
        _strict("BatchGetItem", kw, {"RequestItems"})
        request = kw["RequestItems"]
        if set(request) != {self.table}:
            raise UnsupportedExpressionError("BatchGetItem on another table")
        spec = request[self.table]
        _strict("BatchGetItem keys", spec, {"Keys", "ConsistentRead"})
        keys = [_key_of(k) for k in spec["Keys"]]
        if len(keys) > 100 or len(set(keys)) != len(keys):
            raise _cerr("ValidationException", "BatchGetItem", 0)
        consistent = bool(spec.get("ConsistentRead", False))

        def do(attempts: int) -> dict[str, Any]:
            found: list[AV] = []
            unprocessed: list[AV] = []
            for key in keys:
                item = self.items.get(key)
                units = read_units(item_size(item), consistent=consistent)
                try:
                    self._consume([(f"table:{key[0]}", units, 0.0)])
                except _ThrottledError:
                    unprocessed.append({schema.PK: {"S": key[0]}, schema.SK: {"S": key[1]}})
                    continue
                if item is not None:
                    found.append(dict(item))
            if unprocessed and len(unprocessed) == len(keys):
                raise _ThrottledError("batch")
            resp: dict[str, Any] = {"Responses": {self.table: found}}
            if unprocessed:
                self._count("UnprocessedKeys")
                resp["UnprocessedKeys"] = {
                    self.table: {"Keys": unprocessed, "ConsistentRead": consistent}
                }
            return resp

        return self._plain("BatchGetItem", self.latency.read, do)  # type: ignore[no-any-return]

    def query(self, **kw: Any) -> dict[str, Any]:
        _strict(
            "Query",
            kw,
            {
                "TableName",
                "IndexName",
                "KeyConditionExpression",
                "ExpressionAttributeNames",
                "ExpressionAttributeValues",
                "Limit",
                "ExclusiveStartKey",
                "ScanIndexForward",
                "ConsistentRead",
                "FilterExpression",
            },
        )
        self._check_table(kw["TableName"])
        index_name = kw.get("IndexName")
        if index_name is None:
            raise UnsupportedExpressionError("Query on the base table is not modelled")
        ix = self.indexes[index_name]
        if kw.get("ConsistentRead"):
            raise _cerr("ValidationException", "Query", 0)  # not on a GSI
        names, values = kw.get("ExpressionAttributeNames"), kw.get("ExpressionAttributeValues")
        kc = KeyCondition(kw["KeyConditionExpression"], names, values, ix.hash_name, ix.range_name)
        filt = condition(kw.get("FilterExpression"), names, values)
        check_all_used(names, values, kc, filt)
        limit = kw.get("Limit")
        forward = kw.get("ScanIndexForward", True)
        start = kw.get("ExclusiveStartKey")
        (_, hash_value), *_ = kc.hash_value.items()
        part = f"{ix.name}:{hash_value}"

        def do(attempts: int) -> dict[str, Any]:
            rows: list[tuple[Any, Key, AV]] = []
            members = ix.members.get(str(hash_value), set())
            stale: list[Key] = []
            for key in members:
                view = ix.entry(self._index_view(key))
                if view is None or view[ix.hash_name] != kc.hash_value:
                    current = ix.entry(self.items.get(key))
                    if key not in self._before and (
                        current is None or current[ix.hash_name] != kc.hash_value
                    ):
                        stale.append(key)
                    continue
                rng_av = view.get(ix.range_name) if ix.range_name else None
                if not kc.matches(rng_av):
                    continue
                rows.append((_sort_key(rng_av), key, view))
            for key in stale:
                members.discard(key)
            rows.sort(key=lambda r: (r[0], r[1]), reverse=not forward)
            if start is not None:
                skey = (
                    _sort_key(start.get(ix.range_name)) if ix.range_name else None,
                    _key_of(start),
                )
                rows = [
                    r for r in rows if ((r[0], r[1]) > skey if forward else (r[0], r[1]) < skey)
                ]
            out: list[AV] = []
            read: list[AV] = []
            size = 0
            more = False
            for _, _, view in rows:
                if (limit is not None and len(read) >= limit) or size >= 1_048_576:
                    more = True
                    break
                read.append(view)
                size += item_size(view)
                if filt is None or filt.holds(view):
                    out.append(dict(view))
            units = max(0.5, math.ceil(size / 4096) / 2)
            self._consume([(part, units, 0.0)])
            resp: dict[str, Any] = {"Items": out, "Count": len(out), "ScannedCount": len(read)}
            if read and (more or (limit is not None and len(read) == limit)):
                # DynamoDB returns a LastEvaluatedKey when the page ended early (Limit, 1 MB),
                # even when nothing follows
                last = read[-1]
                lek = {schema.PK: last[schema.PK], schema.SK: last[schema.SK]}
                lek[ix.hash_name] = last[ix.hash_name]
                if ix.range_name:
                    lek[ix.range_name] = last[ix.range_name]
                resp["LastEvaluatedKey"] = lek
            return resp

        return self._plain("Query", self.latency.read, do)  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ plain writes
    def _conditional(
        self,
        op: str,
        key: Key,
        new_of: Any,
        cond: Condition | None,
        return_old: bool,
        attempts: int,
    ) -> AV | None:
        """Check, charge and apply one plain write at this instant; the old item."""
        old = self.items.get(key)
        new = new_of(old)
        if new is not None and item_size(new) > 400 * 1024:
            raise _cerr("ValidationException", op, attempts)
        self._consume(self._write_charges(old, new if new is not None else old, 1))
        if key in self._held:
            raise _cerr("TransactionConflictException", op, attempts)
        if cond is not None and not cond.holds(old):
            extra = {"Item": dict(old)} if return_old and old is not None else {}
            raise _cerr("ConditionalCheckFailedException", op, attempts, **extra)
        self._write(key, new)
        return old

    def put_item(self, **kw: Any) -> dict[str, Any]:
        _strict(
            "PutItem",
            kw,
            {
                "TableName",
                "Item",
                "ConditionExpression",
                "ExpressionAttributeNames",
                "ExpressionAttributeValues",
                "ReturnValuesOnConditionCheckFailure",
            },
        )
        self._check_table(kw["TableName"])
        item = kw["Item"]
        names, values = kw.get("ExpressionAttributeNames"), kw.get("ExpressionAttributeValues")
        cond = condition(kw.get("ConditionExpression"), names, values)
        check_all_used(names, values, cond)
        return_old = kw.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"

        def do(attempts: int) -> dict[str, Any]:
            self._conditional(
                "PutItem", _key_of(item), lambda old: dict(item), cond, return_old, attempts
            )
            return {}

        return self._plain("PutItem", self.latency.write, do)  # type: ignore[no-any-return]

    def update_item(self, **kw: Any) -> dict[str, Any]:
        _strict(
            "UpdateItem",
            kw,
            {
                "TableName",
                "Key",
                "UpdateExpression",
                "ConditionExpression",
                "ExpressionAttributeNames",
                "ExpressionAttributeValues",
                "ReturnValuesOnConditionCheckFailure",
            },
        )
        self._check_table(kw["TableName"])
        key_av = kw["Key"]
        names, values = kw.get("ExpressionAttributeNames"), kw.get("ExpressionAttributeValues")
        upd = Update(kw["UpdateExpression"], names, values)
        cond = condition(kw.get("ConditionExpression"), names, values)
        check_all_used(names, values, upd, cond)
        return_old = kw.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"

        def new_of(old: AV | None) -> AV:
            return upd.apply(dict(old) if old is not None else dict(key_av))

        def do(attempts: int) -> dict[str, Any]:
            self._conditional("UpdateItem", _key_of(key_av), new_of, cond, return_old, attempts)
            return {}

        return self._plain("UpdateItem", self.latency.write, do)  # type: ignore[no-any-return]

    def delete_item(self, **kw: Any) -> dict[str, Any]:
        _strict(
            "DeleteItem",
            kw,
            {
                "TableName",
                "Key",
                "ReturnValues",
                "ConditionExpression",
                "ExpressionAttributeNames",
                "ExpressionAttributeValues",
            },
        )
        self._check_table(kw["TableName"])
        if kw.get("ReturnValues") not in (None, "NONE", "ALL_OLD"):
            raise UnsupportedExpressionError(f"DeleteItem ReturnValues={kw['ReturnValues']}")
        names, values = kw.get("ExpressionAttributeNames"), kw.get("ExpressionAttributeValues")
        cond = condition(kw.get("ConditionExpression"), names, values)
        check_all_used(names, values, cond)
        key = _key_of(kw["Key"])

        def do(attempts: int) -> dict[str, Any]:
            old = self._conditional("DeleteItem", key, lambda old: None, cond, False, attempts)
            if kw.get("ReturnValues") == "ALL_OLD" and old is not None:
                return {"Attributes": dict(old)}
            return {}

        return self._plain("DeleteItem", self.latency.write, do)  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ transactions
    def transact_write_items(self, **kw: Any) -> dict[str, Any]:
        _strict("TransactWriteItems", kw, {"TransactItems", "ClientRequestToken"})
        ops = kw["TransactItems"]
        if not 1 <= len(ops) <= 100:
            raise _cerr("ValidationException", "TransactWriteItems", 0)
        parsed: list[tuple[str, Key, Any, Condition | None, bool]] = []
        for op in ops:
            if len(op) != 1:
                raise UnsupportedExpressionError("one action per TransactItems entry")
            (kind, spec), *_ = op.items()
            common = {
                "TableName",
                "ConditionExpression",
                "ExpressionAttributeNames",
                "ExpressionAttributeValues",
                "ReturnValuesOnConditionCheckFailure",
            }
            names, values = (
                spec.get("ExpressionAttributeNames"),
                spec.get("ExpressionAttributeValues"),
            )
            self._check_table(spec["TableName"])
            cond = condition(spec.get("ConditionExpression"), names, values)
            if kind == "Put":
                _strict("Put", spec, common | {"Item"})
                item = spec["Item"]
                check_all_used(names, values, cond)
                parsed.append(
                    ("Put", _key_of(item), (lambda it: lambda old: dict(it))(item), cond, False)
                )
            elif kind == "Update":
                _strict("Update", spec, common | {"Key", "UpdateExpression"})
                upd = Update(spec["UpdateExpression"], names, values)
                check_all_used(names, values, upd, cond)
                key_av = spec["Key"]
                parsed.append(
                    (
                        "Update",
                        _key_of(key_av),
                        (
                            lambda u, k: (
                                lambda old: u.apply(dict(old) if old is not None else dict(k))
                            )
                        )(upd, key_av),
                        cond,
                        False,
                    )
                )
            elif kind == "Delete":
                _strict("Delete", spec, common | {"Key"})
                check_all_used(names, values, cond)
                parsed.append(("Delete", _key_of(spec["Key"]), lambda old: None, cond, False))
            elif kind == "ConditionCheck":
                _strict("ConditionCheck", spec, common | {"Key"})
                check_all_used(names, values, cond)
                parsed.append(("ConditionCheck", _key_of(spec["Key"]), None, cond, False))
            else:
                raise UnsupportedExpressionError(f"TransactItems action {kind}")
        keys = [p[1] for p in parsed]
        if len(set(keys)) != len(keys):
            raise _cerr("ValidationException", "TransactWriteItems", 0)  # two ops on one item
        return_old = [
            next(iter(op.values())).get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"
            for op in ops
        ]
        lat = self._lat(self.latency.transaction)
        op_name = "TransactWriteItems"
        self.sim.sleep(lat / 3)

        def cancel(reasons: list[dict[str, Any]], code: str) -> ClientError:
            self._count(f"TransactionCanceled:{code}")
            return _cerr("TransactionCanceledException", op_name, 0, CancellationReasons=reasons)

        # arrival: items held by another transaction in flight -> TransactionConflict
        if any(k in self._held for k in keys):
            reasons = [
                {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
                if k in self._held
                else {"Code": "None"}
                for k in keys
            ]
            err = cancel(reasons, "TransactionConflict")
            self.sim.defer(2 * lat / 3)
            raise err
        charges: list[tuple[str, float, float]] = []
        for kind, key, new_of, _, _ in parsed:
            old = self.items.get(key)
            if kind == "ConditionCheck":
                charges.append((f"table:{key[0]}", 0.0, float(write_units(item_size(old)) * 2)))
                continue
            new = new_of(old)
            charges += [
                (n, r, w * 2 if n.startswith("table:") else w)
                for n, r, w in self._write_charges(old, new if new is not None else old, 1)
            ]
        try:
            self._consume(charges)
        except _ThrottledError as t:
            self._throttled(op_name)
            reasons = [
                {"Code": "ThrottlingError", "Message": "Throughput exceeds the current capacity"}
                if f"table:{k[0]}" == t.partition or not t.partition.startswith("table:")
                else {"Code": "None"}
                for k in keys
            ]
            err = cancel(reasons, "ThrottlingError")
            self.sim.defer(2 * lat / 3)
            raise err from None
        tx = next(self._tx_ids)
        for k in keys:
            self._held[k] = tx
        try:
            self.sim.sleep(lat / 3)
            reasons = []
            failed = False
            for (_, key, _, cond, _), ret in zip(parsed, return_old, strict=True):
                old = self.items.get(key)
                if cond is not None and not cond.holds(old):
                    failed = True
                    r: dict[str, Any] = {
                        "Code": "ConditionalCheckFailed",
                        "Message": "The conditional request failed",
                    }
                    if ret and old is not None:
                        r["Item"] = dict(old)
                    reasons.append(r)
                else:
                    reasons.append({"Code": "None"})
            if failed:
                err = cancel(reasons, "ConditionalCheckFailed")
            else:
                for kind, key, new_of, _, _ in parsed:
                    if kind != "ConditionCheck":
                        self._write(key, new_of(self.items.get(key)))
                self._count(f"ok:{op_name}")
        finally:
            for k in keys:
                if self._held.get(k) == tx:
                    del self._held[k]
        self.sim.defer(lat / 3)
        if failed:
            raise err
        return {}


def _sort_key(av: AV | None) -> Any:
    if av is None:
        return (0, "")
    (kind, v), *_ = av.items()
    if kind == "N":
        return (1, Decimal(v))
    if kind == "S":
        return (2, v.encode("utf-8"))
    return (3, bytes(v))
