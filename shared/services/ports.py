"""Service layer: the ports (typing.Protocol) that adapters implement.

Adapters: ``shared/adapters`` (DynamoDB, API Gateway Management API, Step Functions);
fakes: ``tests/fakes.py``; the local runtime: ``infra/emulator``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from shared.domain.languages import Language
    from shared.domain.matchmaking import WaitingLobby
    from shared.domain.progression import (
        BoardEntry,
        BoardMove,
        PlayerEntry,
        Profile,
        RoundRecord,
        Summary,
    )
    from shared.domain.tournament import SecretSource
    from shared.domain.words import AllowedWords
    from shared.services.model import (
        Connection,
        IssuedToken,
        LobbyOpener,
        LobbyRecord,
        PartyRecord,
        Player,
        TournamentRecord,
        Write,
    )


class TimerKind(StrEnum):
    """What a deadline drives (RULINGS.md, Clocks).

    A round needs one timer, its intro's: it starts the round's clock loop, which applies the
    intro and then every turn deadline (a skip) of the round, each when it is due.
    """

    INTRO = "intro"  # a round's intro (6 s), then its turn deadlines: the round's clock loop
    RECONNECT = "reconnect"  # a disconnected player's 60 s: treated as leaving when it applies


@dataclass(frozen=True, slots=True)
class Timer:
    """One deadline: apply ``kind`` to ``ref`` at ``due_ms`` if ``ref`` still has ``seq``.

    ``ref`` names the state (a duel id, a tournament id, a player id); ``seq`` is that state's
    sequence number when the timer was set (turn number, round number, disconnect count), so
    a late, duplicate or stale firing changes nothing. ``due_ms`` is absolute UTC milliseconds.
    This is also the exact input of the clock function: ``{"kind", "ref", "seq", "due_ms"}``.
    """

    kind: TimerKind
    ref: str
    seq: int
    due_ms: int

    @property
    def name(self) -> str:
        """Deterministic execution name (Step Functions: 1-80 chars of [A-Za-z0-9-_])."""
        safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in self.ref)
        return f"{self.kind.value}-{safe}-{self.seq}"[:80]

    def to_event(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "ref": self.ref, "seq": self.seq, "due_ms": self.due_ms}

    @classmethod
    def from_event(cls, event: dict[str, Any]) -> Timer:
        return cls(
            TimerKind(event["kind"]), str(event["ref"]), int(event["seq"]), int(event["due_ms"])
        )


class Clock(Protocol):
    """Time and deadlines. ``now_ms`` is absolute UTC milliseconds."""

    def now_ms(self) -> int: ...

    def schedule(self, timer: Timer) -> None:
        """Start the clock for ``timer``: the deadline state machine (on AWS; the local
        interpreter of the same definition in the local runtime and the tests) waits until
        ``timer.due_ms`` (rounded up to the whole second: Step Functions' Wait truncates
        milliseconds), invokes the clock function, and for an INTRO timer keeps looping over
        the round's deadlines. A duplicate start is harmless (the clock function applies only
        what is due); a failed start is recovered by the watchdog.
        """
        ...


class Notifier(Protocol):
    """Pushes outbound messages to WebSocket connections (API Gateway Management API)."""

    def send(self, messages: list[tuple[str, str]]) -> list[str]:
        """Post each ``(connection_id, json_text)``; one failed recipient never stops the others.

        Returns the connection ids that are gone (HTTP 410), for the disconnect flow.
        """
        ...

    def close(self, connection_id: str) -> None:
        """Close a connection (e.g. replaced by a newer session); gone ones are ignored."""
        ...

    def last_active_ms(self, connection_id: str) -> int | None:
        """When the connection was last active (API Gateway's ``LastActiveAt``, UTC ms: the
        client's last message, ``ping`` included; ruling 14), or None when it is gone (410).
        One Management API GetConnection: read only when silence matters."""
        ...


class GameSwitch(Protocol):
    """The operators' kill switch (``shared.adapters.dynamo.switch.DynamoGameSwitch``): whether
    the game is paused. Tournaments carry their own pause (``Tournament.paused_ms``), so a guess
    never reads this; the routes that start tournaments and the watchdog do."""

    def paused_since_ms(self) -> int | None:
        """When the game was paused (UTC ms), or None while it runs. One read."""
        ...


class Store(Protocol):
    """Persistence (DynamoDB: ``shared.adapters.dynamo.store.DynamoStore``; in memory:
    ``shared.adapters.memory.InMemoryStore``). Reads are strongly consistent unless noted;
    ``commit`` applies versioned saves atomically and raises ``ConflictError`` when any
    condition fails."""

    def get_connection(self, connection_id: str) -> Connection | None: ...
    def get_connections(self, connection_ids: Iterable[str]) -> dict[str, Connection]: ...
    def close_connection(self, connection_id: str, closed_ms: int) -> Connection | None:
        """Keep the connection as a tombstone closed at ``closed_ms`` (UTC ms); what it held
        while open, or None when unknown or already closed (nothing written). ConflictError
        when it changed since it was read (run it in a ``run`` step: it reads again)."""
        ...

    def add_strike(self, connection_id: str) -> int | None:
        """Add one flood strike to the connection's item (one conditional UpdateItem, only for
        a connection that keeps flooding); the strikes it now has, None when it is gone.
        Raises ``BusyError`` / ``ContentionError`` as ``commit``."""
        ...

    def get_player(self, player_id: str) -> Player | None: ...
    def get_players(self, player_ids: Iterable[str]) -> dict[str, Player]: ...
    def player_id_for_token(self, token_hash: str) -> str | None: ...
    def get_token(self, token_hash: str) -> IssuedToken | None:
        """The player and generation of a token's lookup item (a token from before rotation:
        generation 0), or None for an unknown (or expired) one."""
        ...

    def create_player(
        self, player: Player, token_hash: str, connection: Connection | None = None
    ) -> None:
        """Create ``player`` and its token item (both must be new) and, when given, save
        ``connection`` (bound to the player; conditional on the version it was read with), all
        in one transaction: a refusal saves none of them. Raises ``ConflictError``,
        ``ContentionError`` or ``BusyError`` as ``commit``."""

    def count_new_player(
        self, source: str, window_start_ms: int, limit: int, expires_ms: int
    ) -> bool:
        """Count one new player from ``source`` (a ``shared.domain.fair_play.source_key``) in
        the window that started at ``window_start_ms``, unless ``limit`` are counted there
        already: True when counted, False at the limit (nothing written). One conditional
        write of a counter item per (source, window), which expires (TTL) at ``expires_ms``
        (ruling 17). Raises ``BusyError`` / ``ContentionError`` as ``commit``."""
        ...

    def get_lobby(self, lobby_id: str) -> LobbyRecord | None: ...
    def waiting_lobbies(self, language: str, rating: int) -> list[WaitingLobby]:
        """Every waiting lobby of ``language`` that admits a solo player rated ``rating``
        (``WaitingLobby.admits``, ruling 8), however many lobbies wait, in no particular
        order. Eventually consistent (an index): an entry may lag its lobby by a moment."""
        ...

    def get_openers(
        self, language: str, lane: int, buckets: Iterable[int]
    ) -> dict[int, LobbyOpener]:
        """The openers of ``language`` and ``lane`` for ``buckets`` that exist, by bucket."""
        ...

    def get_tournament(self, tournament_id: str) -> TournamentRecord | None: ...
    def get_party(self, party_id: str) -> PartyRecord | None: ...
    def party_id_for_invite(self, invite: str) -> str | None: ...
    def overdue(self, before_ms: int) -> list[tuple[str, str]]: ...
    def commit(self, writes: Sequence[Write]) -> None: ...


class HistoryStore(Protocol):
    """The progression items the history function keeps (DynamoDB:
    ``shared.adapters.dynamo.history.DynamoHistory``; RULINGS.md, "Progression: history").
    Every write is idempotent: a repeat finds its condition failed and changes nothing."""

    def put_round(self, record: RoundRecord) -> bool:
        """Store a closed round once; False when it was stored before."""
        ...

    def pairs(self, tournament_id: str) -> dict[int, list[tuple[str, str]]]:
        """The duels' players of each stored round (round number -> pairs), read consistently."""
        ...

    def has_summary(self, tournament_id: str) -> bool:
        """The finished tournament's summary is stored (its players' entries are all done)."""
        ...

    def put_summary(self, summary: Summary) -> bool:
        """Store the summary once; False when it was stored before."""
        ...

    def add_entry(self, entry: PlayerEntry) -> bool:
        """In one transaction: the player's history entry, their statistics and weekly board
        points; False (nothing changed) when the entry was stored before."""
        ...

    def raise_best_rating(self, player_id: str, rating: int) -> bool:
        """Set the best rating to ``rating`` if higher (or unset); False when not."""
        ...

    def profile(self, player_id: str) -> Profile | None:
        """The player's nickname, rating and version as stored (consistent), None if gone."""
        ...

    def board_entry(self, player_id: str) -> BoardEntry | None:
        """The player's rating board entry or tombstone (consistent read), None if neither."""
        ...

    def move(self, move: BoardMove) -> bool:
        """Apply ``move`` (entry and histogram in one transaction) if the entry is still
        ``move.before``; False (nothing changed) if it changed since it was read."""
        ...

    def rename(self, player_id: str, nickname: str) -> int:
        """Set the nickname of the player's weekly board entries (the weeks their statistics
        list); returns how many were updated."""
        ...

    def forget(self, player_id: str) -> None:
        """Delete the player's statistics (the player item expired)."""
        ...


class Lexicon(Protocol):
    """The word lists of the game languages (adapter: ``shared.adapters.lexicon``)."""

    def language(self, code: str) -> Language:
        """Raises UnknownLanguageError."""
        ...

    def secrets(self, code: str) -> SecretSource: ...

    def allowed_words(self, code: str) -> AllowedWords:
        """The language and its allowed guesses by length, as one value the domain judges a
        guess against (``Tournament.play``). Raises UnknownLanguageError."""
        ...

    def allowed(self, code: str, length: int) -> frozenset[str]: ...

    def display(self, code: str, word: str) -> str | None: ...


class Limiter(Protocol):
    """A per-connection message rate limit (``shared.runtime.rate_limit.RateLimiter``),
    clocked by arrival time (UTC ms)."""

    close_after_strikes: int
    """Strikes on a connection (``Store.add_strike``) at which it is closed."""

    def allow(self, connection_id: str, received_ms: int) -> bool: ...

    def miss(self, connection_id: str, received_ms: int) -> None:
        """Charge a message refused ``no_session`` (it soon meets refusals)."""
        ...

    def tripped(self, connection_id: str) -> bool:
        """True once per strike due: record it with ``Store.add_strike``."""
        ...

    def retry_after_ms(self, connection_id: str, now_ms: int) -> int:
        """Milliseconds until the connection may send again (``rate_limited``'s
        ``retry_after_ms``)."""
        ...

    def forget(self, connection_id: str) -> None: ...


@dataclass(frozen=True, slots=True)
class BoardLine:
    """One leaderboard entry as stored: the player, the name shown and the score (rating, or
    rating points gained in a week)."""

    player_id: str
    nickname: str
    score: int


class Progression(Protocol):
    """The read side of issue 38 (``shared.adapters.dynamo.boards.DynamoProgression``; in
    memory: ``shared.adapters.memory_progression.InMemoryProgression``): statistics,
    per-player history, the leaderboards and tournament records, as the history function
    writes them. Every read
    is eventually consistent and read-only; the read units each costs are stated on the
    adapter and in ``shared/domain/RULINGS.md``, "Progression: reads"."""

    def stats(self, player_id: str) -> dict[str, Any] | None:
        """The player's ``STATS`` item, or None before the first finished tournament."""
        ...

    def history(
        self, player_id: str, limit: int, before: str | None = None
    ) -> tuple[list[dict[str, Any]], bool]:
        """Up to ``limit`` of the player's ``HIST#`` items, newest first, each with its
        ``sk``; only those whose sort key is below ``before`` when given. Second: True when
        older ones remain."""
        ...

    def rating_top(self, limit: int) -> list[BoardLine]:
        """The rating board's best ``limit`` entries, best first, ties by player id."""
        ...

    def weekly_top(self, language: str, week: str, limit: int) -> list[BoardLine]:
        """One language's week board's best ``limit`` entries (``week``: its Monday,
        YYYY-MM-DD), best first, ties by player id."""
        ...

    def rating_entry(self, player_id: str) -> BoardLine | None:
        """The player's rating board entry (None before the first rated tournament)."""
        ...

    def weekly_entry(self, language: str, week: str, player_id: str) -> BoardLine | None:
        """The player's entry on one language's week board, or None."""
        ...

    def rating_ranks(self, scores: Iterable[int]) -> dict[int, int]:
        """Each score's rank on the rating board: 1 + the number of entries with a higher
        score (the histogram)."""
        ...

    def rating_around(self, line: BoardLine, n: int) -> tuple[list[BoardLine], list[BoardLine]]:
        """The up to ``n`` entries just above ``line`` and the up to ``n`` just below it on
        the rating board (order: score descending, then player id), each best first."""
        ...

    def tournament_record(
        self, tournament_id: str
    ) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """A finished tournament's ``RECORD`` item and its ``ROUND#`` items in round order,
        or None when it has no summary (running, unknown or expired)."""
        ...
