"""Service layer: errors that are not game rules (sessions, lookups, contention).

Like domain errors, each has a stable ``code`` reused by the protocol's ``ErrorCode``.
"""

from __future__ import annotations

from shared.domain.errors import DomainError


class ServiceError(DomainError):
    """A refusal decided by a service rather than by the rules."""

    code = "internal_error"


class NoSessionError(ServiceError):
    """Send a ``session`` message first."""

    code = "no_session"


class InvalidTokenError(ServiceError):
    """The session token is unknown."""

    code = "invalid_token"


class NotFoundError(ServiceError):
    """No such lobby, tournament, duel or party."""

    code = "not_found"


class TryAgainError(ServiceError):
    """The server was busy with a concurrent change; please try again."""

    code = "try_again"


class RateLimitedError(ServiceError):
    """Too many messages; slow down."""

    code = "rate_limited"


class ConflictError(Exception):
    """A conditional write failed: someone changed the item since it was read.

    Raised by ``Store.commit``; services reload and retry the whole use case (never shown to
    players as such: after the retries it becomes ``TryAgainError``).
    """
