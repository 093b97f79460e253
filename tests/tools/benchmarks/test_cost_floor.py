"""Unit tests: the cost model's all-in log lines and its floors (whether the design could
meet the goal at all).

Small hand-built plays with known answers; the figures themselves are the benchmark's.
"""

from __future__ import annotations

import json

from infra.benchmarks.calls import Call, ClockExecution, Invocation
from infra.benchmarks.clocks import ClockDesign, round_spans_s
from infra.benchmarks.cost import (
    ACCESS_LOG_BYTES,
    CostLine,
    CostReport,
    access_log_line,
    sfn_log_events,
    write_floor_wru,
)
from infra.benchmarks.play import Deadline, TournamentRun
from infra.cdk.constructs.log_formats import ACCESS_LOG_FORMAT
from infra.emulator.states import Execution


def _run(
    invocations: list[Invocation] | None = None,
    deadlines: list[Deadline] | None = None,
    duel_ends: dict[str, int] | None = None,
    executions: list[ClockExecution] | None = None,
) -> TournamentRun:
    return TournamentRun(
        invocations=invocations or [],
        deadlines=deadlines or [],
        duel_ends=duel_ends or {},
        duration_ms=0,
        rounds=0,
        duels=0,
        rows=0,
        guesses=0,
        skips=0,
        invalid=0,
        inbound_bytes=0,
        executions=executions or [],
    )


def _execution(states: list[str]) -> ClockExecution:
    e = Execution("arn:e", "e", "arn:m", {}, 0, states[-1], 0, status="SUCCEEDED")
    e.history = [(i * 1000, s) for i, s in enumerate(states)]
    return ClockExecution(e, "intro")


def test_a_loop_logs_two_events_per_execution_and_per_state_five_per_task() -> None:
    # Wait 2 + Task 5 + Choice 2, twice (two wakes), then Succeed 2, plus started and ended.
    one_wake = ["WaitUntilDue", "ApplyDeadline", "Next"]
    run = _run(executions=[_execution([*one_wake, *one_wake, "Done"])])

    assert sfn_log_events(run) == 2 + 2 * (2 + 5 + 2) + 2


def test_a_handover_logs_its_successor_start_as_a_task() -> None:
    run = _run(
        executions=[
            _execution(["WaitUntilDue", "ApplyDeadline", "Next", "StartSuccessor"]),
            _execution(["WaitUntilDue", "ApplyDeadline", "Next", "Done"]),
        ]
    )

    assert sfn_log_events(run) == (2 + 9 + 5) + (2 + 9 + 2)


def test_a_round_spans_from_its_intro_being_set_to_its_last_duel_end() -> None:
    run = _run(
        deadlines=[
            Deadline("intro", "t", 1, due_ms=7_000, set_ms=1_000),
            Deadline("intro", "t", 2, due_ms=107_000, set_ms=101_000),
            Deadline("turn", "t.1.0", 1, due_ms=37_000, set_ms=7_000),
        ],
        duel_ends={"t.1.0": 31_000, "t.1.1": 41_000, "t.2.0": 161_000},
    )

    assert round_spans_s(run) == {1: 40.0, 2: 60.0}


def test_the_write_floor_is_one_unit_per_item_two_in_a_transaction_plus_index_writes() -> None:
    calls = [
        Call("dynamodb", "PutItem", wru=2.0, items=1),  # a 1-2 KB tournament item
        Call("dynamodb", "TransactWriteItems", wru=8.0, items=3, gsi_wru=1.0),
        Call("dynamodb", "GetItem", rru=1.0),
        Call("apigatewaymanagementapi", "PostToConnection", payload_bytes=900),
    ]
    run = _run(invocations=[Invocation("guess", calls)])

    assert write_floor_wru(run) == 1 + 2 * 3 + 1.0


def test_an_access_log_line_has_every_variable_of_the_deployed_format() -> None:
    line = access_log_line()

    assert line.endswith("\n")
    assert line.count("\n") == 1
    fields = json.loads(line)
    assert list(fields) == list(ACCESS_LOG_FORMAT)
    assert all(value and not value.startswith("$context") for value in fields.values())
    assert len(line) == ACCESS_LOG_BYTES


def _design(name: str, usd: float, *, step_functions: bool = True) -> ClockDesign:
    return ClockDesign(name, 1, 0, 0.0, 1, 0.0, usd, usd, True, "", step_functions=step_functions)


def test_a_clock_without_step_functions_also_drops_the_step_functions_logs() -> None:
    built, express, sqs = (
        _design("built", 9.0),
        _design("express per deadline", 12.0),
        _design("sqs", 2.0, step_functions=False),
    )
    lines = [
        CostLine("clock", 1, "executions", 9.0, 7.0, ""),
        CostLine("step functions logs", 1, "GB", 1.0, 0.0, ""),
        CostLine("posts", 1, "messages", 5.0, 5.0, ""),
    ]
    report = CostReport(_run(), lines, [built, express, sqs], {}, {"sfn_log_usd": 1.0})

    assert report.total == 15.0
    assert report.floor == 12.0
    assert report.total_with(express) == 15.0 - 9.0 + 12.0
    assert report.total_with(sqs) == 15.0 - 9.0 - 1.0 + 2.0
