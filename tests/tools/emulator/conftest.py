"""Emulator tests' fixtures: ``clean_env``, the runtime's environment without what a developer's
shell may have set (settings, and stale AWS tokens the runtime's own credentials replace)."""

from __future__ import annotations

import pytest

CLEARED_ENV = (
    "CALLBACK_URL",
    "DYNAMODB_ENDPOINT",
    "TURN_SECONDS",
    "INTRO_SECONDS",
    "RECONNECT_SECONDS",
    "TABLE_NAME",
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CLEARED_ENV:
        monkeypatch.delenv(name, raising=False)
