"""Protocol layer: the numbers a client must respect — liveness, sizes, rates (rulings
13–15; API Gateway quotas).

Sources: rulings 14 (liveness) and 9 (reconnect window); "Amazon API Gateway quotas for
configuring and running a WebSocket API" (frame 32 KB, message 128 KB, idle connection timeout
10 minutes, connection duration 2 hours),
https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html#apigateway-execution-service-websocket-limits-table
"""

from __future__ import annotations

from typing import Final

PING_INTERVAL_SECONDS: Final[int] = 20
"""A client sends a message at least this often (``ping`` does), in seconds (ruling 14)."""

HEARTBEAT_TIMEOUT_SECONDS: Final[int] = 60
"""Default silence after which a player in a lobby or tournament is treated as disconnected
and their connection is closed, in seconds (ruling 14; the ``heartbeat_timeout_seconds``
setting)."""

RECONNECT_SECONDS: Final[int] = 60
"""Default window to come back after a disconnect, in seconds (rules page "Leaving and
disconnecting", ruling 9; the ``reconnect_seconds`` setting)."""

MAX_FRAME_BYTES: Final[int] = 32 * 1024
"""Largest inbound WebSocket frame API Gateway accepts, in bytes: a bigger one closes the
connection with 1009 "Message too big" (API Gateway quota)."""

MAX_MESSAGE_BYTES: Final[int] = 128 * 1024
"""Largest message API Gateway accepts or delivers (several frames), in bytes (API Gateway
quota; ``PostToConnection`` ``Data`` maximum)."""

IDLE_TIMEOUT_SECONDS: Final[int] = 10 * 60
"""API Gateway closes a connection that has been idle this long, in seconds (quota)."""

MAX_CONNECTION_SECONDS: Final[int] = 2 * 60 * 60
"""API Gateway closes every connection at this age, in seconds (quota): clients reconnect
and resume with their token."""

RATE_LIMIT_PER_SECOND: Final[float] = 5.0
"""Default sustained inbound messages per connection per second before ``rate_limited``."""

RATE_LIMIT_BURST: Final[int] = 20
"""Default burst of inbound messages per connection before ``rate_limited``."""

TOKEN_GRACE_SECONDS: Final[int] = 120
"""Default time the token a resume replaced still resumes, in seconds (ruling 11; the
``token_grace_seconds`` setting)."""

TRY_AGAIN_AFTER_MS: Final[int] = 250
"""``retry_after_ms`` of a ``try_again`` error: the server's own retries (up to 10, backoff
capped at 0.2 s) already ran out, so the client waits this long, plus a random jitter of up to
as much again, before sending the same message (same ``request_id``)."""

PAUSED_RETRY_AFTER_MS: Final[int] = 5000
"""``retry_after_ms`` of a ``paused`` error: the operators paused the game (an incident, a
risky change; ``infra/operations/pause.py``), which lasts minutes, so the client sends the same
message again at this pace (same ``request_id``)."""

SKIP_GRACE_MS: Final[int] = 2_000
"""Default time after a turn's deadline before its skip is applied, in ms (the
``skip_grace_seconds`` setting; RULINGS.md, Clocks); the clock wakes on the next whole second
(Step Functions' Wait)."""

WATCHDOG_GRACE_MS: Final[int] = 5_000
"""Default lateness of a deadline after which the watchdog applies it, in ms (the
``watchdog_grace_seconds`` setting)."""
