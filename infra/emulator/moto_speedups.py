"""Four in-place patches of moto 5.2's DynamoDB that make the local runtime's DynamoDB fast.

Each keeps moto's answers and makes a request's cost independent of the table's size and
history; each has ``install()`` / ``uninstall()`` and is compared with moto's own path by
``tests/tools/emulator/test_moto_speedups.py``. Installed only by :class:`~infra.emulator.dynamo
.EmbeddedDynamo` while it runs (the local runtime's DynamoDB process); the harness's and the
benchmarks' ``mock_aws`` run moto unpatched.
"""

from __future__ import annotations

import base64
import functools
import importlib
import inspect
import json
import logging
import threading
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

log = logging.getLogger(__name__)


class ItemRollback:
    """moto's ``TransactWriteItems`` with the rollback of the items it touches, not the tables.

    moto backs up every table a transaction names with ``copy.deepcopy`` before applying it
    (``DynamoDBBackend.transact_write_items``), so each transaction costs time in proportion to
    the whole table: with a hundred tournaments' players, connections and lobbies in the one
    table of the single-table design, a join's transaction took tens of ms. Installed
    (:meth:`install`), the backend's transaction backs up only the items its operations name
    (by key, their attributes as they were or their absence) and, when moto raises (a failed
    condition: ``TransactionCanceledException``; a validation error), puts those back —
    the same outcome, since moto applies a transaction's operations only to those items, and
    drops the stream records the cancelled transaction and its rollback wrote (none on AWS). The
    table copy is skipped by handing moto the live table as its "backup" for the duration of the
    call (its restore is then a no-op). Requests must be serialised (they are: the
    :class:`~infra.emulator.dynamo.SerialisedApp` / in-process lock), as moto itself requires.
    """

    def __init__(self) -> None:
        self._installed: Any = None
        self._active = False

    def install(self) -> None:
        """Patch moto's backend class and the ``copy`` module its models module uses."""
        import copy

        from moto.dynamodb.models.table import Table

        models: Any = importlib.import_module("moto.dynamodb.models")
        if self._installed is not None:
            return
        original = models.DynamoDBBackend.transact_write_items
        rollback = self

        class _Copy:
            """``copy`` for moto's models module: a table's deepcopy is the table itself while
            an item-rolled-back transaction runs (and a real deepcopy otherwise)."""

            def __getattr__(self, name: str) -> Any:
                return getattr(copy, name)

            @staticmethod
            def deepcopy(x: Any, memo: Any = None) -> Any:
                if rollback._active and isinstance(x, Table):
                    return x
                return copy.deepcopy(x, memo)

        def transact_write_items(backend: Any, transact_items: list[dict[str, Any]]) -> None:
            saved = rollback._save(backend, transact_items)
            streams = rollback._stream_lengths(backend)
            rollback._active = True
            try:
                original(backend, transact_items)
            except Exception:
                rollback._active = False
                rollback._restore(backend, saved)
                rollback._truncate_streams(backend, streams)
                raise
            finally:
                rollback._active = False

        self._installed = (models, original, models.copy)
        models.copy = _Copy()
        models.DynamoDBBackend.transact_write_items = transact_write_items

    def uninstall(self) -> None:
        """Undo :meth:`install`."""
        if self._installed is None:
            return
        models, original, copy_module = self._installed
        models.DynamoDBBackend.transact_write_items = original
        models.copy = copy_module
        self._installed = None

    @staticmethod
    def _save(
        backend: Any, transact_items: list[dict[str, Any]]
    ) -> list[tuple[str, dict[str, Any], dict[str, Any] | None]]:
        """(table, key, attributes before or None) for each item a write operation names."""
        import copy

        saved = []
        for entry in transact_items:
            for op_type, op in entry.items():
                if op_type == "ConditionCheck" or op.get("TableName") not in backend.tables:
                    continue
                table = backend.tables[op["TableName"]]
                if op_type == "Put":
                    attrs = op.get("Item") or {}
                    names = [table.hash_key_attr, table.range_key_attr]
                    key = {n: attrs[n] for n in names if n is not None and n in attrs}
                else:
                    key = op.get("Key") or {}
                try:
                    item = backend.get_item(op["TableName"], key)
                except Exception:  # a malformed key: moto refuses the transaction itself
                    continue
                before = copy.deepcopy(item.to_json()["Attributes"]) if item else None
                saved.append((op["TableName"], key, before))
        return saved

    @staticmethod
    def _stream_lengths(backend: Any) -> dict[str, int]:
        """Table name -> how many records its stream holds now (tables with a stream)."""
        return {
            name: len(table.stream_shard.items)
            for name, table in backend.tables.items()
            if getattr(table, "stream_shard", None) is not None
        }

    @staticmethod
    def _truncate_streams(backend: Any, lengths: dict[str, int]) -> None:
        """Drop the stream records written since ``lengths``: a cancelled transaction writes
        none on AWS ("DynamoDB Streams ... only if the data is actually modified"), while the
        items moto applied and :meth:`_restore` put back each left one (an INSERT then a
        REMOVE of an item the transaction never wrote). moto numbers records by position, so
        the next record takes the first dropped one's number: no reader saw it (requests are
        serialised), so every reader still sees numbers only increase, as on AWS."""
        for name, length in lengths.items():
            shard = getattr(backend.tables.get(name), "stream_shard", None)
            if shard is not None:
                del shard.items[length:]

    @staticmethod
    def _restore(
        backend: Any, saved: list[tuple[str, dict[str, Any], dict[str, Any] | None]]
    ) -> None:
        for table_name, key, before in reversed(saved):
            if before is None:
                if backend.get_item(table_name, key) is not None:
                    backend.delete_item(table_name, key)
            else:
                backend.put_item(table_name, before)


PATCHED_MOTO = ("5.2.",)
"""moto releases whose internals :class:`IndexedQuery` and :class:`FastResponses` were written
and checked against (version prefixes); with another, the emulator runs moto unpatched (slower,
same answers) and logs a warning, and their tests fail until they are checked again."""


def patched_moto() -> bool:
    """Whether the installed moto is one the query and response patches know."""
    from moto import __version__

    if __version__.startswith(PATCHED_MOTO):
        return True
    log.warning("moto %s is not one of %s: its DynamoDB runs unpatched", __version__, PATCHED_MOTO)
    return False


class StreamRecords:
    """moto's stream records as DynamoDB Streams writes them (the history function reads them:
    ``infra.emulator.streams``). moto 5.2.5 differs in two ways, both patched while installed:

    - a write that changes nothing (a PutItem or UpdateItem leaving the item as it was) records
      a MODIFY; AWS records nothing: "DynamoDB Streams ... writes a stream record only if the
      data is actually modified" — skipped;
    - an UpdateItem that creates its item records an INSERT of the bare key (moto puts the key
      first) and then a second record of the update; AWS records one INSERT of the new item —
      collapsed into that one INSERT, under the first record's sequence number.

    A third is a bound the twin adds: moto keeps every record for ever, each with both images
    (a long tournament farm held gigabytes); AWS keeps them 24 hours. A shard keeps at most
    ``MAX_RECORDS``: beyond it the oldest are trimmed (its ``starting_sequence_number`` moves
    on, so sequence numbers stay as they were), and reading a trimmed position is
    ``TrimmedDataAccessException``, as on AWS for a record past its 24 hours. The poller reads
    within a second; a reader 10,000 writes behind is one AWS would also have to handle.

    AWS, "Change data capture for DynamoDB Streams",
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html;
    GetRecords, "TrimmedDataAccessException":
    https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_GetRecords.html.
    Requests must be serialised (they are), as moto itself requires."""

    MAX_RECORDS = 10_000
    """Records a shard keeps (the oldest are trimmed first)."""

    def __init__(self) -> None:
        self._installed: Any = None

    def install(self) -> None:
        """Patch ``StreamShard.add`` and ``get`` and ``DynamoDBBackend.update_item``."""
        if self._installed is not None:
            return
        from moto.dynamodb.models.table import StreamShard

        models: Any = importlib.import_module("moto.dynamodb.models")
        original_add = StreamShard.add
        original_update = models.DynamoDBBackend.update_item

        limit = self.MAX_RECORDS
        original_get = StreamShard.get

        def add(shard: Any, old: Any, new: Any) -> None:
            if old is not None and new is not None and old.attrs == new.attrs:
                return
            if len(shard.items) >= limit:
                trimmed = len(shard.items) - limit + 1
                del shard.items[:trimmed]
                shard.starting_sequence_number += trimmed
            original_add(shard, old, new)

        def get(shard: Any, start: int, quantity: int) -> Any:
            if start < shard.starting_sequence_number:
                from moto.core.exceptions import JsonRESTError

                raise JsonRESTError(
                    "TrimmedDataAccessException",
                    "The operation attempted to read past the oldest stream record in a shard.",
                )
            return original_get(shard, start, quantity)

        def update_item(backend: Any, table_name: str, *args: Any, **kwargs: Any) -> Any:
            table = backend.tables.get(table_name)
            shard = getattr(table, "stream_shard", None)
            # by sequence number: an add may trim the front of the list meanwhile
            first_seq = shard.starting_sequence_number + len(shard.items) if shard else 0
            result = original_update(backend, table_name, *args, **kwargs)
            before = first_seq - shard.starting_sequence_number if shard is not None else 0
            if shard is not None and before >= 0 and len(shard.items) - before > 1:
                first, last = shard.items[before], shard.items[-1]
                record = last.record
                record["eventName"] = first.record["eventName"]  # INSERT: it was created
                record["dynamodb"]["SequenceNumber"] = first.record["dynamodb"]["SequenceNumber"]
                if first.record["eventName"] == "INSERT":
                    record["dynamodb"].pop("OldImage", None)
                del shard.items[before:]
                shard.items.append(last)
            return result

        self._installed = (StreamShard, original_add, original_get, models, original_update)
        setattr(StreamShard, "add", add)  # noqa: B010  (a method replaced: mypy refuses `=`)
        setattr(StreamShard, "get", get)  # noqa: B010
        models.DynamoDBBackend.update_item = update_item

    def uninstall(self) -> None:
        """Undo :meth:`install`."""
        if self._installed is None:
            return
        shard_class, original_add, original_get, models, original_update = self._installed
        shard_class.add = original_add
        shard_class.get = original_get
        models.DynamoDBBackend.update_item = original_update
        self._installed = None


class IndexedQuery:
    """moto's ``Query`` answered from the queried partition, not from the whole table.

    Installed (:meth:`install`), a Query hands moto only the items of the partition it names (the
    table's ``Table.items[hash]``, or an index's from a map every write keeps current); moto's own
    Query runs unchanged on that subset, so the answer is the same, and one the map cannot serve
    gets moto's full walk. Requests must be serialised, as for :class:`ItemRollback`. Why:
    ``shared/domain/RULINGS.md``, design notes, "moto's Query".
    """

    def __init__(self) -> None:
        self._installed: Any = None
        self._maps: weakref.WeakKeyDictionary[Any, _PartitionMap] = weakref.WeakKeyDictionary()
        self._local = threading.local()
        self.enabled = True
        """False: every Query walks the whole table, as moto does (for comparisons)."""

    def install(self) -> None:
        """Patch moto's ``Table`` and backend classes (idempotent; a moto outside
        ``PATCHED_MOTO`` is left as it is)."""
        from moto.dynamodb.models.table import Table

        if self._installed is not None or not patched_moto():
            return
        models: Any = importlib.import_module("moto.dynamodb.models")
        backend = models.DynamoDBBackend
        originals = {
            "put_item": Table.put_item,
            "delete_item": Table.delete_item,
            "query": Table.query,
            "all_items": Table.all_items,
            "update_item": backend.update_item,
        }
        maps = self._maps
        local = self._local
        me = self

        def touched(table: Any, hash_value: Any, range_value: Any) -> None:
            partition_map = maps.get(table)
            if partition_map is not None:
                partition_map.dirty.add((hash_value, range_value))

        def put_item(table: Any, item_attrs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            try:
                return originals["put_item"](table, item_attrs, *args, **kwargs)
            finally:
                key = _key_of(table, item_attrs)
                if key is not None:
                    touched(table, *key)

        def delete_item(table: Any, hash_key: Any, range_key: Any) -> Any:
            try:
                return originals["delete_item"](table, hash_key, range_key)
            finally:
                touched(table, hash_key, range_key)

        def update_item(backend: Any, table_name: str, key: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return originals["update_item"](backend, table_name, key, *args, **kwargs)
            finally:
                table = backend.tables.get(table_name)
                parsed = _key_of(table, key) if table is not None else None
                if parsed is not None:
                    touched(table, *parsed)

        def all_items(table: Any) -> Any:
            override = getattr(local, "candidates", None)
            if override is not None and override[0] is table:
                return override[1]
            return originals["all_items"](table)

        signature = inspect.signature(originals["query"])

        def query(table: Any, *args: Any, **kwargs: Any) -> Any:
            candidates = None
            if me.enabled:
                bound = signature.bind(table, *args, **kwargs).arguments
                candidates = me._candidates(
                    table,
                    bound.get("hash_key"),
                    bound.get("index_name"),
                    bound.get("hash_key_conditions"),
                )
            if candidates is None:
                return originals["query"](table, *args, **kwargs)
            local.candidates = (table, candidates)
            try:
                return originals["query"](table, *args, **kwargs)
            finally:
                local.candidates = None

        patched: Any = Table  # moto's class, patched in place
        patched.put_item = put_item
        patched.delete_item = delete_item
        patched.all_items = all_items
        patched.query = query
        backend.update_item = update_item
        self._installed = (Table, backend, originals)

    def uninstall(self) -> None:
        """Undo :meth:`install` and forget the maps."""
        if self._installed is None:
            return
        table_class, backend, originals = self._installed
        for name in ("put_item", "delete_item", "query", "all_items"):
            setattr(table_class, name, originals[name])
        backend.update_item = originals["update_item"]
        self._installed = None
        self._maps.clear()

    def _candidates(
        self, table: Any, hash_key: Any, index_name: str | None, hash_key_conditions: Any
    ) -> list[Any] | None:
        """The items a Query can match (a superset moto then filters), or None: walk all."""
        if not index_name:
            if hash_key is None:
                return None
            partition = table.items.get(hash_key)  # .get: items is a defaultdict
            if partition is None:
                return []
            return list(partition.values()) if table.range_key_attr else [partition]
        conditions = dict(hash_key_conditions or [])
        partition_map = self._maps.get(table)
        if partition_map is None or partition_map.schema != _index_schema(table):
            partition_map = _PartitionMap(table)
            self._maps[table] = partition_map
        names = partition_map.schema.get(index_name)
        if names is None or set(names) != set(conditions) or not partition_map.usable:
            return None
        partition_map.refresh(table)
        if not partition_map.usable:
            return None
        try:
            wanted = tuple(_plain(conditions[name]) for name in names)
        except TypeError:
            return None
        items = []
        for hash_value, range_value in partition_map.parts[index_name].get(wanted, ()):
            item = _lookup(table, hash_value, range_value)
            if item is not None:
                items.append(item)
        return items


ITEM_OPERATIONS = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
    }
)
"""The operations whose answers :class:`FastResponses` writes (items, keys, counts, capacity:
no timestamps); table operations keep moto's serializer."""


class FastResponses:
    """moto's DynamoDB answers written with ``json.dumps``, not moto's generic serializer.

    moto 5.2.5 writes every answer by walking the operation's output shape in botocore's
    service model (``ActionResult.execute_result``: ``ResponseSerializer`` and its attribute
    pickers), and finds the handler's method by listing its class's functions with
    ``inspect.getmembers`` on every request (``method_names_from_class``). In the emulator that
    was a fifth of the process's CPU at 50 tournaments. Installed, a DynamoDB answer that is a
    plain result (a dict; not an error, not a paginated result) is written as JSON directly:
    the output shape's members with the same values, binary attributes base64-encoded as the JSON
    protocol requires (DynamoDB API Reference, "AttributeValue": ``B`` is a Base64-encoded
    binary data object), ``None`` members left out. Only item operations (``ITEM_OPERATIONS``)
    take this path; anything else, or a value JSON cannot hold, goes to moto's serializer.
    The method list is computed once per handler class.
    ``tests/tools/emulator/test_moto_speedups.py`` compares both writers' answers (parsed) on
    every operation the store uses.
    """

    def __init__(self) -> None:
        self._installed: Any = None
        self.enabled = True
        """False: every answer goes through moto's serializer (for comparisons)."""

    def install(self) -> None:
        """Patch moto's ``ActionResult`` and the method lookup (idempotent; a moto outside
        ``PATCHED_MOTO`` is left as it is)."""
        if self._installed is not None or not patched_moto():
            return
        responses: Any = importlib.import_module("moto.core.responses")
        action_result = responses.ActionResult
        original_execute = action_result.execute_result
        original_names = responses.method_names_from_class
        me = self

        def execute_result(result: Any, context: Any) -> Any:
            payload = result.result
            if (
                me.enabled
                and type(result).__name__ in ("ActionResult", "DynamoResult")
                and context.service_model.service_name == "dynamodb"
                and context.operation_model.name in ITEM_OPERATIONS
                and isinstance(payload, dict)
            ):
                members = _output_members(context.operation_model)
                payload = {k: v for k, v in payload.items() if k in members}
                try:
                    body = json.dumps(_without_none(payload), default=_base64)
                except (TypeError, ValueError):  # a value JSON cannot hold: moto's way
                    return original_execute(result, context)
                return 200, {"Content-Type": "application/x-amz-json-1.0"}, body
            return original_execute(result, context)

        names = functools.cache(original_names)
        action_result.execute_result = execute_result
        responses.method_names_from_class = names
        self._installed = (responses, action_result, original_execute, original_names)

    def uninstall(self) -> None:
        """Undo :meth:`install`."""
        if self._installed is None:
            return
        responses, action_result, original_execute, original_names = self._installed
        action_result.execute_result = original_execute
        responses.method_names_from_class = original_names
        self._installed = None


class _WeakInstances:
    """A moto model class's ``instances_tracked``, by weak reference: ``append`` adds (moto's
    ``Item`` defines ``__eq__``, so it is unhashable and a ``WeakSet`` cannot hold it);
    iteration and ``len`` see the instances still alive. Dead references are dropped once they
    outnumber the live ones, so the list stays proportional to what is alive."""

    def __init__(self, instances: Iterable[Any] = ()) -> None:
        self._refs: list[weakref.ref[Any]] = []
        self._dead = 0
        for instance in instances:
            self.append(instance)

    def _gone(self, _: weakref.ref[Any]) -> None:
        self._dead += 1

    def append(self, instance: Any) -> None:
        self._refs.append(weakref.ref(instance, self._gone))
        if self._dead > 64 and 2 * self._dead > len(self._refs):
            self._refs = [ref for ref in self._refs if ref() is not None]
            self._dead = 0

    def __iter__(self) -> Iterator[Any]:
        return iter([obj for ref in self._refs if (obj := ref()) is not None])

    def __len__(self) -> int:
        return sum(1 for ref in self._refs if ref() is not None)


class WeakInstanceTracking:
    """moto's record of every DynamoDB model instance, kept by weak reference.

    moto 5.2.5 appends every instance of a ``BaseModel`` subclass to its class's
    ``instances_tracked`` list when it is created (``moto.core.common_models.BaseModel.__new__``,
    for the moto server's dashboard) and empties those lists only on a reset. DynamoDB's
    ``Item`` is such a class, and moto builds a new ``Item`` for every write, every old image it
    returns and every transaction's check, so a long-running local runtime kept every version of
    every item it ever wrote: at 100 tournaments, three dead ``Item`` objects (with their
    attribute values) per live one after 150 s, a heap that grows without end, and full garbage
    collections that grow with it (each one stops every thread). Installed, the DynamoDB model
    classes track their instances by weak reference (:class:`_WeakInstances`): the dashboard
    still lists every live instance, and a replaced item is freed as soon as nothing else holds
    it, as in moto's own tables. Other services' models are left as they are.
    """

    def __init__(self) -> None:
        self._installed: Any = None

    def install(self) -> None:
        """Patch ``BaseModel.__new__`` for ``moto.dynamodb`` classes (idempotent; a moto
        outside ``PATCHED_MOTO`` is left as it is)."""
        if self._installed is not None or not patched_moto():
            return
        from moto.core.common_models import BaseModel

        original = BaseModel.__dict__["__new__"]

        def new(cls: Any, *args: Any, **kwargs: Any) -> Any:
            if not cls.__module__.startswith("moto.dynamodb."):
                return original(cls, *args, **kwargs)
            tracked = cls.__dict__.get("instances_tracked")
            if not isinstance(tracked, _WeakInstances):  # new, or emptied by a moto reset
                tracked = _WeakInstances(tracked or ())
                cls.instances_tracked = tracked
            instance = object.__new__(cls)
            tracked.append(instance)
            return instance

        patched: Any = BaseModel  # moto's class, patched in place
        patched.__new__ = staticmethod(new)
        self._installed = (BaseModel, original)

    def uninstall(self) -> None:
        """Undo :meth:`install`; the classes get plain lists of their live instances back."""
        if self._installed is None:
            return
        base, original = self._installed
        base.__new__ = original
        from moto.core.model_instances import model_data

        for cls in list(model_data.get("dynamodb", {}).values()):
            tracked = getattr(cls, "__dict__", {}).get("instances_tracked")
            if isinstance(tracked, _WeakInstances):
                cls.instances_tracked = list(tracked)  # type: ignore[attr-defined]
        self._installed = None


@functools.cache
def _output_members(operation_model: Any) -> frozenset[str]:
    """The members of an operation's output shape (moto's serializer writes only those)."""
    shape = operation_model.output_shape
    return frozenset(shape.members) if shape is not None else frozenset()


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def _base64(value: Any) -> str:
    """``json.dumps``'s fallback: bytes as the JSON protocol's base64 text."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _plain(value: Any) -> tuple[str, Any]:
    """A key attribute's value as a hashable ``(type, value)`` pair (``TypeError``: not a
    scalar, so not a key DynamoDB would index)."""
    pair = (value.type, value.cast_value)
    hash(pair)
    return pair


def _key_of(table: Any, attrs: Any) -> tuple[Any, Any] | None:
    """(hash, range) ``DynamoType`` of an item's or a key's attributes; None if malformed."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    try:
        hash_value = DynamoType(attrs[table.hash_key_attr])
        range_attr = table.range_key_attr
        range_value = DynamoType(attrs[range_attr]) if range_attr is not None else None
    except (KeyError, TypeError, AttributeError, IndexError):
        return None
    return hash_value, range_value


def _lookup(table: Any, hash_value: Any, range_value: Any) -> Any:
    partition = table.items.get(hash_value)
    if partition is None:
        return None
    return partition.get(range_value) if table.range_key_attr else partition


def _index_schema(table: Any) -> dict[str, tuple[str, ...]]:
    """Index name -> its partition key attribute names, in schema order."""
    return {
        index.name: tuple(k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH")
        for index in table.all_indexes()
    }


class _PartitionMap:
    """Per index: partition key values -> the primary keys of the items filed under them."""

    def __init__(self, table: Any) -> None:
        self.schema = _index_schema(table)
        self.parts: dict[str, dict[tuple[Any, ...], dict[tuple[Any, Any], None]]] = {
            name: {} for name in self.schema
        }
        self.filed: dict[tuple[Any, Any], dict[str, tuple[Any, ...]]] = {}
        self.dirty: set[tuple[Any, Any]] = set()
        self.usable = True
        for partition in table.items.values():
            for item in partition.values() if table.range_key_attr else (partition,):
                self._file((item.hash_key, item.range_key), item)

    def refresh(self, table: Any) -> None:
        """Re-file the items written since the last Query."""
        dirty, self.dirty = self.dirty, set()
        for key in dirty:
            for name, values in self.filed.pop(key, {}).items():
                bucket = self.parts[name].get(values)
                if bucket is not None:
                    bucket.pop(key, None)
                    if not bucket:
                        del self.parts[name][values]
            item = _lookup(table, *key)
            if item is not None:
                self._file(key, item)

    def _file(self, key: tuple[Any, Any], item: Any) -> None:
        filed: dict[str, tuple[Any, ...]] = {}
        for name, names in self.schema.items():
            values = [item.attrs.get(n) for n in names]
            if not all(values):  # moto's rule: an item without the key attributes is not indexed
                continue
            try:
                plain = tuple(_plain(v) for v in values)
            except TypeError:
                self.usable = False
                return
            self.parts[name].setdefault(plain, {})[key] = None
            filed[name] = plain
        if filed:
            self.filed[key] = filed
