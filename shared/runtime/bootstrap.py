"""Runtime layer: the composition root. ``get_deps()`` builds the adapters from settings on
first use (never at import time) and caches them per process; the local runtime and tests
inject their own ports with ``configure(...)`` / ``set_clock(...)``.
"""

from __future__ import annotations

import threading
from typing import Any

from shared.runtime.settings import Settings, get_settings
from shared.services.base import Deps, RateLimiter, Timing
from shared.services.ports import Clock, Notifier, Store

_lock = threading.Lock()
_deps: Deps | None = None
_overrides: dict[str, Any] = {}


def _client(service: str, settings: Settings, endpoint: str | None = None) -> Any:
    import boto3
    from botocore.config import Config

    # Standard retry mode: throttling, 5xx and transport errors retried with jittered
    # exponential backoff. ``total_max_attempts`` counts the first try (botocore's
    # ``max_attempts`` counts retries: 4 meant 5 tries and up to 1+2+4+8 s of throttling
    # backoff per call, past a message function's timeout). 3 tries keep it under 3 s; a
    # use case then retries as a whole (``services.base.retrying``) within its time budget.
    config = Config(
        retries={"mode": "standard", "total_max_attempts": 3},
        connect_timeout=2,
        read_timeout=5,
        max_pool_connections=64,
    )
    session: Any = boto3.session.Session()
    return session.client(
        service, region_name=settings.aws_region, endpoint_url=endpoint, config=config
    )


def build(
    settings: Settings | None = None,
    *,
    store: Store | None = None,
    notifier: Notifier | None = None,
    clock: Clock | None = None,
    lexicon: Any = None,
) -> Deps:
    """Build the dependencies: DynamoStore, ApiGatewayNotifier, StepFunctionsClock (or the
    given ports) and the word lists."""
    s = settings or get_settings()
    if clock is None:
        from shared.adapters.step_functions import StepFunctionsClock

        clock = StepFunctionsClock(_client("stepfunctions", s), s.state_machine_arn or "")
    if store is None:
        from shared.adapters.dynamo.store import DynamoStore

        store = DynamoStore(_client("dynamodb", s, s.dynamodb_endpoint), s.table_name, clock.now_ms)
    if notifier is None:
        from shared.adapters.notifier import ApiGatewayNotifier

        notifier = ApiGatewayNotifier(_client("apigatewaymanagementapi", s, s.callback_url))
    if lexicon is None:
        from shared.adapters.lexicon import WordListLexicon

        lexicon = WordListLexicon()
    deps = Deps(
        store=store,
        notifier=notifier,
        clock=clock,
        lexicon=lexicon,
        timing=Timing(s.turn_ms, s.intro_ms, s.reconnect_ms, s.skip_grace_ms, s.heartbeat_ms),
        limiter=RateLimiter(s.rate_limit_per_second, s.rate_limit_burst),
    )

    def on_gone(connection_id: str) -> None:
        from shared.services.players import disconnect

        disconnect(deps, connection_id)

    deps.on_gone = on_gone

    def metric(name: str, value: float) -> None:
        from shared.runtime.observability import metrics

        metrics.add_metric(name=name, unit="Count", value=value)

    deps.metric = metric
    return deps


def get_deps() -> Deps:
    """The process-wide dependencies (built on first use)."""
    global _deps
    if _deps is None:
        with _lock:
            if _deps is None:
                _deps = build(**_overrides)
    return _deps


def configure(**overrides: Any) -> None:
    """Inject ports (``store=``, ``notifier=``, ``clock=``, ``lexicon=``, ``settings=``) for
    the next ``get_deps()``; resets the cached dependencies."""
    global _deps
    with _lock:
        _overrides.clear()
        _overrides.update(overrides)
        _deps = None


def set_clock(clock: Clock | None) -> None:
    """The local runtime's hook: use ``clock`` instead of Step Functions."""
    configure(**{**_overrides, "clock": clock})


def reset() -> None:
    """Forget cached dependencies and overrides (tests)."""
    configure()
    get_settings.cache_clear()
