"""Runtime layer: settings, read lazily from the environment (never at import time).

Every field name is also the environment variable's name (upper case). CDK builds each
function's environment from these field names, and the local runtime overrides them.

Units: ``*_seconds`` fields are seconds (float, so tests can run fast clocks);
everything on the wire and in storage is integer milliseconds.
"""

import os
from typing import Self

from pydantic import BaseModel, ConfigDict, Field


class Settings(BaseModel):
    """Backend settings; see the module docstring for how they are read."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    table_name: str = Field("wordle-tournament", description="DynamoDB table (schema module)")
    dynamodb_endpoint: str | None = Field(None, description="Override, e.g. a local moto server")
    callback_url: str | None = Field(
        None,
        description="API Gateway Management API endpoint (https://{api}.execute-api.../{stage})",
    )
    state_machine_arn: str | None = Field(None, description="Deadline state machine (clock)")
    aws_region: str = Field("us-east-1")
    turn_seconds: float = Field(30.0, gt=0, description="Turn clock, rules page: 30 s")
    intro_seconds: float = Field(6.0, ge=0, description="Round intro, rules page: 6 s")
    reconnect_seconds: float = Field(60.0, gt=0, description="Reconnect deadline, ruling 9: 60 s")
    skip_grace_seconds: float = Field(
        1.0,
        ge=0,
        description=(
            "How long after a turn deadline the skip is applied, so that a guess API Gateway "
            "received before the deadline lands first (DESIGN.md §3 Clocks)"
        ),
    )
    heartbeat_timeout_seconds: float = Field(
        60.0,
        ge=0,
        description=(
            "Ruling 14: a player in a lobby or tournament not heard from (ping) for this long is "
            "treated as disconnected and their connection closed; 0 turns the check off (only "
            "for in-process tests whose scripted players stand for pinging clients)"
        ),
    )
    watchdog_grace_seconds: float = Field(
        5.0, ge=0, description="How late a deadline may be before the watchdog applies it"
    )
    max_message_bytes: int = Field(32 * 1024, description="Largest inbound frame (API GW: 32 KB)")
    rate_limit_per_second: float = Field(5.0, gt=0, description="Per-connection action rate")
    rate_limit_burst: int = Field(20, gt=0, description="Per-connection burst")

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
    def from_env(cls, environ: dict[str, str] | None = None) -> Self:
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
