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

import os
import threading
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

# pydantic looks for plugins when it builds its first validator (the messages function builds
# its inbound models' validators on their first message; the other functions never import
# pydantic): ``importlib.metadata``
# entry points, a read of every installed distribution's metadata (tens of ms). We use none.
# pydantic, "Plugins: disabling plugins":
# https://docs.pydantic.dev/latest/concepts/plugins/#how-to-use-plugins
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from shared.runtime.bootstrap import build
from shared.runtime.observability import logger, metrics
from shared.runtime.settings import Settings
from shared.services.deps import Deps

Event = dict[str, Any]
Handle = Callable[[Event, Deps], Any]
"""``(event, deps) -> response``: an entrypoint's whole work."""


class SocketEvent:
    """The fields of an API Gateway WebSocket event's ``requestContext`` the entrypoints read,
    each read from the event dict when asked (a missing one raises ``KeyError``). API Gateway,
    "WebSocket API request context":
    https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-websocket-api-mapping-template-reference.html

    Powertools' ``APIGatewayWebSocketEvent`` data class reads the same keys, but importing it
    imports every data class of the package (about 50 ms of a cold start)."""

    __slots__ = ("_context",)

    def __init__(self, event: Event) -> None:
        self._context: dict[str, Any] = event["requestContext"]

    @property
    def connection_id(self) -> str:
        """``connectionId``: the connection the event is about."""
        return str(self._context["connectionId"])

    @property
    def route_key(self) -> str:
        """``routeKey``: ``$connect``, ``$disconnect``, ``$default`` or an action's route."""
        return str(self._context["routeKey"])

    @property
    def source_ip(self) -> str | None:
        """``identity.sourceIp``: the client's address (kept with the connection, never sent
        or logged in clear: ruling 17), or None when the event has none."""
        identity = self._context.get("identity")
        source = identity.get("sourceIp") if isinstance(identity, dict) else None
        return source if isinstance(source, str) and source else None

    @property
    def request_id(self) -> str:
        """``requestId``: API Gateway's id of this request (for the logs)."""
        return str(self._context["requestId"])


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
                    settings = Settings.from_values({**asdict(settings), **missing})
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
