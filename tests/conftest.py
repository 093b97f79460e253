"""Test configuration: the local runtime's harness fixtures (``backend``) for every test."""

pytest_plugins = ["infra.emulator.testing"]
