"""Adapters layer: ``DynamoHistory``, the DynamoDB implementation of the ``HistoryStore`` port,
and ``stream_change``, the decoding of a DynamoDB Streams record for the history function.

Items, keys and costs: ``shared.adapters.dynamo.schema`` and RULINGS.md, design notes,
"Progression: history". Every write is conditional, so a repeated or late stream record
changes nothing (at-least-once delivery, AWS Lambda, "Using AWS Lambda with Amazon DynamoDB":
https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html). A failed condition is the
expected outcome of a repeat; any other error is raised (the record then fails, and Lambda
retries it, bisecting the batch).

The rating histogram's counters are top-level Number attributes, ``b<block>`` in a
``rank_blocks_key`` item and ``v<rating>`` in a ``rank_values_key`` item: DynamoDB's ``ADD``
works on top-level attributes only, and a nested map path cannot be created and set in one
expression (UpdateExpression, "ADD":
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html).
``histogram_counts`` reads them back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import ClientError

from shared.adapters.dynamo import schema
from shared.adapters.dynamo.store import from_av, to_av

if TYPE_CHECKING:
    from shared.domain.duel import Duel
    from shared.domain.progression import (
        BoardEntry,
        BoardMove,
        PlayerEntry,
        Profile,
        ProfileChange,
        RoundRecord,
        Summary,
    )
    from shared.domain.tournament import Tournament

BLOCK_PREFIX = "b"
"""A ``rank_blocks_key`` item's counter of block ``n`` is attribute ``b<n>``."""
VALUE_PREFIX = "v"
"""A ``rank_values_key`` item's counter of rating ``r`` is attribute ``v<r>``."""
WEEK_PREFIX = "week_"
"""The statistics item's ``week_<language>``: the last week the player scored on that
language's weekly board (for nickname changes)."""
TOMBSTONE_TTL_SECONDS = 7 * 24 * 3600
"""A removed player's rating board tombstone is kept a week (a stream record lives 24 h)."""

_de = TypeDeserializer()


def histogram_counts(item: dict[str, Any] | None, prefix: str) -> dict[int, int]:
    """The counters of a histogram item (plain values, as ``from_av`` gives): block or rating
    -> count, for attributes ``<prefix><int>``."""
    counts: dict[int, int] = {}
    for name, value in (item or {}).items():
        if name.startswith(prefix) and name[len(prefix) :].lstrip("-").isdecimal():
            counts[int(name[len(prefix) :])] = int(value)
    return counts


def _row(r: Any) -> dict[str, Any]:
    return {
        "player_id": r.player,
        "word": r.word,
        "tiles": list(r.tiles) if r.tiles is not None else None,
        "marks": [m.value for m in r.marks] if r.marks is not None else None,
        "skipped": r.skipped,
        "at_ms": r.at_ms,
    }


def _duel(d: Duel) -> dict[str, Any]:
    return {
        "duel_id": d.duel_id,
        "players": list(d.players),
        "first": d.first,
        "word": d.word,
        "length": d.length,
        "result": d.result.value if d.result else None,
        "winner": d.winner,
        "reason": d.reason.value if d.reason else None,
        "rows": [_row(r) for r in d.rows],
    }


def round_item(record: RoundRecord) -> dict[str, Any]:
    """The round record item (kept ``RECORD_TTL_SECONDS`` after the round closed). ``bye`` is
    absent when the round had none (``to_av`` leaves out None attributes); inside the duels a
    missing value is NULL."""
    return {
        **schema.round_record_key(record.tournament_id, record.round_no),
        "kind": "round",
        "tournament_id": record.tournament_id,
        "round_no": record.round_no,
        "bye": record.bye,
        "duels": [_duel(d) for d in record.duels],
        schema.TTL_ATTRIBUTE: schema.record_ttl(record.closed_ms),
    }


def summary_item(summary: Summary) -> dict[str, Any]:
    """The finished tournament's summary item (``RECORD``)."""
    return {
        **schema.record_key(summary.tournament_id),
        "kind": "record",
        "tournament_id": summary.tournament_id,
        "language": summary.language,
        "started_ms": summary.started_ms,
        "ended_ms": summary.ended_ms,
        "rounds": summary.rounds,
        "players": [
            {
                "player_id": s.player_id,
                "nickname": s.nickname,
                "place": s.place,
                "rating_before": s.rating_before,
                "rating_change": s.rating_change,
                "rating_after": s.rating_after,
            }
            for s in summary.standings
        ],
        schema.TTL_ATTRIBUTE: schema.record_ttl(summary.ended_ms),
    }


def entry_item(entry: PlayerEntry) -> dict[str, Any]:
    """The player's history entry item for one tournament."""
    return {
        **schema.player_history_key(entry.player_id, entry.ended_ms, entry.tournament_id),
        "kind": "history",
        "tournament_id": entry.tournament_id,
        "ended_ms": entry.ended_ms,
        "language": entry.language,
        "place": entry.place,
        "players": entry.players,
        "rating_before": entry.rating_before,
        "rating_after": entry.rating_after,
        "opponents": [{"player_id": o.player_id, "nickname": o.nickname} for o in entry.opponents],
        schema.TTL_ATTRIBUTE: schema.record_ttl(entry.ended_ms),
    }


def _image(av: dict[str, Any] | None) -> dict[str, Any] | None:
    """An image of a Lambda stream event (attribute value JSON) as plain values."""
    return from_av({k: _binary(v) for k, v in av.items()}) if av else None


def _binary(value: dict[str, Any]) -> dict[str, Any]:
    """An attribute value as boto3 reads it: in the Lambda event's JSON, ``B`` and ``BS`` are
    base64 text (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html); already decoded
    bytes (a record read with boto3) pass through."""
    import base64

    if "B" in value and isinstance(value["B"], str):
        return {"B": base64.b64decode(value["B"])}
    if "BS" in value:
        return {"BS": [base64.b64decode(b) if isinstance(b, str) else b for b in value["BS"]]}
    if "M" in value:
        return {"M": {k: _binary(v) for k, v in value["M"].items()}}
    if "L" in value:
        return {"L": [_binary(v) for v in value["L"]]}
    return value


def stream_change(record: dict[str, Any]) -> Tournament | ProfileChange | None:
    """What a DynamoDB Streams record (the Lambda event's ``Records[i]``, images in attribute
    value JSON) means to the history function: the tournament of a ``STATE`` record whose new
    image carries ``hist``; the old and new profile of a player ``PROFILE`` record; else None
    (the event filter lets only those two through; anything else is ignored). Raises
    ``StateSchemaError`` for a tournament document this code cannot read."""
    from shared.adapters.dynamo.tournament_document import HISTORY_ATTRIBUTE, tournament_from_item
    from shared.domain.progression import Profile, ProfileChange

    data = record.get("dynamodb", {})
    keys = {k: _de.deserialize(v) for k, v in data.get("Keys", {}).items()}
    pk, sk = str(keys.get(schema.PK, "")), str(keys.get(schema.SK, ""))
    new = _image(data.get("NewImage"))
    old = _image(data.get("OldImage"))
    if pk.startswith("TOURN#") and sk == "STATE":
        if new is None or HISTORY_ATTRIBUTE not in new:
            return None
        return tournament_from_item(new).tournament
    if pk.startswith("PLAYER#") and sk == "PROFILE":
        player_id = pk.removeprefix("PLAYER#")

        def profile(image: dict[str, Any] | None) -> Profile | None:
            if image is None:
                return None
            return Profile(
                player_id, str(image["nickname"]), int(image["rating"]), int(image["version"])
            )

        return ProfileChange(profile(old), profile(new))
    return None


def _failed_condition(err: ClientError) -> bool:
    return err.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


def _cancelled_by_condition(err: ClientError) -> bool:
    """A ``TransactionCanceledException`` whose only cause is a failed condition."""
    if err.response.get("Error", {}).get("Code") != "TransactionCanceledException":
        return False
    reasons = [r.get("Code") for r in err.response.get("CancellationReasons", []) or []]
    return "ConditionalCheckFailed" in reasons and all(
        r in ("ConditionalCheckFailed", "None", None) for r in reasons
    )


class DynamoHistory:
    """``HistoryStore`` on the table (``client``: a boto3 DynamoDB client; ``now_ms``: the
    clock, for tombstones' TTL)."""

    def __init__(self, client: Any, table_name: str, now_ms: Callable[[], int]) -> None:
        self.client = client
        self._table = table_name
        self._now_ms = now_ms

    # ------------------------------------------------------------------ plain puts
    def _put_new(self, item: dict[str, Any]) -> bool:
        try:
            self.client.put_item(
                TableName=self._table,
                Item=to_av(item),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as err:
            if _failed_condition(err):
                return False
            raise
        return True

    def put_round(self, record: RoundRecord) -> bool:
        return self._put_new(round_item(record))

    def put_summary(self, summary: Summary) -> bool:
        return self._put_new(summary_item(summary))

    def has_summary(self, tournament_id: str) -> bool:
        resp = self.client.get_item(
            TableName=self._table,
            Key=to_av(schema.record_key(tournament_id)),
            ConsistentRead=True,
            ProjectionExpression="pk",
        )
        return "Item" in resp

    def pairs(self, tournament_id: str) -> dict[int, list[tuple[str, str]]]:
        found: dict[int, list[tuple[str, str]]] = {}
        pages = self.client.get_paginator("query").paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :round)",
            ExpressionAttributeValues={
                ":pk": {"S": schema.tournament_key(tournament_id)[schema.PK]},
                ":round": {"S": schema.ROUND_RECORD_PREFIX},
            },
            ProjectionExpression="round_no, duels",
            ConsistentRead=True,
        )
        for page in pages:
            for raw in page.get("Items", []):
                item = from_av(raw)
                found[int(item["round_no"])] = [
                    (d["players"][0], d["players"][1]) for d in item["duels"]
                ]
        return found

    # ------------------------------------------------------------------ per player
    def add_entry(self, entry: PlayerEntry) -> bool:
        lang, week = entry.language, entry.week
        from shared.domain.progression import week_start_ms

        weekly_ttl = week_start_ms(entry.ended_ms) // 1000 + schema.WEEKLY_TTL_SECONDS
        ops = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": to_av(entry_item(entry)),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            # conditional: in the transaction, the history entry's attribute_not_exists
            {
                "Update": {
                    "TableName": self._table,
                    "Key": to_av(schema.stats_key(entry.player_id)),
                    "UpdateExpression": "ADD tournaments :one, wins :win, podiums :podium, "
                    "place_sum :place, #ln :one, #lp :place SET #kind = :kind, #week = :week, "
                    "player_id = :pid",
                    "ExpressionAttributeNames": {
                        "#ln": f"lang_{lang}_n",
                        "#lp": f"lang_{lang}_places",
                        "#kind": "kind",
                        "#week": f"{WEEK_PREFIX}{lang}",
                    },
                    "ExpressionAttributeValues": to_av(
                        {
                            ":one": 1,
                            ":win": entry.win,
                            ":podium": entry.podium,
                            ":place": entry.place,
                            ":kind": "stats",
                            ":week": week,
                            ":pid": entry.player_id,
                        }
                    ),
                }
            },
            # conditional: in the transaction, the history entry's attribute_not_exists
            {
                "Update": {
                    "TableName": self._table,
                    "Key": to_av(schema.weekly_entry_key(lang, week, entry.player_id)),
                    "UpdateExpression": "ADD board_score :points SET board_pk = :bpk, "
                    "player_id = :pid, nickname = :nick, #lang = :lang, #week = :week, "
                    "#ttl = :ttl, #kind = :kind",
                    "ExpressionAttributeNames": {
                        "#lang": "language",
                        "#week": "week",
                        "#ttl": schema.TTL_ATTRIBUTE,
                        "#kind": "kind",
                    },
                    "ExpressionAttributeValues": to_av(
                        {
                            ":points": entry.points,
                            ":bpk": schema.weekly_board_pk(lang, week, entry.player_id),
                            ":pid": entry.player_id,
                            ":nick": entry.nickname,
                            ":lang": lang,
                            ":week": week,
                            ":ttl": weekly_ttl,
                            ":kind": "weekly",
                        }
                    ),
                }
            },
        ]
        try:
            # conditional: the history entry's Put carries attribute_not_exists(pk)
            self.client.transact_write_items(TransactItems=ops)
        except ClientError as err:
            if _cancelled_by_condition(err):
                return False
            raise
        return True

    def raise_best_rating(self, player_id: str, rating: int) -> bool:
        try:
            self.client.update_item(
                TableName=self._table,
                Key=to_av(schema.stats_key(player_id)),
                UpdateExpression="SET best_rating = :r",
                ConditionExpression="attribute_not_exists(best_rating) OR best_rating < :r",
                ExpressionAttributeValues={":r": {"N": str(rating)}},
            )
        except ClientError as err:
            if _failed_condition(err):
                return False
            raise
        return True

    # ------------------------------------------------------------------ rating board
    def profile(self, player_id: str) -> Profile | None:
        from shared.domain.progression import Profile

        resp = self.client.get_item(
            TableName=self._table,
            Key=to_av(schema.player_key(player_id)),
            ConsistentRead=True,
            ProjectionExpression="nickname, rating, version",
        )
        if "Item" not in resp:
            return None
        item = from_av(resp["Item"])
        return Profile(player_id, str(item["nickname"]), int(item["rating"]), int(item["version"]))

    def board_entry(self, player_id: str) -> BoardEntry | None:
        from shared.domain.progression import BoardEntry

        resp = self.client.get_item(
            TableName=self._table,
            Key=to_av(schema.rating_entry_key(player_id)),
            ConsistentRead=True,
        )
        if "Item" not in resp:
            return None
        item = from_av(resp["Item"])
        score = item.get("board_score")
        return BoardEntry(
            player_id,
            str(item.get("nickname", "")),
            int(score) if score is not None else None,
            int(item["version"]),
        )

    def _entry_op(self, move: BoardMove) -> dict[str, Any]:
        after = move.after
        item: dict[str, Any] = {
            **schema.rating_entry_key(after.player_id),
            "kind": "rating_entry",
            "player_id": after.player_id,
            "nickname": after.nickname,
            "version": after.version,
        }
        if after.score is not None:
            item["board_pk"] = schema.rating_board_pk(after.player_id)
            item["board_score"] = after.score
        else:
            item[schema.TTL_ATTRIBUTE] = self._now_ms() // 1000 + TOMBSTONE_TTL_SECONDS
        put: dict[str, Any] = {"TableName": self._table, "Item": to_av(item)}
        if move.before is None:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            put["ConditionExpression"] = "version = :v"
            put["ExpressionAttributeValues"] = {":v": {"N": str(move.before.version)}}
        return {"Put": put}

    def _count_ops(self, player_id: str, removed: int | None, added: int | None) -> list[Any]:
        """The histogram's updates for one entry moving from ``removed`` to ``added`` (either
        None): one update per item (a transaction touches an item once)."""
        if removed == added:
            return []
        from shared.domain.progression import block_of

        shard = schema.histogram_shard(player_id)
        blocks: dict[str, int] = {}
        values: dict[int, dict[str, int]] = {}
        for score, step in ((removed, -1), (added, 1)):
            if score is None:
                continue
            block = block_of(score, schema.HISTOGRAM_BLOCK)
            name = f"{BLOCK_PREFIX}{block}"
            blocks[name] = blocks.get(name, 0) + step
            values.setdefault(block, {})[f"{VALUE_PREFIX}{score}"] = step
        items = [(schema.rank_blocks_key(shard), blocks)] + [
            (schema.rank_values_key(block, shard), counts) for block, counts in values.items()
        ]
        ops = []
        for key, counts in items:
            counts = {k: v for k, v in counts.items() if v}
            if not counts:
                continue
            names = {f"#c{i}": name for i, name in enumerate(counts)}
            ops.append(
                # conditional: in the transaction, the board entry's version condition
                {
                    "Update": {
                        "TableName": self._table,
                        "Key": to_av(key),
                        "UpdateExpression": "ADD " + ", ".join(f"{n} :d{n[2:]}" for n in names),
                        "ExpressionAttributeNames": names,
                        "ExpressionAttributeValues": {
                            f":d{n[2:]}": {"N": str(counts[name])} for n, name in names.items()
                        },
                    }
                }
            )
        return ops

    def move(self, move: BoardMove) -> bool:
        ops = [
            self._entry_op(move),
            *self._count_ops(move.after.player_id, move.removed, move.added),
        ]
        try:
            # the entry's Put (``_entry_op``) carries the version condition
            if len(ops) == 1:
                self.client.put_item(**ops[0]["Put"])  # conditional: see ``_entry_op``
            else:
                self.client.transact_write_items(TransactItems=ops)  # conditional: see above
        except ClientError as err:
            if _failed_condition(err) or _cancelled_by_condition(err):
                return False
            raise
        return True

    def rename(self, player_id: str, nickname: str) -> int:
        resp = self.client.get_item(
            TableName=self._table, Key=to_av(schema.stats_key(player_id)), ConsistentRead=True
        )
        stats = from_av(resp.get("Item") or {})
        renamed = 0
        for name, week in sorted(stats.items()):
            if not name.startswith(WEEK_PREFIX):
                continue
            language = name.removeprefix(WEEK_PREFIX)
            try:
                self.client.update_item(
                    TableName=self._table,
                    Key=to_av(schema.weekly_entry_key(language, str(week), player_id)),
                    UpdateExpression="SET nickname = :n",
                    ConditionExpression="attribute_exists(pk)",
                    ExpressionAttributeValues={":n": {"S": nickname}},
                )
                renamed += 1
            except ClientError as err:
                if not _failed_condition(err):
                    raise
        return renamed

    def forget(self, player_id: str) -> None:
        # unconditional: the profile is gone for good (its TTL removal); a repeat deletes
        # nothing, and no later record of the player writes statistics again
        self.client.delete_item(TableName=self._table, Key=to_av(schema.stats_key(player_id)))
