"""Domain layer: typed errors with stable codes.

Every refusal the rules can produce is a ``DomainError`` subclass whose class attribute ``code``
is a stable, snake_case string. The protocol reuses these codes verbatim in ``error`` messages, so
a code, once published, never changes meaning. Services never branch on message text, only on
the type or the code.
"""

from __future__ import annotations

from typing import ClassVar


class DomainError(ValueError):
    """Base of every rule refusal. ``code`` is the stable wire code (see shared/protocol)."""

    code: ClassVar[str] = "rule_violation"

    def __init__(self, message: str = "") -> None:
        super().__init__(message or self.__class__.__doc__ or self.code)
        self.message = message or (self.__class__.__doc__ or self.code).strip().splitlines()[0]


# --- words and languages -------------------------------------------------------------------
class UnknownLanguageError(DomainError):
    """The language code is not one of the 13 game languages."""

    code = "unknown_language"


class WrongLengthError(DomainError):
    """The guess does not have the secret word's length in tiles."""

    code = "wrong_length"


class InvalidLettersError(DomainError):
    """The guess uses letters outside the game language's alphabet."""

    code = "invalid_letters"


class NotInWordListError(DomainError):
    """The guess is not in the game language's word list."""

    code = "not_in_word_list"


# --- duels ----------------------------------------------------------------------------------
class NotYourTurnError(DomainError):
    """It is the other duelist's turn."""

    code = "not_your_turn"


class TurnOverError(DomainError):
    """The guess reached the server (API Gateway's receive time) at or after the player's turn
    deadline, or the turn was already skipped: the 30 s had run out (rules page "Turns and the
    clock")."""

    code = "turn_over"


class NotInDuelError(DomainError):
    """The player is not one of this duel's two duelists."""

    code = "not_in_duel"


class DuelOverError(DomainError):
    """The duel is already over."""

    code = "duel_over"


class DuelNotStartedError(DomainError):
    """The duel has not started yet (the round intro is still running)."""

    code = "duel_not_started"


# --- tournaments ----------------------------------------------------------------------------
class NotInTournamentError(DomainError):
    """The player is not in this tournament."""

    code = "not_in_tournament"


class AlreadyEliminatedError(DomainError):
    """The player has already been eliminated from this tournament."""

    code = "eliminated"


class TournamentOverError(DomainError):
    """The tournament has already ended."""

    code = "tournament_over"


# --- lobbies and matchmaking ----------------------------------------------------------------
class LobbyFullError(DomainError):
    """The lobby has no free seat."""

    code = "lobby_full"


class RatingWindowError(DomainError):
    """The player's rating is outside the lobby's 200-point window (ruling 8)."""

    code = "rating_window"


class AlreadyQueuedError(DomainError):
    """The player is already waiting in a lobby."""

    code = "already_queued"


class AlreadyPlayingError(DomainError):
    """The player is already in a running tournament."""

    code = "already_playing"


class NotQueuedError(DomainError):
    """The player is not waiting in a lobby or playing in a tournament."""

    code = "not_queued"


# --- parties --------------------------------------------------------------------------------
class PartyFullError(DomainError):
    """The party already has 8 members."""

    code = "party_full"


class NotPartyLeaderError(DomainError):
    """Only the party leader can do this."""

    code = "not_party_leader"


class NotInPartyError(DomainError):
    """The player is not in a party."""

    code = "not_in_party"


class AlreadyInPartyError(DomainError):
    """The player is already in a party."""

    code = "already_in_party"


class PartyMemberPlayingError(DomainError):
    """A party member is still in a lobby or tournament."""

    code = "party_member_playing"


class PartyMemberOfflineError(DomainError):
    """A party member is not connected: a party starts with everyone online."""

    code = "party_member_offline"


class UnknownInviteError(DomainError):
    """No party has this invite token."""

    code = "unknown_invite"


# --- operations ---------------------------------------------------------------------------
class PausedError(DomainError):
    """The game is paused by its operators: nothing changed; send it again in a few seconds."""

    code = "paused"


# --- players --------------------------------------------------------------------------------
class InvalidNicknameError(DomainError):
    """The nickname breaks the nickname rules (3–20 letters, digits, space, _ - .)."""

    code = "invalid_nickname"


class LookalikeNicknameError(DomainError):
    """The nickname looks like another player's in the same lobby or tournament (ruling 16)."""

    code = "nickname_lookalike"
