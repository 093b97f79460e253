"""Engine: the REAL deadline state machine definition, run by moto's Step Functions executor.

``state_machine_definition`` (the one CDK deploys) is created in moto with
``execute_state_machine``; ``StepFunctionsClock`` starts executions exactly as in production.
The Wait state is shortened by handing it a due timestamp in the past (``iso_utc`` patched; the
payload's ``due_ms`` stays the real deadline). Without Docker, moto's Lambda (``lambda_simple``)
only echoes its input, so its ``invoke`` is routed to the real ``functions.clock.handler`` —
the Task state's ``Parameters`` decide what that handler receives.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Iterator
from typing import Any

import pytest

from engine.support import Game, peek_raw
from shared.services.ports import Timer, TimerKind

REGION = "us-east-1"
CONFIG = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}


@pytest.fixture
def sfn_backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from moto import mock_aws

    from infra.emulator.testing import Backend
    from shared.runtime import bootstrap

    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "POWERTOOLS_METRICS_NAMESPACE": "Test",
        "POWERTOOLS_SERVICE_NAME": "wordle-tournament",
    }.items():
        monkeypatch.setenv(key, value)
    with mock_aws(config=CONFIG):
        yield Backend()
    bootstrap.reset()


def _clock_function(monkeypatch: pytest.MonkeyPatch, received: list[dict]) -> str:
    """Register the clock function in moto's Lambda and route its invocations to the real
    handler. Returns its ARN."""
    import boto3
    from moto.awslambda_simple.models import LambdaSimpleBackend

    from functions.clock import handler
    from infra.emulator.testing import _Context

    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(
        RoleName="clock-role",
        AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}),
    )["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as z:
        z.writestr("functions/clock.py", "# the real module is routed to in-process")
    fn = boto3.client("lambda", region_name=REGION).create_function(
        FunctionName="clock",
        Runtime="python3.11",
        Role=role,
        Handler="functions.clock.handler",
        Code={"ZipFile": code.getvalue()},
    )

    def invoke(self, function_name, qualifier, body, headers, response_headers):
        event = json.loads(body)
        received.append(event)
        return json.dumps(handler(event, _Context())).encode()

    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
    return str(fn["FunctionArn"])


def _wait(sfn: Any, arn: str) -> dict:
    for _ in range(400):
        desc = sfn.describe_execution(executionArn=arn)
        if desc["status"] != "RUNNING":
            return desc
        time.sleep(0.025)
    raise AssertionError("the execution did not finish")


def test_the_real_state_machine_applies_deadlines_and_tolerates_a_duplicate_start(
    sfn_backend, monkeypatch
):
    import boto3

    from shared.adapters import clock as sfn_clock
    from shared.adapters.clock import StepFunctionsClock, state_machine_definition

    backend = sfn_backend
    received: list[dict] = []
    fn_arn = _clock_function(monkeypatch, received)
    sfn = boto3.client("stepfunctions", region_name=REGION)
    machine = sfn.create_state_machine(
        name="deadlines",
        definition=json.dumps(state_machine_definition(fn_arn)),
        roleArn="arn:aws:iam::123456789012:role/sfn",
    )["stateMachineArn"]
    monkeypatch.setattr(sfn_clock, "iso_utc", lambda ms: "2020-01-01T00:00:00.000Z")
    clock = StepFunctionsClock(sfn, machine)

    game = Game.start(backend)
    t = game.t
    intro = Timer(TimerKind.INTRO, game.tid, 1, t.intro_deadline_ms)
    backend.clock.now = t.intro_deadline_ms  # game time: the intro is due (its timer not fired)

    # 1. the intro deadline, through Wait -> Task(lambda:invoke) -> the clock handler
    clock.schedule(intro)
    execs = sfn.list_executions(stateMachineArn=machine)["executions"]
    assert [e["name"] for e in execs] == [intro.name]
    desc = _wait(sfn, execs[0]["executionArn"])
    assert desc["status"] == "SUCCEEDED", desc
    assert received == [intro.to_event()]  # exactly {kind, ref, seq, due_ms}
    output = json.loads(desc["output"])
    assert output["Payload"] == {"applied": True, "name": intro.name}
    assert game.t.phase.value == "playing"
    starts = [m for p in game.players for m in p.messages if m["type"] == "duel_start"]
    assert len({m["duel_id"] for m in starts}) == len(t.duels)

    # 2. a retried start with the same name: ExecutionAlreadyExists, ignored; nothing re-applied
    version = peek_raw(game.tid)["version"]
    clock.schedule(intro)
    assert len(sfn.list_executions(stateMachineArn=machine)["executions"]) == 1
    assert len(received) == 1
    assert peek_raw(game.tid)["version"] == version

    # 3. a turn deadline: the skip is applied in every duel due then; a stale turn-1 timer
    # (delivered again under another name is impossible; the same name is refused) changes
    # nothing when the turn moved on
    duel = game.t.duels[0]
    turn = Timer(TimerKind.TURN, duel.duel_id, 1, duel.turn_deadline_ms)
    backend.clock.now = duel.turn_deadline_ms
    clock.schedule(turn)
    arn = next(
        e["executionArn"]
        for e in sfn.list_executions(stateMachineArn=machine)["executions"]
        if e["name"] == turn.name
    )
    assert _wait(sfn, arn)["status"] == "SUCCEEDED"
    d = game.t.duel(duel.duel_id)
    assert [(r.player, r.skipped) for r in d.rows] == [(duel.first, True)]
    other = game.t.duels[1]
    stale = Timer(TimerKind.TURN, other.duel_id, 1, other.starts_ms + 30_000)
    version = peek_raw(game.tid)["version"]
    clock.schedule(stale)  # turn 1 of that duel was skipped by the firing above
    arn = next(
        e["executionArn"]
        for e in sfn.list_executions(stateMachineArn=machine)["executions"]
        if e["name"] == stale.name
    )
    desc = _wait(sfn, arn)
    assert desc["status"] == "SUCCEEDED"
    assert json.loads(desc["output"])["Payload"] == {"applied": False, "name": stale.name}
    assert peek_raw(game.tid)["version"] == version
    assert len(game.t.duel(other.duel_id).rows) == 1


def test_state_machine_definition_is_one_wait_then_one_task():
    from shared.adapters.clock import state_machine_definition

    d = state_machine_definition("arn:aws:lambda:us-east-1:123456789012:function:clock")
    assert d["StartAt"] == "WaitUntilDue"
    wait, task = d["States"]["WaitUntilDue"], d["States"]["ApplyDeadline"]
    assert wait == {"Type": "Wait", "TimestampPath": "$.due", "Next": "ApplyDeadline"}
    assert task["Resource"] == "arn:aws:states:::lambda:invoke"
    assert set(task["Parameters"]["Payload"]) == {"kind.$", "ref.$", "seq.$", "due_ms.$"}
    assert task["End"] is True
