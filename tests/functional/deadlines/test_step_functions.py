"""Engine: the REAL deadline state machine definition, run by moto's Step Functions executor.

``state_machine_definition`` (the one CDK deploys) is created in moto as an EXPRESS machine with
``execute_state_machine``; the services schedule through the real ``StepFunctionsClock`` (the
harness's manual clock keeps the time, its ``schedule`` is routed to the adapter), so an intro
timer starts the round's loop, a turn timer starts nothing and the next round's intro — set
by the clock function itself when a round closes — starts the next loop, exactly as on AWS.

Time: every Wait is handed a due timestamp in the past (``wait_timestamp`` patched; the states'
``due_ms`` stay the real deadlines) and each wake sets the manual clock to its ``due_ms`` (a
wake happens when its deadline comes). Without Docker, moto's Lambda (``lambda_simple``) only
echoes its input, so its ``invoke`` is routed to the real ``functions.apply_deadlines.handler``
— the
Task state's ``Parameters``/``OutputPath`` decide what it receives and what the next state is.

moto 5.2.5 runs the ``states:startExecution`` integration (the loop's handover) but passes the
ASL parameter names (``StateMachineArn``, ``Input``) to boto3 unchanged; AWS maps them to the
API's ``stateMachineArn``/``input``. ``_sfn_integration_names`` does that mapping in the test.
"""

from __future__ import annotations

import io
import json
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from shared.services.ports import Timer, TimerKind
from tests.functional.driver import Game, check_final, peek_raw

REGION = "us-east-1"
CONFIG = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
PAST = "2020-01-01T00:00:00.000Z"


@pytest.fixture
def sfn_backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from moto import mock_aws

    from infra.emulator.testing import Backend

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


def _sfn_integration_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
        state_task_service_sfn as mod,
    )

    original = mod.StateTaskServiceSfn._normalise_parameters

    def normalise(self, parameters, boto_service_name=None, service_action_name=None):
        original(self, parameters, boto_service_name, service_action_name)
        for key in list(parameters):
            parameters[key[0].lower() + key[1:]] = parameters.pop(key)

    monkeypatch.setattr(mod.StateTaskServiceSfn, "_normalise_parameters", normalise)


class Wakes:
    """The clock function as moto's Lambda: every invocation (a wake) is recorded with its
    result; ``before[i]`` runs before wake ``i`` (game actions while the loop waits)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.events: list[dict[str, Any]] = []
        self.results: list[dict[str, Any]] = []
        self.versions: list[tuple[int, int]] = []  # the item's version before/after each wake
        self.before: dict[int, Callable[[dict[str, Any]], None]] = {}
        self.lock = threading.Lock()

    def invoke(self, payload: dict[str, Any]) -> dict[str, Any]:
        # the Task hands the clock function the loop's state and the machine's own ARN
        # (``$$.StateMachine.Id``: where the function starts executions)
        event = payload["state"]
        assert ":stateMachine:" in payload["machine"], payload
        with self.lock:  # one wake at a time: the manual clock is shared
            i = len(self.events)
            self.events.append(event)
            if i in self.before:
                self.before[i](event)
            clock = self.backend.clock
            clock.now = max(clock.now, int(event["due_ms"]))  # the wake comes at its due time
            tid = event["ref"] if event["kind"] == "intro" else event["ref"].split(".")[0]
            before = _version(tid)
            result = self.backend.call("clock", payload)
            self.versions.append((before, _version(tid)))
            self.results.append(result)
            return result


def _version(tid: str) -> int:
    try:
        return int(peek_raw(tid)["version"])
    except Exception:  # a player id (reconnect): no tournament item
        return -1


def _machine(monkeypatch: pytest.MonkeyPatch, backend: Any) -> tuple[Any, str, Wakes, Any]:
    """The Express machine in moto, the clock function routed to ``Wakes``, and the services'
    clock routed to a ``StepFunctionsClock`` on the harness's time."""
    import boto3
    from moto.awslambda_simple.models import LambdaSimpleBackend

    from shared.adapters import step_functions as sfn_clock
    from shared.adapters.step_functions import StepFunctionsClock, state_machine_definition

    _sfn_integration_names(monkeypatch)
    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(
        RoleName="clock-role",
        AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}),
    )["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as z:
        z.writestr("functions/apply_deadlines.py", "# the real module is routed to in-process")
    fn_arn = boto3.client("lambda", region_name=REGION).create_function(
        FunctionName="clock",
        Runtime="python3.13",
        Role=role,
        Handler="functions.apply_deadlines.handler",
        Code={"ZipFile": code.getvalue()},
    )["FunctionArn"]
    wakes = Wakes(backend)

    def invoke(self, function_name, qualifier, body, headers, response_headers):
        return json.dumps(wakes.invoke(json.loads(body))).encode()

    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
    sfn = boto3.client("stepfunctions", region_name=REGION)
    machine = sfn.create_state_machine(
        name="deadlines",
        type="EXPRESS",
        definition=json.dumps(state_machine_definition(str(fn_arn))),
        roleArn="arn:aws:iam::123456789012:role/sfn",
    )["stateMachineArn"]
    monkeypatch.setattr(sfn_clock, "wait_timestamp", lambda ms: PAST)
    clock = StepFunctionsClock(sfn, machine)
    monkeypatch.setattr(clock, "now_ms", backend.clock.now_ms)  # the harness's time
    return sfn, machine, wakes, clock


def _executions(sfn: Any, machine: str) -> list[dict[str, Any]]:
    return list(sfn.list_executions(stateMachineArn=machine)["executions"])


def _settle(sfn: Any, machine: str, expected: int | None = None, timeout_s: float = 60) -> list:
    """Wait until every execution of the machine finished (and, if given, ``expected`` exist)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        execs = _executions(sfn, machine)
        done = all(e["status"] != "RUNNING" for e in execs)
        if done and (expected is None or len(execs) >= expected):
            time.sleep(0.1)  # an execution started by the last wake shows up
            again = _executions(sfn, machine)
            if len(again) == len(execs) and all(e["status"] != "RUNNING" for e in again):
                return again
        time.sleep(0.05)
    raise AssertionError(f"executions did not finish: {_executions(sfn, machine)}")


def _output(sfn: Any, execution: dict[str, Any]) -> dict[str, Any]:
    desc = sfn.describe_execution(executionArn=execution["executionArn"])
    assert desc["status"] == "SUCCEEDED", desc
    return dict(json.loads(desc["output"]))


def test_one_express_loop_per_round_plays_a_whole_tournament(sfn_backend, monkeypatch):
    """Intro -> duels start; turn deadlines applied by the loop (no turn execution); a stale
    wake is a read-only no-op; the loop hands over before Express's 5 minutes (a round of
    timeouts lasts 6 s + 12 x 30 s); each round's loop ends when the round closes and the next
    round's intro (set by the clock function) starts the next loop."""
    backend = sfn_backend
    game = Game.start(backend)
    sfn, machine, wakes, clock = _machine(monkeypatch, backend)
    backend.clock.service.abandon()  # the harness's own timers: everything goes through moto now
    monkeypatch.setattr(backend.clock, "schedule", clock.schedule)
    t = game.t
    turn_1 = t.intro_deadline_ms + 30_000  # every duel's first deadline
    grace = backend.deps.timing.skip_grace_ms  # its skips are due this much later

    def guess_everywhere(event: dict[str, Any]) -> None:
        """Before the first turn deadline's wake, 1 s earlier, every duel's mover guesses a
        wrong word: every deadline moves 29 s past the one the loop is waking for."""
        assert event["due_ms"] == turn_1 + grace
        backend.clock.now = turn_1 - 1_000
        for duel in game.open_duels():
            game.act(duel, "wrong")

    wakes.before[1] = guess_everywhere
    clock.schedule(Timer(TimerKind.INTRO, game.tid, 1, t.intro_deadline_ms))
    # nobody moves after that guess: every turn times out, drawn duels, three rounds put
    # everyone out together (tests/functional/deadlines/test_watchdog.py)
    execs = _settle(sfn, machine, expected=4)

    # 1. the intro: the first wake, input as started by the adapter; the duels started
    first = wakes.events[0]
    assert {k: first[k] for k in ("kind", "ref", "seq", "due_ms")} == {
        "kind": "intro",
        "ref": game.tid,
        "seq": 1,
        "due_ms": t.intro_deadline_ms,
    }
    assert first["due"] == PAST
    assert "loop_started_ms" in first
    assert wakes.results[0]["applied"] is True
    assert wakes.results[0]["loop"] is True
    assert wakes.results[0]["due_ms"] == turn_1 + grace
    starts = [m for p in game.players for m in p.messages if m["type"] == "duel_start"]
    assert len({m["duel_id"] for m in starts}) >= len(t.duels)

    # 2. the stale wake (every deadline moved on): only read, and the loop waits again
    assert wakes.events[1]["due_ms"] == turn_1 + grace
    assert wakes.results[1]["applied"] is False
    before, after = wakes.versions[1]
    assert before == after
    assert wakes.results[1]["loop"] is True
    assert wakes.results[1]["due_ms"] == turn_1 - 1_000 + 30_000 + grace

    # 3. turn deadlines applied by the loop: skips, and no execution was ever a turn timer
    assert wakes.results[2]["applied"] is True
    assert all(e["kind"] != "turn" for e in wakes.events)
    names = [e["name"] for e in execs]
    assert not [n for n in names if n.startswith("turn-")]

    # 4. one loop per round, each ending when its round closes; handovers in between
    final = game.t
    assert final.over
    assert final.round_no == 3
    check_final(game)
    started = sorted(n for n in names if "-h" not in n)  # by the adapter (an intro timer)
    assert started == [f"intro-{game.tid}-{r}" for r in (1, 2, 3)]
    successors = [n for n in names if "-h" in n]  # by the machine itself: {loop}-h{due_ms}
    assert successors
    assert all(n.startswith(f"intro-{game.tid}-") for n in successors)
    outputs = [_output(sfn, e) for e in execs]
    handed_over = [o for o in outputs if o["handover"]]
    ended = [o for o in outputs if not o["loop"]]
    assert sorted(o["seq"] for o in ended) == [1, 2, 3]  # each round's last execution
    assert len(handed_over) == len(execs) - 3 >= 3  # every round outlived one execution
    for o in handed_over:
        assert o["loop"] is True
        assert o["due_ms"] - o["loop_started_ms"] <= 300_000
    for seq in (1, 2, 3):
        dues = [e["due_ms"] for e in wakes.events if e["seq"] == seq]
        assert dues == sorted(dues)  # within a round, wakes only move later
    # every wake of a round was for that round; the last one closed it
    for seq in (1, 2, 3):
        results = [r for r in wakes.results if r["seq"] == seq]
        assert [r["loop"] for r in results].count(False) == 1
        assert results[-1]["loop"] is False


def test_a_reconnect_deadline_is_one_wait_and_one_apply(sfn_backend, monkeypatch):
    backend = sfn_backend
    game = Game.start(backend)
    sfn, machine, wakes, clock = _machine(monkeypatch, backend)
    p = game.players[0]
    stale = Timer(TimerKind.RECONNECT, p.id, 7, backend.clock.now + 60_000)
    version = peek_raw(game.tid)["version"]
    clock.schedule(stale)  # the player never disconnected with seq 7: nothing to apply
    (execution,) = _settle(sfn, machine, expected=1)
    assert execution["name"] == stale.name
    output = _output(sfn, execution)
    assert output["loop"] is False
    assert output["applied"] is None
    assert len(wakes.events) == 1
    assert wakes.events[0]["kind"] == "reconnect"
    assert peek_raw(game.tid)["version"] == version


def test_state_machine_definition_loops_and_hands_over():
    from shared.adapters.step_functions import state_machine_definition

    d = state_machine_definition("arn:aws:lambda:us-east-1:123456789012:function:clock")
    states = d["States"]
    assert d["StartAt"] == "WaitUntilDue"
    assert states["WaitUntilDue"] == {
        "Type": "Wait",
        "TimestampPath": "$.due",
        "Next": "ApplyDeadline",
    }
    task = states["ApplyDeadline"]
    assert task["Resource"] == "arn:aws:states:::lambda:invoke"
    assert task["Parameters"]["Payload"] == {"state.$": "$", "machine.$": "$$.StateMachine.Id"}
    assert task["OutputPath"] == "$.Payload"  # the clock function's result is the next state
    assert task["Retry"]
    assert task["Next"] == "Next"
    choice = states["Next"]
    assert [c["Next"] for c in choice["Choices"]] == ["StartSuccessor", "WaitUntilDue"]
    assert choice["Default"] == "Done"
    successor = states["StartSuccessor"]
    assert successor["Resource"] == "arn:aws:states:::states:startExecution"  # no .sync
    assert successor["Parameters"]["StateMachineArn.$"] == "$$.StateMachine.Id"
    assert set(successor["Parameters"]["Input"]) == {
        "kind.$",
        "ref.$",
        "seq.$",
        "due_ms.$",
        "due.$",
        "loop_started_ms.$",
    }
    assert successor["End"] is True
    assert successor["Retry"]
    assert states["Done"] == {"Type": "Succeed"}
