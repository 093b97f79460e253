"""``RateLimiter.retry_after_ms``: the ``retry_after_ms`` of a ``rate_limited`` error (issue
37) is the time until the bucket holds a whole token again."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from shared.runtime.rate_limit import RateLimiter


def test_an_unknown_connection_may_send_now() -> None:
    assert RateLimiter(per_second=5, burst=20).retry_after_ms("c", 1_000) == 0


@given(
    per_second=st.floats(min_value=0.5, max_value=50),
    burst=st.integers(min_value=1, max_value=30),
    extra=st.integers(min_value=1, max_value=10),
)
def test_after_the_wait_one_message_is_allowed_and_not_before(
    per_second: float, burst: int, extra: int
) -> None:
    limiter = RateLimiter(per_second=per_second, burst=burst, close_after_strikes=10_000)
    now = 10_000
    for _ in range(burst + extra):
        limiter.allow("c", now)
    wait = limiter.retry_after_ms("c", now)
    assert wait > 0
    if wait > 1:
        probe = RateLimiter(per_second=per_second, burst=burst, close_after_strikes=10_000)
        for _ in range(burst + extra):
            probe.allow("c", now)
        assert not probe.allow("c", now + wait - 1)
    assert limiter.allow("c", now + wait)
