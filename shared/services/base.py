"""Service layer: what every use case shares — the dependencies, the retry loop for
optimistic concurrency, and pushing messages to players' connections."""

from __future__ import annotations

import random
import secrets
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from shared.domain.languages import Language
from shared.domain.tournament import Dealer, SecretSource
from shared.protocol.outbound import OutboundEvent, dump_event
from shared.services.errors import ConflictError, TryAgainError
from shared.services.ports import Clock, Notifier, Store, Timer

T = TypeVar("T")


class Lexicon(Protocol):
    """The word lists of the game languages (adapter: ``shared.adapters.lexicon``)."""

    def language(self, code: str) -> Language:
        """Raises UnknownLanguageError."""
        ...

    def secrets(self, code: str) -> SecretSource: ...

    def allowed(self, code: str, length: int) -> frozenset[str]: ...

    def display(self, code: str, word: str) -> str | None: ...


@dataclass(frozen=True)
class Timing:
    """Clock durations in milliseconds (rules page: 30 s turns, 6 s intros; ruling 9: 60 s)."""

    turn_ms: int = 30_000
    intro_ms: int = 6_000
    reconnect_ms: int = 60_000


@dataclass
class Deps:
    """Everything a use case may touch. Built by ``shared.runtime.bootstrap``; tests inject
    fakes (``tests/fakes.py``)."""

    store: Store
    notifier: Notifier
    clock: Clock
    lexicon: Lexicon
    timing: Timing = field(default_factory=Timing)
    rng_factory: Callable[[], random.Random] = field(default=lambda: random.SystemRandom())
    new_id: Callable[[], str] = field(default=lambda: uuid.uuid4().hex[:16])
    new_secret: Callable[[], str] = field(default=lambda: secrets.token_urlsafe(32))
    max_attempts: int = 6
    on_gone: Callable[[str], None] | None = None
    """Called with each connection id the notifier found gone (starts the disconnect flow)."""

    def dealer(self, language: str) -> Dealer:
        return Dealer(
            rng=self.rng_factory(),
            words=self.lexicon.secrets(language),
            turn_ms=self.timing.turn_ms,
            intro_ms=self.timing.intro_ms,
        )


def retrying(deps: Deps, attempt: Callable[[], T]) -> T:
    """Run ``attempt`` (load, decide, commit) until it commits without a conflict.

    Optimistic concurrency: ``Store.commit`` raises ConflictError when another writer got
    there first; the whole use case is retried on fresh reads. Raises TryAgainError after
    ``deps.max_attempts`` conflicts.
    """
    for _ in range(deps.max_attempts):
        try:
            return attempt()
        except ConflictError:
            continue
    raise TryAgainError("the server was busy, please try again")


@dataclass
class Outbox:
    """Messages to push after a commit (never before: nothing is sent for a change that was
    not saved) and timers to schedule."""

    messages: list[tuple[str, str]] = field(default_factory=list)
    timers: list[Timer] = field(default_factory=list)

    def add(self, connections: Iterable[str | None], event: OutboundEvent) -> None:
        text = dump_event(event)
        for cid in dict.fromkeys(connections):
            if cid:
                self.messages.append((cid, text))

    def flush(self, deps: Deps) -> None:
        for timer in self.timers:
            deps.clock.schedule(timer)
        gone = deps.notifier.send(self.messages) if self.messages else []
        self.messages = []
        self.timers = []
        if deps.on_gone is not None:
            for cid in gone:
                deps.on_gone(cid)


def first(items: Sequence[T]) -> T | None:
    return items[0] if items else None
