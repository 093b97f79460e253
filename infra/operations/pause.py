"""Operator command: the kill switch — pause and resume the game, stop and restart the clock.

``python -m infra.operations.pause pause --table NAME [--settle-seconds S]``
``python -m infra.operations.pause resume --table NAME --state-machine-arn ARN``
``python -m infra.operations.pause stop-loops --clock-function NAME --watchdog-rule NAME``
``python -m infra.operations.pause start-loops --stage STAGE --clock-function NAME
--watchdog-rule NAME --table NAME --state-machine-arn ARN``
(each with ``[--region R] [--endpoint-url URL]``; the names are the stack's outputs, ``ARN``
the machine's ``live`` alias, output ``StateMachineAliasArn``, which the functions start
executions through).

``pause``: writes the switch item (``shared.adapters.dynamo.switch``: ``join`` and
``party_start`` answer ``paused``, the watchdog idles), then pauses every running tournament
(``shared.services.pausing.pause_tournaments``: its moves answer ``paused``, its clock loop
ends at its next wake), and sweeps again after ``--settle-seconds`` for tournaments a ``join``
in flight started meanwhile. Nothing is lost: every message refused is answered and changes
nothing. ``resume``: moves every paused tournament's deadlines (and away players' reconnect
deadlines) later by the pause's length, starts their clock loops, then clears the switch.

``stop-loops``: the brake for a clock that runs away (a bug that wakes a loop again and
again): sets the clock function's reserved concurrency to 0 — Lambda then throttles every
invocation, so each loop's Task fails after its retries and the execution ends (AWS, "Lambda
reserved concurrency": a reservation of 0 throttles all invocations,
https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html; Express
executions cannot be stopped one by one: StopExecution is for Standard workflows,
https://docs.aws.amazon.com/step-functions/latest/apireference/API_StopExecution.html) — and
disables the watchdog's schedule, so nothing restarts them. It does not depend on any of our
code. Routes keep answering; no deadline is applied until ``start-loops`` restores the
stage's reservation (from ``infra.cdk.stack.STAGES``), enables the schedule and starts a loop
for every running tournament.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from shared.services.deps import Deps
from shared.services.pausing import Swept, pause_tournaments, resume_tournaments, start_loops

SETTLE_S = 25.0
"""The wait between the pause's two sweeps: longer than the timeouts of the functions that may
start a tournament (``join`` and ``party``: ``infra.cdk.constructs.functions.SPECS``), so
a start that read the switch before it was written has committed by the second sweep."""
CLOCK_MODULE = "apply_deadlines"
"""The clock function's module: its key in ``StageConfig.reserved``."""


class PauseRefusedError(Exception):
    """The command cannot run as asked (resume when not paused)."""


def pause(
    deps: Deps,
    switch: Any,
    *,
    settle_s: float = SETTLE_S,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[int, Swept]:
    """Pause the game (see the module docstring). ``switch``: a ``DynamoGameSwitch``. Returns
    when the game was paused (UTC ms; the first pause's time when it already was) and what
    the two sweeps paused. Pausing again is harmless."""
    since = switch.pause(deps.clock.now_ms())
    first = pause_tournaments(deps)
    sleep(settle_s)
    second = pause_tournaments(deps)
    return since, Swept(tournaments=first.tournaments + second.tournaments)


def resume(deps: Deps, switch: Any) -> Swept:
    """Resume the game (see the module docstring): shift, restart the loops, clear the switch.
    Raises PauseRefusedError when the game is not paused."""
    since = switch.paused_since_ms()
    if since is None:
        raise PauseRefusedError("the game is not paused")
    swept = resume_tournaments(deps, since)
    switch.clear()
    return swept


def stop_loops(lambda_client: Any, events_client: Any, clock_function: str, rule: str) -> None:
    """Throttle the clock function to 0 and disable the watchdog's schedule (module docstring)."""
    lambda_client.put_function_concurrency(
        FunctionName=clock_function, ReservedConcurrentExecutions=0
    )
    events_client.disable_rule(Name=rule)


def restore_loops(
    lambda_client: Any, events_client: Any, clock_function: str, rule: str, reserved: int | None
) -> None:
    """Give the clock function back its reservation (``reserved``: the stage's; None: the
    stage reserves none, so remove the 0) and enable the watchdog's schedule."""
    if reserved is None:
        lambda_client.delete_function_concurrency(FunctionName=clock_function)
    else:
        lambda_client.put_function_concurrency(
            FunctionName=clock_function, ReservedConcurrentExecutions=reserved
        )
    events_client.enable_rule(Name=rule)


def stage_reservation(stage: str, reserve_concurrency: bool = True) -> int | None:
    """The clock function's reserved concurrency in ``stage`` as the CDK source sets it
    (``infra.cdk.stack.STAGES``); None when the stage is deployed without reservations."""
    from infra.cdk.stack import STAGES

    if not reserve_concurrency:
        return None
    return STAGES[stage].reserved.get(CLOCK_MODULE)


def game_deps(
    table: str, state_machine_arn: str | None, region: str | None, endpoint: str | None
) -> tuple[Deps, Any]:
    """The ``Deps`` and switch the game's functions would build for this table and machine."""
    from shared.adapters.dynamo.switch import DynamoGameSwitch
    from shared.runtime.bootstrap import build
    from shared.runtime.settings import Settings

    values: dict[str, str] = {"table_name": table}
    if state_machine_arn:
        values["state_machine_arn"] = state_machine_arn
    if region:
        values["aws_region"] = region
    if endpoint:
        values["dynamodb_endpoint"] = endpoint
    deps = build(Settings.from_values(values), metrics=lambda name, value: None)
    assert deps.switch is not None
    assert isinstance(deps.switch, DynamoGameSwitch)
    return deps, deps.switch


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m infra.operations.pause",
        description="Kill switch: pause/resume the game, stop/start the clock's loops.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    commands = {
        name: sub.add_parser(name, help=text)
        for name, text in (
            ("pause", "refuse moves and starts, stop every tournament's clock"),
            ("resume", "shift deadlines by the pause, restart the clock, accept moves"),
            ("stop-loops", "throttle the clock function to 0, disable the watchdog"),
            ("start-loops", "restore the clock's reservation and watchdog, restart the loops"),
        )
    }
    for name, p in commands.items():
        p.add_argument("--region", default=None, help="AWS region (default: the profile's)")
        p.add_argument("--endpoint-url", default=None, help="another DynamoDB (a local one)")
        if name in ("pause", "resume", "start-loops"):
            p.add_argument("--table", required=True, help="the game's table (TableName)")
        if name in ("resume", "start-loops"):
            p.add_argument("--state-machine-arn", required=True, help="output StateMachineAliasArn")
        if name in ("stop-loops", "start-loops"):
            p.add_argument("--clock-function", required=True, help="apply_deadlines=<name>")
            p.add_argument("--watchdog-rule", required=True, help="the watchdog's rule name")
        if name == "start-loops":
            p.add_argument("--stage", required=True, choices=("dev", "prod"))
            p.add_argument(
                "--no-reserved-concurrency",
                action="store_true",
                help="the stage was deployed with -c reserveConcurrency=false",
            )
    commands["pause"].add_argument(
        "--settle-seconds",
        type=float,
        default=SETTLE_S,
        help="wait before the second sweep (longer than the join and party functions' timeouts)",
    )
    args = parser.parse_args(argv)

    import boto3

    if args.command in ("stop-loops", "start-loops"):
        lam = boto3.client("lambda", region_name=args.region)
        events = boto3.client("events", region_name=args.region)
        if args.command == "stop-loops":
            stop_loops(lam, events, args.clock_function, args.watchdog_rule)
            print(f"clock function {args.clock_function}: reserved concurrency 0 (throttled)")
            print(f"rule {args.watchdog_rule}: disabled")
            return 0
        reserved = stage_reservation(args.stage, not args.no_reserved_concurrency)
        restore_loops(lam, events, args.clock_function, args.watchdog_rule, reserved)
        print(f"clock function {args.clock_function}: reserved concurrency {reserved}")
        deps, _ = game_deps(args.table, args.state_machine_arn, args.region, args.endpoint_url)
        print(f"loops started: {start_loops(deps).loops}")
        return 0

    deps, switch = game_deps(
        args.table, getattr(args, "state_machine_arn", None), args.region, args.endpoint_url
    )
    if args.command == "pause":
        since, swept = pause(deps, switch, settle_s=args.settle_seconds)
        print(f"paused since {since} ms: {swept.tournaments} tournaments paused")
        return 0
    try:
        swept = resume(deps, switch)
    except PauseRefusedError as err:
        print(f"refused: {err}", file=sys.stderr)
        return 2
    print(
        f"resumed: {swept.tournaments} tournaments, {swept.players} reconnect deadlines, "
        f"{swept.loops} clock loops started"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
