"""Entrypoints: API Gateway route key -> Lambda handler (``"module:attr"``). The message routes
are derived from the protocol's ``ACTIONS`` (one route per action, grouped into functions by
``function_of``), so there is no second hand-kept list of actions; CDK, the local runtime and
the tests all read this module (it imports only the protocol's action list).

``MOCK_ROUTES`` are answered by API Gateway itself (a MOCK integration with a route response:
no Lambda, no table access): ``ping`` (ruling 14). They have no function."""

from __future__ import annotations

import json
from dataclasses import dataclass

from shared.protocol.inbound import ACTIONS


@dataclass(frozen=True)
class MockRoute:
    """A route API Gateway answers itself: a MOCK integration whose request template gives the
    status (and carries the fields the answer echoes), an integration response and a route
    response (``returnResponse``) that send ``response_template`` back to the caller.

    ``request_template`` / ``response_template``: the Velocity mapping templates deployed (CDK,
    ``infra/cdk/constructs/websocket.py``); ``answer(request_time_ms, body)``: the same answer in
    Python, for the local gateway (``infra/emulator/gateway.py``), which runs no Velocity.
    AWS, "Set up a WebSocket API integration response" and "WebSocket API mapping template
    reference":
    https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-websocket-api-integration-responses.html
    https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-websocket-api-mapping-template-reference.html
    """

    request_template: str
    response_template: str

    def answer(self, request_time_ms: int, body: str | None) -> str:
        """``pong`` with ``server_time_ms`` = the gateway's ``requestTimeEpoch`` (UTC ms) and
        the message's ``request_id`` echoed as it came when it is there and not empty, else
        null, as in every server message (the templates echo its JSON value; nothing is
        validated: a ping is not parsed)."""
        try:
            parsed = json.loads(body or "")
        except (ValueError, RecursionError):  # RecursionError: nested deeper than json goes
            parsed = None
        rid = parsed.get("request_id") if isinstance(parsed, dict) else None
        pong: dict[str, object] = {"type": "pong", "server_time_ms": request_time_ms}
        pong["request_id"] = rid if rid is not None and rid != "" else None
        pong["seq"] = None  # not about a tournament (protocol 1.2)
        return json.dumps(pong, separators=(",", ":"))


PONG = MockRoute(
    # MOCK: the request template's output is what the integration response reads back
    request_template=(
        "#set($rid = $input.path('$.request_id'))"
        '{"statusCode": 200'
        '#if("$!rid" != ""), "request_id": $input.json(\'$.request_id\')#end}'
    ),
    response_template=(
        "#set($rid = $input.path('$.request_id'))"
        '{"type":"pong","server_time_ms":$context.requestTimeEpoch'
        '#if("$!rid" != ""),"request_id":$input.json(\'$.request_id\')'
        '#else,"request_id":null#end,"seq":null}'
    ),
)
"""``ping`` -> ``pong`` (ruling 14): the gateway answers, the backend never sees a ping."""

MOCK_ROUTES: dict[str, MockRoute] = {"ping": PONG}
"""Route key -> its gateway-made answer (no function)."""


PROGRESSION_ACTIONS = frozenset({"profile", "leaderboard", "history", "replay"})
"""The read-only actions of profiles, leaderboards, history and replays (issue 38)."""


def function_of(action: str) -> str:
    """The Lambda function (route group) of an action: ``party`` for the ``party_*`` ones,
    ``session`` for ``sign_out_everywhere`` (the session's tokens), ``progression`` for the
    read-only ``PROGRESSION_ACTIONS``, else the action itself."""
    if action == "sign_out_everywhere":
        return "session"
    if action in PROGRESSION_ACTIONS:
        return "progression"
    return "party" if action.startswith("party_") else action


MESSAGE_FUNCTIONS: dict[str, tuple[str, ...]] = {
    **{
        function_of(a): tuple(
            b for b in ACTIONS if function_of(b) == function_of(a) and b not in MOCK_ROUTES
        )
        for a in ACTIONS
        if a not in MOCK_ROUTES
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
    **{a: f"functions.messages:{function_of(a)}" for a in ACTIONS if a not in MOCK_ROUTES},
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
