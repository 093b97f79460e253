"""Runtime layer: the composition root — ``build(settings, ...)`` makes the one ``Deps`` a
process uses, from the settings and whatever ports the caller brings (the local runtime its
clock, tests their fakes). Nothing here is cached: the Lambda container keeps the ``Deps`` it
built (``functions._entry``); everyone else passes theirs explicitly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from shared.runtime.rate_limit import RateLimiter
from shared.runtime.settings import Settings
from shared.services.deps import Deps, FairPlay, Timing, new_id, new_secret
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

CONNECT_TIMEOUT_S = 1.0
"""botocore's connect timeout (seconds): a TCP connect inside the Region takes milliseconds."""
READ_TIMEOUT_S = 2.0
"""botocore's read timeout (seconds; per socket read): DynamoDB, Step Functions and
``@connections`` answer in tens of milliseconds; 2 s is a stuck call, better retried once."""
TOTAL_MAX_ATTEMPTS = 2
"""Tries per call, the first included (botocore's standard retry mode)."""
MAX_BACKOFF_S = 20.0
"""botocore's cap on one retry's backoff (standard mode)."""


def worst_call_seconds(
    connect_s: float = CONNECT_TIMEOUT_S,
    read_s: float = READ_TIMEOUT_S,
    attempts: int = TOTAL_MAX_ATTEMPTS,
) -> float:
    """The longest one AWS call can take under these settings (seconds): every try times out
    after connecting just in time (``connect_s + read_s``), and each retry waits the most
    standard mode's backoff allows (``min(2 ** (n - 1), 20)`` s after try n, the throttling
    scale; an ``x-amz-retry-after`` header, which none of our services sends, is left out).
    botocore, "Retries", standard mode:
    https://boto3.amazonaws.com/v1/documentation/api/latest/guide/retries.html"""
    backoff = sum(min(2.0 ** (n - 1), MAX_BACKOFF_S) for n in range(1, attempts))
    return attempts * (connect_s + read_s) + backoff


def client(
    service: str, settings: Settings, endpoint: str | None = None, session: Any = None
) -> Any:
    """A boto3 client as every function builds it, from ``session`` (a ``boto3.session.Session``;
    default: a new one). Clients of one session share its loaded endpoint and partition data, so
    ``build`` makes its clients from one session (boto3, "Session": a session is not meant to be
    shared across threads; ``build`` runs once per process, and the Lambda runtime calls a
    handler on one thread).

    Standard retry mode: throttling, 5xx and transport errors retried with jittered exponential
    backoff; :data:`TOTAL_MAX_ATTEMPTS` tries of at most :data:`CONNECT_TIMEOUT_S` +
    :data:`READ_TIMEOUT_S` each, so one call ends within :func:`worst_call_seconds` (7 s),
    inside every function's timeout with a margin (``infra.limits.FUNCTION_TIMEOUT_S``); a use
    case then retries as a whole (``shared.services.change.run``) within its time budget.
    (botocore, "Retries": standard mode;
    https://boto3.amazonaws.com/v1/documentation/api/latest/guide/retries.html)
    """
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "total_max_attempts": TOTAL_MAX_ATTEMPTS},
        connect_timeout=CONNECT_TIMEOUT_S,
        read_timeout=READ_TIMEOUT_S,
        max_pool_connections=64,
    )
    if session is None:
        session = boto3.session.Session()
    return session.client(
        service, region_name=settings.aws_region, endpoint_url=endpoint, config=config
    )


def timing(settings: Settings) -> Timing:
    """The clock durations of ``settings`` in milliseconds."""
    return Timing(
        settings.turn_ms,
        settings.intro_ms,
        settings.reconnect_ms,
        settings.skip_grace_ms,
        settings.heartbeat_ms,
    )


def fair_play(settings: Settings) -> FairPlay:
    """The identity limits and farm detection of ``settings`` (milliseconds)."""
    return FairPlay(
        new_players_per_source=settings.new_players_per_source,
        new_players_window_ms=round(settings.new_players_window_seconds * 1000),
        token_grace_ms=round(settings.token_grace_seconds * 1000),
        fresh_ms=round(settings.fresh_player_seconds * 1000),
        flag_seats=settings.flag_fresh_seats,
    )


def powertools_metric(name: str, value: float) -> None:
    """Count ``name`` in the Powertools Metrics of this invocation (flushed as EMF)."""
    from shared.runtime.observability import metrics

    metrics.add_metric(name=name, unit="Count", value=value)


WATCHDOG_WIDTH = 32
"""Threads the watchdog recovers overdue entries with (``thread_fan_out``): each recovery
mostly waits on DynamoDB, API Gateway and Step Functions, so 32 threads in one 512 MB function
recover about 32 times as many entries a run (``infra/simulation/RESULTS.md``, "clock
outage")."""


def thread_fan_out(
    width: int = WATCHDOG_WIDTH,
) -> Callable[[Sequence[Callable[[], int]]], list[int]]:
    """``Deps.fan_out`` on Lambda: the jobs on up to ``width`` threads (boto3 clients are
    thread-safe; https://boto3.amazonaws.com/v1/documentation/api/latest/guide/clients.html,
    "Multithreading or multiprocessing with clients"); results in order, the first error
    raised once every job has run."""

    def fan_out(jobs: Sequence[Callable[[], int]]) -> list[int]:
        if len(jobs) <= 1:
            return [job() for job in jobs]
        from concurrent.futures import ThreadPoolExecutor, wait

        with ThreadPoolExecutor(max_workers=min(width, len(jobs))) as pool:
            futures = [pool.submit(job) for job in jobs]
            wait(futures)
        return [f.result() for f in futures]

    return fan_out


def build(
    settings: Settings,
    *,
    store: Store | None = None,
    notifier: Notifier | None = None,
    clock: Clock | None = None,
    lexicon: Lexicon | None = None,
    rng: Callable[[], random.Random] = random.SystemRandom,
    ids: Callable[[], str] = new_id,
    secrets: Callable[[], str] = new_secret,
    sleep: Callable[[float], None] | None = None,
    metrics: Callable[[str, float], None] = powertools_metric,
    limiter: Limiter | None = None,
    switch: GameSwitch | None = None,
    progression: Progression | None = None,
    session: Any = None,
    fan_out: Callable[[Sequence[Callable[[], int]]], list[int]] | None = None,
    history: HistoryStore | None = None,
) -> Deps:
    """The dependencies for ``settings``: the given ports, else the adapters — DynamoStore,
    ApiGatewayNotifier, StepFunctionsClock (boto3 imported lazily so that a cold start pays for
    it only when it builds a client; the DynamoDB client is built here, the Management API and
    Step Functions clients on their first call: ``$connect`` never pushes, most invocations
    schedule nothing) and the word lists; the rate limiter from the settings. Immutable once
    built. ``session``: the ``boto3.session.Session`` the clients are made from (default: a new
    one, made when the first client is); the local runtime passes one with its in-process
    transports registered (``infra.emulator.inprocess``). ``switch``: the kill switch; default:
    ``DynamoGameSwitch`` on the table when the store is built here, else None (never paused).
    ``history``: the progression items; default: ``DynamoHistory`` on the store's table when the
    store is a ``DynamoStore`` (built here or passed in), else None;
    ``progression``: the progression reads; default: ``DynamoProgression`` on the table when
    the store is built here, else None."""
    sessions: list[Any] = [] if session is None else [session]

    def boto_session() -> Any:
        if not sessions:
            import boto3

            sessions.append(boto3.session.Session())
        return sessions[0]

    if clock is None:
        from shared.adapters.step_functions import StepFunctionsClock

        clock = StepFunctionsClock(
            None,
            settings.state_machine_arn or "",
            client_factory=lambda: client("stepfunctions", settings, session=boto_session()),
            metrics=metrics,
        )
    if store is None:
        from shared.adapters.dynamo.store import DynamoStore
        from shared.adapters.dynamo.switch import DynamoGameSwitch

        dynamodb = client("dynamodb", settings, settings.dynamodb_endpoint, session=boto_session())
        store = DynamoStore(dynamodb, settings.table_name, clock.now_ms)
        if switch is None:
            switch = DynamoGameSwitch(dynamodb, settings.table_name)
        if progression is None:
            from shared.adapters.dynamo.boards import DynamoProgression
            from shared.adapters.dynamo.schema import RATING_BOARD_SHARDS

            # a leaderboard's shard Queries in parallel: one thread per shard
            progression = DynamoProgression(
                dynamodb, settings.table_name, workers=RATING_BOARD_SHARDS
            )
    if history is None:
        from shared.adapters.dynamo.store import DynamoStore

        if isinstance(store, DynamoStore):
            from shared.adapters.dynamo.history import DynamoHistory

            history = DynamoHistory(store.client, store.table_name, clock.now_ms)
    if notifier is None:
        from shared.adapters.notifier import ApiGatewayNotifier

        notifier = ApiGatewayNotifier(
            None,
            metrics=metrics,
            client_factory=lambda: client(
                "apigatewaymanagementapi", settings, settings.callback_url, session=boto_session()
            ),
        )
    if lexicon is None:
        from shared.adapters.lexicon import WordListLexicon

        lexicon = WordListLexicon()
    if limiter is None:
        limiter = RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst)
    if sleep is None:
        import time

        sleep = time.sleep
    return Deps(
        store=store,
        notifier=notifier,
        clock=clock,
        lexicon=lexicon,
        timing=timing(settings),
        rng=rng,
        ids=ids,
        secrets=secrets,
        sleep=sleep,
        metrics=metrics,
        limiter=limiter,
        switch=switch,
        progression=progression,
        max_message_bytes=settings.max_message_bytes,
        watchdog_grace_ms=round(settings.watchdog_grace_seconds * 1000),
        fair_play=fair_play(settings),
        fan_out=thread_fan_out() if fan_out is None else fan_out,
        history=history,
    )
