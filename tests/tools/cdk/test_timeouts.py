"""Infrastructure: every function's timeout leaves one AWS call's worst case a margin.

The worst case is computed from the settings of the clients the functions really build
(``shared.runtime.bootstrap.client``: connect and read timeouts, tries, standard mode's
backoff) and checked against each deployed timeout (``infra.cdk.constructs.functions.SPECS``);
the twin enforces those same timeouts (``infra.emulator.throttles.TwinLimits``)."""

from __future__ import annotations

import pytest

from infra.cdk.constructs.functions import SPECS
from infra.emulator.throttles import TwinLimits
from infra.limits import call_margin_seconds
from shared.runtime.bootstrap import client, worst_call_seconds
from shared.runtime.settings import Settings

SERVICES = ("dynamodb", "stepfunctions", "apigatewaymanagementapi")
"""What the functions call (the table, the deadline machine, ``@connections``)."""


def _worst(service: str) -> float:
    config = client(service, Settings(), endpoint="http://127.0.0.1:1").meta.config
    assert config.retries["mode"] == "standard"
    return worst_call_seconds(
        config.connect_timeout, config.read_timeout, config.retries["total_max_attempts"]
    )


def test_the_worst_case_counts_every_try_and_backoff() -> None:
    # 3 tries of 2 s + 5 s, backoff up to 1 s then 2 s: the settings before issue 35
    assert worst_call_seconds(2, 5, 3) == 24
    assert worst_call_seconds(1, 2, 1) == 3
    assert worst_call_seconds(1, 1, 7) == 14 + 1 + 2 + 4 + 8 + 16 + 20  # backoff capped at 20 s


@pytest.mark.parametrize("service", SERVICES)
@pytest.mark.parametrize("module", sorted(SPECS))
def test_one_call_at_its_worst_fits_every_function_with_a_margin(service: str, module: str) -> None:
    timeout = SPECS[module].timeout_s
    worst = _worst(service)
    assert worst + call_margin_seconds(timeout) <= timeout, (
        f"{module}: a {service} call may take {worst:g} s of its {timeout} s"
    )


def test_the_twin_enforces_the_deployed_timeouts() -> None:
    twin = TwinLimits.for_stage("prod")
    assert {m: twin.timeout_for(m, 0) for m in SPECS} == {
        m: float(spec.timeout_s) for m, spec in SPECS.items()
    }
