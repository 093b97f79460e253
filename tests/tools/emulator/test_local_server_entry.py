"""The AsyncAPI document's ``servers.local`` entry names where ``python -m infra.emulator``
listens by default (issue 37 drift: it named a port and path the runtime does not use)."""

from __future__ import annotations

from types import SimpleNamespace

from infra.emulator.cli import build_parser
from infra.emulator.gateway import LocalGateway
from shared.protocol.asyncapi import build_asyncapi


def test_the_local_server_entry_is_where_the_local_runtime_listens() -> None:
    """Issue 37 drift: ``servers.local`` named a port and path the runtime does not use."""
    local = build_asyncapi()["servers"]["local"]
    args = build_parser().parse_args([])
    assert local["variables"]["host"]["default"] == f"{args.host}:{args.port}"
    listening = SimpleNamespace(host=args.host, port=args.port)
    ws_url = LocalGateway.ws_url.fget(listening)  # type: ignore[attr-defined]
    assert ws_url == f"ws://{args.host}:{args.port}{local['pathname']}"
