"""Service layer: ``Deps``, everything a use case may touch, built once by the composition root
(``shared.runtime.bootstrap.build``) and never changed after: tests, benchmarks and the local
runtime build their own and pass it explicitly."""

from __future__ import annotations

import random
import secrets
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shared.protocol.limits import MAX_FRAME_BYTES
from shared.services.ports import (
    Clock,
    GameSwitch,
    HistoryStore,
    Lexicon,
    Limiter,
    Notifier,
    Progression,
    Store,
)

if TYPE_CHECKING:
    from shared.domain.tournament import Dealer


@dataclass(frozen=True)
class Timing:
    """Clock durations in milliseconds (rules page: 30 s turns, 6 s intros; ruling 9: 60 s;
    ``skip_grace_ms``: a skip applies this long after its turn deadline, RULINGS.md, Clocks;
    ``heartbeat_ms``: ruling 14's silence after which a player counts as disconnected — None
    turns the liveness check off, for tests of other rules whose players never ping)."""

    turn_ms: int = 30_000
    intro_ms: int = 6_000
    reconnect_ms: int = 60_000
    skip_grace_ms: int = 2_000
    heartbeat_ms: int | None = None


@dataclass(frozen=True)
class FairPlay:
    """What identities cost and which tournaments look farmed (rulings 11 and 17).

    - ``new_players_per_source``: new players one source (``Connection.source``, its
      ``shared.domain.fair_play.source_key``) may create per window; 0: no limit (the local
      runtime and the harness, whose clients all share the loopback address);
    - ``new_players_window_ms``: that window (fixed, aligned to the epoch);
    - ``token_grace_ms``: how long the token a resume rotated out still resumes (a lost reply
      never locks the player out);
    - ``fresh_ms``: a player created at most this long before a tournament's start holds a
      fresh seat;
    - ``flag_seats``: a tournament is flagged when at least this many fresh seats left or were
      eliminated without playing a turn of their own (0: never)."""

    new_players_per_source: int = 10
    new_players_window_ms: int = 3_600_000
    token_grace_ms: int = 120_000
    fresh_ms: int = 600_000
    flag_seats: int = 5


TOKEN_IDLE_MS = 30 * 24 * 3600 * 1000
"""Session tokens expire after 30 days unused (each resume renews them). A player is anonymous
(ruling 11): the token is the only key to the profile, so a token copied off a device long ago
stops working, while a regular player never notices."""


def new_id() -> str:
    """A random 16-hex-digit id (64 bits) for players, lobbies, tournaments and parties."""
    return uuid.uuid4().hex[:16]


def new_secret() -> str:
    """A 256-bit URL-safe secret (session tokens, party invites; ruling 11)."""
    return secrets.token_urlsafe(32)


def no_metric(name: str, value: float) -> None:
    """The metrics sink of tests that do not count."""


def in_turn(jobs: Sequence[Callable[[], int]]) -> list[int]:
    """Run ``jobs`` one after the other (``Deps.fan_out`` of tests and local runs)."""
    return [job() for job in jobs]


@dataclass(frozen=True)
class Deps:
    """Everything a use case may touch (immutable: ``dataclasses.replace`` makes a variant).

    - ``store``, ``notifier``, ``clock``, ``lexicon``: the ports (``shared.services.ports``);
    - ``timing``: the clock durations;
    - ``rng``: a fresh random generator per decision (secrets, pairings, first players);
    - ``ids`` / ``secrets``: new record ids and 256-bit secrets;
    - ``sleep``: waits between retries of a conflicted change (seconds);
    - ``metrics``: counts an operational metric ``(name, count)`` (Powertools on Lambda);
    - ``limiter``: the per-connection message rate limit the entrypoints apply (None: none);
    - ``switch``: the operators' kill switch (None: never paused);
    - ``progression``: the read side of profiles, leaderboards, history and replays (issue
      38; None: those actions are unavailable);
    - ``fair_play``: the identity limits and farm detection (``FairPlay``);
    - ``watchdog_grace_ms``, ``watchdog_budget_ms``, ``fan_out``: the watchdog's settings;
    - ``max_attempts``, ``backoff_base_s``, ``backoff_cap_s``: the retry policy
      (``shared.services.change.run``);
    - ``history``: the progression items (the history function's port; None: not kept).
    """

    store: Store
    notifier: Notifier
    clock: Clock
    lexicon: Lexicon
    timing: Timing = field(default_factory=Timing)
    rng: Callable[[], random.Random] = random.SystemRandom
    ids: Callable[[], str] = new_id
    secrets: Callable[[], str] = new_secret
    sleep: Callable[[float], None] = time.sleep
    metrics: Callable[[str, float], None] = no_metric
    limiter: Limiter | None = None
    switch: GameSwitch | None = None
    progression: Progression | None = None
    max_message_bytes: int = MAX_FRAME_BYTES
    """The largest inbound frame the entrypoints accept (API Gateway's 32 KB frame)."""
    watchdog_grace_ms: int = 5_000
    """How late a deadline may be before the watchdog applies it."""
    watchdog_budget_ms: int = 40_000
    """How long into a run the watchdog still starts recovering an overdue entry; the rest
    waits for the next run (the watchdog function times out at 60 s)."""
    fan_out: Callable[[Sequence[Callable[[], int]]], list[int]] = in_turn
    """Runs independent jobs, in parallel where the runtime can (the watchdog's recoveries;
    ``shared.runtime.bootstrap.thread_fan_out`` on Lambda), and returns their results in order;
    raises the first job's error once every job has run."""
    token_idle_ms: int = TOKEN_IDLE_MS
    """A session token unused for longer is refused (``shared.services.sessions``)."""
    fair_play: FairPlay = field(default_factory=FairPlay)
    """Identity limits and farm detection (rulings 11 and 17)."""
    max_attempts: int = 10
    backoff_base_s: float = 0.01
    backoff_cap_s: float = 0.2
    history: HistoryStore | None = None
    """The progression items (the history function's port); None: not kept here."""

    def dealer(self, language: str) -> Dealer:
        """The domain's source of chance and durations for one decision in ``language``."""
        from shared.domain.tournament import Dealer  # the rules, imported by the first decision

        return Dealer(
            rng=self.rng(),
            words=self.lexicon.secrets(language),
            turn_ms=self.timing.turn_ms,
            intro_ms=self.timing.intro_ms,
            skip_grace_ms=self.timing.skip_grace_ms,
        )
