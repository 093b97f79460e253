"""Unit tests: the cost model bills each function at its configured memory (read from the CDK
source) with CPU stretched by the memory's share of a vCPU; the memory right-sizing; storage
per player and per tournament; the figures generator's blocks.

Small hand-built inputs with known answers; the figures themselves are the benchmark's.
"""

from __future__ import annotations

import math

import pytest

from infra.benchmarks import figures, memory, prices
from infra.benchmarks.calls import Call, Invocation
from infra.benchmarks.storage import ITEM_OVERHEAD_BYTES, MONTH_S, Storage, StoredItem, kind_of
from infra.cdk.constructs.functions import SPECS

PRICES = prices.load_prices()


class _Cold:
    """Figure 2's answer: median cold-start CPU ms per handler module."""

    def __init__(self, cpu: dict[str, float]) -> None:
        self.cpu = {label: [ms] for label, ms in cpu.items()}

    def cpu_median(self, label: str) -> float:
        return self.cpu[label][0]


class _Inv(Invocation):
    """An invocation with a fixed own CPU time."""

    def __init__(self, route: str, calls: list[Call], own: float) -> None:
        super().__init__(route, calls)
        self._own = own

    @property
    def own_cpu_ms(self) -> float:
        return self._own


def _guess(own: float = 2.0) -> _Inv:
    calls = [Call("dynamodb", "GetItem"), Call("dynamodb", "PutItem")]
    return _Inv("guess", calls, own)


def test_each_route_is_billed_at_its_functions_configured_memory() -> None:
    assert prices.function_memory_mb() == {m: s.memory_mb for m, s in SPECS.items()}
    assert prices.function_of("guess") == "guess"
    assert prices.function_of("party_join") == "party"
    assert prices.function_of("$connect") == "connect"
    assert prices.function_of("clock:wake:t1") == "apply_deadlines"

    inv = _guess()
    mb = SPECS["guess"].memory_mb
    expected_ms = math.ceil(
        (2.0 + 2 * prices.CLIENT_CPU_MS_PER_CALL) * max(1.0, prices.VCPU_MB / mb) + 2 * 6.0
    )
    assert prices.billed_ms(inv) == expected_ms
    assert prices.gb_seconds([inv]) == pytest.approx(expected_ms / 1000 * mb / 1024)


def test_less_memory_stretches_the_cpu_but_not_the_waits() -> None:
    inv = _guess(own=10.0)
    cpu = 10.0 + 2 * prices.CLIENT_CPU_MS_PER_CALL
    assert prices.billed_ms(inv, memory_mb=prices.VCPU_MB) == math.ceil(cpu + 12.0)
    assert prices.billed_ms(inv, memory_mb=3538) == math.ceil(cpu + 12.0)  # past 1 vCPU: same
    half = prices.VCPU_MB / 2
    assert prices.billed_ms(inv, memory_mb=int(half)) == math.ceil(
        cpu * prices.VCPU_MB / int(half) + 12.0
    )
    assert prices.billed_ms(inv, own_cpu=False, memory_mb=prices.VCPU_MB) == math.ceil(
        2 * prices.CLIENT_CPU_MS_PER_CALL + 12.0
    )


def test_the_right_size_is_the_cheapest_memory_meeting_both_goals() -> None:
    light = [_Inv("$connect", [Call("dynamodb", "PutItem")], 0.5) for _ in range(10)]
    heavy = [_guess(own=10.0) for _ in range(10)]

    sized = {s.module: s for s in memory.size_functions([*light, *heavy], PRICES)}

    # light: 128 MB stretches 0.86 ms of CPU to about 12 ms, within the warm goal; cheapest
    assert sized["connect"].chosen_mb == 128
    # heavy: 10.7 ms of CPU must stay within 15 ms stretched: at least 1769 * 10.7 / 15 MB
    guess = sized["guess"]
    need = prices.VCPU_MB * guess.cpu_ms / memory.WARM_CPU_GOAL_MS
    assert guess.chosen_mb >= need
    assert all(not c.meets for c in guess.candidates if c.memory_mb < need)
    assert guess.at(guess.chosen_mb).usd <= min(c.usd for c in guess.candidates if c.meets)
    # not invoked: kept as configured
    assert sized["watchdog"].chosen_mb == SPECS["watchdog"].memory_mb


def test_a_cold_start_over_its_goal_rules_a_memory_out() -> None:
    light = [_Inv("$connect", [Call("dynamodb", "PutItem")], 0.5)]

    (connect,) = [
        s
        for s in memory.size_functions(light, PRICES, _Cold({"functions.connect": 1_000.0}))
        if s.module == "connect"
    ]

    # 1,000 ms of CPU at 1 vCPU: within 2 s only from 1769 / 2 = 885 MB
    assert connect.cold_cpu_ms == 1_000.0
    assert connect.chosen_mb >= prices.VCPU_MB * 1_000 / memory.COLD_GOAL_MS
    assert connect.at(128).cold_ms == pytest.approx(1_000 * prices.VCPU_MB / 128)


def _item(kind: str, size: int, kept_s: float | None) -> StoredItem:
    return StoredItem(kind, size + ITEM_OVERHEAD_BYTES, kept_s)


def test_storage_per_player_per_tournament_and_growth() -> None:
    day = 86_400.0
    items = [
        _item("PROFILE", 200, 30 * day),
        _item("PROFILE", 300, 30 * day),
        _item("TOKEN", 100, 30 * day),
        _item("TOKEN", 100, 30 * day),
        _item("TOURN", 900, 7 * day),
        _item("RATING", 70, None),
        _item("RATING", 70, None),
        _item("OPENER", 50, None),  # shared by every lobby: nobody's
    ]
    s = Storage(items, players=2, duration_s=600.0)

    assert s.per_player_bytes == (300 + 400) / 2 + 200
    assert s.per_tournament_bytes == 1000 + 2 * 170 + 2 * 200
    assert s.kept_bytes_per_tournament == 2 * 170
    per_month = 1_000 / 2 / 600.0 * MONTH_S
    assert s.tournaments_per_month(1_000) == pytest.approx(per_month)
    assert s.monthly_growth_gb(1_000) == pytest.approx(340 * per_month / 1e9)
    held = (1000 * 7 * day + 2 * 200 * 30 * day) / MONTH_S + 2 * 170 * 12
    assert s.gb_months == pytest.approx(held / 1e9)


def test_an_items_kind_is_its_keys_prefix() -> None:
    def key(pk: str, sk: str) -> dict[str, dict[str, str]]:
        return {"pk": {"S": pk}, "sk": {"S": sk}}

    assert kind_of(key("PLAYER#p", "PROFILE")) == "PROFILE"
    assert kind_of(key("PLAYER#p", "RATING#t")) == "RATING"
    assert kind_of(key("TOKEN#abc", "TOKEN")) == "TOKEN"
    assert kind_of(key("TOURN#t", "STATE")) == "TOURN"


def test_a_block_that_differs_from_its_source_is_found_and_rewritten() -> None:
    text = (
        "We run <!-- figures:begin n -->12<!-- figures:end --> functions, "
        "<!-- figures:begin m -->\nold\n<!-- figures:end --> and more."
    )
    render = {"n": lambda: "11", "m": lambda: "\nold\n"}

    new, changed = figures.rewrite(text, render)

    assert changed == ["n"]
    assert "<!-- figures:begin n -->11<!-- figures:end --> functions" in new
    assert figures.rewrite(new, render) == (new, [])
    with pytest.raises(KeyError):
        figures.rewrite("<!-- figures:begin nobody -->1<!-- figures:end -->", render)


def test_alarm_metrics_count_each_metric_a_math_alarm_reads() -> None:
    template = {
        "Resources": {
            "A": {"Type": "AWS::CloudWatch::Alarm", "Properties": {"MetricName": "Errors"}},
            "B": {
                "Type": "AWS::CloudWatch::Alarm",
                "Properties": {
                    "Metrics": [
                        {"Id": "m1", "MetricStat": {}},
                        {"Id": "m2", "MetricStat": {}},
                        {"Id": "sum", "Expression": "m1 + m2"},
                    ]
                },
            },
            "C": {"Type": "AWS::CloudWatch::CompositeAlarm", "Properties": {}},
            "D": {"Type": "AWS::CloudWatch::Dashboard", "Properties": {}},
        }
    }
    cw = PRICES["cloudwatch"]

    assert figures.alarm_metrics(template) == 3
    assert figures.fixed_month_usd(template, PRICES) == pytest.approx(
        3 * cw["alarm_metric_month"]
        + cw["composite_alarm_month"]
        + cw["dashboard_month"]
        + figures.custom_metrics(template) * cw["custom_metric_month"]
    )
    assert "TokenReuse" in figures.published_metric_names()


def test_a_function_never_invoked_is_raised_only_when_its_cold_start_misses() -> None:
    cold = _Cold({"functions.messages": 500.0, "functions.watchdog": 100.0})
    sized = {s.module: s for s in memory.size_functions([], PRICES, cold)}

    nickname = sized["nickname"]
    assert nickname.invocations == 0
    need = prices.VCPU_MB * 500 / memory.COLD_GOAL_MS
    assert nickname.chosen_mb == min(c for c in memory.CANDIDATES_MB if c >= need)
    assert sized["watchdog"].chosen_mb == SPECS["watchdog"].memory_mb  # 100 ms: kept
