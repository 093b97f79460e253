"""Infrastructure: the limits the stack sets are sized to the plan (``infra/CAPACITY.md``).

Every stage and route throttle and every reservation (``infra.limits.STAGE_LIMITS``, what
``infra.cdk.stack.STAGES`` deploys) must bind no lower than the stage's target (prod: 100,000
concurrent players x the headroom; a reconnect storm of the whole target within
``STORM_SECONDS``), by the capacity plan's per-player rates; and ``infra/CAPACITY.md`` shows
the computed tables as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.cdk.stack import STAGES
from infra.limits import (
    STAGE_LIMITS,
    TARGET_PLAYERS,
    StageLimits,
    Throttle,
    account_quotas,
    bindings,
    report,
)

CAPACITY = Path(__file__).resolve().parents[3] / "infra" / "CAPACITY.md"


@pytest.mark.parametrize("stage", sorted(STAGE_LIMITS))
def test_no_limit_binds_below_the_stages_target(stage: str) -> None:
    low = [
        f"{b.name} ({b.limit}, {b.why}) binds at {b.players:,} < {b.needed:,}"
        for b in bindings(STAGE_LIMITS[stage])
        if b.players < b.needed
    ]
    assert not low, "\n".join(low)


def test_prod_is_sized_for_the_stated_target_and_the_stack_deploys_it() -> None:
    prod = STAGE_LIMITS["prod"]
    assert prod.target_players == TARGET_PLAYERS == 100_000
    config = STAGES["prod"]
    assert (config.rate_limit, config.burst_limit) == (prod.stage.rate, prod.stage.burst)
    assert config.route_throttles == {k: (t.rate, t.burst) for k, t in prod.routes.items()}
    assert config.reserved == prod.reserved


def test_the_limits_before_issue_35_fail_the_check() -> None:
    """prod as it was: its route throttles bind far below 100,000 players."""
    before = StageLimits(
        "prod",
        stage=Throttle(1_000, 2_000),
        routes={
            "$connect": Throttle(50, 100),
            "session": Throttle(50, 100),
            "guess": Throttle(500, 1_000),
        },
        reserved={"guess": 200, "connect": 50, "session": 50},
        target_players=100_000,
    )
    low = {(b.name, b.why): b.players for b in bindings(before) if b.players < b.needed}
    assert low[("route guess", "steady")] == 21_529  # 500/s over 136 guesses per 5,856 s
    assert low[("route $connect", "storm")] == 1_600  # 50/s x 30 s + 100
    assert ("reserved guess", "steady") in low


def test_capacity_md_shows_the_computed_limits_and_quotas() -> None:
    text = CAPACITY.read_text(encoding="utf-8")
    assert report() in text
    quotas = account_quotas(STAGE_LIMITS["prod"])
    assert quotas["Lambda concurrent executions"] > 1_000  # raised: listed in the doc
    for value in quotas.values():
        assert f"{value:,}" in text
