"""Runtime layer: the per-connection message rate limit the entrypoints apply."""

from __future__ import annotations

import threading
from collections import OrderedDict


class RateLimiter:
    """Per-connection token buckets: ``per_second`` tokens refill continuously up to
    ``burst``; every inbound message takes one (``allow``), refused when the bucket is empty.

    Where the state lives — in this process, per Lambda container, deliberately:

    - the guess hot path stays at 1 read + 1 write (DESIGN.md §3). A bucket in the CONN item
      would cost every message a write (and the guess, which never reads CONN, a read too):
      doubling the cost of every action to police the rare abuser;
    - a container runs one invocation at a time and API Gateway reuses warm containers, so a
      client looping on one connection mostly meets the same bucket: it is refused with
      ``rate_limited`` without a single DynamoDB call;
    - documented limit: a flood fanned out over N concurrent containers gets up to N buckets.
      The ceilings behind it are API Gateway's stage/route throttling. Every action is also
      safe to repeat (conditional writes), so what leaks through can only cost money, never
      corrupt a game.

    Abuse: a connection refused ``close_after`` times in a row (no message allowed in between)
    is ``exhausted``; the entrypoints then close it (API Gateway Management API
    ``DeleteConnection``), so a client that ignores ``rate_limited`` stops costing invocations.
    At the default 5/s refill a well-behaved client that honours ``rate_limited`` never gets
    there: it would have to send 20 more messages while its bucket stays empty.

    Bounded memory: at most ``max_connections`` buckets, least recently used evicted (an
    evicted connection starts again with a full bucket). Thread-safe.
    """

    def __init__(
        self,
        per_second: float,
        burst: int,
        max_connections: int = 10_000,
        close_after: int = 20,
    ) -> None:
        self.per_second = per_second
        self.burst = burst
        self.close_after = close_after
        self._max = max_connections
        self._buckets: OrderedDict[str, tuple[float, int, int]] = OrderedDict()
        """connection id -> (tokens, at UTC ms, refusals in a row)."""
        self._lock = threading.Lock()

    def allow(self, connection_id: str, now_ms: int) -> bool:
        """Take one token for ``connection_id`` at ``now_ms`` (UTC ms); False when empty."""
        with self._lock:
            tokens, at, refused = self._buckets.pop(connection_id, (float(self.burst), now_ms, 0))
            tokens = min(float(self.burst), tokens + max(0, now_ms - at) * self.per_second / 1000)
            allowed = tokens >= 1.0
            if allowed:
                tokens -= 1.0
                refused = 0
            else:
                refused += 1
            self._buckets[connection_id] = (tokens, max(at, now_ms), refused)
            while len(self._buckets) > self._max:
                self._buckets.popitem(last=False)
            return allowed

    def exhausted(self, connection_id: str) -> bool:
        """True once ``connection_id`` has been refused ``close_after`` times in a row."""
        with self._lock:
            entry = self._buckets.get(connection_id)
            return entry is not None and entry[2] >= self.close_after

    def forget(self, connection_id: str) -> None:
        """Drop a closed connection's bucket (``$disconnect``)."""
        with self._lock:
            self._buckets.pop(connection_id, None)
