"""Runtime layer: the per-connection message rate limit the entrypoints apply."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict


class RateLimiter:
    """Per-connection token buckets: ``per_second`` tokens refill up to ``burst``; each message
    takes one (``allow``). A refusal is a strike, forgiven once the bucket refills to half of
    ``burst``; ``close_after`` strikes make the connection ``exhausted`` (the entrypoints close
    it). In-process, per container: a flood over N containers gets N buckets (why: RULINGS.md,
    "Retries and limits"). At most ``max_connections`` buckets, LRU-evicted. Thread-safe."""

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

    def retry_after_ms(self, connection_id: str, now_ms: int) -> int:
        """Milliseconds from ``now_ms`` until ``connection_id`` has a token again (0: now)."""
        with self._lock:
            tokens, at, _ = self._buckets.get(connection_id, (float(self.burst), now_ms, 0))
        tokens = min(float(self.burst), tokens + max(0, now_ms - at) * self.per_second / 1000)
        return max(0, math.ceil((1.0 - tokens) * 1000 / self.per_second))

    def exhausted(self, connection_id: str) -> bool:
        """True once ``connection_id`` has ``close_after`` strikes (see the class docstring)."""
        with self._lock:
            entry = self._buckets.get(connection_id)
            return entry is not None and entry[2] >= self.close_after

    def forget(self, connection_id: str) -> None:
        """Drop a closed connection's bucket (``$disconnect``)."""
        with self._lock:
            self._buckets.pop(connection_id, None)
