"""Runtime layer: settings, read lazily from the environment (never at import time).

Every field name is also its environment variable's name (upper case): CDK builds each
function's environment from them, the local runtime overrides them. ``*_seconds`` fields are
seconds (float); the wire and storage use integer milliseconds. A stdlib dataclass checked in
``__post_init__`` (``shared/domain/RULINGS.md``, design notes, "Cold path").
"""

import math
import os
import types
from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields
from typing import Any, Self, Union, get_args, get_origin


def _setting(
    default: Any, description: str = "", *, gt: float | None = None, ge: float | None = None
) -> Any:
    # A field with its description and bounds (``gt``: greater than, ``ge``: at least).
    return field(default=default, metadata={"description": description, "gt": gt, "ge": ge})


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Backend settings; see the module docstring for how they are read.

    Built from typed values (``Settings(turn_seconds=2.0)``) or from strings (``from_env``,
    ``from_values``); either way each value is converted to its field's type and its bounds are
    checked. Raises ``ValueError`` naming the field: a value of the wrong type, a string that
    does not parse, a number out of bounds (NaN included). Frozen (``FrozenInstanceError``)."""

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
        2.0,
        "How long after a turn deadline the skip is applied, so that a guess API Gateway "
        "received before the deadline lands first (RULINGS.md, Clocks)",
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
    new_players_per_source: int = _setting(
        10,
        "Ruling 17: new anonymous players one source address (an IPv6 /64) may create per "
        "window; more are refused too_many_new_players. 0: no limit (the local runtime and the "
        "test harness, whose clients all share the loopback address; never deployed)",
        ge=0,
    )
    new_players_window_seconds: float = _setting(
        3600.0, "The window of new_players_per_source (fixed, aligned to the epoch)", gt=0
    )
    token_grace_seconds: float = _setting(
        120.0,
        "Ruling 11: how long the token a resume rotated out still resumes, so that a lost "
        "reply never locks the player out",
        ge=0,
    )
    fresh_player_seconds: float = _setting(
        600.0,
        "Ruling 17: a player created at most this long before a tournament's start holds a "
        "fresh seat",
        ge=0,
    )
    flag_fresh_seats: int = _setting(
        5,
        "Ruling 17: a tournament is flagged when at least this many fresh seats left or were "
        "eliminated without playing a turn of their own; 0: never",
        ge=0,
    )

    def __post_init__(self) -> None:
        for spec in fields(self):
            object.__setattr__(self, spec.name, _checked(spec, getattr(self, spec.name)))

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
    def names(cls) -> tuple[str, ...]:
        """Every field's name, in declaration order (the variables are these, upper-cased)."""
        return tuple(spec.name for spec in fields(cls))

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> Self:
        """Settings from ``values`` (field name -> value or string); unknown keys are ignored,
        missing ones keep their defaults. Raises ``ValueError`` as the class does."""
        known = set(cls.names())
        return cls(**{name: value for name, value in values.items() if name in known})  # type: ignore[arg-type]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """Build settings from ``environ`` (default ``os.environ``): each field's upper-cased
        name, empty values ignored; the region falls back to ``AWS_DEFAULT_REGION``."""
        env = os.environ if environ is None else environ
        values = {}
        for name in cls.names():
            raw = env.get(name.upper())
            if raw is not None and raw != "":
                values[name] = raw
        if "aws_region" not in values and env.get("AWS_DEFAULT_REGION"):
            values["aws_region"] = env["AWS_DEFAULT_REGION"]
        return cls.from_values(values)


def _checked(spec: "Field[Any]", value: object) -> object:
    # ``value`` converted to the field's type (a string parsed), bounds checked.
    kind, optional = spec.type, False
    if get_origin(kind) in (Union, types.UnionType):
        kind, optional = next(a for a in get_args(kind) if a is not type(None)), True
    if value is None and optional:
        return None
    name = spec.name
    if kind is str:
        if not isinstance(value, str):
            raise ValueError(f"setting {name}: expected a string, got {value!r}")
        return value
    number = _number(name, kind, value)
    gt, ge = spec.metadata.get("gt"), spec.metadata.get("ge")
    if math.isnan(number):
        raise ValueError(f"setting {name}: expected a number, got {value!r}")
    if gt is not None and not number > gt:
        raise ValueError(f"setting {name}: must be greater than {gt}, got {value!r}")
    if ge is not None and not number >= ge:
        raise ValueError(f"setting {name}: must be at least {ge}, got {value!r}")
    return number


def _number(name: str, kind: object, value: object) -> float:
    # An int or float setting from a number or its string form (an int setting takes no fraction).
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"setting {name}: expected a number, got {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"setting {name}: expected a number, got {value!r}") from None
    if kind is int:
        if not number.is_integer():
            raise ValueError(f"setting {name}: expected a whole number, got {value!r}")
        return int(number)
    return number
