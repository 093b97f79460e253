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
    """Run ``step`` and commit its change, retrying the whole step (fresh reads, a fresh
    decision) when the store reports a transient failure:

    - ``ConflictError``: another writer got there first (a failed condition);
    - ``ContentionError``: another transaction was writing the item (DynamoDB's
      ``TransactionConflictException`` / ``TransactionConflict``); nothing was written;
    - ``BusyError``: the table was throttled or unavailable after botocore's own retries
      (which already waited); nothing was written. Retried only while less than
      ``busy_budget_ms`` (``deps.clock``) has passed since the first try, so that a table that
      stays busy is answered ``try_again`` well within the function's timeout.

    Between tries it waits a "full jitter" exponential backoff (uniform in
    ``[0, min(cap, base * 2**n)]``: 10, 20, 40, 80, 160, 200... ms ceilings by default, under
    1.5 s over the 10 attempts), so racers that keep colliding spread out instead of retrying
    in lockstep (AWS Architecture Blog, "Exponential Backoff And Jitter"; DynamoDB developer
    guide, "Error retries and exponential backoff"). Raises a plain ``TryAgainError``
    (``try_again`` to the player; nothing was saved by the failed tries) after
    ``deps.max_attempts`` tries or the busy budget; a plain ``TryAgainError`` raised by a step
    is never retried. Anything else (a refusal of the rules, a non-transient DynamoDB error)
    propagates at once, with nothing saved or pushed.

    Then flushes the committed change's outbox: timers scheduled, messages pushed,
    connections closed. Returns the step's value and the connections found gone.
    """
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
