"""A boto3 client an adapter is given, or builds on first use.

A cold start pays for each client it builds (``infra/benchmarks``, figure 2); a function that
never calls a service (``$connect`` never pushes; most invocations schedule nothing) should not
build its client. Shared by ``ApiGatewayNotifier`` and ``StepFunctionsClock``."""

from __future__ import annotations

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
        """The boto3 client, built by the factory on first use."""
        if self._client is None:
            assert self._factory is not None
            self._client = self._factory()
        return self._client
