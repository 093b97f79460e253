"""Runtime layer: the Powertools Logger and Metrics singletons (service name and namespace from
``POWERTOOLS_SERVICE_NAME`` / ``POWERTOOLS_METRICS_NAMESPACE``).

The adapters' ``logging`` records go through the Powertools Logger's handler: the same JSON lines
with the entrypoints' correlation keys (``connection_id``, ``player_id``, ``tournament_id``,
``request_id``, ``api_request_id``, ``function_request_id``). No Tracer (X-Ray is per stage,
``infra.cdk.stack.StageConfig.tracing``; why: ``shared/domain/RULINGS.md``, "Cold path").
"""

from __future__ import annotations

import logging
import os

from aws_lambda_powertools import Logger, Metrics

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "wordle-tournament")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "WordleTournament")

logger = Logger()
metrics = Metrics()

LIBRARY_LOGGER = "shared"
"""The standard-library logger above every ``logging.getLogger(__name__)`` in ``shared``."""


def structure_library_logs(on_lambda: bool) -> None:
    """Send the ``shared.*`` standard-library loggers' records to the Powertools handler (JSON,
    with the appended keys). On Lambda they stop there: the runtime's root handler would print
    each a second time as plain text. Elsewhere they also reach the root logger (pytest's
    ``caplog``, the local runtime's console)."""
    library = logging.getLogger(LIBRARY_LOGGER)
    handler = logger.registered_handler
    if handler not in library.handlers:
        library.addHandler(handler)
    library.setLevel(logger.log_level)
    library.propagate = not on_lambda


structure_library_logs(on_lambda="AWS_LAMBDA_FUNCTION_NAME" in os.environ)
