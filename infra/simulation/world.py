"""Simulation: what the AWS side (``infra.simulation.aws``) and the scripted players
(``infra.simulation.player``) see of their run (``infra.simulation.run.Run`` has all of it)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

from infra.simulation.engine import Sim


class World(Protocol):
    """One run's shared state and services, as its clock, notifier and players use them."""

    sim: Sim
    rng: random.Random
    opts: Any
    deps: Any
    by_connection: dict[str, Any]
    by_player: dict[str, Any]
    ended: set[str]
    invocations: Counter[str]
    try_again: int
    error_codes: Counter[str]
    posts: int
    connection_reads: int
    last_active: dict[str, int]
    executions: int
    closed: list[str]
    cloud: Any
    """The run's AWS metrics and injected faults (``infra.simulation.cloud.CloudSide``)."""
    client: Any
    """The fake DynamoDB client (``infra.simulation.dynamo.FakeDynamoClient``)."""

    def lat(self, median: float, sigma: float = 0.3) -> float:
        """A lognormal latency, seconds."""
        ...

    def played(self, tournament_id: str | None) -> bool:
        """Whether the tournament is one of the sample played to the end."""
        ...

    def connect(self, p: Any, opened: Callable[[], None] | None = None) -> None:
        """The player's ``$connect``; ``opened`` runs once the socket is open (its handler
        answered 200), never when it failed."""
        ...

    def send(self, p: Any, action: str, body: str) -> None:
        """One message of the player's, received by API Gateway after the network delay."""
        ...

    def seated(self, p: Any, m: dict[str, Any]) -> None:
        """The player got its seat in a started tournament (``lobby`` ``started``)."""
        ...

    def set_rating(self, player_id: str, rating: int) -> None:
        """Set a returning player's rating in the table (a fixture)."""
        ...
