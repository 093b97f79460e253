"""The flood guard across containers (``shared.runtime.rate_limit.RateLimiter`` per container,
strikes on the connection's item, ``functions.messages``): API Gateway spreads one
connection's messages over many containers, each with its own buckets; the strikes they
record on the connection's item add up, and the connection is closed wherever they were
earned. Buckets count by arrival time (``requestTimeEpoch``), not when a handler runs."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from functions.messages import ENTRYPOINTS
from infra.emulator.events import ws_event
from infra.emulator.testing import LambdaContext
from shared.runtime.rate_limit import RateLimiter
from shared.services.deps import Deps
from shared.services.model import Connection
from tests.fakes import fake_deps

CONTAINERS = 3


class CountingStore:
    """The store, counting its writes (``commit``, ``create_player``, ``add_strike``)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.writes: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if name in ("commit", "create_player", "add_strike", "count_new_player"):

            def write(*args: Any, **kwargs: Any) -> Any:
                self.writes.append(name)
                return attr(*args, **kwargs)

            return write
        return attr


def _containers(base: Deps, store: CountingStore, **limits: Any) -> list[Deps]:
    """``CONTAINERS`` warm containers of the same function: one table and gateway, a bucket
    map each (the deployed limits unless ``limits`` says otherwise)."""
    limits = {"per_second": 5.0, "burst": 20, **limits}
    return [
        dataclasses.replace(base, store=store, limiter=RateLimiter(**limits))
        for _ in range(CONTAINERS)
    ]


def _send(deps: Deps, route: str, cid: str, body: dict[str, Any], received_ms: int) -> None:
    event = ws_event(route, cid, json.dumps(body), deps.clock.now_ms(), received_ms=received_ms)
    ENTRYPOINTS[route].invoke(event, LambdaContext(), deps)


def _errors(base: Deps, cid: str) -> list[str]:
    return [m["code"] for m in base.notifier.sent[cid] if m["type"] == "error"]  # type: ignore[attr-defined]


def test_a_flood_over_several_containers_is_closed_after_20_refusals_in_all():
    """One connection looping ``session`` through 3 containers round-robin: each container's
    bucket lets its burst through (60 answers), then every 5 refusals in a container record
    one strike on the connection; the 4th strike, wherever it lands, closes it: at the 15th
    refusal each container has struck once, the 4th strike is a container's 10th refusal (the
    28th in all; one container alone: the 20th)."""
    base = fake_deps()
    store = CountingStore(base.store)
    containers = _containers(base, store)
    now = base.clock.now_ms()
    base.store.commit([Connection("c-1", now)])

    for i in range(200):
        if "c-1" in base.notifier.closed:  # type: ignore[attr-defined]
            break
        _send(containers[i % CONTAINERS], "session", "c-1", {"action": "session"}, now)

    assert base.notifier.closed == ["c-1"]  # type: ignore[attr-defined]
    assert i == 60 + 28
    assert _errors(base, "c-1").count("rate_limited") == 27
    assert store.writes.count("add_strike") == 4


def test_the_buckets_count_arrival_time_not_when_the_handler_runs():
    """40 messages that arrived back to back, run by handlers 10 s apart each (a queue before
    the containers): they count as a burst, so the bucket refuses and strikes — clocked by
    the handler's time, every one would have been allowed."""
    base = fake_deps()
    store = CountingStore(base.store)
    (deps,) = _containers(base, store)[:1]
    received = base.clock.now_ms()
    base.store.commit([Connection("c-1", received)])

    for i in range(40):
        base.clock.advance(10_000)  # type: ignore[attr-defined]
        _send(deps, "session", "c-1", {"action": "session", "request_id": f"s{i}"}, received + i)

    assert _errors(base, "c-1").count("rate_limited") == 19
    assert base.notifier.closed == ["c-1"]  # type: ignore[attr-defined]


def test_a_connection_without_a_session_is_closed_and_costs_no_write_but_its_strikes():
    """Session-less guesses at the allowed 5/s through 3 containers: each is refused
    ``no_session`` (no write) and costs 4 more tokens, so the buckets soon refuse
    (``rate_limited``); every 5 refusals in a container are one strike (one write), and the
    4th closes the connection, within 30 s."""
    base = fake_deps()
    store = CountingStore(base.store)
    containers = _containers(base, store)
    now = base.clock.now_ms()
    base.store.commit([Connection("c-1", now)])
    guess = {"action": "guess", "duel_id": "T#t1#1#0", "word": "crane"}

    for i in range(300):
        if "c-1" in base.notifier.closed:  # type: ignore[attr-defined]
            break
        _send(containers[i % CONTAINERS], "guess", "c-1", guess, now + i * 200)

    assert base.notifier.closed == ["c-1"]  # type: ignore[attr-defined]
    errors = _errors(base, "c-1")
    assert set(errors) == {"no_session", "rate_limited"}
    assert errors.count("rate_limited") == 27  # the 28th refusal closed it
    assert i * 200 <= 30_000  # closed within 30 s of flooding (20 s: 72 no_session, 100 in all)
    assert store.writes == ["add_strike"] * 4


def test_an_honest_player_at_the_allowed_rate_earns_no_strike():
    """A seated player sending 5 messages/s for 30 s through 3 containers is never refused
    and never costs a strike's write."""
    base = fake_deps()
    store = CountingStore(base.store)
    containers = _containers(base, store)
    now = base.clock.now_ms()
    base.store.commit([Connection("c-1", now)])
    _send(containers[0], "session", "c-1", {"action": "session"}, now)
    base.clock.advance(200)  # type: ignore[attr-defined]

    for i in range(150):
        base.clock.advance(200)  # type: ignore[attr-defined]
        _send(
            containers[i % CONTAINERS],
            "nickname",
            "c-1",
            {"action": "nickname", "nickname": f"Player {i % 9}"},
            base.clock.now_ms(),
        )

    assert _errors(base, "c-1") == []
    assert "add_strike" not in store.writes
    assert base.notifier.closed == []  # type: ignore[attr-defined]
