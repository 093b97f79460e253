"""Use case: history — what the history function does with one DynamoDB Streams record of the
table (issue 38; RULINGS.md, design notes, "Progression: history"). Off the play path: it runs
after the commits, on their stream, at least once per record, in any order of repeats.

- a tournament whose stored document carries a closed round, or that is over: the round
  records; once over, each player's history entry, statistics, weekly points and best
  rating, then the summary (written last: it marks the tournament done);
- a player profile: the rating board entry and the histogram (``board_move``), the nickname
  of the weekly entries, and on the profile's removal the statistics.
"""

from __future__ import annotations

from shared.domain.progression import (
    BoardEntry,
    BoardMove,
    ProfileChange,
    board_move,
    closed_rounds,
    pairs_of,
    player_entries,
    summary_of,
)
from shared.domain.tournament import Tournament
from shared.services.errors import ConflictError
from shared.services.ports import HistoryStore


class MissingRoundsError(RuntimeError):
    """A finished tournament's record came before one of its rounds' records: it fails, and
    Lambda retries it after the records before it (RULINGS.md, "Progression: history")."""


BOARD_ATTEMPTS = 5
"""Reads and conditional writes of one board entry before giving up (another record of the
same player moved it in between: only a concurrent retry of the same shard does)."""


def record_tournament(history: HistoryStore, t: Tournament) -> int:
    """Record what the stored tournament ``t`` holds: its closed round and, once over, its last
    round, the players' entries and the summary. Idempotent. Returns the number of items newly
    written (round records, player transactions, summary; 0 for a repeat). Raises
    MissingRoundsError when over while an earlier round is not recorded yet."""
    written = 0
    rounds = closed_rounds(t)
    for r in rounds:
        written += history.put_round(r)
    if not t.over or history.has_summary(t.tournament_id):
        return written
    summary = summary_of(t)
    pairs = {**history.pairs(t.tournament_id), **pairs_of(rounds)}
    missing = sorted(set(range(1, t.round_no + 1)) - set(pairs))
    if missing:
        # an earlier round's record is not in yet (its stream record failed and waits for its
        # retry): the entries' opponents would miss it, so this record waits too
        raise MissingRoundsError(f"rounds {missing} of {t.tournament_id} are not recorded yet")
    for entry in player_entries(summary, pairs):
        written += history.add_entry(entry)
        history.raise_best_rating(entry.player_id, entry.rating_after)
        if entry.points == 0:
            _enter_unmoved(history, entry.player_id)
    written += history.put_summary(summary)
    return written


def _enter_unmoved(history: HistoryStore, player_id: str) -> None:
    """Put a player whose rating did not move (a change of 0) on the rating board: their
    profile's stream record shows no rating change, so ``board_move`` cannot tell them from a
    player who never played. The entry is made from the profile as stored now, at its version,
    only if the player has no entry yet (a later profile record moves it as usual)."""
    if history.board_entry(player_id) is not None:
        return
    profile = history.profile(player_id)
    if profile is not None:
        entry = BoardEntry(player_id, profile.nickname, profile.rating, profile.version)
        history.move(BoardMove(None, entry))


def track_profile(history: HistoryStore, change: ProfileChange) -> BoardMove | None:
    """Keep the rating board entry of the player in line with ``change`` (a repeat or an older
    record changes nothing: the entry's version decides), rename their weekly entries on a
    nickname change, and forget their statistics when the profile is removed. Returns the move
    applied, None if none. Raises ConflictError when the entry kept changing under it."""
    pid = change.player_id
    applied: BoardMove | None = None
    for _ in range(BOARD_ATTEMPTS):
        move = board_move(change.old, change.new, history.board_entry(pid))
        if move is None or history.move(move):
            applied = move
            break
    else:
        raise ConflictError(f"the rating board entry kept changing ({BOARD_ATTEMPTS} attempts)")
    old, new = change.old, change.new
    if new is None:
        history.forget(pid)
    elif old is not None and old.nickname != new.nickname:
        history.rename(pid, new.nickname)
    return applied


def apply(history: HistoryStore, change: Tournament | ProfileChange | None) -> None:
    """One stream record's change (``record_tournament`` / ``track_profile``; None: nothing)."""
    if isinstance(change, Tournament):
        record_tournament(history, change)
    elif isinstance(change, ProfileChange):
        track_profile(history, change)
