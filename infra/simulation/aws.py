"""Simulation: the AWS side in simulated time: the Step Functions clock (``SimClock``, each
Wait ends on a whole second and runs the real clock function) and the API Gateway notifier
(``SimNotifier``, a post latency per message, then the event reaches its player)."""

from __future__ import annotations

import calendar
import dataclasses
import functools
import itertools
import time
from typing import Any

from infra.simulation.world import World

NET_S = 0.03
"""Median one-way client <-> API Gateway -> Lambda delay (lognormal, sigma 0.3)."""
POST_S = 0.006
"""Median latency of one ``PostToConnection`` (the notifier posts one after the other)."""
INVOKE_S = 0.002
"""Median handler compute per invocation before its first call (lognormal, sigma 0.3)."""


class SimClock:
    """The ``Clock`` port in simulated time: ``schedule`` runs the real clock function at the
    Wait's end, looping like the deadline state machine (``shared.adapters.step_functions``)."""

    def __init__(self, run: World) -> None:
        self.run = run
        self.sim = run.sim
        self._executions = itertools.count(1)
        self.dead_below = 0
        """Executions numbered below this were terminated (``kill_all``)."""
        self.restarts: dict[str, list[float]] = {}
        """Tournament id -> when (simulated s) a round loop of it was started."""

    def kill_all(self) -> None:
        """Every running execution dies at its next transition (the Express machine replaced:
        AWS, "DeleteStateMachine"; StopExecution does not apply to Express)."""
        self.dead_below = next(self._executions)

    def now_ms(self) -> int:
        return self.sim.now_ms()

    def schedule(self, timer: Any) -> None:
        from shared.adapters.step_functions import START_FAILED_METRIC
        from shared.services.ports import TimerKind

        run = self.run
        if timer.kind is TimerKind.INTRO and not run.played(timer.ref):
            return  # a tournament outside the played sample: its clock is not run
        cloud = run.cloud
        if cloud.fault("start_throttled") is not None:
            # StartExecution throttled on each of botocore's attempts, then counted as failed
            # (``StepFunctionsClock.schedule``): the watchdog applies that round late
            cloud.put("AWS/States", "ThrottledEvents", 3, APIName="StartExecution")
            run.deps.metrics(START_FAILED_METRIC, 1)
            return
        run.executions += 1
        cloud.execution_started()
        if timer.kind is TimerKind.INTRO:
            self.restarts.setdefault(timer.ref, []).append(self.sim.now)
        state = {**timer.to_event(), "_execution": next(self._executions)}
        self._wait(state, timer.due_ms)

    def _wait(self, state: dict[str, Any], due_ms: int) -> None:
        wake_ms = -(-due_ms // 1000) * 1000
        t = (wake_ms - self.sim.start_ms) / 1000
        self.sim.spawn_at(t, lambda: self._wake(state), route="clock")

    def _wake(self, state: dict[str, Any], attempt: int = 0) -> None:
        """One ApplyDeadline Task: the clock function, retried like ``_LAMBDA_RETRY`` (1, 2,
        4 s) when it fails; the execution fails when the retries run out."""
        cloud = self.run.cloud
        if cloud.fault("clock_kill") is not None or state["_execution"] < self.dead_below:
            return  # the execution was terminated (its machine replaced): the loop is dead
        delay = cloud.fault("clock_delay")
        if delay is not None and attempt == 0 and not state.get("_delayed"):
            self.sim.spawn_at(
                self.sim.now + delay.count,
                lambda: self._wake({**state, "_delayed": True}),
                route="clock",
            )
            return
        execution = state["_execution"]
        state = {k: v for k, v in state.items() if k not in ("_delayed", "_execution")}
        if cloud.every("duplicate_wakes"):  # Express is at-least-once: a second invocation
            self.sim.spawn_at(self.sim.now, lambda: self._invoke(state), route="clock")
        ok, result = self._invoke(state)
        if not ok:
            if attempt < 3:
                retry = {**state, "_execution": execution}
                self.sim.spawn_at(
                    self.sim.now + 2**attempt,
                    lambda: self._wake(retry, attempt + 1),
                    route="clock",
                )
            else:
                cloud.execution_failed()
            return
        if cloud.every("stale_index") and state.get("kind") == "intro":
            self._stale_entry(str(state["ref"]))
        if result.get("loop"):
            nxt = {k: result[k] for k in ("kind", "ref", "seq", "due_ms", "loop_started_ms")}
            nxt["_execution"] = execution
            due = calendar.timegm(time.strptime(result["due"], "%Y-%m-%dT%H:%M:%SZ")) * 1000
            if result.get("handover"):
                self.run.executions += 1
                cloud.execution_started()
                nxt["_execution"] = next(self._executions)
            self._wait(nxt, due)

    def _invoke(self, state: dict[str, Any]) -> tuple[bool, Any]:
        from functions import apply_deadlines
        from infra.simulation.cloud import CLOCK

        run = self.run
        run.invocations["clock"] += 1
        self.sim.defer(run.lat(INVOKE_S))
        deps = run.deps
        if run.cloud.every("clock_busy"):
            from shared.services.errors import TryAgainError

            deps = dataclasses.replace(deps, store=FailingStore(TryAgainError))
        ok, result = run.cloud.invoke(CLOCK, lambda: apply_deadlines.handle(dict(state), deps))
        return bool(ok), result

    def _stale_entry(self, tournament_id: str) -> None:
        """Leave the tournament's due-time index entry two minutes in the past (a stale
        entry: nothing is due there; the watchdog must not count it nor start a loop)."""
        from shared.adapters.dynamo import schema

        key = schema.tournament_key(tournament_id)
        items = self.run.client.items
        k = (key[schema.PK], key[schema.SK])
        if k in items and "due_ms" in items[k]:
            self.run.client.set_attribute(k, "due_ms", {"N": str(self.sim.now_ms() - 120_000)})


class FailingStore:
    """A store every call of which raises ``error`` (``TryAgainError``: contended past its
    retries; another: a bug)."""

    def __init__(self, error: type[Exception]) -> None:
        self._error = error

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise self._error("injected")

        return fail


class SimNotifier:
    """The ``Notifier`` port: a post latency per message, then the event reaches its player."""

    def __init__(self, run: World) -> None:
        self.run = run

    def send(self, messages: list[tuple[str, str]]) -> list[str]:
        from shared.protocol.framing import unpack

        run = self.run
        failing = run.cloud.fault("post_failed") is not None
        for cid, text in messages:
            run.sim.defer(run.lat(POST_S))
            if failing:  # throttled or forbidden: counted like ``ApiGatewayNotifier``
                run.deps.metrics("PostFailed", 1)
                continue
            run.posts += 1
            player = run.by_connection.get(cid)
            if player is None:
                continue
            arrive = run.sim.now + run.sim.owed + run.lat(NET_S)
            for event in unpack(text):
                run.sim.call_at(arrive, functools.partial(player.receive, event))
        return []

    def close(self, connection_id: str) -> None:
        self.run.closed.append(connection_id)

    def last_active_ms(self, connection_id: str) -> int | None:
        """GetConnection's ``LastActiveAt`` (UTC ms): the player's last message (``ping``
        included) or its ``$connect``, as the local gateway models it (ruling 14); one Management
        API call's latency. None for a connection that closed."""
        run = self.run
        run.sim.defer(run.lat(POST_S))
        run.connection_reads += 1
        if connection_id in run.closed:
            return None
        return run.last_active.get(connection_id)
