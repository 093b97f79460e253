"""Entrypoints: API Gateway route key -> handler ("module:attr"). Inbound routes are derived
from the protocol's ``ACTIONS`` (one route per action), so there is no second hand-kept list
of actions; CDK and the local runtime both read this module."""

from __future__ import annotations

from shared.protocol.inbound import ACTIONS

_MODULE_BY_ACTION = {
    "party_create": "party",
    "party_join": "party",
    "party_leave": "party",
    "party_start": "party",
}

ROUTES: dict[str, str] = {
    "$connect": "functions.connect:handler",
    "$disconnect": "functions.disconnect:handler",
    "$default": "functions.default:handler",
    **{a: f"functions.{_MODULE_BY_ACTION.get(a, a)}:handler" for a in ACTIONS},
}

TIMERS: dict[str, str] = {
    "clock": "functions.apply_deadlines:handler",
    "watchdog": "functions.watchdog:handler",
}
