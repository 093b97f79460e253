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

    Abuse: every refusal is a strike; strikes are forgiven only when the client lets its bucket
    refill to half of ``burst`` (it slowed down for real, not just long enough for one more
    token). A connection with ``close_after`` strikes is ``exhausted``; the entrypoints then
    close it (API Gateway Management API ``DeleteConnection``), so a client that ignores
    ``rate_limited`` stops costing invocations. With the defaults (5/s, burst 20, 20 strikes) a
    client that pauses 2 s after a ``rate_limited`` is never closed; one that keeps sending
    faster than 5/s is closed after 20 refusals (4 s at 10/s, well under a second when it loops).

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
        """connection id -> (tokens, at UTC ms, strikes)."""
        self._lock = threading.Lock()

    def allow(self, connection_id: str, now_ms: int) -> bool:
        """Take one token for ``connection_id`` at ``now_ms`` (UTC ms); False when empty."""
        with self._lock:
            tokens, at, refused = self._buckets.pop(connection_id, (float(self.burst), now_ms, 0))
            tokens = min(float(self.burst), tokens + max(0, now_ms - at) * self.per_second / 1000)
            allowed = tokens >= 1.0
            if allowed:
                if tokens >= self.burst / 2:
                    refused = 0  # it slowed down: strikes forgiven
                tokens -= 1.0
            else:
                refused += 1
            self._buckets[connection_id] = (tokens, max(at, now_ms), refused)
            while len(self._buckets) > self._max:
                self._buckets.popitem(last=False)
            return allowed

    def exhausted(self, connection_id: str) -> bool:
        """True once ``connection_id`` has ``close_after`` strikes (see the class docstring)."""
        with self._lock:
            entry = self._buckets.get(connection_id)
            return entry is not None and entry[2] >= self.close_after

    def forget(self, connection_id: str) -> None:
        """Drop a closed connection's bucket (``$disconnect``)."""
        with self._lock:
            self._buckets.pop(connection_id, None)
