"""A boto3 client an adapter is given, or builds on first use.

A cold start pays for each client it builds (``infra/benchmarks``, figure 2); a function that
never calls a service (``$connect`` never pushes; most invocations schedule nothing) should not
build its client. Shared by ``ApiGatewayNotifier`` and ``StepFunctionsClock``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class LazyClient:
    """Base of an adapter holding one boto3 client: ``_client`` (given) or ``_factory`` (called
    once, on the first use of ``client``). Raises ValueError when given neither."""

    _client: Any
    _factory: Callable[[], Any] | None

    def _hold(self, client: Any, factory: Callable[[], Any] | None) -> None:
        if client is None and factory is None:
            raise ValueError(f"{type(self).__name__} needs a client or a client_factory")
        self._client = client
        self._factory = factory

    @property
    def client(self) -> Any:
        """The boto3 client, built by the factory on first use (once, under a lock: the
        watchdog's recoveries run in threads, and a boto3 session must not build clients in
        two threads at once — boto3, "Multithreading or multiprocessing with sessions":
        https://boto3.amazonaws.com/v1/documentation/api/latest/guide/session.html)."""
        if self._client is None:
            with _BUILD:
                if self._client is None:
                    assert self._factory is not None
                    self._client = self._factory()
        return self._client


_BUILD = threading.Lock()
"""Held while a lazy client is built."""
