"""Randomized concurrency: the ``Hardening`` state machine (``machine.py``)
on the ``InMemoryStore`` fake (the bulk: at least 10,000 steps in CI) and, smaller, on moto.

``WT_HARDENING_NIGHTLY=1`` runs ten times more examples on each.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from shared.adapters.memory import InMemoryStore
from shared.services.model import LobbyRecord
from tests.property.machine import STATS, Hardening

NIGHTLY = os.environ.get("WT_HARDENING_NIGHTLY") == "1"
SCALE = 10 if NIGHTLY else 1

COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "derandomize": not NIGHTLY,  # CI is reproducible; nightly explores new seeds
    "print_blob": True,
}


class InMemoryHardening(Hardening):
    def make_store(self) -> InMemoryStore:
        return InMemoryStore()

    def inner_ratings(self) -> dict[tuple[str, str], int]:
        return {k: v.change for k, v in self.inner.ratings.items()}

    def inner_waiting(self) -> list[LobbyRecord]:
        return self.inner.all_waiting()  # type: ignore[no-any-return]


STEPS_IN_MEMORY = 200
EXAMPLES_IN_MEMORY = int(os.environ.get("WT_HARDENING_EXAMPLES", 100)) * SCALE

TestInMemory = InMemoryHardening.TestCase
TestInMemory.settings = settings(
    max_examples=EXAMPLES_IN_MEMORY, stateful_step_count=STEPS_IN_MEMORY, **COMMON
)


def test_the_ci_budget_is_at_least_ten_thousand_steps():
    assert EXAMPLES_IN_MEMORY * STEPS_IN_MEMORY >= 10_000


def test_zz_the_runs_reached_tournaments():
    """Runs after the machine (file order): its steps really played games."""
    print(dict(STATS))
    if STATS["steps"]:
        assert STATS["tournaments"] > 0
        assert STATS["tournaments_over"] > 0
    if STATS["steps"] and "WT_HARDENING_EXAMPLES" not in os.environ:
        assert STATS["steps"] >= 10_000  # hypothesis may end a run early: count, don't trust


class MotoHardening(Hardening):
    def make_store(self) -> object:
        from shared.adapters.dynamo.schema import create_tables
        from shared.adapters.dynamo.store import DynamoStore

        self._table = f"t{id(self)}"
        create_tables(_moto_client(), self._table)
        return DynamoStore(_moto_client(), self._table, lambda: self.clock.now_ms())

    def inner_ratings(self) -> dict[tuple[str, str], int]:
        out = {}
        for pid in self.ids:
            resp = _moto_client().query(
                TableName=self._table,
                KeyConditionExpression="pk = :p AND begins_with(sk, :r)",
                ExpressionAttributeValues={":p": {"S": f"PLAYER#{pid}"}, ":r": {"S": "RATING#"}},
                ConsistentRead=True,
            )
            for item in resp["Items"]:
                out[(pid, item["tournament_id"]["S"])] = int(item["change"]["N"])
        return out

    def inner_waiting(self) -> list[LobbyRecord]:
        from shared.adapters.dynamo import records
        from shared.adapters.dynamo.store import from_av

        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "FilterExpression": "#k = :l AND #s = :w",
            "ExpressionAttributeNames": {"#k": "kind", "#s": "status"},
            "ExpressionAttributeValues": {":l": {"S": "lobby"}, ":w": {"S": "waiting"}},
            "ConsistentRead": True,
        }
        found = []
        while True:
            resp = _moto_client().scan(**kwargs)
            found += [records.lobby_from_item(from_av(i)) for i in resp["Items"]]
            if "LastEvaluatedKey" not in resp:
                return found
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def teardown(self) -> None:
        _moto_client().delete_table(TableName=self._table)


_CLIENT: list[object] = []


def _moto_client():
    if not _CLIENT:
        import boto3

        _CLIENT.append(boto3.client("dynamodb", region_name="us-east-1"))
    return _CLIENT[0]


@pytest.fixture
def moto(monkeypatch):
    from moto import mock_aws

    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        _CLIENT.clear()
        yield
    _CLIENT.clear()


def test_the_same_machine_on_moto(moto):
    from hypothesis.stateful import run_state_machine_as_test

    run_state_machine_as_test(
        MotoHardening,
        settings=settings(max_examples=4 * SCALE, stateful_step_count=40, **COMMON),
    )
