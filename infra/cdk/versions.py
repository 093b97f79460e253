"""Infrastructure: how a deployed version names the commit it was built from, and the alias
every caller invokes — shared by the CDK constructs and the rollback command
(``infra.operations.rollback``), which must not import CDK."""

from __future__ import annotations

LIVE_ALIAS = "live"
"""The alias every caller invokes (the functions' and the deadline machine's); rollback moves
it (``infra/RUNBOOK.md``)."""

COMMIT_PREFIX = "commit "
"""A published version's description: this, then the commit it was built from."""


def version_description(commit: str) -> str:
    """The description of a function (or state machine) version built from ``commit``."""
    return f"{COMMIT_PREFIX}{commit}"


def commit_of(description: str | None) -> str | None:
    """The commit a version's description names (``version_description``), or None."""
    if not description or not description.startswith(COMMIT_PREFIX):
        return None
    return description[len(COMMIT_PREFIX) :].split()[0] or None
