"""Test doubles: in-memory fakes of the service ports, named by behaviour (STYLE.md).

- ``InMemoryStore``: re-exported from its home, ``shared.adapters.memory`` (the ``Store`` port
  in memory, held to ``DynamoStore``'s contract by ``tests/contract/test_store_contract.py``).
- ``ManualClock``, ``RecordingNotifier``: re-exported from the harness
  (``infra.emulator.testing``) so unit tests and flow tests share one implementation.
- ``fake_deps(...)``: a whole ``Deps`` on these fakes, seeded, with the clock function wired
  to the real deadline entrypoint (``functions.apply_deadlines.handle``): the services' unit
  tests run on it in milliseconds, no moto.
"""

from __future__ import annotations

import functools
import itertools
import random
from typing import Any

from infra.emulator.testing import ManualClock, RecordingNotifier
from shared.adapters.memory import InMemoryStore
from shared.services.deps import Deps, Timing
from shared.services.model import Player

__all__ = ["InMemoryStore", "ManualClock", "RecordingNotifier", "fake_deps"]


def fake_deps(*, seed: int = 7, heartbeat_ms: int | None = None, lexicon: Any = None) -> Deps:
    """A ``Deps`` on ``InMemoryStore``, ``RecordingNotifier`` and ``ManualClock`` (starting at
    1_800_000_000_000 ms), with the rules page's durations and a 1 s skip grace, seeded ids
    (``id0001``...), secrets and chance, no retry sleeps. Due timers run the real clock
    function's logic (``functions.apply_deadlines.handle``) on this same ``Deps``."""
    from functions import apply_deadlines

    rng = random.Random(seed)
    ids = itertools.count(1)
    clock = ManualClock()
    deps = Deps(
        store=InMemoryStore(),
        notifier=RecordingNotifier(),
        clock=clock,
        lexicon=lexicon or _word_lists(),
        timing=Timing(30_000, 6_000, 60_000, 1_000, heartbeat_ms),
        rng=lambda: random.Random(rng.random()),
        ids=lambda: f"id{next(ids):04d}",
        secrets=lambda: f"{rng.getrandbits(256):064x}"[:43],
        sleep=lambda seconds: None,
    )
    clock.fire = lambda state: apply_deadlines.handle(state, deps)
    return deps


def sent(deps: Deps, cid: str) -> list[dict[str, Any]]:
    """Every event pushed to connection ``cid`` so far, in order (batches unpacked)."""
    return deps.notifier.sent[cid]  # type: ignore[attr-defined, no-any-return]


def sent_of(deps: Deps, cid: str, kind: str) -> list[dict[str, Any]]:
    """The events of type ``kind`` pushed to ``cid``, in order."""
    return [m for m in sent(deps, cid) if m["type"] == kind]


def open_session(deps: Deps, cid: str, token: str | None = None) -> dict[str, Any]:
    """``$connect`` then ``session`` (request id ``s``, with ``token`` to resume) on ``cid``:
    the reply. Both are client activity: the connection's ``LastActiveAt`` (the
    ``RecordingNotifier``'s) moves to now, as API Gateway's does."""
    from shared.services import sessions
    from shared.services.outbox import Request

    deps.notifier.activity(cid, deps.clock.now_ms())  # type: ignore[attr-defined]
    sessions.connect(deps, cid)
    sessions.session(deps, Request(cid, "s"), token)
    return sent(deps, cid)[-1]


def new_player(deps: Deps, cid: str) -> str:
    """A new player's id, on a fresh session on ``cid`` (``open_session``)."""
    return str(open_session(deps, cid)["player"]["id"])


def stored_player(deps: Deps, player_id: str) -> Player:
    """The player as stored (it must exist)."""
    player = deps.store.get_player(player_id)
    assert player is not None, player_id
    return player


@functools.cache
def _word_lists() -> Any:
    """One word-list lexicon per process (loading the lists is the slow part)."""
    from shared.adapters.lexicon import WordListLexicon

    return WordListLexicon()
