"""Adapters layer: ``DynamoStore``, the DynamoDB implementation of the ``Store`` port.

Every write is conditional: a versioned record is saved with ``version = :loaded`` (or
``attribute_not_exists(pk)`` when new) and written back with ``version + 1``; several writes
go in one ``TransactWriteItems``. A failed condition raises ``ConflictError`` (the service
reloads and retries the whole use case); ``ReturnValuesOnConditionCheckFailure=ALL_OLD`` is
requested so the failure is explained in logs without a second read.

Faults (issue 9): the client runs botocore's *standard* retry mode (``shared.runtime``), which
already retries throttling (``ProvisionedThroughputExceededException``, ``ThrottlingException``,
``RequestLimitExceeded``) and 5xx with exponential backoff. What is still failing after those
retries is raised as ``TryAgainError`` (the player gets ``try_again``; nothing half-written:
each call is one atomic request). ``TransactionCanceledException`` is a ``ConflictError`` only
when every reason is a lost race (``ConditionalCheckFailed``, ``TransactionConflict``, or a
throttled item): the use case re-reads and retries with backoff (``services.base.retrying``);
any other reason (``ValidationError``, size limits) is a bug and is raised as is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import BotoCoreError, ClientError

from shared.adapters.dynamo import codec, schema
from shared.services.errors import ConflictError, TryAgainError
from shared.services.model import (
    Connection,
    InviteCreated,
    InviteDeleted,
    Lobby,
    LobbyOpener,
    PartyRecord,
    Player,
    RatingApplied,
    TournamentRecord,
    Write,
)

_VERSIONED_RECORDS = (Player, Connection, Lobby, LobbyOpener, TournamentRecord, PartyRecord)
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
"""Errors that mean "busy, not wrong": after botocore's own retries they become try_again."""

_LOST_RACE_REASONS = frozenset(
    {
        None,
        "None",
        "ConditionalCheckFailed",
        "TransactionConflict",
        "ThrottlingError",
        "ProvisionedThroughputExceeded",
    }
)
"""Cancellation reasons of a transaction that a fresh read and a retry can overcome."""


def _busy(err: ClientError | BotoCoreError) -> TryAgainError:
    code = (
        err.response.get("Error", {}).get("Code", "")
        if isinstance(err, ClientError)
        else type(err).__name__
    )
    return TryAgainError(f"the table is busy ({code}); please try again")


class _Client:
    """The injected boto3 client, with "still busy after botocore's retries" (throttling,
    5xx, timeouts) turned into ``TryAgainError`` on every call, reads and writes alike."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, operation: str) -> Any:
        method = getattr(self._client, operation)

        def call(**kwargs: Any) -> Any:
            try:
                return method(**kwargs)
            except ClientError as err:
                if err.response.get("Error", {}).get("Code", "") in BUSY_CODES:
                    raise _busy(err) from err
                raise
            except BotoCoreError as err:  # connection refused or reset, read timeout
                raise _busy(err) from err

        return call


def _to_av(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _ser.serialize(v) for k, v in item.items() if v is not None}


def _from_av(item: dict[str, Any]) -> dict[str, Any]:
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
    """

    def __init__(self, client: Any, table_name: str, now_ms: Any) -> None:
        self.client = client
        self._client = _Client(client)
        self._table = table_name
        self._now_ms = now_ms

    # ------------------------------------------------------------------ reads
    def _get(self, key: dict[str, str]) -> dict[str, Any] | None:
        resp = self._client.get_item(TableName=self._table, Key=_to_av(key), ConsistentRead=True)
        item = resp.get("Item")
        return _from_av(item) if item else None

    def get_connection(self, connection_id: str) -> Connection | None:
        item = self._get(schema.connection_key(connection_id))
        return codec.connection_from_item(item) if item else None

    def get_player(self, player_id: str) -> Player | None:
        item = self._get(schema.player_key(player_id))
        return codec.player_from_item(item) if item else None

    def get_players(self, player_ids: Iterable[str]) -> dict[str, Player]:
        ids = sorted(set(player_ids))
        found: dict[str, Player] = {}
        for start in range(0, len(ids), 100):
            keys = [_to_av(schema.player_key(p)) for p in ids[start : start + 100]]
            request: dict[str, Any] = {self._table: {"Keys": keys, "ConsistentRead": True}}
            while request:
                resp = self._client.batch_get_item(RequestItems=request)
                for raw in resp.get("Responses", {}).get(self._table, []):
                    p = codec.player_from_item(_from_av(raw))
                    found[p.player_id] = p
                request = resp.get("UnprocessedKeys") or {}
        return found

    def player_id_for_token(self, token_hash: str) -> str | None:
        item = self._get(schema.token_key(token_hash))
        return str(item["player_id"]) if item else None

    def get_lobby(self, lobby_id: str) -> Lobby | None:
        item = self._get(schema.lobby_key(lobby_id))
        return codec.lobby_from_item(item) if item else None

    def waiting_lobbies(self, language: str, limit: int = 50) -> list[Lobby]:
        """Waiting lobbies of a language, oldest first (Query on gsi_waiting, eventually
        consistent: the seat-taking write is conditional on the lobby's version anyway)."""
        resp = self._client.query(
            TableName=self._table,
            IndexName=schema.GSI_WAITING,
            KeyConditionExpression="waiting_pk = :w",
            ExpressionAttributeValues={":w": {"S": schema.waiting_pk(language)}},
            Limit=limit,
        )
        return [codec.lobby_from_item(_from_av(i)) for i in resp.get("Items", [])]

    def get_opener(self, language: str, bucket: int) -> LobbyOpener | None:
        item = self._get(schema.opener_key(language, bucket))
        return codec.opener_from_item(item) if item else None

    def get_tournament(self, tournament_id: str) -> TournamentRecord | None:
        item = self._get(schema.tournament_key(tournament_id))
        return codec.tournament_from_item(item) if item else None

    def get_party(self, party_id: str) -> PartyRecord | None:
        item = self._get(schema.party_key(party_id))
        return codec.party_from_item(item) if item else None

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
    def create_player(self, player: Player, token_hash: str) -> None:
        """Create a player and its token item atomically (both must be new)."""
        self.commit([player, _TokenCreated(token_hash, player.player_id)])

    def delete_connection(self, connection_id: str) -> Connection | None:
        """Remove a closed connection; returns what it held (one call, ALL_OLD)."""
        # unconditional: $disconnect ends the connection whatever it holds; deleting an absent
        # item is a no-op (a duplicate $disconnect gets None back and does nothing)
        resp = self._client.delete_item(
            TableName=self._table,
            Key=_to_av(schema.connection_key(connection_id)),
            ReturnValues="ALL_OLD",
        )
        old = resp.get("Attributes")
        return codec.connection_from_item(_from_av(old)) if old else None

    def commit(self, writes: Sequence[Write | _TokenCreated]) -> None:
        """Apply ``writes`` atomically (one conditional write, or a transaction).

        On success each versioned record's ``version`` is incremented in place.
        Raises ConflictError when any condition failed (nothing was written).
        """
        now = self._now_ms()
        ops = [op for w in writes for op in self._ops(w, now)]
        if not ops:
            return
        try:
            if len(ops) == 1 and "Put" in ops[0]:
                put = ops[0]["Put"]
                # conditional: every op built by _op/_rating_ops carries a ConditionExpression
                # (tests/hardening/test_data_safety.py builds each kind and checks)
                self._client.put_item(**put, ReturnValuesOnConditionCheckFailure="ALL_OLD")
            else:
                for op in ops:
                    next(iter(op.values()))["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
                # conditional: as above, each item of the transaction
                self._client.transact_write_items(TransactItems=ops)
        except ClientError as err:
            code = err.response.get("Error", {}).get("Code", "")
            if code == "ConditionalCheckFailedException":
                raise ConflictError(f"conditional write failed: {code}") from err
            if code == "TransactionCanceledException":
                # codes only: with ALL_OLD the reasons also carry the old items (secrets)
                reasons = [r.get("Code") for r in err.response.get("CancellationReasons", []) or []]
                if all(r in _LOST_RACE_REASONS for r in reasons):
                    raise ConflictError(f"conditional write failed: {code} {reasons}") from err
            raise
        for w in writes:
            if isinstance(
                w, (Player, Connection, Lobby, LobbyOpener, TournamentRecord, PartyRecord)
            ):
                w.version += 1

    def _versioned_put(self, item: dict[str, Any], loaded_version: int) -> dict[str, Any]:
        put: dict[str, Any] = {"TableName": self._table, "Item": _to_av(item)}
        if loaded_version == 0:
            put["ConditionExpression"] = _NEW
        else:
            put["ConditionExpression"] = _VERSIONED
            put["ExpressionAttributeNames"] = {"#v": "version"}
            put["ExpressionAttributeValues"] = {":v": {"N": str(loaded_version)}}
        return {"Put": put}

    def _ops(self, w: Write | _TokenCreated, now: int) -> list[dict[str, Any]]:
        if isinstance(w, RatingApplied):
            return self._rating_ops(w)
        return [self._op(w, now)]

    def _op(self, w: Write | _TokenCreated, now: int) -> dict[str, Any]:
        if isinstance(w, Player):
            return self._versioned_put(codec.player_to_item(w), w.version)
        if isinstance(w, Connection):
            return self._versioned_put(codec.connection_to_item(w), w.version)
        if isinstance(w, Lobby):
            return self._versioned_put(codec.lobby_to_item(w, now), w.version)
        if isinstance(w, TournamentRecord):
            return self._versioned_put(codec.tournament_to_item(w, now), w.version)
        if isinstance(w, LobbyOpener):
            return self._versioned_put(codec.opener_to_item(w), w.version)
        if isinstance(w, PartyRecord):
            return self._versioned_put(codec.party_to_item(w), w.version)
        if isinstance(w, _TokenCreated):
            item = {**schema.token_key(w.token_hash), "kind": "token", "player_id": w.player_id}
            return {
                "Put": {"TableName": self._table, "Item": _to_av(item), "ConditionExpression": _NEW}
            }
        if isinstance(w, InviteCreated):
            item = {**schema.invite_key(w.invite), "kind": "invite", "party_id": w.party_id}
            return {
                "Put": {"TableName": self._table, "Item": _to_av(item), "ConditionExpression": _NEW}
            }
        if isinstance(w, InviteDeleted):
            # unconditional: only ever committed with the party's versioned save in one
            # transaction (parties.leave), which is its guard; the invite may already be gone
            return {
                "Delete": {"TableName": self._table, "Key": _to_av(schema.invite_key(w.invite))}
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
            "Put": {"TableName": self._table, "Item": _to_av(history), "ConditionExpression": _NEW}
        }
        if not w.update_player:
            return [put]
        update: dict[str, Any] = {
            "TableName": self._table,
            "Key": _to_av(schema.player_key(w.player_id)),
            "UpdateExpression": "ADD rating :c, version :one",
            "ConditionExpression": "attribute_exists(pk)",
            "ExpressionAttributeValues": {":c": {"N": str(w.change)}, ":one": {"N": "1"}},
        }
        return [put, {"Update": update}]


class _TokenCreated:
    """Internal write: the hashed session token's lookup item."""

    def __init__(self, token_hash: str, player_id: str) -> None:
        self.token_hash = token_hash
        self.player_id = player_id
