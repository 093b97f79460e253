"""Adapters layer: ``InMemoryStore``, the ``Store`` port (``shared.services.ports``) in dicts.

Same contract as ``DynamoStore`` (``tests/contract/test_store_contract.py`` runs every case on
both): versioned saves, an all-or-nothing conditional ``commit`` (``ConflictError``), strongly
consistent reads, records deep-copied in and out. No boto3: the services' unit tests run on it."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from shared.adapters.writes import TokenCreated
from shared.domain.matchmaking import LobbyStatus, WaitingLobby, waiting_lobby
from shared.services.errors import ConflictError
from shared.services.model import (
    Connection,
    InviteCreated,
    InviteDeleted,
    IssuedToken,
    LobbyOpener,
    LobbyRecord,
    OpenerUnchanged,
    PartyDeleted,
    PartyRecord,
    Player,
    RatingApplied,
    TokenIssued,
    TournamentRecord,
)

__all__ = ["InMemoryHistory", "InMemoryStore"]

_Key = tuple[str, str]


def _key_of(record: Any) -> _Key:
    if isinstance(record, Player):
        return ("player", record.player_id)
    if isinstance(record, Connection):
        return ("connection", record.connection_id)
    if isinstance(record, LobbyRecord):
        return ("lobby", record.lobby.lobby_id)
    if isinstance(record, TournamentRecord):
        return ("tournament", record.tournament.tournament_id)
    if isinstance(record, LobbyOpener):
        return ("opener", f"{record.language}#{record.bucket}#{record.lane}")
    if isinstance(record, PartyRecord):
        return ("party", record.party.party_id)
    raise TypeError(f"not a versioned record: {type(record).__name__}")


_VERSIONED = (Player, Connection, LobbyRecord, LobbyOpener, TournamentRecord, PartyRecord)


class InMemoryStore:
    """The ``Store`` port in memory (same contract as ``DynamoStore``; strongly consistent).

    ``items`` maps ``(kind, id)`` to a stored copy: versioned records carry the version they
    were saved at (loaded version + 1), like the ``version`` attribute of a DynamoDB item.
    ``ratings`` holds the exactly-once rating history by ``(player_id, tournament_id)``.
    """

    def __init__(self) -> None:
        self.items: dict[_Key, Any] = {}
        self.tokens: dict[str, str] = {}
        self.token_generations: dict[str, int] = {}
        self.invites: dict[str, str] = {}
        self.ratings: dict[tuple[str, str], RatingApplied] = {}
        self.new_players: dict[tuple[str, int], int] = {}
        """New players counted by (source, window start), ruling 17 (expiry not modelled)."""
        self.commits = 0

    # ------------------------------------------------------------------ reads
    def _load(self, kind: str, ref: str) -> Any:
        found = self.items.get((kind, ref))
        return copy.deepcopy(found) if found is not None else None

    def get_connection(self, connection_id: str) -> Connection | None:
        return self._load("connection", connection_id)  # type: ignore[no-any-return]

    def get_player(self, player_id: str) -> Player | None:
        return self._load("player", player_id)  # type: ignore[no-any-return]

    def get_players(self, player_ids: Iterable[str]) -> dict[str, Player]:
        found = {}
        for pid in set(player_ids):
            p = self.get_player(pid)
            if p is not None:
                found[pid] = p
        return found

    def get_connections(self, connection_ids: Iterable[str]) -> dict[str, Connection]:
        found = {}
        for cid in set(connection_ids):
            c = self.get_connection(cid)
            if c is not None:
                found[cid] = c
        return found

    def player_id_for_token(self, token_hash: str) -> str | None:
        return self.tokens.get(token_hash)

    def get_token(self, token_hash: str) -> IssuedToken | None:
        player_id = self.tokens.get(token_hash)
        if player_id is None:
            return None
        return IssuedToken(player_id, self.token_generations.get(token_hash, 0))

    def get_lobby(self, lobby_id: str) -> LobbyRecord | None:
        return self._load("lobby", lobby_id)  # type: ignore[no-any-return]

    def waiting_lobbies(self, language: str, rating: int) -> list[WaitingLobby]:
        """Every waiting lobby of ``language`` that admits ``rating`` (what gsi_lobbies's
        Queries return), ordered by ``(lo, lobby_id)``: callers must not rely on an order."""
        found = []
        for (kind, _), v in self.items.items():
            if kind != "lobby" or v.lobby.language != language:
                continue
            summary = waiting_lobby(v.lobby)
            if summary is not None and summary.admits(rating):
                found.append(summary)
        return sorted(found, key=lambda w: (w.lo, w.lobby_id))

    def all_waiting(self) -> list[LobbyRecord]:
        """Every stored lobby that is waiting (test inspection; no port method)."""
        return [
            copy.deepcopy(v)
            for (kind, _), v in self.items.items()
            if kind == "lobby" and v.lobby.status is LobbyStatus.WAITING
        ]

    def get_openers(
        self, language: str, lane: int, buckets: Iterable[int]
    ) -> dict[int, LobbyOpener]:
        found = {b: self._load("opener", f"{language}#{b}#{lane}") for b in set(buckets)}
        return {b: o for b, o in found.items() if o is not None}

    def get_tournament(self, tournament_id: str) -> TournamentRecord | None:
        return self._load("tournament", tournament_id)  # type: ignore[no-any-return]

    def get_party(self, party_id: str) -> PartyRecord | None:
        return self._load("party", party_id)  # type: ignore[no-any-return]

    def party_id_for_invite(self, invite: str) -> str | None:
        return self.invites.get(invite)

    def overdue(self, before_ms: int) -> list[tuple[str, str]]:
        """Running tournaments whose next deadline and disconnected players whose reconnect
        deadline is before ``before_ms`` (what gsi_due holds)."""
        out: list[tuple[str, str]] = []
        for (kind, ref), v in self.items.items():
            if kind == "tournament":
                due = v.tournament.next_deadline()
                if due is not None and due < before_ms:
                    out.append(("tournament", ref))
            elif kind == "player":
                rdl = v.reconnect_deadline_ms
                if rdl is not None and not v.connected and rdl < before_ms:
                    out.append(("player", ref))
        return out

    # ------------------------------------------------------------------ writes
    def create_player(
        self, player: Player, token_hash: str, connection: Connection | None = None
    ) -> None:
        extra = [connection] if connection is not None else []
        token = TokenCreated(token_hash, player.player_id, player.token_used_ms)
        self.commit([player, token, *extra])

    def count_new_player(
        self, source: str, window_start_ms: int, limit: int, expires_ms: int
    ) -> bool:
        key = (source, window_start_ms)
        if self.new_players.get(key, 0) >= limit:
            return False
        self.new_players[key] = self.new_players.get(key, 0) + 1
        return True

    def add_strike(self, connection_id: str) -> int | None:
        conn = self.items.get(("connection", connection_id))
        if conn is None or conn.closed_ms is not None:
            return None
        conn.strikes += 1
        return int(conn.strikes)

    def close_connection(self, connection_id: str, closed_ms: int) -> Connection | None:
        old: Connection | None = self.items.get(("connection", connection_id))
        if old is None or old.closed_ms is not None:
            return None
        held: Connection = copy.deepcopy(old)
        old.closed_ms = closed_ms
        old.version += 1
        return held

    def commit(self, writes: Sequence[Any]) -> None:
        """All or nothing: every condition is checked before anything is applied; a failed
        one raises ConflictError. Two writes to one item in a commit are refused like
        DynamoDB refuses them (ValueError, a programming error, never a conflict)."""
        touched: set[tuple[str, str]] = set()

        def touch(key: tuple[str, str]) -> None:
            if key in touched:
                raise ValueError(f"two operations on one item in a transaction: {key}")
            touched.add(key)

        for w in writes:
            if isinstance(w, _VERSIONED):
                key = _key_of(w)
                touch(key)
                current = self.items.get(key)
                if w.version == 0 and current is not None:
                    raise ConflictError(f"conditional write failed: {key} exists")
                if w.version != 0 and (current is None or current.version != w.version):
                    raise ConflictError(f"conditional write failed: {key} version")
            elif isinstance(w, OpenerUnchanged):
                key = ("opener", f"{w.language}#{w.bucket}#{w.lane}")
                touch(key)
                current = self.items.get(key)
                if (current.version if current is not None else 0) != w.version:
                    raise ConflictError(f"condition check failed: {key} version")
            elif isinstance(w, TokenCreated | TokenIssued):
                touch(("token", w.token_hash))
                if w.token_hash in self.tokens:
                    raise ConflictError("conditional write failed: token exists")
            elif isinstance(w, InviteCreated):
                touch(("invite", w.invite))
                if w.invite in self.invites:
                    raise ConflictError("conditional write failed: invite exists")
            elif isinstance(w, InviteDeleted):
                touch(("invite", w.invite))
            elif isinstance(w, PartyDeleted):
                key = ("party", w.party_id)
                touch(key)
                current = self.items.get(key)
                if current is None or current.version != w.version:
                    raise ConflictError(f"conditional delete failed: {key} version")
            elif isinstance(w, RatingApplied):
                touch(("rating", f"{w.player_id}#{w.tournament_id}"))
                if (w.player_id, w.tournament_id) in self.ratings:
                    raise ConflictError("conditional write failed: rating applied")
                if w.update_player:
                    touch(("player", w.player_id))
                    if ("player", w.player_id) not in self.items:
                        raise ConflictError("conditional write failed: no such player")
            else:
                raise TypeError(f"unknown write {type(w).__name__}")
        self.commits += 1
        for w in writes:
            if isinstance(w, _VERSIONED):
                stored = copy.deepcopy(w)
                stored.version += 1
                self.items[_key_of(w)] = stored
            elif isinstance(w, TokenCreated):
                self.tokens[w.token_hash] = w.player_id
            elif isinstance(w, TokenIssued):
                self.tokens[w.token_hash] = w.player_id
                self.token_generations[w.token_hash] = w.generation
            elif isinstance(w, InviteCreated):
                self.invites[w.invite] = w.party_id
            elif isinstance(w, InviteDeleted):
                self.invites.pop(w.invite, None)
            elif isinstance(w, PartyDeleted):
                del self.items[("party", w.party_id)]
            elif isinstance(w, OpenerUnchanged):
                pass  # a condition only
            elif isinstance(w, RatingApplied):
                self.ratings[(w.player_id, w.tournament_id)] = w
                if w.update_player:
                    p = self.items[("player", w.player_id)]
                    p.rating += w.change
                    p.version += 1
        for w in writes:
            if isinstance(w, _VERSIONED):
                w.version += 1


class InMemoryHistory:
    """The ``HistoryStore`` port (``shared.services.ports``) in dicts: the same conditions as
    ``shared.adapters.dynamo.history.DynamoHistory`` (``tests/contract/test_history_contract.py``
    runs every case on both). ``profiles``: the player profiles ``profile`` answers from (tests
    fill it)."""

    def __init__(self) -> None:
        from shared.domain.progression import BoardEntry, Profile, RoundRecord, Summary

        self.rounds: dict[tuple[str, int], RoundRecord] = {}
        self.summaries: dict[str, Summary] = {}
        self.entries: dict[tuple[str, str], Any] = {}
        self.stats: dict[str, dict[str, Any]] = {}
        self.weekly: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.board: dict[str, BoardEntry] = {}
        self.histogram: dict[int, int] = {}
        """Rating -> entries at it (the DynamoDB adapter shards it; the counts are the same)."""
        self.profiles: dict[str, Profile] = {}

    def put_round(self, record: Any) -> bool:
        key = (record.tournament_id, record.round_no)
        if key in self.rounds:
            return False
        self.rounds[key] = record
        return True

    def pairs(self, tournament_id: str) -> dict[int, list[tuple[str, str]]]:
        return {
            n: [d.players for d in r.duels]
            for (tid, n), r in sorted(self.rounds.items())
            if tid == tournament_id
        }

    def has_summary(self, tournament_id: str) -> bool:
        return tournament_id in self.summaries

    def put_summary(self, summary: Any) -> bool:
        if summary.tournament_id in self.summaries:
            return False
        self.summaries[summary.tournament_id] = summary
        return True

    def add_entry(self, entry: Any) -> bool:
        key = (entry.player_id, entry.tournament_id)
        if key in self.entries:
            return False
        self.entries[key] = entry
        stats = self.stats.setdefault(entry.player_id, {})
        lang = entry.language
        for name, add in (
            ("tournaments", 1),
            ("wins", entry.win),
            ("podiums", entry.podium),
            ("place_sum", entry.place),
            (f"lang_{lang}_n", 1),
            (f"lang_{lang}_places", entry.place),
        ):
            stats[name] = stats.get(name, 0) + add
        stats[f"week_{lang}"] = entry.week
        weekly = self.weekly.setdefault((lang, entry.week, entry.player_id), {"points": 0})
        weekly["points"] += entry.points
        weekly["nickname"] = entry.nickname
        return True

    def raise_best_rating(self, player_id: str, rating: int) -> bool:
        stats = self.stats.setdefault(player_id, {})
        if "best_rating" in stats and stats["best_rating"] >= rating:
            return False
        stats["best_rating"] = rating
        return True

    def profile(self, player_id: str) -> Any:
        return self.profiles.get(player_id)

    def board_entry(self, player_id: str) -> Any:
        return self.board.get(player_id)

    def move(self, move: Any) -> bool:
        pid = move.after.player_id
        current = self.board.get(pid)
        if (current is None) != (move.before is None) or (
            current is not None and current.version != move.before.version
        ):
            return False
        if move.removed is not None:
            self.histogram[move.removed] = self.histogram.get(move.removed, 0) - 1
        if move.added is not None:
            self.histogram[move.added] = self.histogram.get(move.added, 0) + 1
        self.board[pid] = move.after
        return True

    def rename(self, player_id: str, nickname: str) -> int:
        renamed = 0
        for name, week in sorted(self.stats.get(player_id, {}).items()):
            if name.startswith("week_"):
                weekly = self.weekly.get((name.removeprefix("week_"), week, player_id))
                if weekly is not None:
                    weekly["nickname"] = nickname
                    renamed += 1
        return renamed

    def forget(self, player_id: str) -> None:
        self.stats.pop(player_id, None)
