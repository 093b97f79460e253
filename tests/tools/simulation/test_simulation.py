"""The load simulation (``infra.simulation``): a tiny seeded run keeps its behavioural
invariants, the same seed gives the same figures, and the fake DynamoDB client refuses what it
does not model and answers like DynamoDB where the store depends on it.

No timing or throughput is asserted (the report prints those); only behaviour.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from botocore.exceptions import ClientError

from infra.simulation.dynamo import FakeDynamoClient, Limits
from infra.simulation.engine import Sim
from infra.simulation.expressions import UnsupportedExpressionError
from infra.simulation.run import Figures, Options, Run
from shared.runtime.bootstrap import TOTAL_MAX_ATTEMPTS


@pytest.fixture(autouse=True)
def _no_emf_on_stdout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock function's Powertools metrics stay quiet in these runs, and only in them (an
    environment variable set at import would leak into the worker's later tests)."""
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")


TABLE = "wordle-tournament"


def _run(seed: int, play: int) -> Figures:
    return Run(Options(rate=60, window_s=0.6, seed=seed, play=play)).execute()


@pytest.fixture(scope="module")
def played() -> Figures:
    return _run(seed=3, play=1)


def test_a_tiny_run_keeps_every_invariant(played: Figures) -> None:
    assert played.started >= 2, "the run is too small to show anything"
    assert played.invariants, "no invariant was checked"
    broken = [name for name, ok in played.invariants.items() if not ok]
    assert broken == []
    assert played.errors == {}


def test_the_sampled_tournament_is_played_to_the_end(played: Figures) -> None:
    assert played.played == 1
    assert played.played_to_end == 1
    assert played.invocations.get("guess", 0) > 20
    assert played.executions > 0


def test_every_joiner_is_seated_or_still_waiting(played: Figures) -> None:
    assert played.joined == played.arrivals
    assert played.seated + played.waiting_at_end == played.joined
    assert played.seated == 8 * played.started


def test_partition_accounting_sums_to_the_requests(played: Figures) -> None:
    assert played.units["wcu"] > 0
    assert played.units["rcu"] > 0
    assert played.partition_units == pytest.approx(played.units)


def test_the_same_seed_gives_the_same_report() -> None:
    def fixed(f: Figures) -> dict[str, Any]:
        d = dataclasses.asdict(f)
        d.pop("cpu_joins_s")
        d.pop("cpu_play_s")
        return d

    assert fixed(_run(seed=5, play=0)) == fixed(_run(seed=5, play=0))


# ------------------------------------------------------------------ the fake client alone
def _call(client: FakeDynamoClient, op: str, **kw: Any) -> Any:
    """Run one client call as a task of a fresh scheduler; its result or its exception."""
    out: dict[str, Any] = {}

    def task() -> None:
        try:
            out["value"] = getattr(client, op)(**kw)
        except Exception as err:  # handed back to the test
            out["error"] = err

    client.sim.spawn_at(client.sim.now, task)
    client.sim.run()
    if "error" in out:
        raise out["error"]
    return out["value"]


def _client(**limits: Any) -> FakeDynamoClient:
    return FakeDynamoClient(Sim(), random.Random(1), TABLE, limits=Limits(**limits))


ITEM = {"pk": {"S": "PLAYER#a"}, "sk": {"S": "PROFILE"}, "version": {"N": "1"}}


def test_a_failed_condition_answers_with_the_old_item() -> None:
    client = _client()
    client.seed_item(ITEM)
    with pytest.raises(ClientError) as err:
        _call(
            client,
            "put_item",
            TableName=TABLE,
            Item={**ITEM, "version": {"N": "2"}},
            ConditionExpression="#v = :v",
            ExpressionAttributeNames={"#v": "version"},
            ExpressionAttributeValues={":v": {"N": "7"}},
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert err.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert err.value.response["Item"] == ITEM  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    "expression",
    ["size(version) > :v", "version IN (:v)", "contains(version, :v)", "#v = :v AND"],
)
def test_an_expression_it_does_not_model_is_refused(expression: str) -> None:
    client = _client()
    with pytest.raises(UnsupportedExpressionError):
        _call(
            client,
            "put_item",
            TableName=TABLE,
            Item=ITEM,
            ConditionExpression=expression,
            ExpressionAttributeNames={"#v": "version"},
            ExpressionAttributeValues={":v": {"N": "1"}},
        )


def test_an_unused_expression_value_is_refused() -> None:
    with pytest.raises(UnsupportedExpressionError):
        _call(
            _client(),
            "put_item",
            TableName=TABLE,
            Item=ITEM,
            ConditionExpression="attribute_not_exists(pk)",
            ExpressionAttributeValues={":v": {"N": "1"}},
        )


def test_an_unknown_parameter_is_refused() -> None:
    with pytest.raises(UnsupportedExpressionError):
        _call(_client(), "put_item", TableName=TABLE, Item=ITEM, ReturnValues="ALL_OLD")


def test_a_hot_key_is_throttled_after_botocore_retries() -> None:
    client = _client(wcu_per_s=0.1, burst_s=20.0)  # holds 2 units, refills 0.1 per second
    client.seed_item(ITEM)
    codes = []
    retries = []
    for _ in range(4):
        try:
            _call(
                client,
                "update_item",
                TableName=TABLE,
                Key={"pk": ITEM["pk"], "sk": ITEM["sk"]},
                UpdateExpression="SET heard_ms = :t",
                ExpressionAttributeValues={":t": {"N": "1"}},
            )
            codes.append("ok")
        except ClientError as err:
            codes.append(err.response["Error"]["Code"])
            retries.append(err.response["ResponseMetadata"]["RetryAttempts"])
    assert codes[:2] == ["ok", "ok"]
    assert "ProvisionedThroughputExceededException" in codes[2:]
    # botocore's standard mode: shared.runtime.bootstrap's tries in all, the first included
    assert set(retries) == {TOTAL_MAX_ATTEMPTS - 1}
