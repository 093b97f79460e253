"""Entrypoints: API Gateway route key -> Lambda handler (``"module:attr"``). The message routes
are derived from the protocol's ``ACTIONS`` (one route per action, grouped into functions by
``function_of``), so there is no second hand-kept list of actions; CDK, the local runtime and
the tests all read this module (it imports only the protocol's action list)."""

from __future__ import annotations

from shared.protocol.inbound import ACTIONS


def function_of(action: str) -> str:
    """The Lambda function (route group) of an action: ``party`` for the ``party_*`` ones,
    else the action itself."""
    return "party" if action.startswith("party_") else action


MESSAGE_FUNCTIONS: dict[str, tuple[str, ...]] = {
    **{
        function_of(a): tuple(b for b in ACTIONS if function_of(b) == function_of(a))
        for a in ACTIONS
    },
    "default": (),
}
"""Message function name -> the actions it takes (``default``, API Gateway's ``$default``:
none — it answers a body that matched no route with its parse error, or ``unknown_action``).
Each is ``functions.messages.<name>``."""

ROUTES: dict[str, str] = {
    "$connect": "functions.connect:handler",
    "$disconnect": "functions.disconnect:handler",
    "$default": "functions.messages:default",
    **{a: f"functions.messages:{function_of(a)}" for a in ACTIONS},
}

TIMERS: dict[str, str] = {
    "clock": "functions.apply_deadlines:handler",
    "watchdog": "functions.watchdog:handler",
}


def function_name(target: str) -> str:
    """The function a target names: the attribute for ``functions.messages:<name>``, else
    the module (``functions.connect:handler`` -> ``connect``)."""
    module, _, attr = target.partition(":")
    return attr if attr != "handler" else module.removeprefix("functions.")
