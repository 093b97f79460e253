"""Service building block: ``$connect`` — remember a new connection (ruling 11: no player yet,
the session token comes in the ``session`` message).

Apart from ``shared.services.sessions`` (which re-exports ``connect``) so that the ``$connect``
function imports only what recording a connection needs: one conditional create of a
``Connection`` item, none of the session, presence and protocol modules the other session use
cases need (``functions.connect``'s cold start, ``infra.benchmarks.cold``).
"""

from __future__ import annotations

from shared.services.deps import Deps
from shared.services.errors import ConflictError
from shared.services.model import Connection


def connect(deps: Deps, connection_id: str, source: str | None = None) -> None:
    """``$connect``: remember the connection (no player yet: the token comes in ``session``)
    and its ``source`` address, which limits the new players it may create (ruling 17).

    Idempotent: a second delivery of the same ``$connect`` finds the item there (its
    conditional create fails) and leaves it as it is — possibly already bound by ``session``."""
    try:
        deps.store.commit([Connection(connection_id, deps.clock.now_ms(), source=source)])
    except ConflictError:
        return
