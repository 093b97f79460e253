"""Unit: ``DynamoStore.waiting_lobbies`` — the Queries it sends to ``gsi_lobbies`` (one per
shard, key condition on the admission range, filter on its top) and its paging to the end
(no blind spot however many lobbies wait)."""

from __future__ import annotations

from typing import Any

from shared.adapters.dynamo import schema
from shared.adapters.dynamo.store import DynamoStore, to_av


def _entry(lobby_id: str, lo: int, hi: int) -> dict[str, Any]:
    return to_av(
        {
            "pk": f"LOBBY#{lobby_id}",
            "sk": "LOBBY",
            "waiting_pk": "WAITING#en#0",
            "waiting_lo": lo,
            "waiting_hi": hi,
            "lobby_id": lobby_id,
            "created_ms": 5,
            "seat_count": 3,
        }
    )


class _PagedIndex:
    """A client whose shard 0 answers in three pages; the other shards are empty."""

    def __init__(self) -> None:
        self.queries: list[dict[str, Any]] = []

    def query(self, **kwargs: Any) -> dict[str, Any]:
        self.queries.append(kwargs)
        if kwargs["ExpressionAttributeValues"][":w"]["S"] != "WAITING#en#0":
            return {"Items": []}
        page = int(kwargs.get("ExclusiveStartKey", {}).get("page", {}).get("N", "0"))
        resp: dict[str, Any] = {"Items": [_entry(f"l{page}", 700 + page, 1100 + page)]}
        if page < 2:
            resp["LastEvaluatedKey"] = {"page": {"N": str(page + 1)}}
        return resp


def test_every_shard_is_queried_and_every_page_followed() -> None:
    client = _PagedIndex()
    store = DynamoStore(client, "t", lambda: 0)

    found = store.waiting_lobbies("en", 1000)

    assert [(w.lobby_id, w.seats, w.created_ms, w.lo, w.hi) for w in found] == [
        ("l0", 3, 5, 700, 1100),
        ("l1", 3, 5, 701, 1101),
        ("l2", 3, 5, 702, 1102),
    ]
    shards = [q["ExpressionAttributeValues"][":w"]["S"] for q in client.queries]
    assert shards == ["WAITING#en#0"] * 3 + [
        f"WAITING#en#{s}" for s in range(1, schema.WAITING_SHARDS)
    ]
    assert [q.get("ExclusiveStartKey") for q in client.queries[:3]] == [
        None,
        {"page": {"N": "1"}},
        {"page": {"N": "2"}},
    ]
    for q in client.queries:
        assert q["IndexName"] == schema.GSI_WAITING
        assert q["KeyConditionExpression"] == "waiting_pk = :w AND waiting_lo BETWEEN :lo AND :r"
        assert q["FilterExpression"] == "waiting_hi >= :r"
        assert q["ExpressionAttributeValues"][":lo"] == {"N": "600"}
        assert q["ExpressionAttributeValues"][":r"] == {"N": "1000"}
        assert "Limit" not in q
        assert "ConsistentRead" not in q  # a GSI answers eventually consistent only


def test_the_index_projects_only_what_choosing_needs() -> None:
    (index,) = [i for i in schema.GLOBAL_SECONDARY_INDEXES if i["IndexName"] == schema.GSI_WAITING]
    assert index["Projection"] == {
        "ProjectionType": "INCLUDE",
        "NonKeyAttributes": ["lobby_id", "created_ms", "seat_count", "waiting_hi"],
    }
    assert [k["AttributeName"] for k in index["KeySchema"]] == ["waiting_pk", "waiting_lo"]
