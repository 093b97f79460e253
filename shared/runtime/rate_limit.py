"""Runtime layer: the per-connection message rate limit the entrypoints apply."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict


class RateLimiter:
    """Per-connection token buckets in this container, clocked by arrival time (API Gateway's
    ``requestTimeEpoch``, UTC ms), not by when the handler runs: a message that waited for a
    container is judged as it arrived. ``per_second`` tokens refill up to ``burst``; each
    message takes one (``allow``).

    A message refused ``no_session`` (``miss``) takes ``miss_tokens`` more, and may leave the
    bucket in debt: a connection without a session has nothing to send but ``session``, so
    one that keeps sending at the allowed rate soon meets refusals. Every ``strike_every``
    refusals not forgiven (the bucket refilled to half of ``burst`` at an allowed message: the
    client slowed down) make :meth:`tripped` True once: the caller then records one strike on
    the connection's item (shared by every container) and closes the connection at
    ``close_after_strikes`` (``functions.messages``). At most
    ``max_connections`` buckets, LRU-evicted. Thread-safe. Why: ``shared/domain/RULINGS.md``,
    design notes, "Retries and limits"."""

    def __init__(
        self,
        per_second: float,
        burst: int,
        max_connections: int = 10_000,
        strike_every: int = 5,
        close_after_strikes: int = 4,
        miss_tokens: float = 4.0,
    ) -> None:
        if strike_every < 1 or close_after_strikes < 1:
            raise ValueError("strike_every and close_after_strikes must be at least 1")
        self.per_second = per_second
        self.burst = burst
        self.strike_every = strike_every
        self.close_after_strikes = close_after_strikes
        self.miss_tokens = miss_tokens
        self._max = max_connections
        self._buckets: OrderedDict[str, list[float]] = OrderedDict()
        """connection id -> [tokens, at UTC ms, refusals, strikes due]."""
        self._lock = threading.Lock()

    def _bucket(self, connection_id: str, now_ms: int) -> list[float]:
        """The bucket refilled up to ``now_ms`` (under the lock; moved to the LRU's end)."""
        bucket = self._buckets.pop(connection_id, None)
        if bucket is None:
            bucket = [float(self.burst), float(now_ms), 0.0, 0.0]
        tokens, at = bucket[0], bucket[1]
        bucket[0] = min(float(self.burst), tokens + max(0.0, now_ms - at) * self.per_second / 1000)
        bucket[1] = max(at, float(now_ms))  # a message that arrived earlier never refunds
        self._buckets[connection_id] = bucket
        while len(self._buckets) > self._max:
            self._buckets.popitem(last=False)
        return bucket

    def retry_after_ms(self, connection_id: str, received_ms: int) -> int:
        """Milliseconds from ``received_ms`` (UTC ms) until ``connection_id``'s bucket holds a
        token again (0: now; an unknown connection has a full bucket)."""
        with self._lock:
            bucket = self._buckets.get(connection_id)
            if bucket is None:
                return 0
            tokens = min(
                float(self.burst),
                bucket[0] + max(0.0, received_ms - bucket[1]) * self.per_second / 1000,
            )
        return max(0, math.ceil((1.0 - tokens) * 1000 / self.per_second))

    def allow(self, connection_id: str, received_ms: int) -> bool:
        """Take one token for a message of ``connection_id`` that arrived at ``received_ms``
        (UTC ms); False when the bucket is empty (a refusal)."""
        with self._lock:
            bucket = self._bucket(connection_id, received_ms)
            if bucket[0] >= 1.0:
                if bucket[0] >= self.burst / 2:
                    bucket[2] = 0  # it slowed down: refusals forgiven
                bucket[0] -= 1.0
                return True
            bucket[2] += 1
            if bucket[2] >= self.strike_every:
                bucket[2] = 0
                bucket[3] += 1
            return False

    def miss(self, connection_id: str, received_ms: int) -> None:
        """Take ``miss_tokens`` more for a message of ``connection_id`` refused ``no_session``
        (the bucket may go into debt)."""
        with self._lock:
            self._bucket(connection_id, received_ms)[0] -= self.miss_tokens

    def tripped(self, connection_id: str) -> bool:
        """True, once per strike, when ``strike_every`` refusals were counted since the last
        one: record a strike on the connection (see the class docstring)."""
        with self._lock:
            bucket = self._buckets.get(connection_id)
            if bucket is None or bucket[3] < 1:
                return False
            bucket[3] -= 1
            return True

    def forget(self, connection_id: str) -> None:
        """Drop a closed connection's bucket."""
        with self._lock:
            self._buckets.pop(connection_id, None)
