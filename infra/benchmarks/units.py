"""Benchmarks: DynamoDB capacity units computed from item sizes by DynamoDB's published rules
(moto reports a fixed ``ConsumedCapacity`` whatever the size). The rules as applied, and the
one assumption (index writes are not doubled in a transaction): ``shared/domain/RULINGS.md``,
Design notes, "Benchmarks".
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from shared.adapters.dynamo import schema

_TABLE_KEYS = (schema.PK, schema.SK)


def number_size(raw: str) -> int:
    """Bytes of a DynamoDB number: 1 per two significant digits, + 1."""
    digits = str(Decimal(raw).normalize()).lstrip("-").replace(".", "")
    digits = digits.split("E")[0].strip("0") or "0"
    return math.ceil(len(digits) / 2) + 1


def value_size(av: dict[str, Any]) -> int:
    (kind, value), *_ = av.items()
    if kind == "S":
        return len(value.encode("utf-8"))
    if kind == "N":
        return number_size(value)
    if kind == "B":
        return len(value)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(v.encode("utf-8")) for v in value)
    if kind == "NS":
        return sum(number_size(v) for v in value)
    if kind == "BS":
        return sum(len(v) for v in value)
    if kind == "L":
        return 3 + sum(1 + value_size(v) for v in value)
    if kind == "M":
        return 3 + sum(1 + len(k.encode("utf-8")) + value_size(v) for k, v in value.items())
    raise ValueError(f"unknown attribute type {kind}")


def item_size(item: dict[str, Any] | None) -> int:
    """Bytes of an item in attribute-value form (``{"name": {"S": "..."}}``); 0 if None."""
    if not item:
        return 0
    return sum(len(k.encode("utf-8")) + value_size(v) for k, v in item.items())


def read_units(size: int, *, consistent: bool) -> float:
    units = max(1, math.ceil(size / 4096))
    return float(units) if consistent else units / 2


def write_units(size: int) -> int:
    return max(1, math.ceil(size / 1024))


def _index_entry(item: dict[str, Any], index: Any) -> dict[str, Any] | None:
    keys = [k["AttributeName"] for k in index["KeySchema"]]
    if not all(k in item for k in keys):
        return None
    if index["Projection"]["ProjectionType"] == "ALL":
        return dict(item)
    names = set(_TABLE_KEYS) | set(keys) | set(index["Projection"].get("NonKeyAttributes", []))
    return {k: v for k, v in item.items() if k in names}


def index_write_units(old: dict[str, Any] | None, new: dict[str, Any] | None) -> int:
    """Write units the table's global secondary indexes consume for ``old`` -> ``new``."""
    total = 0
    indexes: list[Any] = list(schema.GLOBAL_SECONDARY_INDEXES)
    for index in indexes:
        keys = [k["AttributeName"] for k in index["KeySchema"]]
        before = _index_entry(old, index) if old else None
        after = _index_entry(new, index) if new else None
        if before is None and after is None:
            continue
        if before is None and after is not None:
            total += write_units(item_size(after) + 100)
        elif after is None and before is not None:
            total += write_units(item_size(before) + 100)
        elif before is not None and after is not None:
            if any(before[k] != after[k] for k in keys):
                total += write_units(item_size(before) + 100) + write_units(item_size(after) + 100)
            elif before != after:
                total += write_units(max(item_size(before), item_size(after)) + 100)
    return total
