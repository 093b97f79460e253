"""Flows: the history function's writes are idempotent under at-least-once delivery
(``shared/adapters/dynamo/history.py`` on moto): a round record is written once, and the stream
records of a whole tournament delivered in any order, repeated, in batches whose failed records
are retried as Lambda retries them, leave the same progression items as one delivery in order."""

from __future__ import annotations

import random
from typing import Any

from infra.emulator.testing import LambdaContext
from shared.adapters.dynamo import schema
from shared.domain.progression import RoundRecord
from tests.functional.driver import Game, peek_item, solve_on
from tests.functional.progression.stream import StreamReader, lambda_event

PROGRESSION = ("BOARD#", "RANKHIST#")
"""Partition prefixes only the history function writes."""


def _is_progression(item: dict[str, Any]) -> bool:
    pk, sk = item["pk"], item["sk"]
    return (
        pk.startswith(PROGRESSION)
        or (pk.startswith("TOURN#") and sk != "STATE")
        or (pk.startswith("PLAYER#") and sk.startswith(("HIST#", "STATS")))
    )


def _progression(backend: Any) -> list[dict[str, Any]]:
    """The progression items, the board entries' version aside (it names the profile record
    that last moved the entry: a later record with the same rating and nickname may move it
    first when records come out of order)."""
    out = []
    for item in backend.items():
        if _is_progression(item):
            out.append({k: v for k, v in item.items() if k != "version"})
    return sorted(out, key=lambda i: (i["pk"], i["sk"]))


def _clear(backend: Any) -> None:
    for item in backend.items():
        if _is_progression(item):
            backend.client.delete_item(
                TableName=backend.table_name,
                Key={"pk": {"S": item["pk"]}, "sk": {"S": item["sk"]}},
            )


def _deliver(backend: Any, records: list[dict[str, Any]], batch: int) -> int:
    """Deliver in batches; each batch's failed records are delivered again after the rest (as
    Lambda retries them). Returns the number of failed deliveries."""
    from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

    from functions.history import handler
    from shared.services.history import MissingRoundsError

    pending = list(records)
    failures = 0
    for _ in range(50):
        if not pending:
            return failures
        retry: list[dict[str, Any]] = []
        for i in range(0, len(pending), batch):
            chunk = pending[i : i + batch]
            try:
                response = handler.invoke(lambda_event(chunk), LambdaContext(), backend.deps)
            except BatchProcessingError as err:  # every record failed: the batch is retried
                causes = [type(info[1]) for info in err.child_exceptions]
                assert causes == [MissingRoundsError] * len(causes), causes
                retry += chunk
                continue
            failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
            retry += [r for r in chunk if r["dynamodb"]["SequenceNumber"] in failed]
        failures += len(retry)
        pending = retry
    raise AssertionError("the records never all went through")


def test_a_round_record_is_written_once(backend):
    g = Game.start(backend)
    g.play_round(solve_on(2))
    closed = g.t.closed
    assert closed is not None
    history = backend.deps.history
    record = RoundRecord(g.tid, closed.round_no, closed.bye, closed.duels, 1_800_000_000_000)
    assert history.put_round(record) is True
    first = peek_item(schema.round_record_key(g.tid, closed.round_no))
    other = RoundRecord(g.tid, closed.round_no, "someone", (), 1_900_000_000_000)
    assert history.put_round(other) is False
    assert history.put_round(record) is False
    assert peek_item(schema.round_record_key(g.tid, closed.round_no)) == first


def test_any_order_with_repeats_leaves_the_same_items_as_one_delivery_in_order(backend):
    reader = StreamReader(backend.client, backend.table_name)
    g = Game.start(backend)
    g.play(solve_on(3))
    records = reader.read()
    assert _deliver(backend, records, batch=100) == 0
    expected = _progression(backend)
    assert any(i["sk"] == "RECORD" for i in expected)
    # one shuffle with repeats (moto copies the table for each transaction: 0.4 s each here)
    rng = random.Random(38)
    _clear(backend)
    shuffled = records + rng.sample(records, len(records) // 2)
    rng.shuffle(shuffled)
    retried = _deliver(backend, shuffled, batch=10)
    assert _progression(backend) == expected
    assert retried > 0  # the tournament's end came before one of its rounds
