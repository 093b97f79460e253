"""Settings read from the environment: strings converted to each field's type, bounds checked,
unknown keys ignored, the value frozen."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import pytest

from shared.runtime.settings import Settings


def test_environment_strings_become_typed_values() -> None:
    settings = Settings.from_env(
        {"TURN_SECONDS": "2.5", "MAX_MESSAGE_BYTES": "1000", "TABLE_NAME": "t", "OTHER": "x"}
    )
    assert settings.turn_seconds == 2.5
    assert settings.turn_ms == 2_500
    assert settings.max_message_bytes == 1000
    assert isinstance(settings.max_message_bytes, int)
    assert settings.table_name == "t"


def test_empty_variables_keep_the_defaults_and_the_region_falls_back() -> None:
    settings = Settings.from_env({"TURN_SECONDS": "", "AWS_DEFAULT_REGION": "eu-west-1"})
    assert settings.turn_seconds == 30.0
    assert settings.aws_region == "eu-west-1"
    assert Settings.from_env({"AWS_REGION": "eu-north-1"}).aws_region == "eu-north-1"


def test_heartbeat_zero_turns_the_check_off() -> None:
    assert Settings(heartbeat_timeout_seconds=0).heartbeat_ms is None
    assert Settings().heartbeat_ms == 60_000


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"turn_seconds": "0"}, "turn_seconds"),
        ({"turn_seconds": "-1"}, "turn_seconds"),
        ({"intro_seconds": "-0.5"}, "intro_seconds"),
        ({"reconnect_seconds": "nan"}, "reconnect_seconds"),
        ({"rate_limit_burst": "1.5"}, "rate_limit_burst"),
        ({"rate_limit_burst": "0"}, "rate_limit_burst"),
        ({"max_message_bytes": "big"}, "max_message_bytes"),
        ({"table_name": 5}, "table_name"),
        ({"watchdog_grace_seconds": "inf-"}, "watchdog_grace_seconds"),
        ({"callback_url": 1.5}, "callback_url"),
    ],
)
def test_a_bad_value_is_refused_naming_its_field(values: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Settings.from_values(values)


def test_values_round_trip_and_unknown_keys_are_ignored() -> None:
    settings = Settings.from_env({"STATE_MACHINE_ARN": "arn:x", "INTRO_SECONDS": "0"})
    values = {name: getattr(settings, name) for name in Settings.names()}
    assert Settings.from_values({**values, "unknown": 1}) == settings
    assert settings.state_machine_arn == "arn:x"
    assert settings.intro_seconds == 0.0


def test_typed_values_are_converted_and_checked_like_strings() -> None:
    settings = Settings(turn_seconds=2, rate_limit_burst=3.0, max_message_bytes="1000")
    assert (settings.turn_seconds, settings.rate_limit_burst) == (2.0, 3)
    assert isinstance(settings.turn_seconds, float)
    assert isinstance(settings.rate_limit_burst, int)
    assert settings.max_message_bytes == 1000
    with pytest.raises(ValueError, match="turn_seconds"):
        Settings(turn_seconds=True)
    with pytest.raises(ValueError, match="state_machine_arn"):
        replace(settings, state_machine_arn=7)
    assert replace(settings, state_machine_arn="arn:y").state_machine_arn == "arn:y"


def test_settings_are_frozen() -> None:
    with pytest.raises(FrozenInstanceError, match="turn_seconds"):
        Settings().turn_seconds = 1.0  # type: ignore[misc]


def test_the_guides_intervals_are_the_settings_defaults() -> None:
    """The client guide states the skip grace and the watchdog's lateness from
    ``shared.protocol.limits``; the deployed defaults must be the same figures."""
    from shared.protocol import limits

    defaults = Settings()
    assert defaults.skip_grace_ms == limits.SKIP_GRACE_MS
    assert round(defaults.watchdog_grace_seconds * 1000) == limits.WATCHDOG_GRACE_MS
