"""Service layer: the one way a use case changes state — ``run(deps, step)``.

A *step* reads what it needs, decides (the domain's rules), and returns a ``Change``: the
records to save atomically (``Store.commit``, every save conditional on the version it was
read with), the outbox of what to push once they are saved, and the value the use case wants
back. ``run`` commits the change; when the store reports a lost race or a passing refusal it
runs the step again from fresh reads (a fresh decision), and once a change is saved it
flushes the outbox. Nothing is pushed for a change that was not saved, and a step has no
other way out than its return value (or a refusal it raises: nothing is saved then).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from shared.services.deps import Deps
from shared.services.errors import BusyError, ConflictError, ContentionError, TryAgainError
from shared.services.model import Write
from shared.services.outbox import Gone, Outbox

T = TypeVar("T")


@dataclass
class Change(Generic[T]):
    """What one step decided: ``writes`` to commit together (none: nothing to save),
    ``outbox`` to flush after the commit, ``value`` for the caller."""

    value: T
    writes: Sequence[Write] = ()
    outbox: Outbox = field(default_factory=Outbox)


@dataclass(frozen=True)
class Done(Generic[T]):
    """A committed (and flushed) change: the step's ``value`` and the connections the pushes
    found ``gone`` (the entrypoint disconnects them)."""

    value: T
    gone: Gone = ()


def run(deps: Deps, step: Callable[[], Change[T]], *, busy_budget_ms: int = 2_000) -> Done[T]:
    """Run ``step`` and commit its change, retrying the whole step (fresh reads) on
    ``ConflictError`` / ``ContentionError`` (up to ``deps.max_attempts``) and on ``BusyError``
    (within ``busy_budget_ms``), with full-jitter backoff; then flushes the outbox (timers,
    pushes, closes). Returns the step's value and the connections found gone. Raises a plain
    ``TryAgainError`` when the tries run out; anything else propagates at once, nothing saved.
    Backoff figures: ``shared/domain/RULINGS.md``, "Retries and limits"."""
    started = deps.clock.now_ms()
    for n in range(deps.max_attempts):
        try:
            change = step()
            if change.writes:
                deps.store.commit(list(change.writes))
        except (ConflictError, ContentionError):
            pass
        except BusyError:
            if deps.clock.now_ms() - started >= busy_budget_ms:
                break
        else:
            return Done(change.value, change.outbox.flush(deps.clock, deps.notifier))
        if n + 1 < deps.max_attempts:
            ceiling = min(deps.backoff_cap_s, deps.backoff_base_s * 2**n)
            deps.sleep(random.uniform(0, ceiling))
    raise TryAgainError("the server was busy, please try again")


def push(deps: Deps, outbox: Outbox) -> Gone:
    """Flush an outbox that follows no write of its own (a reply, a notice)."""
    return outbox.flush(deps.clock, deps.notifier)
