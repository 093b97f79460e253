"""Runtime layer: settings, read lazily from the environment (never at import time).

Every field name is also the environment variable's name (upper case). CDK builds each
function's environment from these field names, and the local runtime overrides them.

Units: ``*_seconds`` fields are seconds (float, so tests can run fast clocks);
everything on the wire and in storage is integer milliseconds.

A standard-library dataclass, not a pydantic model: it is the first thing every cold start
builds, and a model class cost about 30 ms of schema building there for a dozen scalar fields.
Values are checked as pydantic's lax mode did (strings from the environment converted to the
field's type, no booleans for numbers, bounds from each field's ``gt``/``ge``); a bad value
raises ``ValueError`` naming the field.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Self


def _setting(
    default: Any, description: str = "", *, gt: float | None = None, ge: float | None = None
) -> Any:
    """A settings field: its default, what it is for, and its bounds (exclusive ``gt``,
    inclusive ``ge``)."""
    return dataclasses.field(
        default=default, metadata={"description": description, "gt": gt, "ge": ge}
    )


@dataclasses.dataclass(frozen=True)
class Settings:
    """Backend settings; see the module docstring for how they are read."""

    model_fields: ClassVar[Mapping[str, dataclasses.Field[Any]]]
    """Field name -> its ``dataclasses.Field`` (``metadata["description"]``), in order."""

    table_name: str = _setting("wordle-tournament", "DynamoDB table (schema module)")
    dynamodb_endpoint: str | None = _setting(None, "Override, e.g. a local moto server")
    callback_url: str | None = _setting(
        None, "API Gateway Management API endpoint (https://{api}.execute-api.../{stage})"
    )
    state_machine_arn: str | None = _setting(None, "Deadline state machine (clock)")
    aws_region: str = _setting("us-east-1")
    turn_seconds: float = _setting(30.0, "Turn clock, rules page: 30 s", gt=0)
    intro_seconds: float = _setting(6.0, "Round intro, rules page: 6 s", ge=0)
    reconnect_seconds: float = _setting(60.0, "Reconnect deadline, ruling 9: 60 s", gt=0)
    skip_grace_seconds: float = _setting(
        1.0,
        "How long after a turn deadline the skip is applied, so that a guess API Gateway "
        "received before the deadline lands first (DESIGN.md §3 Clocks)",
        ge=0,
    )
    heartbeat_timeout_seconds: float = _setting(
        60.0,
        "Ruling 14: a player in a lobby or tournament not heard from (ping) for this long is "
        "treated as disconnected and their connection closed; 0 turns the check off (only "
        "for in-process tests whose scripted players stand for pinging clients)",
        ge=0,
    )
    watchdog_grace_seconds: float = _setting(
        5.0, "How late a deadline may be before the watchdog applies it", ge=0
    )
    max_message_bytes: int = _setting(32 * 1024, "Largest inbound frame (API GW: 32 KB)")
    rate_limit_per_second: float = _setting(5.0, "Per-connection action rate", gt=0)
    rate_limit_burst: int = _setting(20, "Per-connection burst", gt=0)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, _checked(f, getattr(self, f.name)))

    @property
    def turn_ms(self) -> int:
        return round(self.turn_seconds * 1000)

    @property
    def intro_ms(self) -> int:
        return round(self.intro_seconds * 1000)

    @property
    def reconnect_ms(self) -> int:
        return round(self.reconnect_seconds * 1000)

    @property
    def heartbeat_ms(self) -> int | None:
        return round(self.heartbeat_timeout_seconds * 1000) or None

    @property
    def skip_grace_ms(self) -> int:
        return round(self.skip_grace_seconds * 1000)

    @classmethod
    def model_validate(cls, values: Mapping[str, Any]) -> Self:
        """Settings from ``values`` (field name -> value; strings converted); unknown keys are
        ignored. Raises ``ValueError`` for a value of the wrong type or out of bounds."""
        return cls(**{k: v for k, v in values.items() if k in cls.model_fields})

    def model_dump(self) -> dict[str, Any]:
        """Field name -> value."""
        return {name: getattr(self, name) for name in self.model_fields}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """Build settings from ``environ`` (default ``os.environ``); unknown keys are ignored."""
        env = os.environ if environ is None else environ
        values = {}
        for name in cls.model_fields:
            raw = env.get(name.upper())
            if raw is not None and raw != "":
                values[name] = raw
        if "aws_region" not in values and env.get("AWS_DEFAULT_REGION"):
            values["aws_region"] = env["AWS_DEFAULT_REGION"]
        return cls.model_validate(values)


Settings.model_fields = MappingProxyType({f.name: f for f in dataclasses.fields(Settings)})


def _checked(f: dataclasses.Field[Any], value: Any) -> Any:
    """``value`` as field ``f``'s type (``str``, ``str | None``, ``float``, ``int``; a string is
    converted to a number), within its bounds; else ``ValueError``."""
    kind = str(f.type)
    if value is None and kind.endswith("| None"):
        return None
    if kind.startswith("str"):
        if not isinstance(value, str):
            raise ValueError(f"{f.name}: expected a string, got {value!r}")
        return value
    number = _number(f.name, value, integer=kind == "int")
    gt, ge = f.metadata["gt"], f.metadata["ge"]
    if (gt is not None and not number > gt) or (ge is not None and not number >= ge):
        bound = f"greater than {gt}" if gt is not None else f"at least {ge}"
        raise ValueError(f"{f.name}: must be {bound}, got {value!r}")
    return number


def _number(name: str, value: Any, *, integer: bool) -> float | int:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    try:
        number = float(value.strip()) if isinstance(value, str) else float(value)
    except ValueError:
        raise ValueError(f"{name}: expected a number, got {value!r}") from None
    if math.isnan(number):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    if not integer:
        return number
    if not number.is_integer():
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    return int(value.strip()) if isinstance(value, str) and value.strip().isdigit() else int(number)
