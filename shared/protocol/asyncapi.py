"""Protocol layer: the AsyncAPI 3.0 document of the WebSocket API, generated from the models.

The document is the published client contract. It is committed as ``shared/protocol/asyncapi.json``
and a unit test fails when that file differs from what the models generate. Regenerate with::

    python -m shared.protocol.asyncapi            # rewrite the committed file
    python -m shared.protocol.asyncapi --check    # exit 1 if it is out of date

Shape: one channel (the connection, API Gateway routes on ``$request.body.action``); one message
per inbound action (the server *receives* it) and per outbound event type (the server *sends*
it); one operation per message. Payload schemas come from pydantic (inbound in validation mode,
outbound in serialization mode, where every key is required because ``dump_event`` sends nulls).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from shared.protocol.examples import INBOUND_EXAMPLES, OUTBOUND_EXAMPLES
from shared.protocol.inbound import MODEL_BY_ACTION
from shared.protocol.outbound import EVENT_BY_TYPE
from shared.protocol.version import PROTOCOL_VERSION

__all__ = ["ASYNCAPI_PATH", "REGENERATE_COMMAND", "build_asyncapi", "main", "render"]

ASYNCAPI_PATH: Final = Path(__file__).with_name("asyncapi.json")
REGENERATE_COMMAND: Final = "python -m shared.protocol.asyncapi"

CHANNEL: Final = "game"
_REF_TEMPLATE: Final = "#/components/schemas/{model}"

# Request → reply pairs the services guarantee (any request may also get an ``error``).
_REPLIES: Final[dict[str, str]] = {"session": "session", "nickname": "player", "ping": "pong"}

_DESCRIPTION: Final = """\
Real-time API of Wordle Tournament: 8 players, 3 lives each, rounds of parallel 1v1 Wordle duels.

One WebSocket per player carries JSON text frames. Client messages are objects with an `action`
(API Gateway routes on `$request.body.action`); server messages are objects with a `type`.
Every client message may carry a `request_id` (at most 64 characters), echoed in the reply and
in `error` events. The first message on a connection must be `session`; the secret token it
returns is sent in later `session` messages, never in the URL. Frames are at most 32 KB.

Deadlines (`*_ms`) are absolute UTC milliseconds; clients count down from them. Error codes are
stable; branch on `code`, never on `message`. Unknown fields in server messages may be added in
later versions of the same protocol; unknown fields in client messages are refused.
"""


def _summary(model: type[BaseModel], fallback: str) -> str:
    # First docstring line, with reST ``literals`` turned into Markdown `literals`.
    return (model.__doc__ or fallback).strip().splitlines()[0].replace("``", "`")


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _schemas() -> dict[str, Any]:
    models: list[tuple[type[BaseModel], JsonSchemaMode]] = [
        (m, "validation") for m in MODEL_BY_ACTION.values()
    ]
    models += [(m, "serialization") for m in EVENT_BY_TYPE.values()]
    _, top = models_json_schema(models, ref_template=_REF_TEMPLATE)
    defs: dict[str, Any] = top.get("$defs", {})
    inbound = {m.__name__ for m in MODEL_BY_ACTION.values()}
    for name, schema in defs.items():
        if name not in inbound:
            # Server messages may gain fields within a protocol version: clients must tolerate
            # them, so the published schema does not forbid extras (the models still do).
            schema.pop("additionalProperties", None)
    return dict(sorted(defs.items()))


def _message(
    model: type[BaseModel], name: str, example: dict[str, Any], kind: Literal["action", "type"]
) -> dict[str, Any]:
    summary = _summary(model, name)
    return {
        "name": name,
        "title": f"{kind} {name}",
        "summary": summary,
        "contentType": "application/json",
        "payload": {"$ref": _REF_TEMPLATE.format(model=model.__name__)},
        "examples": [{"name": name, "payload": example}],
    }


def _channel_message_ref(key: str) -> dict[str, str]:
    return {"$ref": f"#/channels/{CHANNEL}/messages/{key}"}


def build_asyncapi() -> dict[str, Any]:
    """The AsyncAPI 3.0.0 document (a JSON-ready dict) describing every message of the API."""
    messages: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    channel_ref = {"$ref": f"#/channels/{CHANNEL}"}

    for action, in_model in MODEL_BY_ACTION.items():
        messages[in_model.__name__] = _message(in_model, action, INBOUND_EXAMPLES[action], "action")
    for type_, out_model in EVENT_BY_TYPE.items():
        messages[out_model.__name__] = _message(out_model, type_, OUTBOUND_EXAMPLES[type_], "type")

    error_key = EVENT_BY_TYPE["error"].__name__
    for action, in_model in MODEL_BY_ACTION.items():
        operation: dict[str, Any] = {
            "action": "receive",
            "channel": channel_ref,
            "title": f"Client sends {action}",
            "summary": _summary(in_model, action),
            "messages": [_channel_message_ref(in_model.__name__)],
        }
        reply_type = _REPLIES.get(action)
        if reply_type is not None:
            operation["reply"] = {
                "channel": channel_ref,
                "messages": [
                    _channel_message_ref(EVENT_BY_TYPE[reply_type].__name__),
                    _channel_message_ref(error_key),
                ],
            }
        operations[f"receive{_camel(action)}"] = operation
    for type_, out_model in EVENT_BY_TYPE.items():
        operations[f"send{_camel(type_)}"] = {
            "action": "send",
            "channel": channel_ref,
            "title": f"Server sends {type_}",
            "summary": _summary(out_model, type_),
            "messages": [_channel_message_ref(out_model.__name__)],
        }

    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Wordle Tournament WebSocket API",
            "version": str(PROTOCOL_VERSION),
            "description": _DESCRIPTION,
        },
        "defaultContentType": "application/json",
        "servers": {
            "aws": {
                "host": "{apiId}.execute-api.{region}.amazonaws.com",
                "pathname": "/{stage}",
                "protocol": "wss",
                "description": "API Gateway WebSocket API (deployed with CDK).",
                "variables": {
                    "apiId": {"description": "API Gateway API id."},
                    "region": {"default": "us-east-1", "description": "AWS region."},
                    "stage": {"default": "prod", "description": "API stage."},
                },
            },
            "local": {
                "host": "{host}",
                "protocol": "ws",
                "description": "The local runtime (infra/emulator), same messages.",
                "variables": {"host": {"default": "localhost:8080"}},
            },
        },
        "channels": {
            CHANNEL: {
                "address": "/",
                "title": "Game connection",
                "description": "The player's WebSocket connection; both directions.",
                "messages": {key: {"$ref": f"#/components/messages/{key}"} for key in messages},
            }
        },
        "operations": operations,
        "components": {"schemas": _schemas(), "messages": messages},
    }


def render(document: dict[str, Any] | None = None) -> str:
    """The document as committed: 2-space indented JSON, UTF-8, trailing newline."""
    doc = build_asyncapi() if document is None else document
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """CLI: write ``ASYNCAPI_PATH`` (or ``--output``); with ``--check`` only compare (exit 1)."""
    parser = argparse.ArgumentParser(prog=REGENERATE_COMMAND, description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the file is out of date")
    parser.add_argument("--output", type=Path, default=ASYNCAPI_PATH)
    args = parser.parse_args(argv)
    path: Path = args.output
    text = render()
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            print(f"{path} is out of date; run: {REGENERATE_COMMAND}", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
