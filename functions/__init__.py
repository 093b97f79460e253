"""Entrypoints: the Lambda functions — one per WebSocket message route (``messages``: generated
from the protocol's actions), ``$connect``, ``$disconnect``, and the two timers.

Each is ``handle(event, deps) -> response`` wrapped once for Lambda (``_entry.Entrypoint``:
Powertools logging and metrics, the container's cached ``Deps``); the local runtime, the
tests and the benchmarks call ``handle`` with their own ``Deps``. ``routes`` maps API Gateway
route keys and timers to them.
"""
