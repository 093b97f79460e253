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


class TooManyNewPlayersError(ServiceError):
    """Too many new players came from this source lately (ruling 17): resume a player with
    its token, or try again later."""

    code = "too_many_new_players"


class SessionBoundError(ServiceError):
    """This connection already belongs to a player (ruling 11: a connection belongs to one
    player for its whole life); open a new connection for another player."""

    code = "session_bound"


class UnsupportedProtocolError(ServiceError):
    """The client declared a protocol version of another major than the server's
    (``shared.protocol.version``); nothing happened."""

    code = "unsupported_protocol"


class NotFoundError(ServiceError):
    """No such lobby, tournament, duel or party."""

    code = "not_found"


class InvalidCursorError(ServiceError):
    """A ``history`` cursor that no page of that player's history gave (forged, another
    player's, or garbage); nothing happened."""

    code = "invalid_cursor"


class InvalidValueError(ServiceError):
    """A field well-formed on its own but not valid with the others (a leaderboard's
    ``language`` missing or out of place); ``message`` names it."""

    code = "invalid_value"


class TryAgainError(ServiceError):
    """The server was busy with a concurrent change; please try again."""

    code = "try_again"


class BusyError(TryAgainError):
    """The table turned a request away for a passing reason, and nothing was written (or the
    store verified that nothing was): throttled (``ProvisionedThroughputExceededException``,
    ``ThrottlingException``, ``RequestLimitExceeded``) or unavailable (``InternalServerError``,
    ``ServiceUnavailable``, a timeout) after botocore's own retries, or a transaction cancelled
    for throttling. AWS: "Error handling with DynamoDB", "OK to retry? Yes"
    (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html).

    Raised by the ``Store``. ``shared.services.change.run`` retries the whole use case on it
    (within a time budget); raised outside ``run`` (a session lookup) it is a ``TryAgainError``:
    the player gets ``try_again``.
    """


class ContentionError(BusyError):
    """Another transaction was writing the item, so DynamoDB refused the request and wrote
    nothing: ``TransactionConflictException`` on a PutItem / UpdateItem / DeleteItem, or a
    transaction cancelled for ``TransactionConflict`` (AWS: "Transaction conflict handling in
    DynamoDB",
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html).

    A lost race like ``ConflictError``: ``shared.services.change.run`` re-reads and retries it
    like one (up to ``Deps.max_attempts``, no time budget); outside ``run`` it is ``try_again``.
    """


class ConflictError(Exception):
    """A conditional write failed: someone changed the item since it was read
    (``ConditionalCheckFailedException``, or a transaction cancelled for
    ``ConditionalCheckFailed``).

    Raised by ``Store.commit``; services reload and retry the whole use case (never shown to
    players as such: after the retries it becomes ``TryAgainError``). A caller outside
    ``change.run`` may take it to mean "the item exists"
    (``shared.services.connections.connect``): DynamoDB's other refusals are never a
    ``ConflictError``.
    """
