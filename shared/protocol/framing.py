"""Protocol layer: the outbound message framework, apart from its catalogue (``outbound``).

``message_class`` makes a frozen stdlib dataclass that pydantic can validate; ``dump_event``
writes one as compact JSON; ``frames`` packs one connection's dumped events into ``batch``
messages of at most 128 KB; ``unpack`` reads a message back. Never imports pydantic itself."""

import json
from collections.abc import Sequence
from dataclasses import MISSING, field, fields
from dataclasses import dataclass as _dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar, dataclass_transform

from shared.protocol.limits import MAX_MESSAGE_BYTES

if TYPE_CHECKING:
    from _typeshed import DataclassInstance
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

__all__ = [
    "Event",
    "TaggedByType",
    "dump_event",
    "frames",
    "message_class",
    "message_field",
    "unpack",
]

_CONFIG: Final[dict[str, Any]] = {
    # A pydantic ``ConfigDict`` (a TypedDict, so a plain dict), read when pydantic validates
    # these dataclasses or builds their JSON schema (pydantic, "Dataclasses: dataclass config",
    # https://docs.pydantic.dev/latest/concepts/dataclasses/#dataclass-config).
    "extra": "forbid",
    # Every key is always sent (dump_event keeps nulls), so the published schema requires them.
    "json_schema_serialization_defaults_required": True,
}

_T = TypeVar("_T")


def message_field(
    *, description: str, default: Any = MISSING, default_factory: Any = MISSING, **constraints: Any
) -> Any:
    """A field with its published ``description`` and pydantic ``Field`` constraints
    (``ge``, ``le``, ``min_length``, ``max_length``), kept as the field's metadata: pydantic reads
    the metadata keys named like ``Field``'s arguments when it validates a stdlib dataclass or
    builds its schema; the server never runs them (``shared.protocol.outbound``)."""
    return field(
        default=default,
        default_factory=default_factory,
        metadata={"description": description, **constraints},
    )


@dataclass_transform(
    kw_only_default=True, frozen_default=True, field_specifiers=(field, message_field)
)
def message_class(cls: type[_T]) -> type[_T]:
    """A protocol message class: a frozen, slotted, keyword-only stdlib dataclass that pydantic
    validates with ``_CONFIG`` (``__pydantic_config__``)."""
    setattr(cls, "__pydantic_config__", _CONFIG)  # noqa: B010 (a class attribute, not a field)
    return _dataclass(frozen=True, slots=True, kw_only=True)(cls)


@message_class
class Event:
    """What every outbound event carries: the ``request_id`` it answers and its ``seq``."""

    request_id: str | None = message_field(
        default=None, description="The request_id of the inbound message this answers; else null."
    )
    seq: int | None = message_field(
        default=None,
        ge=1,
        description="Since 1.2. This player's sequence number of the event within its "
        "tournament: 1, 2, 3... on every event about the tournament the player receives (in a "
        "batch each event has its own). A gap (not the last seq + 1) means events were lost: "
        "resync (send session with the token on the same connection) and continue from the "
        "snapshot's seq. Null outside a tournament (lobby, party, session, pong, error, a "
        "batch itself) and on the answer to a repeated request.",
    )


class TaggedByType:
    """``Annotated`` metadata: the union is tagged by ``type``. pydantic calls this hook when it
    builds a validator or schema for the union (its ``__get_pydantic_core_schema__`` protocol,
    https://docs.pydantic.dev/latest/concepts/types/#customizing-validation-with-__get_pydantic_core_schema__)
    and gets the discriminated union ``Field(discriminator="type")`` makes: one model tried per
    message, errors naming only it, ``oneOf`` with a ``discriminator`` in the schema."""

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source: Any, handler: "GetCoreSchemaHandler"
    ) -> "CoreSchema":
        from pydantic import Field

        return handler(Annotated[source, Field(discriminator="type")])


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _plain(value: Any) -> Any:
    # A message as JSON-ready dicts and lists: every field, in declaration order.
    names = _FIELD_NAMES.get(type(value))
    if names is None:
        if not hasattr(value, "__dataclass_fields__"):
            if isinstance(value, list | tuple):
                return [_plain(item) for item in value]
            return value
        names = _FIELD_NAMES[type(value)] = tuple(f.name for f in fields(value))
    return {name: _plain(getattr(value, name)) for name in names}


def dump_event(event: "DataclassInstance") -> str:
    """The event (or a part of one, such as a ``Snapshot``) as compact JSON text, every field
    present (``null`` included, in declaration order), non-ASCII kept as UTF-8
    (``json.dumps``). This is what the notifier posts to a connection."""
    return json.dumps(_plain(event), ensure_ascii=False, separators=(",", ":"))


# The envelope of a batch (``outbound.BatchEvent``) around its events, as written on the wire.
_BATCH_OPEN = '{"type":"batch","request_id":null,"seq":null,"events":['
_BATCH_CLOSE = "]}"


def frames(texts: Sequence[str], limit: int = MAX_MESSAGE_BYTES) -> list[str]:
    """The messages that carry ``texts`` (dumped events for one connection, in order): the one
    text alone, or ``batch`` messages of at most ``limit`` bytes (UTF-8) each, in order. A single
    text over the limit goes alone (it is the event's own size, not the batch's).

    Source: API Gateway's WebSocket message quota (128 KB,
    https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html)."""
    if len(texts) <= 1:
        return list(texts)
    overhead = len(_BATCH_OPEN) + len(_BATCH_CLOSE)
    groups: list[list[str]] = [[]]
    size = overhead
    for text in texts:
        n = len(text.encode("utf-8")) + (1 if groups[-1] else 0)
        if groups[-1] and size + n > limit:
            groups.append([])
            size = overhead
            n = len(text.encode("utf-8"))
        groups[-1].append(text)
        size += n
    return [g[0] if len(g) == 1 else _BATCH_OPEN + ",".join(g) + _BATCH_CLOSE for g in groups]


def unpack(raw: str | bytes) -> list[dict[str, Any]]:
    """The events a server message carries, in order, as JSON objects: a ``batch``'s events, or
    the message itself (for clients that read JSON without the models). Raises ValueError for
    text that is not JSON."""
    message = json.loads(raw)
    if isinstance(message, dict) and message.get("type") == "batch":
        return list(message.get("events") or [])
    return [message]
