"""Adapters layer: ``DynamoProgression``, the DynamoDB implementation of the ``Progression``
port (issue 38's read side): statistics, per-player history, the two leaderboards and the
tournament records, as the history function writes them (``schema``: ``stats_key``,
``player_history_key``, ``rating_entry_key``, ``weekly_entry_key``, ``rank_blocks_key``,
``rank_values_key``, ``record_key``, ``round_record_key``, ``gsi_board``).

Read-only, no scan, every read eventually consistent (half a read unit per 4 KB; a GSI serves
no other kind). The read units of each method are in its docstring and in
``shared/domain/RULINGS.md``, "Progression: reads". Raises ``BusyError`` / ``ContentionError``
as the store does, or botocore's ``ClientError``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import Any, TypeVar

from shared.adapters.dynamo import schema
from shared.adapters.dynamo.store import _Client, from_av, to_av
from shared.services.errors import BusyError
from shared.services.ports import BoardLine

_UNPROCESSED_ROUNDS = 4
_T = TypeVar("_T")


def board_order(line: BoardLine) -> tuple[int, str]:
    """A leaderboard's order: score descending, then player id (code point order)."""
    return (-line.score, line.player_id)


def _line(item: dict[str, Any]) -> BoardLine:
    return BoardLine(str(item["player_id"]), str(item["nickname"]), int(item["board_score"]))


TIE_PAGE = 250
"""Items per page once "around" reads a run of tied scores (the first page asks for 5): the
index orders equal scores arbitrarily, so every tie at the boundary is read. A run of thousands
of ties (early on, every player with one tournament and the same place shares a rating) then
costs its size in read units (about 100 bytes an entry) in a few Queries per shard, not one
Query per 5 entries (RULINGS.md, "Progression: reads")."""


class DynamoProgression:
    """The progression reads on one table (``client``: a boto3 DynamoDB client).

    ``workers``: the shards' Queries of one request run on up to this many threads (boto3
    clients are thread-safe: https://boto3.amazonaws.com/v1/documentation/api/latest/guide/clients.html,
    "Multithreading or multiprocessing with clients"), so a leaderboard waits for about four
    round trips rather than about fifty; 1 (the tests): one after the other, in shard order.
    The answers are the same either way."""

    def __init__(
        self,
        client: Any,
        table_name: str,
        sleep: Callable[[float], None] = time.sleep,
        workers: int = 1,
    ) -> None:
        self._client = _Client(client)
        self._table = table_name
        self._sleep = sleep
        self._workers = workers
        self._pool: Any = None

    def _each(self, jobs: Sequence[Callable[[], _T]]) -> list[_T]:
        """Each job's result, in order: on the worker threads when there are several."""
        if self._workers <= 1 or len(jobs) <= 1:
            return [job() for job in jobs]
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=self._workers)
        return list(self._pool.map(lambda job: job(), jobs))

    # ------------------------------------------------------------------ players
    def stats(self, player_id: str) -> dict[str, Any] | None:
        """GetItem of ``STATS``: 0.5 RRU (the item is well under 4 KB)."""
        resp = self._client.get_item(TableName=self._table, Key=to_av(schema.stats_key(player_id)))
        item = resp.get("Item")
        return from_av(item) if item else None

    def history(
        self, player_id: str, limit: int, before: str | None = None
    ) -> tuple[list[dict[str, Any]], bool]:
        """One Query on ``PLAYER#<id>``, ``HIST#`` keys descending from ``before`` (exclusive),
        ``limit + 1`` items (the extra one says whether more remain): entries are ~0.5 KB, so
        0.5 RRU per 8 entries (a page of 20: 1.5 RRU; the profile's 100 points: 6.5 RRU)."""
        key = schema.player_key(player_id)[schema.PK]
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": to_av(
                {":pk": key, ":prefix": schema.PLAYER_HISTORY_PREFIX}
            ),
            "ScanIndexForward": False,
            "Limit": limit + 1,
        }
        if before is not None:
            request["ExclusiveStartKey"] = to_av({schema.PK: key, schema.SK: before})
        items: list[dict[str, Any]] = []
        for page in self._pages(request):
            items += page
            if len(items) > limit:
                break
        return items[:limit], len(items) > limit

    # ------------------------------------------------------------------ boards
    def rating_entry(self, player_id: str) -> BoardLine | None:
        """GetItem of the player's rating entry: 0.5 RRU."""
        return self._entry(schema.rating_entry_key(player_id))

    def weekly_entry(self, language: str, week: str, player_id: str) -> BoardLine | None:
        """GetItem of the player's weekly entry: 0.5 RRU."""
        return self._entry(schema.weekly_entry_key(language, week, player_id))

    def _entry(self, key: dict[str, str]) -> BoardLine | None:
        resp = self._client.get_item(TableName=self._table, Key=to_av(key))
        item = resp.get("Item")
        return _line(from_av(item)) if item else None

    def rating_top(self, limit: int) -> list[BoardLine]:
        """The top ``limit`` over the ``RATING_BOARD_SHARDS`` shards of ``gsi_board``
        (``_top``): 16 Queries of 0.5 RRU, 8 RRU for the top 100."""
        pks = [f"RATING#{s}" for s in range(schema.RATING_BOARD_SHARDS)]  # rating_board_pk
        return self._top(pks, limit)

    def weekly_top(self, language: str, week: str, limit: int) -> list[BoardLine]:
        """As ``rating_top`` over the week's ``WEEKLY_BOARD_SHARDS`` shards: 8 RRU."""
        pks = [f"WEEK#{language}#{week}#{s}" for s in range(schema.WEEKLY_BOARD_SHARDS)]
        return self._top(pks, limit)

    def _top(self, board_pks: list[str], limit: int) -> list[BoardLine]:
        """The best ``limit`` entries over the shards ``board_pks``, exactly: one descending
        Query per shard of 4 x its fair share (``limit`` / shards; 25 entries of ~150 bytes
        for the top 100 over 16 shards, one 4 KB unit: 0.5 RRU), then, only for a shard whose
        last entry still scores at least the merged list's last, its next entries (a player's
        shard is a hash of the id: that is rare)."""
        first = max(1, -(-4 * limit // len(board_pks)))
        got: dict[str, list[BoardLine]] = {pk: [] for pk in board_pks}
        more: dict[str, Any] = {}
        pending = dict.fromkeys(board_pks, first)

        def page(pk: str, n: int) -> dict[str, Any]:
            request = {
                "TableName": self._table,
                "IndexName": schema.GSI_BOARD,
                "KeyConditionExpression": "board_pk = :pk",
                "ExpressionAttributeValues": to_av({":pk": pk}),
                "ScanIndexForward": False,
                "Limit": n,
            }
            if more.get(pk):
                request["ExclusiveStartKey"] = more[pk]
            return dict(self._client.query(**request))

        while pending:
            shards = list(pending.items())
            answers = self._each([partial(page, pk, n) for pk, n in shards])
            for (pk, _), resp in zip(shards, answers, strict=True):
                got[pk] += [_line(from_av(i)) for i in resp.get("Items", [])]
                more[pk] = resp.get("LastEvaluatedKey")
            merged = sorted((x for lines in got.values() for x in lines), key=board_order)
            cut = merged[limit - 1].score if len(merged) >= limit else None
            pending = {
                pk: max(first, limit - len(lines))
                for pk, lines in got.items()
                if more.get(pk) and (cut is None or lines[-1].score >= cut)
            }
        return sorted((x for lines in got.values() for x in lines), key=board_order)[:limit]

    def rating_ranks(self, scores: Iterable[int]) -> dict[int, int]:
        """One BatchGetItem of the ``HISTOGRAM_SHARDS`` block items and the
        ``HISTOGRAM_SHARDS`` value items of each block the scores fall in (items under 4 KB:
        16 RRU for one block with 16 copies, as for one rank or a player and those around
        them): each rank is
        1 + the entries in higher blocks + those above the score in its block."""
        wanted = set(scores)
        blocks = sorted({s // schema.HISTOGRAM_BLOCK for s in wanted})
        keys = [schema.rank_blocks_key(s) for s in range(schema.HISTOGRAM_SHARDS)]
        keys += [
            schema.rank_values_key(b, s) for b in blocks for s in range(schema.HISTOGRAM_SHARDS)
        ]
        per_block: dict[int, int] = {}
        per_value: dict[int, int] = {}
        for item in self._batch_get(keys):
            # counters are top-level attributes b<block> / v<rating> (the history adapter's
            # BLOCK_PREFIX / VALUE_PREFIX: ADD works on top-level attributes only)
            counts = per_block if item[schema.SK] == "BLOCKS" else per_value
            for name, n in item.items():
                number = name[1:]
                if name[:1] in ("b", "v") and number.lstrip("-").isdigit():
                    counts[int(number)] = counts.get(int(number), 0) + int(n)
        ranks: dict[int, int] = {}
        for score in wanted:
            block = score // schema.HISTOGRAM_BLOCK
            above = sum(n for b, n in per_block.items() if b > block)
            above += sum(
                n
                for v, n in per_value.items()
                if v > score and v // schema.HISTOGRAM_BLOCK == block
            )
            ranks[score] = 1 + above
        return ranks

    def rating_around(self, line: BoardLine, n: int) -> tuple[list[BoardLine], list[BoardLine]]:
        """Per rating shard, a Query ``board_score >= mine`` ascending (my ties, then at least
        ``n`` strictly above) and one ``board_score < mine`` descending (at least ``n``), pages
        of ``n`` followed only until the ``n``-th entry's ties are all read (the index orders
        equal scores arbitrarily; the board orders them by player id): 2 x
        ``RATING_BOARD_SHARDS`` Queries of 0.5 RRU, 16 RRU, plus the size of any run of ties
        at the boundary (pages of ``TIE_PAGE``; RULINGS.md, "Progression: reads")."""
        mine = board_order(line)
        above: list[BoardLine] = []
        below: list[BoardLine] = []
        shards = [f"RATING#{s}" for s in range(schema.RATING_BOARD_SHARDS)]
        upward = partial(
            self._nearest, op=">=", score=line.score, forward=True, n=n, beyond=line.score
        )
        downward = partial(self._nearest, op="<", score=line.score, forward=False, n=n, beyond=None)
        ups = self._each([partial(upward, pk) for pk in shards])
        downs = self._each([partial(downward, pk) for pk in shards])
        for up in ups:
            for other in up:
                if other.player_id != line.player_id:
                    (above if board_order(other) < mine else below).append(other)
        for down in downs:
            below += down
        return sorted(above, key=board_order)[-n:], sorted(below, key=board_order)[:n]

    def _nearest(
        self, board_pk: str, op: str, score: int, *, forward: bool, n: int, beyond: int | None
    ) -> list[BoardLine]:
        """One shard's entries from ``score`` on (``op``), in pages of ``n``, until ``n`` of
        them score other than ``beyond`` (my ties, all read) and every entry tied with the
        ``n``-th of those is read too."""
        request = {
            "TableName": self._table,
            "IndexName": schema.GSI_BOARD,
            "KeyConditionExpression": f"board_pk = :pk AND board_score {op} :s",
            "ExpressionAttributeValues": to_av({":pk": board_pk, ":s": score}),
            "ScanIndexForward": forward,
            "Limit": n,
        }
        found: list[BoardLine] = []
        for page in self._pages(request, next_limit=TIE_PAGE):
            found += [_line(i) for i in page]
            others = [x.score for x in found if x.score != beyond]
            if len(others) >= n and others[-1] != others[n - 1]:
                break
        return found

    # ------------------------------------------------------------------ records
    def tournament_record(
        self, tournament_id: str
    ) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """One Query on ``TOURN#<id>``, sort keys ``RECORD`` to ``ROUND#99`` (the summary and
        the rounds, never the game's ``STATE``): a whole 8-player tournament's record is about
        30 KB, 4 RRU; the worst case (128 KB), 16 RRU."""
        summary = schema.record_key(tournament_id)
        last = schema.round_record_key(tournament_id, 99)
        request = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :lo AND :hi",
            "ExpressionAttributeValues": to_av(
                {":pk": summary[schema.PK], ":lo": summary[schema.SK], ":hi": last[schema.SK]}
            ),
        }
        items = [i for page in self._pages(request) for i in page]
        if not items or items[0][schema.SK] != summary[schema.SK]:
            return None
        return items[0], items[1:]

    # ------------------------------------------------------------------ plumbing
    def _pages(
        self, request: dict[str, Any], next_limit: int | None = None
    ) -> Iterator[list[dict[str, Any]]]:
        """The Query's pages, decoded, following ``LastEvaluatedKey``; pages after the first
        ask for ``next_limit`` items when it is given."""
        while True:
            resp = self._client.query(**request)
            yield [from_av(i) for i in resp.get("Items", [])]
            start = resp.get("LastEvaluatedKey")
            if not start:
                return
            request = {**request, "ExclusiveStartKey": start}
            if next_limit is not None:
                request["Limit"] = next_limit

    def _batch_get(self, keys: list[dict[str, str]]) -> list[dict[str, Any]]:
        """BatchGetItem in pages of 100 keys, eventually consistent, asking again for
        unprocessed keys; BusyError when they stay unprocessed."""
        items: list[dict[str, Any]] = []
        for start in range(0, len(keys), 100):
            items += self._batch_page(keys[start : start + 100])
        return items

    def _batch_page(self, keys: list[dict[str, str]]) -> list[dict[str, Any]]:
        request: dict[str, Any] = {self._table: {"Keys": [to_av(k) for k in keys]}}
        items: list[dict[str, Any]] = []
        for n in range(_UNPROCESSED_ROUNDS + 1):
            if n:  # keys left unprocessed (throttled): back off before asking again
                self._sleep(random.uniform(0, 0.025 * 2**n))
            resp = self._client.batch_get_item(RequestItems=request)
            items += [from_av(raw) for raw in resp.get("Responses", {}).get(self._table, [])]
            request = resp.get("UnprocessedKeys") or {}
            if not request:
                return items
        raise BusyError("the table is busy (UnprocessedKeys); please try again")
