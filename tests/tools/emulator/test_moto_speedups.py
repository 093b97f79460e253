"""Local runtime: each moto speed-up (``infra.emulator.moto_speedups``) answers as moto does."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infra.emulator.dynamo import EmbeddedDynamo

from .test_emulator_dynamo import TABLE, client, in_process_client, make_table

pytestmark = pytest.mark.enable_socket


@pytest.fixture
def dynamo() -> Iterator[EmbeddedDynamo]:
    with EmbeddedDynamo() as db:
        yield db


def _patched_points() -> tuple[Any, ...]:
    """What the four speed-ups and the stream records' patch replace in moto (functions,
    compared by identity)."""
    from moto.core.common_models import BaseModel
    from moto.core.responses import ActionResult
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import StreamShard, Table

    return (
        DynamoDBBackend.transact_write_items,
        Table.query,
        ActionResult.execute_result,
        BaseModel.__dict__["__new__"],
        StreamShard.add,
        DynamoDBBackend.update_item,
    )


def test_the_speedups_are_on_only_while_an_embedded_dynamo_runs() -> None:
    """Installed by ``EmbeddedDynamo.start`` and removed by ``stop``: moto elsewhere in the
    process (the harness's ``mock_aws``) runs its own code."""
    before = _patched_points()
    with EmbeddedDynamo():
        running = _patched_points()
    assert all(a is not b for a, b in zip(before, running, strict=True))
    assert _patched_points() == before


# --- Transactions roll back the items they name (ItemRollback) --------------------------------


@pytest.mark.parametrize("path", ["http", "in-process"])
def test_a_cancelled_transaction_leaves_every_item_as_it_was(
    dynamo: EmbeddedDynamo, path: str
) -> None:
    """A transaction whose last condition fails changes nothing: the new item is not created,
    the updated one keeps its value, the deleted one is still there (moto applies the earlier
    operations before it meets the failing one; the item rollback undoes them)."""
    ddb = client(dynamo.endpoint) if path == "http" else in_process_client(dynamo)
    make_table(ddb)
    ddb.put_item(TableName=TABLE, Item={"pk": {"S": "kept"}, "n": {"N": "1"}})
    ddb.put_item(TableName=TABLE, Item={"pk": {"S": "doomed"}, "n": {"N": "2"}})
    ddb.put_item(TableName=TABLE, Item={"pk": {"S": "guard"}, "n": {"N": "3"}})

    with pytest.raises(ddb.exceptions.TransactionCanceledException) as raised:
        ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "new"}, "n": {"N": "9"}}}},
                {
                    "Update": {
                        "TableName": TABLE,
                        "Key": {"pk": {"S": "kept"}},
                        "UpdateExpression": "ADD n :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}},
                    }
                },
                {"Delete": {"TableName": TABLE, "Key": {"pk": {"S": "doomed"}}}},
                {
                    "ConditionCheck": {
                        "TableName": TABLE,
                        "Key": {"pk": {"S": "guard"}},
                        "ConditionExpression": "n = :four",
                        "ExpressionAttributeValues": {":four": {"N": "4"}},
                    }
                },
            ]
        )

    reasons = [r["Code"] for r in raised.value.response["CancellationReasons"]]
    assert reasons == ["None", "None", "None", "ConditionalCheckFailed"]
    items = {
        i["pk"]["S"]: i["n"]["N"] for i in ddb.scan(TableName=TABLE, ConsistentRead=True)["Items"]
    }
    assert items == {"kept": "1", "doomed": "2", "guard": "3"}


def test_a_transaction_that_passes_applies_every_operation(dynamo: EmbeddedDynamo) -> None:
    ddb = in_process_client(dynamo)
    make_table(ddb)
    ddb.put_item(TableName=TABLE, Item={"pk": {"S": "old"}, "n": {"N": "1"}})

    ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "new"}, "n": {"N": "9"}}}},
            {"Delete": {"TableName": TABLE, "Key": {"pk": {"S": "old"}}}},
        ]
    )

    items = {i["pk"]["S"] for i in ddb.scan(TableName=TABLE, ConsistentRead=True)["Items"]}
    assert items == {"new"}


# --- Query from the queried partition (IndexedQuery) -------------------------------------------

INDEXED = "emulator-indexed"
_PKS = ("p1", "p2", "p3")
_SKS = ("s1", "s2")
_SHARDS = ("g0", "g1")


def make_indexed_table(ddb: Any) -> None:
    """A table shaped like ours: pk + sk, one index by a partition key alone (sort key: the
    table's), one with a sort key, one keyed on two partition attributes."""
    ddb.create_table(
        TableName=INDEXED,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": n, "AttributeType": t}
            for n, t in (("pk", "S"), ("sk", "S"), ("g", "S"), ("r", "N"), ("h", "S"))
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            },
            {
                "IndexName": "by_g_r",
                "KeySchema": [
                    {"AttributeName": "g", "KeyType": "HASH"},
                    {"AttributeName": "r", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
            {
                "IndexName": "by_h",
                "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["v"]},
            },
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def _attrs(g: str | None, r: int | None, h: str | None, v: int) -> dict[str, Any]:
    out: dict[str, Any] = {"v": {"N": str(v)}}
    if g is not None:
        out["g"] = {"S": g}
    if r is not None:
        out["r"] = {"N": str(r)}
    if h is not None:
        out["h"] = {"S": h}
    return out


_key = st.fixed_dictionaries(
    {
        "pk": st.sampled_from(_PKS).map(lambda s: {"S": s}),
        "sk": st.sampled_from(_SKS).map(lambda s: {"S": s}),
    }
)
_maybe_g = st.one_of(st.none(), st.sampled_from(_SHARDS))
_maybe_r = st.one_of(st.none(), st.integers(0, 3))
_maybe_h = st.one_of(st.none(), st.sampled_from(("h0", "h1")))
_put = st.builds(
    lambda key, g, r, h, v: ("put", key, _attrs(g, r, h, v)),
    _key,
    _maybe_g,
    _maybe_r,
    _maybe_h,
    st.integers(0, 9),
)
_update = st.builds(lambda key, g, r: ("update", key, g, r), _key, _maybe_g, _maybe_r)
_delete = st.builds(lambda key: ("delete", key), _key)
_transact = st.builds(
    lambda put, update, delete, fails: ("transact", put, update, delete, fails),
    _put,
    _update,
    _delete,
    st.booleans(),
)
_operations = st.lists(st.one_of(_put, _update, _delete, _transact), max_size=12)


def _update_params(key: dict[str, Any], g: str | None, r: int | None) -> dict[str, Any]:
    sets, removes, values = [], [], {}
    for name, value in (
        ("g", None if g is None else {"S": g}),
        ("r", None if r is None else {"N": str(r)}),
    ):
        if value is None:
            removes.append(name)
        else:
            sets.append(f"{name} = :{name}")
            values[f":{name}"] = value
    expression = (("SET " + ", ".join(sets)) if sets else "") + (
        (" REMOVE " + ", ".join(removes)) if removes else ""
    )
    params: dict[str, Any] = {
        "TableName": INDEXED,
        "Key": key,
        "UpdateExpression": expression.strip(),
    }
    if values:
        params["ExpressionAttributeValues"] = values
    return params


def _apply(ddb: Any, operation: tuple[Any, ...]) -> None:
    kind = operation[0]
    if kind == "put":
        ddb.put_item(TableName=INDEXED, Item={**operation[1], **operation[2]})
    elif kind == "update":
        ddb.update_item(**_update_params(*operation[1:]))
    elif kind == "delete":
        ddb.delete_item(TableName=INDEXED, Key=operation[1])
    else:
        _, put, update, delete, fails = operation
        keys = {(k["pk"]["S"], k["sk"]["S"]) for k in (put[1], update[1], delete[1])}
        if len(keys) < 3:  # one item named twice: moto refuses the whole transaction
            return
        items: list[dict[str, Any]] = [
            {"Put": {"TableName": INDEXED, "Item": {**put[1], **put[2]}}},
            {"Update": _update_params(*update[1:])},
            {"Delete": {"TableName": INDEXED, "Key": delete[1]}},
        ]
        if fails:  # a condition no item meets: everything rolls back
            items[-1]["Delete"]["ConditionExpression"] = "v = :never"
            items[-1]["Delete"]["ExpressionAttributeValues"] = {":never": {"N": "-1"}}
        try:
            ddb.transact_write_items(TransactItems=items)
        except ddb.exceptions.TransactionCanceledException:
            assert fails


def _queries() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for pk in _PKS:
        out.append(
            {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": pk}}}
        )
    for g in _SHARDS:
        values = {":g": {"S": g}}
        out.append(
            {
                "IndexName": "by_g",
                "KeyConditionExpression": "g = :g",
                "ExpressionAttributeValues": values,
            }
        )
        out.append(
            {
                "IndexName": "by_g_r",
                "KeyConditionExpression": "g = :g AND r >= :r",
                "ExpressionAttributeValues": {**values, ":r": {"N": "1"}},
                "ScanIndexForward": False,
            }
        )
        out.append(
            {
                "IndexName": "by_g",
                "KeyConditionExpression": "g = :g",
                "ExpressionAttributeValues": values,
                "Limit": 2,
            }
        )
    for h in ("h0", "h1"):
        out.append(
            {
                "IndexName": "by_h",
                "KeyConditionExpression": "h = :h",
                "ExpressionAttributeValues": {":h": {"S": h}},
            }
        )
    return out


def _all_pages(ddb: Any, query: dict[str, Any]) -> list[dict[str, Any]]:
    pages, start = [], None
    while True:
        params = {"TableName": INDEXED, **query, **({"ExclusiveStartKey": start} if start else {})}
        answer = ddb.query(**params)
        pages.append({k: answer.get(k) for k in ("Items", "Count", "LastEvaluatedKey")})
        start = answer.get("LastEvaluatedKey")
        if not start:
            return pages


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=_operations)
def test_a_query_from_the_partition_answers_as_moto_walking_the_table(
    dynamo: EmbeddedDynamo, both_writers: list[str], operations: list[tuple[Any, ...]]
) -> None:
    """Random puts, updates (index keys set and removed), deletes and transactions (some
    cancelled and rolled back); after each, every Query (table, three indexes, paged, reversed)
    answers the same items, pages and keys from the partition map as from moto's whole walk
    (and every answer is written alike by ``json.dumps`` and by moto's serializer)."""
    ddb = in_process_client(dynamo)
    make_indexed_table(ddb)
    patch = dynamo.indexed_query
    try:
        for operation in operations:
            _apply(ddb, operation)
            for query in _queries():
                patch.enabled = False
                walked = _all_pages(ddb, query)
                patch.enabled = True
                assert _all_pages(ddb, query) == walked, (operation, query)
    finally:
        patch.enabled = True
        ddb.delete_table(TableName=INDEXED)


def test_an_index_query_does_not_walk_the_table(dynamo: EmbeddedDynamo) -> None:
    """With the map installed, a Query on the table or an index hands moto only its partition's
    items (``Table.all_items``, which moto walks, returns 1 of 30); switched off, all 30."""
    from moto.dynamodb.models.table import Table

    ddb = in_process_client(dynamo)
    make_indexed_table(ddb)
    for n in range(30):
        shard = "g0" if n == 7 else "g1"
        ddb.put_item(
            TableName=INDEXED,
            Item={"pk": {"S": f"p{n}"}, "sk": {"S": "s"}, **_attrs(shard, n, None, n)},
        )
    walked: list[int] = []
    walk = Table.all_items

    def counting(table: Any) -> Any:
        items = walk(table)
        walked.append(len(items))
        return items

    Table.all_items = counting  # type: ignore[method-assign,assignment]
    by_g0 = {
        "TableName": INDEXED,
        "IndexName": "by_g",
        "KeyConditionExpression": "g = :g",
        "ExpressionAttributeValues": {":g": {"S": "g0"}},
    }
    by_pk = {
        "TableName": INDEXED,
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "p3"}},
    }
    try:
        assert [i["pk"]["S"] for i in ddb.query(**by_g0)["Items"]] == ["p7"]
        assert [i["pk"]["S"] for i in ddb.query(**by_pk)["Items"]] == ["p3"]
        assert walked == [1, 1]
        dynamo.indexed_query.enabled = False
        assert [i["pk"]["S"] for i in ddb.query(**by_g0)["Items"]] == ["p7"]
        assert walked == [1, 1, 30]
    finally:
        Table.all_items = walk  # type: ignore[method-assign]
        dynamo.indexed_query.enabled = True


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=_operations)
def test_the_item_rollback_leaves_the_table_as_motos_table_copy_does(
    dynamo: EmbeddedDynamo, operations: list[tuple[Any, ...]]
) -> None:
    """Random puts, updates, deletes and transactions (some cancelled and rolled back): the
    table ends the same with :class:`ItemRollback` as with moto's own copy of every table."""
    ddb = in_process_client(dynamo)
    ends = []
    for patched in (True, False):
        if not patched:
            dynamo.item_rollback.uninstall()
        make_indexed_table(ddb)
        try:
            for operation in operations:
                _apply(ddb, operation)
            items = ddb.scan(TableName=INDEXED, ConsistentRead=True)["Items"]
            ends.append(sorted(items, key=lambda i: (i["pk"]["S"], i["sk"]["S"])))
        finally:
            ddb.delete_table(TableName=INDEXED)
            dynamo.item_rollback.install()
    assert ends[0] == ends[1]


# --- DynamoDB answers written with json.dumps (FastResponses) ----------------------------------


@pytest.fixture
def both_writers(dynamo: EmbeddedDynamo) -> Iterator[list[str]]:
    """Every DynamoDB answer written twice, by ``json.dumps`` and by moto's serializer; the
    test fails if they differ once parsed. Yields the operations compared."""
    from moto.core.responses import ActionResult

    fast = ActionResult.execute_result
    compared: list[str] = []

    def compare(result: Any, context: Any) -> Any:
        answer = fast(result, context)
        dynamo.fast_responses.enabled = False
        try:
            reference = fast(result, context)
        finally:
            dynamo.fast_responses.enabled = True
        assert answer[0] == reference[0]
        assert answer[1].items() >= {"Content-Type": "application/x-amz-json-1.0"}.items()
        assert json.loads(answer[2]) == json.loads(reference[2]), context.operation_model.name
        compared.append(context.operation_model.name)
        return answer

    ActionResult.execute_result = compare  # type: ignore[method-assign,assignment]
    try:
        yield compared
    finally:
        ActionResult.execute_result = fast  # type: ignore[method-assign]


def test_json_answers_match_motos_serializer_on_every_operation_the_store_uses(
    dynamo: EmbeddedDynamo, both_writers: list[str]
) -> None:
    ddb = in_process_client(dynamo)
    make_indexed_table(ddb)
    key = {"pk": {"S": "a"}, "sk": {"S": "b"}}
    item = {
        **key,
        "state": {"B": bytes(range(256))},
        "n": {"N": "1.50"},
        "big": {"N": "12345678901234567890"},
        "l": {"L": [{"S": "x"}, {"NULL": True}, {"BOOL": False}]},
        "m": {"M": {"q": {"SS": ["u", "v"]}, "bs": {"BS": [b"\x00", b"\x01"]}}},
        "g": {"S": "g0"},
        "r": {"N": "3"},
    }
    ddb.put_item(TableName=INDEXED, Item=item, ReturnConsumedCapacity="TOTAL")
    got = ddb.get_item(TableName=INDEXED, Key=key, ConsistentRead=True)["Item"]
    assert got["state"] == {"B": bytes(range(256))}
    assert got["m"]["M"]["bs"] == {"BS": [b"\x00", b"\x01"]}
    ddb.get_item(TableName=INDEXED, Key={"pk": {"S": "none"}, "sk": {"S": "b"}})
    ddb.update_item(
        TableName=INDEXED,
        Key=key,
        UpdateExpression="SET n = n + :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
        ReturnValues="ALL_NEW",
        ReturnConsumedCapacity="INDEXES",
    )
    ddb.query(
        TableName=INDEXED,
        IndexName="by_g_r",
        KeyConditionExpression="g = :g AND r > :r",
        ExpressionAttributeValues={":g": {"S": "g0"}, ":r": {"N": "1"}},
        Limit=1,
        ReturnConsumedCapacity="TOTAL",
    )
    ddb.query(
        TableName=INDEXED,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "a"}},
        ProjectionExpression="n, l",
    )
    ddb.batch_get_item(RequestItems={INDEXED: {"Keys": [key], "ConsistentRead": True}})
    ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": INDEXED, "Item": {**key, "sk": {"S": "c"}}}},
            {"Delete": {"TableName": INDEXED, "Key": key}},
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    ddb.delete_item(TableName=INDEXED, Key={**key, "sk": {"S": "c"}}, ReturnValues="ALL_OLD")
    ddb.scan(TableName=INDEXED)
    ddb.describe_table(TableName=INDEXED)
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.put_item(TableName=INDEXED, Item=key, ConditionExpression="attribute_exists(pk)")
    assert set(both_writers) >= {
        "PutItem",
        "GetItem",
        "UpdateItem",
        "Query",
        "BatchGetItem",
        "TransactWriteItems",
        "DeleteItem",
        "Scan",
        "DescribeTable",
    }


# --- moto's instance tracking by weak reference (WeakInstanceTracking) ------------------------


def _live_items() -> int:
    from moto.dynamodb.models.dynamo_type import Item

    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is Item)


def test_replaced_items_are_freed_and_the_dashboard_still_lists_the_live_ones(
    dynamo: EmbeddedDynamo,
) -> None:
    """moto appends every ``Item`` it creates (each write, each old image, each transaction's
    check) to ``Item.instances_tracked``. Installed, the tracking is weak: 200 writes and
    conditional updates of one item leave about one ``Item`` alive, and the tracked instances
    are the live ones. Uninstalled, moto's own list keeps every version."""
    from moto.dynamodb.models.dynamo_type import Item

    ddb = in_process_client(dynamo)
    make_table(ddb)
    before = _live_items()

    def churn(n: int) -> None:
        for v in range(n):
            ddb.put_item(TableName=TABLE, Item={"pk": {"S": "a"}, "v": {"N": str(v)}})
            ddb.update_item(
                TableName=TABLE,
                Key={"pk": {"S": "a"}},
                UpdateExpression="SET w = :w",
                ConditionExpression="v = :v",
                ExpressionAttributeValues={":w": {"S": "x" * 50}, ":v": {"N": str(v)}},
                ReturnValues="ALL_OLD",
            )

    churn(100)
    assert _live_items() - before <= 3
    tracked = list(Item.instances_tracked)  # type: ignore[attr-defined]
    assert any(i.attrs.get("pk") is not None and i.attrs["pk"].value == "a" for i in tracked)
    assert len(tracked) <= before + 3

    dynamo.weak_tracking.uninstall()
    try:
        start = _live_items()
        churn(100)
        assert _live_items() - start >= 200  # moto alone keeps every version
    finally:
        dynamo.weak_tracking.install()
