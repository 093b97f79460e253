"""Unit: the retry policy of ``change.run`` (full-jitter exponential backoff, the attempt
limit, the busy budget) and the outbox emptied by a flush, on the fakes."""

from __future__ import annotations

import dataclasses
import random

import pytest

from shared.protocol import outbound as out
from shared.services.change import Change, run
from shared.services.deps import Deps
from shared.services.errors import BusyError, ConflictError, TryAgainError
from shared.services.outbox import Outbox
from shared.services.ports import Timer, TimerKind
from tests.fakes import fake_deps, open_session, sent_of


def _sleeping(deps: Deps, **policy: float) -> tuple[Deps, list[float]]:
    slept: list[float] = []
    return dataclasses.replace(deps, sleep=slept.append, **policy), slept  # type: ignore[arg-type]


def test_lost_races_are_retried_after_full_jitter_backoffs_doubling_up_to_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each wait is drawn from [0, min(cap, base * 2**n)]: the highest draws show the
    ceilings 10, 20, 40 ms then the 50 ms cap; no wait after the last try."""
    drawn: list[tuple[float, float]] = []

    def highest(low: float, high: float) -> float:
        drawn.append((low, high))
        return high

    monkeypatch.setattr(random, "uniform", highest)
    deps, slept = _sleeping(fake_deps(), max_attempts=5, backoff_base_s=0.01, backoff_cap_s=0.05)
    tries: list[int] = []

    def lost() -> Change[None]:
        tries.append(1)
        raise ConflictError("another writer got there first")

    with pytest.raises(TryAgainError, match=r"^the server was busy, please try again$"):
        run(deps, lost)
    assert len(tries) == 5
    assert drawn == [(0, 0.01), (0, 0.02), (0, 0.04), (0, 0.05)]
    assert slept == [0.01, 0.02, 0.04, 0.05]


def test_a_busy_table_is_retried_only_within_the_busy_budget() -> None:
    """Tries at 0.5, 1.0, 1.5 s are retried; the one that fails at exactly the 2 s budget is
    answered try_again at once (no more tries, no more waits)."""
    deps, slept = _sleeping(fake_deps(), max_attempts=10)
    tries: list[int] = []

    def throttled() -> Change[None]:
        tries.append(1)
        deps.clock.now += 500  # type: ignore[attr-defined]
        raise BusyError("throttled")

    with pytest.raises(TryAgainError, match=r"^the server was busy, please try again$") as err:
        run(deps, throttled)
    assert type(err.value) is TryAgainError
    assert len(tries) == 4
    assert len(slept) == 3


def test_a_flushed_outbox_is_empty_and_takes_new_messages_timers_and_closes() -> None:
    deps = fake_deps()
    open_session(deps, "c")
    box = Outbox()
    box.add(["c"], out.PongEvent(server_time_ms=1))
    assert box.flush(deps.clock, deps.notifier) == ()
    box.add(["c"], out.PongEvent(server_time_ms=2))
    due = deps.clock.now_ms() + 60_000
    box.timers.append(Timer(TimerKind.RECONNECT, "nobody", 1, due))
    box.closes.append("c")
    assert box.flush(deps.clock, deps.notifier) == ()
    assert [m["server_time_ms"] for m in sent_of(deps, "c", "pong")] == [1, 2]
    assert [t.due_ms for t in deps.clock.pending()] == [due]  # type: ignore[attr-defined]
    assert deps.notifier.closed == ["c"]  # type: ignore[attr-defined]
    assert (box.messages, box.timers, box.closes) == ([], [], [])
