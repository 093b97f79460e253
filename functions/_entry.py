"""Entrypoints: the one wrapper that makes ``handle(event, deps)`` a Lambda handler.

The Lambda container builds its ``Deps`` on the first invocation (never at import time:
``shared.runtime.bootstrap.build`` from the environment's settings) and keeps it for the
invocations that reuse the container — AWS Lambda, "Lambda execution environment lifecycle":
objects declared outside the handler stay initialised between invocations
(https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html). That cache is
the only module-level state of the code base. The local runtime and the tests call the same
wrapped path with their own ``Deps`` (``Entrypoint.invoke``).

A handler is any callable ``handler(event, context)`` the function's ``handler`` setting names
(AWS Lambda, "Define Lambda function handler in Python",
https://docs.aws.amazon.com/lambda/latest/dg/python-handler.html).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from shared.runtime.bootstrap import build
from shared.runtime.observability import logger, metrics
from shared.runtime.settings import Settings
from shared.services.deps import Deps

Event = dict[str, Any]
Handle = Callable[[Event, Deps], Any]
"""``(event, deps) -> response``: an entrypoint's whole work."""

_lock = threading.Lock()
_container: Deps | None = None


def container_deps(supplied: dict[str, str] | None = None) -> Deps:
    """This Lambda container's ``Deps``, built from the environment on first use.

    ``supplied``: settings the first event carries (``Settings`` field -> value), used only for
    a field the environment leaves unset (the clock function's state machine ARN)."""
    global _container
    if _container is None:
        with _lock:
            if _container is None:
                settings = Settings.from_env()
                missing = {k: v for k, v in (supplied or {}).items() if not getattr(settings, k)}
                if missing:
                    settings = Settings.model_validate({**settings.model_dump(), **missing})
                _container = build(settings)
    return _container


class Entrypoint:
    """A Lambda handler — ``entrypoint(event, context)``, what the function's ``handler``
    setting names — around ``handle(event, deps)`` (``settings_from_event``: settings an event
    supplies where the environment cannot, see ``container_deps``), with Powertools' Lambda
    context in the logs (``inject_lambda_context``, state cleared per invocation) and its
    metrics flushed as EMF once per invocation (``log_metrics``)."""

    def __init__(
        self, handle: Handle, settings_from_event: Callable[[Event], dict[str, str]] | None = None
    ) -> None:
        self.handle = handle
        self._settings_from_event = settings_from_event
        self._wrapped = metrics.log_metrics(
            logger.inject_lambda_context(clear_state=True)(self._run)
        )

    def _run(self, event: Event, context: Any, deps: Deps | None = None) -> Any:
        if deps is None:
            hook = self._settings_from_event
            deps = container_deps(hook(event) if hook is not None else None)
        return self.handle(event, deps)

    def __call__(self, event: Event, context: Any) -> Any:
        """The Lambda handler: the container's ``Deps``."""
        return self._wrapped(event, context)

    def invoke(self, event: Event, context: Any, deps: Deps) -> Any:
        """The same wrapped path with the caller's ``Deps`` (local runtime, tests)."""
        return self._wrapped(event, context, deps)
