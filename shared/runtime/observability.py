"""Runtime layer: the Powertools Logger and Metrics singletons (service name and namespace from
``POWERTOOLS_SERVICE_NAME`` / ``POWERTOOLS_METRICS_NAMESPACE``). Tracer is left out of the
cold path on purpose (it adds ~180 ms of imports); enable X-Ray on the functions instead."""

from __future__ import annotations

import os

from aws_lambda_powertools import Logger, Metrics

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "wordle-tournament")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "WordleTournament")

logger = Logger()
metrics = Metrics()
