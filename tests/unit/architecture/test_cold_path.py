"""What a cold start runs before its first message (issue 16: the cold start against the floor).

A function's cold start imports its module and builds its ``Deps``
(``functions._entry.container_deps()``). The message functions leave to their first message what
only a message needs — the use cases, the domain rules, the records and their codec, the
outbound events, the word lists — through ``shared.lazy.lazy_module``; ``$connect`` never runs
the domain. Each check runs in a fresh interpreter, where nothing else imported them first; a
module ``lazy_module`` registered but did not run yet is not a plain ``ModuleType``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from infra.benchmarks.cold import ENV  # a deployed function's environment, fake credentials
from shared.lazy import lazy_module

ROOT = Path(__file__).resolve().parents[3]

FIRST_MESSAGE = (
    "shared.domain.tournament",
    "shared.domain.duel",
    "shared.domain.events",
    "shared.domain.languages",
    "shared.adapters.dynamo.codec",
    "shared.services.model",
    "shared.services.outbox",
    "shared.protocol.outbound",
    "wordlists",
)
"""Run by a message function's first message, not by its cold start."""

MARK = "RESULT "


def _cold(module: str, after: str = "") -> dict[str, Any]:
    """In a fresh interpreter: import ``module``, ``container_deps()``, then ``after``; what it
    reports (``ran``: which of ``FIRST_MESSAGE`` ran)."""
    code = (
        "import json, sys, types\n"
        f"import {module}\n"
        "from functions._entry import container_deps\n"
        "deps = container_deps()\n"
        "def ran():\n"
        "    return sorted(n for n in NAMES if type(sys.modules.get(n)) is types.ModuleType)\n"
        "report = {'file': sys.modules['functions'].__file__, 'ran': ran()}\n"
        f"{after}\n"
        f"print({MARK!r} + json.dumps(report))\n"
    ).replace("NAMES", repr(FIRST_MESSAGE))
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


def test_the_connect_cold_start_runs_no_domain_rule() -> None:
    # the connection record it writes, and nothing of the domain or the codec
    assert _cold("functions.connect")["ran"] == ["shared.services.model"]


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
