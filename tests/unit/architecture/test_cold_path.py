"""What a cold start runs before its first message (the cold start against the floor).

A function's cold start imports its module and builds its ``Deps``
(``functions._entry.container_deps()``). The message functions leave to their first message what
only a message needs — the use cases, the domain rules, the records and their codec, the
outbound events, the word lists — through ``shared.lazy.lazy_module``; ``$connect`` never runs
the domain. The watchdog's usual run finds nothing overdue: it runs the due-time index query and
none of the deadlines' apply path; ``$disconnect`` never runs the nickname rules (only a new
session and ``nickname`` use them). Each check runs in a fresh interpreter, where nothing else
imported them first; a module ``lazy_module`` registered but did not run yet is not a plain
``ModuleType``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import types
from pathlib import Path
from typing import Any

import pytest

from infra.benchmarks.cold import ENV  # a deployed function's environment, fake credentials
from shared.lazy import DEFERS, lazy_module

_deferring = pytest.mark.skipif(
    not DEFERS,
    reason="this Python's LazyLoader is not thread-safe (before 3.12.3), so lazy_module imports "
    "at once: cold-path laziness is checked on the Lambda runtime's Python (3.13, as CI runs)",
)

ROOT = Path(__file__).resolve().parents[3]

FIRST_MESSAGE = (
    "shared.domain.tournament",
    "shared.domain.duel",
    "shared.domain.events",
    "shared.domain.languages",
    "shared.adapters.dynamo.records",
    "shared.adapters.dynamo.tournament_document",
    "shared.services.model",
    "shared.services.outbox",
    "shared.protocol.framing",
    "shared.protocol.outbound",
    "wordlists",
)
"""Run by a message function's first message, not by its cold start."""

APPLY_PATH = (
    "shared.domain.tournament",
    "shared.domain.events",
    "shared.services.model",
    "shared.services.change",
    "shared.services.presence",
    "shared.services.seating",
    "shared.services.tournament_change",
    "shared.services.presenter",
    "shared.protocol.framing",
    "shared.protocol.outbound",
)
"""What applying a deadline runs (the rules, the records, the tournament's write path and what
it pushes), and a watchdog that finds nothing overdue does not."""

NICKNAME_RULES = ("shared.domain.nicknames", "shared.domain.offensive")

MARK = "RESULT "


def _cold(module: str, after: str = "", names: tuple[str, ...] = FIRST_MESSAGE) -> dict[str, Any]:
    """In a fresh interpreter: import ``module``, ``container_deps()``, then ``after``; what it
    reports (``ran``: which of ``names`` ran)."""
    code = (
        "import json, sys, types\n"
        f"import {module}\n"
        "from functions._entry import container_deps\n"
        "deps = container_deps()\n"
        "def ran():\n"
        "    return sorted(n for n in NAMES if type(sys.modules.get(n)) is types.ModuleType)\n"
        "report = {'file': sys.modules['functions'].__file__, 'ran': ran(),\n"
        "          'pydantic': 'pydantic' in sys.modules}\n"
        f"{after}\n"
        f"print({MARK!r} + json.dumps(report))\n"
    ).replace("NAMES", repr(names))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "POWERTOOLS_"))}
    env.update(ENV, POWERTOOLS_LOG_LEVEL="ERROR")
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    (line,) = [line for line in out.splitlines() if line.startswith(MARK)]
    report: dict[str, Any] = json.loads(line[len(MARK) :])
    assert str(report["file"]).startswith(str(ROOT))  # this checkout's code
    return report


@_deferring
def test_a_message_function_leaves_the_domain_codec_and_events_to_its_first_message() -> None:
    after = (
        "import dataclasses\n"
        "class Posts:\n"
        "    sent = []\n"
        "    def send(self, messages):\n"
        "        self.sent += messages\n"
        "        return []\n"
        "posts = Posts()\n"
        "import functions.messages as m\n"
        "event = {'requestContext': {'connectionId': 'c1', 'routeKey': 'guess',\n"
        "         'requestId': 'r1'}, 'body': '{not json'}\n"
        "m.route(('guess',))(event, dataclasses.replace(deps, notifier=posts))\n"
        "report['sent'] = posts.sent\n"
        "report['after'] = ran()\n"
    )
    report = _cold("functions.messages", after)
    assert report["ran"] == []
    # the first message runs what it needs, and is answered as before
    [(connection, text)] = report["sent"]
    assert connection == "c1"
    reply = json.loads(text)
    assert (reply["type"], reply["code"], reply["request_id"]) == ("error", "invalid_json", None)
    assert {"shared.protocol.outbound", "shared.services.outbox"} <= set(report["after"])


@_deferring
def test_the_connect_cold_start_runs_no_domain_rule() -> None:
    # the connection record it writes, and nothing of the domain or the codec
    assert _cold("functions.connect")["ran"] == ["shared.services.model"]


WATCHDOG_RUNS = """
class NothingOverdue:
    def __init__(self, store):
        self.store = store
        self.asked = []
    def overdue(self, before_ms):
        self.asked.append(before_ms)
        return []
import dataclasses
import functions.watchdog as w
index = NothingOverdue(deps.store)
report['nothing'] = w.handle({}, dataclasses.replace(deps, store=index))
report['asked'] = len(index.asked)
report['after_nothing'] = ran()
from shared.services import matchmaking
from shared.services.outbox import Request
from tests.fakes import fake_deps, new_player
fakes = fake_deps()
for i in range(8):
    matchmaking.join(fakes, Request(f"c{i}"), new_player(fakes, f"c{i}"), "en")
(tid,) = [ref for kind, ref in fakes.store.items if kind == "tournament"]
intro = fakes.store.get_tournament(tid).tournament
fakes.clock.now = intro.intro_deadline_ms + fakes.watchdog_grace_ms + 1
report['overdue'] = w.handle({}, fakes)
report['phase'] = fakes.store.get_tournament(tid).tournament.phase.value
"""


@_deferring
def test_a_watchdog_that_finds_nothing_overdue_runs_none_of_the_apply_path() -> None:
    report = _cold("functions.watchdog", WATCHDOG_RUNS, APPLY_PATH)
    assert report["ran"] == []
    assert report["nothing"] == {"handled": 0}
    assert report["asked"] == 1  # the due-time index was queried
    assert report["after_nothing"] == []
    # an overdue intro (its timer never fired) is still applied: the round is playing
    assert report["overdue"] == {"handled": 1}
    assert report["phase"] == "playing"


DISCONNECT_RUNS = """
import dataclasses
from shared.services import matchmaking
from shared.services.model import Connection, Player
from shared.services.outbox import Request
from tests.fakes import fake_deps
import functions.disconnect as d
class Posts:
    sent = []
    def send(self, messages):
        self.sent += messages
        return []
    def close(self, connection_id):
        pass
    def last_active_ms(self, connection_id):
        return None
posts = Posts()
fakes = dataclasses.replace(fake_deps(), notifier=posts)
now = fakes.clock.now_ms()
fakes.store.create_player(
    Player("p1", "Named", 1500, now, connection_id="c1", connected=True, token_used_ms=now), "h"
)
fakes.store.commit([Connection("c1", now, "p1")])
matchmaking.join(fakes, Request("c1"), "p1", "en")
fakes.store.create_player(
    Player("p2", "Other", 1500, now, connection_id="c2", connected=True, token_used_ms=now), "h2"
)
fakes.store.commit([Connection("c2", now, "p2")])
matchmaking.join(fakes, Request("c2"), "p2", "en")
posts.sent.clear()
event = {'requestContext': {'connectionId': 'c1', 'routeKey': '$disconnect', 'requestId': 'r1'}}
report['answer'] = d.handle(event, fakes)
p1 = fakes.store.get_player("p1")
report['player'] = [p1.status.value, p1.connected, p1.reconnect_deadline_ms - now]
report['after'] = ran()
report['pydantic_after'] = 'pydantic' in sys.modules
from shared.protocol.outbound import parse_outbound
report['pushed'] = [parse_outbound(text).type for _, text in posts.sent]
"""


@_deferring
def test_disconnect_never_runs_the_nickname_rules() -> None:
    report = _cold("functions.disconnect", DISCONNECT_RUNS, NICKNAME_RULES)
    assert report["ran"] == []
    # a queued player's disconnect: the reconnect deadline starts (ruling 9), no nickname rule
    assert report["answer"] == {"statusCode": 200}
    assert report["player"] == ["queued", False, 60_000]
    assert report["after"] == []


def test_only_the_message_function_imports_pydantic() -> None:
    """Cold start: the functions that only push events (``$connect``, ``$disconnect``,
    the clock, the watchdog) never import pydantic, neither at their cold start nor when they
    push (the events are stdlib dataclasses); the messages function parses its inbound
    messages with it."""
    for module in ("functions.connect", "functions.watchdog", "functions.apply_deadlines"):
        assert _cold(module)["pydantic"] is False, module
    assert _cold("functions.messages")["pydantic"] is True
    report = _cold("functions.disconnect", DISCONNECT_RUNS, NICKNAME_RULES)
    assert report["pydantic"] is False
    # a queued player's disconnect pushed player_status to the lobby, and still no pydantic
    assert report["pydantic_after"] is False
    assert report["pushed"] == ["player_status"]


def test_lazy_module_runs_the_module_on_its_first_attribute_access(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cold_pkg").mkdir()
    (tmp_path / "cold_pkg" / "__init__.py").write_text("")
    (tmp_path / "cold_pkg" / "rules.py").write_text(
        "import builtins\nbuiltins.cold_pkg_runs = getattr(builtins, 'cold_pkg_runs', 0) + 1\n"
        "VALUE = 42\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("cold_pkg", "cold_pkg.rules"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import builtins

    monkeypatch.setattr(builtins, "cold_pkg_runs", 0, raising=False)

    def runs() -> int:
        return int(getattr(builtins, "cold_pkg_runs"))  # noqa: B009 - set by the module

    module = lazy_module("cold_pkg.rules")
    assert sys.modules["cold_pkg.rules"] is module
    if not DEFERS:  # a Python whose LazyLoader is not thread-safe: imported at once
        assert runs() == 1
        assert module.VALUE == 42
        assert lazy_module("cold_pkg.rules") is module
        assert runs() == 1
        return
    assert runs() == 0
    assert type(module) is not types.ModuleType

    from cold_pkg.rules import VALUE

    assert VALUE == 42
    assert runs() == 1
    assert type(module) is types.ModuleType
    assert sys.modules["cold_pkg"].rules is module
    assert lazy_module("cold_pkg.rules") is module  # already there: not run again
    assert runs() == 1


def test_lazy_module_of_a_missing_module_fails_at_once() -> None:
    with pytest.raises(ModuleNotFoundError):
        lazy_module("shared.services.no_such_use_case")


def test_another_thread_never_sees_a_lazy_module_half_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local runtime calls handlers from several threads: while one thread's first access
    runs a lazy module, another thread's access waits for the whole module instead of finding
    a name not yet defined (``LazyLoader``'s lock from Python 3.12.3; an import at once, under
    the import lock, before). The module stops half-way until the second thread has had its
    chance to look; before the fix, that thread failed with ``AttributeError`` at once."""
    gate = types.ModuleType("cold_gate")
    gate.entered = threading.Event()  # type: ignore[attr-defined]
    gate.release = threading.Event()  # type: ignore[attr-defined]
    (tmp_path / "cold_slow.py").write_text(
        "import cold_gate\nFIRST = 1\ncold_gate.entered.set()\ncold_gate.release.wait(10)\n"
        "LAST = 2\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "cold_gate", gate)
    monkeypatch.delitem(sys.modules, "cold_slow", raising=False)
    seen: dict[str, object] = {}

    def read(who: str) -> None:
        try:
            seen[who] = lazy_module("cold_slow").LAST
        except Exception as exc:  # the failure is the finding
            seen[who] = exc

    first = threading.Thread(target=read, args=("first",))
    first.start()
    try:
        assert gate.entered.wait(10)  # the module is running, stopped before LAST
        second = threading.Thread(target=read, args=("second",))
        second.start()
        second.join(0.5)  # a correct loader keeps it waiting here
    finally:
        gate.release.set()
    first.join(10)
    second.join(10)
    monkeypatch.delitem(sys.modules, "cold_slow", raising=False)
    assert seen == {"first": 2, "second": 2}
