"""Simulation: the AWS side in simulated time: the Step Functions clock (``SimClock``, each
Wait ends on a whole second and runs the real clock function) and the API Gateway notifier
(``SimNotifier``, a post latency per message, then the event reaches its player)."""

from __future__ import annotations

import calendar
import functools
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

    def now_ms(self) -> int:
        return self.sim.now_ms()

    def schedule(self, timer: Any) -> None:
        from shared.services.ports import TimerKind

        run = self.run
        if timer.kind is TimerKind.INTRO and not run.played(timer.ref):
            return  # a tournament outside the played sample: its clock is not run
        run.executions += 1
        state = timer.to_event()
        self._wait(state, timer.due_ms)

    def _wait(self, state: dict[str, Any], due_ms: int) -> None:
        wake_ms = -(-due_ms // 1000) * 1000
        t = (wake_ms - self.sim.start_ms) / 1000
        self.sim.spawn_at(t, lambda: self._wake(state), route="clock")

    def _wake(self, state: dict[str, Any]) -> None:
        from functions import apply_deadlines

        self.run.invocations["clock"] += 1
        self.sim.defer(self.run.lat(INVOKE_S))
        result = apply_deadlines.handle(dict(state), self.run.deps)
        from shared.runtime.observability import metrics

        metrics.clear_metrics()  # Lambda flushes them per invocation; nothing to publish here
        if result.get("loop"):
            nxt = {k: result[k] for k in ("kind", "ref", "seq", "due_ms", "loop_started_ms")}
            due = calendar.timegm(time.strptime(result["due"], "%Y-%m-%dT%H:%M:%SZ")) * 1000
            if result.get("handover"):
                self.run.executions += 1
            self._wait(nxt, due)


class SimNotifier:
    """The ``Notifier`` port: a post latency per message, then the event reaches its player."""

    def __init__(self, run: World) -> None:
        self.run = run

    def send(self, messages: list[tuple[str, str]]) -> list[str]:
        from shared.protocol.framing import unpack

        run = self.run
        for cid, text in messages:
            run.sim.defer(run.lat(POST_S))
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
