"""Infrastructure: each function's declared needs (``infra.cdk.constructs.functions.SPECS``, from
which its IAM role and environment are built) cover what its handler really does. Whole
tournaments, parties, disconnects and the watchdog run through the real handlers on moto
(``backend`` fixture), then the table's stream through the stream functions as their mappings
filter it (``functions.streams``), while every DynamoDB operation and index, every push and
every scheduled deadline is recorded against the handler module that caused it."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pytest

from functions.routes import ROUTES, TIMERS, function_name
from functions.streams import STREAMS
from infra.cdk.constructs.functions import READ_ACTIONS, SPECS, WRITE_ACTIONS, TableAccess

_TRANSACT = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
}


@dataclass
class _Attributed:
    """An entrypoint whose calls are attributed to its function while they run."""

    recorder: _Recorder
    function: str
    entrypoint: Any

    def invoke(self, event: Any, context: Any, deps: Any) -> Any:
        self.recorder._stack.append(self.function)
        try:
            return self.entrypoint.invoke(event, context, deps)
        finally:
            self.recorder._stack.pop()


class _Recorder:
    """What each handler module did: IAM actions with the index queried, pushes, schedules."""

    def __init__(self, backend: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self._stack: list[str] = []
        self.actions: dict[str, set[tuple[str, str | None]]] = defaultdict(set)
        self.pushed: set[str] = set()
        self.scheduled: set[str] = set()
        self.invoked: set[str] = set()
        """Stream functions run (``_stream``), whether or not they touched anything."""
        targets = {**ROUTES, **TIMERS}
        for key, entrypoint in list(backend.entrypoints.items()):
            backend.entrypoints[key] = _Attributed(self, function_name(targets[key]), entrypoint)
        backend.client.meta.events.register("before-parameter-build.dynamodb", self._on_call)
        notifier, clock = backend.deps.notifier, backend.deps.clock
        monkeypatch.setattr(notifier, "send", self._marking(self.pushed, notifier.send))
        monkeypatch.setattr(notifier, "close", self._marking(self.pushed, notifier.close))
        monkeypatch.setattr(
            notifier, "last_active_ms", self._marking(self.pushed, notifier.last_active_ms)
        )
        monkeypatch.setattr(clock, "schedule", self._marking(self.scheduled, clock.schedule))

    def _marking(self, into: set[str], method: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            if self._stack:
                into.add(self._stack[-1])
            return method(*args, **kwargs)

        return run

    def _on_call(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        if not self._stack:
            return  # the test's own reads (peeking at the tournament)
        module = self._stack[-1]
        if model.name == "TransactWriteItems":
            for item in params["TransactItems"]:
                (kind,) = item
                self.actions[module].add((_TRANSACT[kind], None))
        else:
            self.actions[module].add((f"dynamodb:{model.name}", params.get("IndexName")))


def _play(backend: Any) -> None:
    players = backend.fill_lobby("en")
    players[0].send("ping")
    players[1].send("nickname", nickname="Zedd")
    players[2].disconnect()
    players[2].resume()
    # A socket that vanished without $disconnect: the next push finds it gone (on_gone).
    backend.notifier.gone.add(players[3].connection_id)
    tid = players[0].last("round")["tournament_id"]
    left = False
    for step in range(2000):
        rec = backend.tournament(tid)
        if rec.tournament.over:
            break
        if step == 40 and not left:
            players[4].send("leave")
            left = True
        movers = backend.to_move()
        if movers and backend.clock.now >= rec.tournament.intro_deadline_ms:
            p = movers[0]
            d = p.current_duel()
            if p.connection_id in backend.notifier.gone or len(d.rows) % 4 == 3:
                p.time_out()  # a vanished player's turns run out as skips
            elif len(d.rows) % 3 == 2:
                p.solve()
            else:
                p.guess()
        else:
            backend.end_intro()
    assert backend.tournament(tid).tournament.over


def _stream(backend: Any, recorder: _Recorder) -> None:
    """The table's stream so far through each stream function, as the twin delivers it
    (``Backend.deliver_streams``), attributed to it."""
    from infra.emulator.emulator import bind

    def attributed(module: str, handler: Any) -> Any:
        def run(event: dict[str, Any], context: Any) -> Any:
            recorder._stack.append(module)
            try:
                return handler(event, context)
            finally:
                recorder._stack.pop()

        return run

    handlers = {m: attributed(m, bind(s.target, backend.deps)) for m, s in STREAMS.items()}
    for module, poller in backend.deliver_streams(handlers).items():
        assert poller.delivered > 0, f"the game wrote nothing {module} reads"
        assert poller.failures == []
        recorder.invoked.add(module)


def _party_and_strays(backend: Any) -> None:
    leader, friend, stray = backend.player("lead"), backend.player("friend"), backend.player("x")
    leader.send("party_create")
    friend.send("party_join", invite=leader.last("party")["invite"])
    leader.send("party_start", language="en")
    friend.send("party_leave")
    stray.send_raw('{"action": "no_such_action"}')
    # A known action that reaches $default anyway is refused there (route-bound functions).
    backend.invoke(
        "$default", stray.connection_id, json.dumps({"action": "join", "language": "en"})
    )
    assert stray.errors[-2:] == ["unknown_action", "unknown_action"]


def _progression(backend: Any) -> None:
    """The read-only actions of issue 38, each of its reads once."""
    reader = backend.player("reader")
    reader.send("profile")
    reader.send("leaderboard", board="rating")
    reader.send("leaderboard", board="weekly", language="en")
    reader.send("history")
    reader.send("replay", tournament_id="id0001")


def test_declared_needs_cover_what_every_handler_does(backend, monkeypatch):
    recorder = _Recorder(backend, monkeypatch)
    _play(backend)
    _party_and_strays(backend)
    _progression(backend)
    backend.clock.advance(24 * 3600 * 1000)
    backend.call("watchdog", {})
    _stream(backend, recorder)

    ran = set(recorder.actions) | recorder.pushed | recorder.invoked
    assert ran == set(SPECS), "every handler ran"
    for module, spec in SPECS.items():
        allowed = {("dynamodb:PutItem", None)}
        if spec.table is TableAccess.READ_WRITE:
            allowed = {(a, None) for a in (*READ_ACTIONS, *WRITE_ACTIONS)}
        allowed |= {("dynamodb:Query", index) for index in spec.indexes}
        if spec.queries_table:
            allowed.add(("dynamodb:Query", None))
        assert recorder.actions[module] <= allowed, (module, recorder.actions[module] - allowed)
        if module in recorder.pushed:
            assert spec.pushes, module
        if module in recorder.scheduled:
            assert spec.schedules, module

    # And why the grants are as wide as they are: join queries the
    # waiting index, the watchdog the due index, progression the board index and the table
    # (history entries, records); $connect only records the connection.
    queried = {
        (module, index)
        for module, actions in recorder.actions.items()
        for action, index in actions
        if action == "dynamodb:Query"
    }
    assert {("join", "gsi_lobbies"), ("watchdog", "gsi_due")} <= queried
    assert {("progression", "gsi_board"), ("progression", None)} <= queried
    assert recorder.actions["connect"] == {("dynamodb:PutItem", None)}
    assert "connect" not in recorder.pushed | recorder.scheduled
    assert {"guess", "apply_deadlines", "disconnect"} <= recorder.scheduled
