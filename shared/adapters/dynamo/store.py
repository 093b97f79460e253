"""Adapters layer: ``DynamoStore``, the DynamoDB implementation of the ``Store`` port.

Every write is conditional (``version = :loaded``, or ``attribute_not_exists(pk)`` when new;
saved with ``version + 1``); several writes go in one ``TransactWriteItems``. Raises
``ConflictError`` (a failed condition), ``ContentionError`` / ``BusyError`` (transient, nothing
written) or botocore's ``ClientError`` (a bug or misconfiguration, never retried). The full
error mapping and the handling of unknown outcomes: ``shared/domain/RULINGS.md``, "Persistence".
"""

from __future__ import annotations

import dataclasses
import logging
import random
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import BotoCoreError, ClientError

from shared.adapters.dynamo import schema
from shared.adapters.writes import TokenCreated
from shared.lazy import lazy_module
from shared.services.errors import BusyError, ConflictError, ContentionError

if TYPE_CHECKING:
    from shared.adapters.dynamo import records, tournament_document
    from shared.domain.matchmaking import WaitingLobby
    from shared.services import model
    from shared.services.model import (
        Connection,
        IssuedToken,
        LobbyOpener,
        LobbyRecord,
        PartyRecord,
        Player,
        RatingApplied,
        TournamentRecord,
        Write,
    )
else:
    # The records, their codec and the domain behind them: imported by the first read or write
    # (a cold start builds the store before its first message needs them).
    records = lazy_module("shared.adapters.dynamo.records")
    tournament_document = lazy_module("shared.adapters.dynamo.tournament_document")
    model = lazy_module("shared.services.model")

logger = logging.getLogger(__name__)

_ser = TypeSerializer()
_de = TypeDeserializer()

_VERSIONED = "#v = :v"
"""Guards a save: nobody wrote the item since we read it at version :v."""
_NEW = "attribute_not_exists(pk)"
"""Guards a create: the key is not taken (ids are random; invites and tokens unguessable)."""

BUSY_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
        "TransactionInProgressException",
    }
)
"""Errors that mean "busy, not wrong" (AWS: "OK to retry? Yes"): after botocore's own retries
they become ``BusyError``."""

CONTENTION_CODES = frozenset({"TransactionConflictException", "ReplicatedWriteConflictException"})
"""Errors of a plain write refused because another writer holds the item: ``ContentionError``."""

UNKNOWN_OUTCOME_CODES = frozenset(
    {"InternalServerError", "ServiceUnavailable", "TransactionInProgressException"}
)
"""Answers that may come after the write was applied (a 5xx; the same transaction still in
flight): the commit checks what is stored before calling it busy."""

TRANSIENT_REASONS = frozenset(
    {
        None,
        "None",
        "ConditionalCheckFailed",
        "TransactionConflict",
        "ThrottlingError",
        "ProvisionedThroughputExceeded",
    }
)
"""Cancellation reasons of a transaction that a fresh read and a retry can overcome (``None``:
that item was fine). Any other (``ValidationError``, ``ItemCollectionSizeLimitExceeded``, or a
code this module does not know) makes the cancellation a bug, raised as is."""

UNPROCESSED_ROUNDS = 4
"""``BatchGetItem`` rounds for keys DynamoDB left unprocessed (throttled) before ``BusyError``;
each after a jittered exponential backoff (AWS: "Batch operations and error handling")."""


def _code(err: ClientError) -> str:
    return str(err.response.get("Error", {}).get("Code", ""))


def _retried(err: ClientError) -> bool:
    """botocore sent this request more than once (an earlier attempt may have landed)."""
    return int(err.response.get("ResponseMetadata", {}).get("RetryAttempts", 0) or 0) > 0


def _same(stored: Any, sent: dict[str, Any]) -> bool:
    """The stored item (DynamoDB JSON) is exactly the one we sent."""
    return stored is not None and from_av(stored) == from_av(sent)


def _bug(operation: str, codes: object, err: Exception) -> None:
    """A non-transient answer: logged loudly (codes only, never items); the caller re-raises
    the ``ClientError`` as is (the handler answers ``internal_error``)."""
    logger.error(
        "DynamoDB refused %s (not transient, not retried: a bug?): %s (%s)",
        operation,
        codes,
        type(err).__name__,
    )


def _transient(operation: str, err: ClientError | BotoCoreError) -> Exception | None:
    """The exception to raise for a failed read or plain write, or None (logged) to re-raise
    ``err`` as is (RULINGS.md, "Persistence")."""
    if isinstance(err, BotoCoreError):  # connection refused or reset, read timeout
        return BusyError(f"the table is busy ({type(err).__name__}); please try again")
    code = _code(err)
    if code in CONTENTION_CODES:
        return ContentionError(f"the item is being changed ({code}); please try again")
    if code in BUSY_CODES:
        return BusyError(f"the table is busy ({code}); please try again")
    _bug(operation, code, err)
    return None


def _cancellation(err: ClientError) -> Exception | None:
    """What a ``TransactionCanceledException`` means, from its reason codes (never the
    ``Item`` of a reason: with ALL_OLD those hold the old items, and their secrets); None
    (logged) for a bug: the error is re-raised as is."""
    reasons = [r.get("Code") for r in err.response.get("CancellationReasons", []) or []]
    if any(r not in TRANSIENT_REASONS for r in reasons):
        _bug("TransactWriteItems", reasons, err)
        return None
    if "ConditionalCheckFailed" in reasons:
        return ConflictError(f"conditional write failed: TransactionCanceledException {reasons}")
    if "TransactionConflict" in reasons:
        return ContentionError(f"the items are being changed {reasons}; please try again")
    return BusyError(f"the table is busy {reasons}; please try again")


def _landed(ops: Sequence[dict[str, Any]], reasons: Sequence[Any]) -> bool:
    """A resent transaction was cancelled because it had already been applied: every put
    failed its condition on exactly the item we sent, every versioned delete on an item that
    is gone (ours went with the rest: a transaction lands whole), and nothing else failed."""
    if not reasons or len(reasons) != len(ops) or not any("Put" in op for op in ops):
        return False
    for op, reason in zip(ops, reasons, strict=True):
        if "Put" in op:
            if reason.get("Code") != "ConditionalCheckFailed":
                return False
            if not _same(reason.get("Item"), op["Put"]["Item"]):
                return False
        elif "Delete" in op and "ConditionExpression" in op["Delete"]:
            if reason.get("Code") != "ConditionalCheckFailed" or reason.get("Item"):
                return False
        elif reason.get("Code") not in (None, "None"):
            return False
    return True


class _Client:
    """The injected boto3 client for reads and plain writes, its transient errors turned into
    ``BusyError`` / ``ContentionError`` (``_transient``); the others are raised as is."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, operation: str) -> Any:
        method = getattr(self._client, operation)

        def call(**kwargs: Any) -> Any:
            try:
                return method(**kwargs)
            except (ClientError, BotoCoreError) as err:
                transient = _transient(operation, err)
                if transient is None:
                    raise
                raise transient from err

        return call


def to_av(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _ser.serialize(v) for k, v in item.items() if v is not None}


def from_av(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _plain(_de.deserialize(v)) for k, v in item.items()}


def _plain(v: Any) -> Any:
    """DynamoDB numbers come back as Decimal: turn whole numbers into int."""
    from decimal import Decimal

    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


class DynamoStore:
    """The game's persistence on one DynamoDB table (see ``schema``).

    Args:
        client: a boto3 DynamoDB *client* (injected; built by ``shared.runtime``).
        table_name: the table.
        now_ms: a callable returning UTC ms, for TTLs.
        sleep: waits between ``BatchGetItem`` rounds for unprocessed keys (seconds; tests
            inject a recorder).

    Raises (every method): ``BusyError``, ``ContentionError``, or botocore's ``ClientError``
    for a non-transient refusal; ``commit`` also ``ConflictError`` (RULINGS.md, "Persistence").
    """

    def __init__(
        self,
        client: Any,
        table_name: str,
        now_ms: Any,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client = client
        self._client = _Client(client)
        self._table = table_name
        self._now_ms = now_ms
        self.sleep = sleep

    @property
    def table_name(self) -> str:
        """The table this store reads and writes."""
        return self._table

    # ------------------------------------------------------------------ reads
    def _get(self, key: dict[str, str]) -> dict[str, Any] | None:
        resp = self._client.get_item(TableName=self._table, Key=to_av(key), ConsistentRead=True)
        item = resp.get("Item")
        return from_av(item) if item else None

    def get_connection(self, connection_id: str) -> Connection | None:
        item = self._get(schema.connection_key(connection_id))
        return records.connection_from_item(item) if item else None

    def get_player(self, player_id: str) -> Player | None:
        item = self._get(schema.player_key(player_id))
        return records.player_from_item(item) if item else None

    def get_players(self, player_ids: Iterable[str]) -> dict[str, Player]:
        found: dict[str, Player] = {}
        for raw in self._batch_get([schema.player_key(p) for p in sorted(set(player_ids))]):
            p = records.player_from_item(raw)
            found[p.player_id] = p
        return found

    def get_connections(self, connection_ids: Iterable[str]) -> dict[str, Connection]:
        """The connection items of ``connection_ids`` that exist (BatchGetItem, strongly
        consistent); a closed one is its tombstone (``closed_ms`` set) until TTL removes it."""
        found: dict[str, Connection] = {}
        keys = [schema.connection_key(c) for c in sorted(set(connection_ids))]
        for raw in self._batch_get(keys):
            c = records.connection_from_item(raw)
            found[c.connection_id] = c
        return found

    def _batch_get(self, keys: list[dict[str, str]]) -> list[dict[str, Any]]:
        """BatchGetItem in pages of 100 keys, asking again for unprocessed keys with backoff.
        Raises BusyError when keys stay unprocessed."""
        items: list[dict[str, Any]] = []
        for start in range(0, len(keys), 100):
            page = [to_av(k) for k in keys[start : start + 100]]
            request: dict[str, Any] = {self._table: {"Keys": page, "ConsistentRead": True}}
            for n in range(UNPROCESSED_ROUNDS + 1):
                if n:  # keys left unprocessed (throttled): back off before asking again
                    self.sleep(random.uniform(0, 0.025 * 2**n))
                resp = self._client.batch_get_item(RequestItems=request)
                items += [from_av(raw) for raw in resp.get("Responses", {}).get(self._table, [])]
                request = resp.get("UnprocessedKeys") or {}
                if not request:
                    break
            else:
                raise BusyError("the table is busy (UnprocessedKeys); please try again")
        return items

    def player_id_for_token(self, token_hash: str) -> str | None:
        item = self._get(schema.token_key(token_hash))
        return str(item["player_id"]) if item else None

    def get_token(self, token_hash: str) -> IssuedToken | None:
        item = self._get(schema.token_key(token_hash))
        if not item:
            return None
        return model.IssuedToken(str(item["player_id"]), int(item.get("generation", 0)))

    def get_lobby(self, lobby_id: str) -> LobbyRecord | None:
        item = self._get(schema.lobby_key(lobby_id))
        return records.lobby_from_item(item) if item else None

    def waiting_lobbies(self, language: str, rating: int) -> list[WaitingLobby]:
        """Every waiting lobby of ``language`` that admits a solo player rated ``rating``
        (ruling 8), in no particular order: one Query per ``gsi_lobbies`` shard, each followed
        through ``LastEvaluatedKey`` to the end (eventually consistent: an entry may lag the
        table; the seat-taking write is conditional on the lobby's version anyway). Key
        condition and filter: ``schema`` docstring."""
        found: list[WaitingLobby] = []
        for shard in range(schema.WAITING_SHARDS):
            kwargs: dict[str, Any] = {
                "TableName": self._table,
                "IndexName": schema.GSI_WAITING,
                "KeyConditionExpression": "waiting_pk = :w AND waiting_lo BETWEEN :lo AND :r",
                "FilterExpression": "waiting_hi >= :r",
                "ExpressionAttributeValues": {
                    ":w": {"S": schema.waiting_pk(language, shard)},
                    ":lo": {"N": str(rating - schema.WAITING_SPAN)},
                    ":r": {"N": str(rating)},
                },
            }
            while True:
                resp = self._client.query(**kwargs)
                found += [records.waiting_from_entry(from_av(i)) for i in resp.get("Items", [])]
                if "LastEvaluatedKey" not in resp:
                    break
                kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
        return found

    def get_openers(
        self, language: str, lane: int, buckets: Iterable[int]
    ) -> dict[int, LobbyOpener]:
        """The openers of ``language`` and ``lane`` for ``buckets`` that exist, by bucket (one
        strongly consistent BatchGetItem)."""
        keys = [schema.opener_key(language, b, lane) for b in sorted(set(buckets))]
        openers = [records.opener_from_item(raw) for raw in self._batch_get(keys)]
        return {o.bucket: o for o in openers}

    def get_tournament(self, tournament_id: str) -> TournamentRecord | None:
        item = self._get(schema.tournament_key(tournament_id))
        return tournament_document.tournament_from_item(item) if item else None

    def get_party(self, party_id: str) -> PartyRecord | None:
        item = self._get(schema.party_key(party_id))
        return records.party_from_item(item) if item else None

    def party_id_for_invite(self, invite: str) -> str | None:
        item = self._get(schema.invite_key(invite))
        return str(item["party_id"]) if item else None

    def overdue(self, before_ms: int) -> list[tuple[str, str]]:
        """Items whose deadline passed before ``before_ms``: (kind, id) with kind
        "tournament" or "player" (Query gsi_due per shard; never a scan)."""
        out: list[tuple[str, str]] = []
        for shard in range(schema.DUE_SHARDS):
            kwargs: dict[str, Any] = {
                "TableName": self._table,
                "IndexName": schema.GSI_DUE,
                "KeyConditionExpression": "due_pk = :p AND due_ms < :t",
                "ExpressionAttributeValues": {
                    ":p": {"S": f"DUE#{shard}"},
                    ":t": {"N": str(before_ms)},
                },
            }
            while True:
                resp = self._client.query(**kwargs)
                for raw in resp.get("Items", []):
                    pk = raw["pk"]["S"]
                    kind, _, ref = pk.partition("#")
                    out.append(("tournament" if kind == "TOURN" else "player", ref))
                if "LastEvaluatedKey" not in resp:
                    break
                kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
        return out

    # ------------------------------------------------------------------ writes
    def create_player(
        self, player: Player, token_hash: str, connection: Connection | None = None
    ) -> None:
        """Create a player and its token item (both must be new) and save ``connection``
        when given, atomically (one TransactWriteItems; ``Store.create_player``)."""
        extra = [connection] if connection is not None else []
        token = TokenCreated(token_hash, player.player_id, player.token_used_ms)
        self.commit([player, token, *extra])

    def count_new_player(
        self, source: str, window_start_ms: int, limit: int, expires_ms: int
    ) -> bool:
        """Count a new player from ``source`` (``Store.count_new_player``): one UpdateItem of
        the (source, window) counter, ``ADD n :one`` on the condition that it is below
        ``limit``; a failed condition is the limit (False, nothing written). A resent update
        whose first attempt landed counts twice: the limit errs on the side of refusing."""
        try:
            self.client.update_item(
                TableName=self._table,
                Key=to_av(schema.new_players_key(source, window_start_ms)),
                UpdateExpression="ADD #n :one SET #k = :kind, #ttl = :ttl",
                # conditional: the limit itself
                ConditionExpression="attribute_not_exists(#n) OR #n < :limit",
                ExpressionAttributeNames={
                    "#n": "count",
                    "#k": "kind",
                    "#ttl": schema.TTL_ATTRIBUTE,
                },
                ExpressionAttributeValues={
                    ":one": {"N": "1"},
                    ":kind": {"S": "new_players"},
                    ":ttl": {"N": str(expires_ms // 1000)},
                    ":limit": {"N": str(limit)},
                },
            )
        except ClientError as err:
            if _code(err) == "ConditionalCheckFailedException":
                return False
            transient = _transient("UpdateItem", err)
            if transient is None:
                raise
            raise transient from err
        except BotoCoreError as err:
            raise BusyError(f"the table is busy ({type(err).__name__}); please try again") from err
        return True

    def add_strike(self, connection_id: str) -> int | None:
        """Add a flood strike (``Store.add_strike``): one UpdateItem, ``ADD strikes :one`` on
        the condition that the connection item exists and is open (a closed connection is
        neither recreated nor struck); None when it is not. A resent update whose first attempt
        landed counts twice: the close errs on the side of the flood."""
        try:
            resp = self.client.update_item(
                TableName=self._table,
                Key=to_av(schema.connection_key(connection_id)),
                UpdateExpression="ADD #s :one",
                ConditionExpression="attribute_exists(#pk) AND attribute_not_exists(#c)",
                ExpressionAttributeNames={"#s": "strikes", "#pk": schema.PK, "#c": "closed_ms"},
                ExpressionAttributeValues={":one": {"N": "1"}},
                ReturnValues="UPDATED_NEW",
            )
        except ClientError as err:
            if _code(err) == "ConditionalCheckFailedException":
                return None
            transient = _transient("UpdateItem", err)
            if transient is None:
                raise
            raise transient from err
        except BotoCoreError as err:
            raise BusyError(f"the table is busy ({type(err).__name__}); please try again") from err
        return int(resp["Attributes"]["strikes"]["N"])

    def close_connection(self, connection_id: str, closed_ms: int) -> Connection | None:
        """Turn a connection's item into a tombstone closed at ``closed_ms`` (UTC ms; TTL
        ``schema.CONNECTION_TOMBSTONE_SECONDS`` on); returns what it held while open, None when
        it is unknown or already closed (nothing written then).

        A strongly consistent GetItem, then a put conditional on the version read (``commit``:
        one write unit, as the DeleteItem it replaces; a save based on an earlier read of the
        open item then conflicts). Raises ConflictError when it changed since the read (a
        ``session`` bound it meanwhile): the caller's ``run`` reads again.
        A put that landed but answered 500 is recognised by ``commit`` (the stored item is the
        one sent), and the read still says which player the connection held.
        """
        seen = self.get_connection(connection_id)
        if seen is None or seen.closed_ms is not None:
            return None
        self.commit([dataclasses.replace(seen, closed_ms=closed_ms)])
        return seen

    def commit(self, writes: Sequence[Write | TokenCreated]) -> None:
        """Apply ``writes`` atomically (one conditional write, or a transaction).

        On success each versioned record's ``version`` is incremented in place.
        Raises ConflictError when any condition failed, ContentionError / BusyError when
        DynamoDB turned the request away for a passing reason (nothing was written in any of
        these), botocore's ClientError for a non-transient refusal (a bug; nothing written). A
        write whose answer was lost but which did land counts as done (RULINGS.md, "Persistence").
        """
        now = self._now_ms()
        ops = [op for w in writes for op in self._ops(w, now)]
        if not ops:
            return
        try:
            if len(ops) == 1 and "Put" in ops[0]:
                put = ops[0]["Put"]
                # conditional: every op built by _op/_rating_ops carries a ConditionExpression
                # (tests/faults/test_data_safety.py builds each kind and checks)
                self.client.put_item(**put, ReturnValuesOnConditionCheckFailure="ALL_OLD")
            else:
                for op in ops:
                    next(iter(op.values()))["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
                # conditional: as above, each item of the transaction
                self.client.transact_write_items(TransactItems=ops)
        except (ClientError, BotoCoreError) as err:
            self._failed(ops, err)  # returns only when the write turns out to have landed
        versioned = (  # the records saved under a version condition
            model.Player,
            model.Connection,
            model.LobbyRecord,
            model.LobbyOpener,
            model.TournamentRecord,
            model.PartyRecord,
        )
        for w in writes:
            if isinstance(w, versioned):
                w.version += 1

    def _failed(self, ops: Sequence[dict[str, Any]], err: ClientError | BotoCoreError) -> None:
        """Raise what a failed commit means, or return when it landed after all."""
        single = len(ops) == 1 and "Put" in ops[0]
        operation = "PutItem" if single else "TransactWriteItems"
        if isinstance(err, ClientError):
            code = _code(err)
            if code == "ConditionalCheckFailedException":
                if (
                    single
                    and _retried(err)
                    and _same(err.response.get("Item"), ops[0]["Put"]["Item"])
                ):
                    return  # our earlier attempt landed; its answer was lost
                raise ConflictError(f"conditional write failed: {code}") from err
            if code == "TransactionCanceledException":
                if _retried(err) and _landed(ops, err.response.get("CancellationReasons") or []):
                    return  # the resent transaction had already been applied
                meaning = _cancellation(err)
                if meaning is None:
                    raise err
                raise meaning from err
            transient = code in BUSY_CODES or code in CONTENTION_CODES
            unknown = code in UNKNOWN_OUTCOME_CODES or _retried(err)
        else:  # a timeout or a dropped connection: the outcome is unknown
            code, transient, unknown = type(err).__name__, True, True
        if transient and unknown and self._settled(ops, code):
            return
        meaning = _transient(operation, err)
        if meaning is None:
            raise err
        raise meaning from err

    def _settled(self, ops: Sequence[dict[str, Any]], code: str) -> bool:
        """After an answer that may hide an applied write: did it land? One strongly
        consistent read of the commit's first put (a transaction lands whole or not at all).
        False when it did not, or when that cannot be read either (logged)."""
        put = next((op["Put"] for op in ops if "Put" in op), None)
        if put is None:
            return False
        key = {schema.PK: put["Item"][schema.PK], schema.SK: put["Item"][schema.SK]}
        try:
            resp = self.client.get_item(TableName=put["TableName"], Key=key, ConsistentRead=True)
        except (ClientError, BotoCoreError) as err:
            logger.warning(
                "a write's outcome is unknown (%s, then %s reading it back); the use case "
                "re-reads and re-decides",
                code,
                _code(err) if isinstance(err, ClientError) else type(err).__name__,
            )
            return False
        if _same(resp.get("Item"), put["Item"]):
            logger.info("a write answered %s had landed: done", code)
            return True
        return False

    def _versioned_put(self, item: dict[str, Any], loaded_version: int) -> dict[str, Any]:
        put: dict[str, Any] = {"TableName": self._table, "Item": to_av(item)}
        if loaded_version == 0:
            put["ConditionExpression"] = _NEW
        else:
            put["ConditionExpression"] = _VERSIONED
            put["ExpressionAttributeNames"] = {"#v": "version"}
            put["ExpressionAttributeValues"] = {":v": {"N": str(loaded_version)}}
        return {"Put": put}

    def _ops(self, w: Write | TokenCreated, now: int) -> list[dict[str, Any]]:
        if isinstance(w, model.RatingApplied):
            return self._rating_ops(w)
        return [self._op(w, now)]

    def _op(self, w: Write | TokenCreated, now: int) -> dict[str, Any]:
        if isinstance(w, model.Player):
            return self._versioned_put(records.player_to_item(w), w.version)
        if isinstance(w, model.Connection):
            return self._versioned_put(records.connection_to_item(w), w.version)
        if isinstance(w, model.LobbyRecord):
            return self._versioned_put(records.lobby_to_item(w, now), w.version)
        if isinstance(w, model.TournamentRecord):
            return self._versioned_put(tournament_document.tournament_to_item(w, now), w.version)
        if isinstance(w, model.LobbyOpener):
            return self._versioned_put(records.opener_to_item(w), w.version)
        if isinstance(w, model.PartyRecord):
            return self._versioned_put(records.party_to_item(w), w.version)
        if isinstance(w, model.OpenerUnchanged):
            check: dict[str, Any] = {
                "TableName": self._table,
                "Key": to_av(schema.opener_key(w.language, w.bucket, w.lane)),
            }
            if w.version == 0:
                check["ConditionExpression"] = _NEW
            else:
                check["ConditionExpression"] = _VERSIONED
                check["ExpressionAttributeNames"] = {"#v": "version"}
                check["ExpressionAttributeValues"] = {":v": {"N": str(w.version)}}
            return {"ConditionCheck": check}
        if isinstance(w, TokenCreated):
            item: dict[str, Any] = {
                **schema.token_key(w.token_hash),
                "kind": "token",
                "player_id": w.player_id,
            }
            if w.used_ms is not None:
                item[schema.TTL_ATTRIBUTE] = schema.idle_player_ttl(w.used_ms)
            return {
                "Put": {"TableName": self._table, "Item": to_av(item), "ConditionExpression": _NEW}
            }
        if isinstance(w, model.TokenIssued):
            issued: dict[str, Any] = {
                **schema.token_key(w.token_hash),
                "kind": "token",
                "player_id": w.player_id,
                "generation": w.generation,
                schema.TTL_ATTRIBUTE: schema.expiry_ttl(w.expires_ms),
            }
            return {
                "Put": {
                    "TableName": self._table,
                    "Item": to_av(issued),
                    "ConditionExpression": _NEW,
                }
            }
        if isinstance(w, model.InviteCreated):
            item = {**schema.invite_key(w.invite), "kind": "invite", "party_id": w.party_id}
            return {
                "Put": {"TableName": self._table, "Item": to_av(item), "ConditionExpression": _NEW}
            }
        if isinstance(w, model.InviteDeleted):
            # unconditional: only ever committed with the party's versioned save or delete in
            # one transaction (party leave, remove, invite reset), which is its guard; the
            # invite may already be gone
            return {"Delete": {"TableName": self._table, "Key": to_av(schema.invite_key(w.invite))}}
        if isinstance(w, model.PartyDeleted):
            return {
                "Delete": {
                    "TableName": self._table,
                    "Key": to_av(schema.party_key(w.party_id)),
                    "ConditionExpression": _VERSIONED,
                    "ExpressionAttributeNames": {"#v": "version"},
                    "ExpressionAttributeValues": {":v": {"N": str(w.version)}},
                }
            }
        raise TypeError(f"unknown write {type(w).__name__}")

    def _rating_ops(self, w: RatingApplied) -> list[dict[str, Any]]:
        """One rating change, exactly once per player and tournament: a history item put only
        if absent, plus (unless the service saves the player record itself in the same
        transaction) the player's rating ``ADD``."""
        history = {
            **schema.rating_key(w.player_id, w.tournament_id),
            "kind": "rating",
            "player_id": w.player_id,
            "tournament_id": w.tournament_id,
            "place": w.place,
            "change": w.change,
            "rating_before": w.rating_before,
            "rating_after": w.rating_before + w.change,
            "at_ms": w.at_ms,
        }
        put = {
            "Put": {"TableName": self._table, "Item": to_av(history), "ConditionExpression": _NEW}
        }
        if not w.update_player:
            return [put]
        update: dict[str, Any] = {
            "TableName": self._table,
            "Key": to_av(schema.player_key(w.player_id)),
            "UpdateExpression": "ADD rating :c, version :one",
            "ConditionExpression": "attribute_exists(pk)",
            "ExpressionAttributeValues": {":c": {"N": str(w.change)}, ":one": {"N": "1"}},
        }
        return [put, {"Update": update}]
