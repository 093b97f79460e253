"""Protocol layer: the client contract, pydantic models of every WebSocket message.

Deliberately light to import (no pydantic here): import what you need from the submodules.

- ``shared.protocol.version``: ``PROTOCOL_VERSION`` (the major), ``PROTOCOL`` (``MAJOR.MINOR``),
  ``supported``; every change is listed in ``CHANGELOG.md``.
- ``shared.protocol.errors``: ``ErrorCode`` (every wire error code), ``describe``,
  ``RECOVERY`` (retry, resume, start over or none per code), ``ProtocolError`` (stdlib only).
- ``shared.protocol.replies``: ``REPLIES``, the events answering each action (stdlib only).
- ``shared.protocol.inbound``: client → server messages, discriminated by ``action``;
  ``parse_inbound``, ``ACTIONS`` (one API Gateway route per action).
- ``shared.protocol.outbound``: server → client events, discriminated by ``type``;
  ``parse_outbound``, ``TYPES``.
- ``shared.protocol.framing``: what the events are built on, without pydantic;
  ``dump_event``, ``frames`` (batches), ``unpack``.
- ``shared.protocol.asyncapi``: the AsyncAPI 3.0 document built from the models;
  ``python -m shared.protocol.asyncapi`` rewrites the committed ``asyncapi.json`` and the
  client guide ``README.md`` (ping interval, heartbeat, resume, rate and size limits, every
  error code).
- ``shared.protocol.limits``: the numbers a client must respect (liveness, sizes, rates).
- ``conformance/``: recorded message sequences of the main scenarios for client authors
  (``python -m tests.contract.record`` re-records them; CI validates them against the
  AsyncAPI schemas).
"""

from __future__ import annotations

from shared.protocol.version import PROTOCOL_VERSION

__all__ = ["PROTOCOL_VERSION"]
