"""Service layer: the read-only progression actions (issue 38) — ``profile``, ``leaderboard``,
``history`` and ``replay`` — over the ``Progression`` port (what the history function wrote off
the play path) and the store's player reads. Each answers its request exactly once, with its
reply or an error raised for the entrypoint; nothing is written. No token, connection id,
source address or party id ever goes into a reply (the records hold none; player items are
read only for their nickname and rating). Read units per action: ``shared/domain/RULINGS.md``,
"Progression: reads".
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.protocol import outbound as out
from shared.services.deps import Deps
from shared.services.errors import InvalidCursorError, InvalidValueError, NotFoundError
from shared.services.outbox import Outbox, Request
from shared.services.ports import BoardLine, Progression
from shared.services.presence import drop

TOP = 100
"""Entries on a leaderboard's top list, and rating points on a profile's chart."""
AROUND = 5
"""Players shown just above and just below you on the rating board."""
HISTORY_PAGE = 20
"""A ``history`` page when the request gives no ``limit``."""
_WEEK = timedelta(days=7)
_HIST_SK = re.compile(r"HIST#[0-9]{13}#[A-Za-z0-9_-]{1,64}")


def week_of(ms: int) -> str:
    """The week (Monday 00:00 UTC) holding the instant ``ms`` (epoch ms), ``YYYY-MM-DD``: the
    weekly board's reset (issue 38)."""
    day = datetime.fromtimestamp(ms / 1000, UTC).date()
    return (day - timedelta(days=day.weekday())).isoformat()


def _reply(deps: Deps, req: Request, event: Any) -> None:
    box = Outbox(reply_to=req)
    box.add([req.connection_id], event)
    drop(deps, box.flush(deps.clock, deps.notifier))


def _reader(deps: Deps) -> Progression:
    if deps.progression is None:  # pragma: no cover - every runtime builds one
        raise RuntimeError("no progression reader configured")
    return deps.progression


def _average(place_sum: Any, count: Any) -> float | None:
    return round(int(place_sum) / int(count), 2) if count else None


def profile(deps: Deps, req: Request, caller_id: str, player_id: str | None) -> None:
    """``profile``: the player's public profile (``player_id``, default the caller). Raises
    NotFoundError for no such player. Reads: the player item (GetItem, 1 RRU), the stats item
    (0.5) and the last 100 history entries (one Query, about 6.5): 8 RRU."""
    pid = player_id or caller_id
    player = deps.store.get_player(pid)
    if player is None:
        raise NotFoundError("no such player")
    reader = _reader(deps)
    stats = reader.stats(pid) or {}
    entries, _ = reader.history(pid, TOP)
    count = int(stats.get("tournaments", 0))
    best = stats.get("best_rating")
    _reply(
        deps,
        req,
        out.ProfileEvent(
            player=out.Profile(
                player_id=pid,
                nickname=player.nickname,
                rating=player.rating,
                tournaments=count,
                wins=int(stats.get("wins", 0)),
                podiums=int(stats.get("podiums", 0)),
                average_place=_average(stats.get("place_sum", 0), count),
                best_rating=int(best) if best is not None else None,
                languages=_languages(stats),
                rating_history=[_point(e) for e in reversed(entries)],
            )
        ),
    )


def _languages(stats: dict[str, Any]) -> list[out.LanguageStats]:
    """Per language from the stats item's ``lang_<code>_n`` / ``lang_<code>_places``."""
    found: dict[str, out.LanguageStats] = {}
    for name, value in stats.items():
        m = re.fullmatch(r"lang_(.+)_n", name)
        if m and value:
            code = m.group(1)
            places = stats.get(f"lang_{code}_places", 0)
            found[code] = out.LanguageStats(
                language=code, tournaments=int(value), average_place=_average(places, value)
            )
    return [found[c] for c in sorted(found)]


def _point(e: dict[str, Any]) -> out.RatingPoint:
    return out.RatingPoint(
        tournament_id=str(e["tournament_id"]),
        ended_ms=int(e["ended_ms"]),
        language=str(e["language"]),
        place=int(e["place"]),
        rating_before=int(e["rating_before"]),
        rating_after=int(e["rating_after"]),
    )


def _ranked(lines: Sequence[BoardLine]) -> list[out.BoardEntry]:
    """A top list (best first, complete above its last score) with each rank: 1 + the
    entries with a higher score, all of which are in the list."""
    entries: list[out.BoardEntry] = []
    for i, line in enumerate(lines):
        rank = entries[-1].rank if entries and entries[-1].score == line.score else i + 1
        entries.append(_entry(line, rank))
    return entries


def _entry(line: BoardLine, rank: int | None) -> out.BoardEntry:
    return out.BoardEntry(
        rank=rank, player_id=line.player_id, nickname=line.nickname, score=line.score
    )


def leaderboard(
    deps: Deps,
    req: Request,
    caller_id: str,
    board: str,
    language: str | None,
    week: str | None,
) -> None:
    """``leaderboard``: the rating board (top 100, the caller's rank and the 5 above and
    below) or a language's weekly board (``week`` ``current`` — the default — or
    ``previous``; top 100 and the caller's points). Raises InvalidValueError (``language``
    missing on the weekly board, or ``language`` / ``week`` on the rating board) and
    UnknownLanguageError. Reads — rating board: 16 shard Queries (8 RRU), the caller's entry
    (0.5), the histogram (8) and 32 Queries around (16): about 33 RRU; weekly: 16 Queries
    (8 RRU) and the caller's entry (0.5)."""
    reader = _reader(deps)
    if board == "rating":
        if language is not None or week is not None:
            field = "language" if language is not None else "week"
            raise InvalidValueError(f"Field '{field}' is for the weekly board only.")
        top = _ranked(reader.rating_top(TOP))
        line = reader.rating_entry(caller_id)
        me: out.BoardEntry | None = None
        around: list[out.BoardEntry] = []
        if line is not None:
            above, below = reader.rating_around(line, AROUND)
            ranks = reader.rating_ranks([x.score for x in (*above, line, *below)])
            me = _entry(line, ranks[line.score])
            around = [_entry(x, ranks[x.score]) for x in (*above, line, *below)]
        event = out.LeaderboardEvent(board="rating", entries=top, me=me, around=around)
    else:
        if language is None:
            raise InvalidValueError("Field 'language' is required for the weekly board.")
        deps.lexicon.language(language)  # UnknownLanguageError
        monday = datetime.fromisoformat(week_of(deps.clock.now_ms()))
        if week == "previous":
            monday -= _WEEK
        day = monday.date().isoformat()
        top = _ranked(reader.weekly_top(language, day, TOP))
        mine = next((e for e in top if e.player_id == caller_id), None)
        if mine is None:
            line = reader.weekly_entry(language, day, caller_id)
            if line is None:
                player = deps.store.get_player(caller_id)
                nickname = player.nickname if player is not None else ""
                line = BoardLine(caller_id, nickname, 0)
            mine = _entry(line, None)
        event = out.LeaderboardEvent(
            board="weekly", language=language, week=day, entries=top, me=mine, around=[]
        )
    _reply(deps, req, event)


def encode_cursor(player_id: str, sort_key: str) -> str:
    """The opaque ``next_cursor``: base64url (unpadded) of the last entry's key, its
    partition (the player) and sort key."""
    raw = f"PLAYER#{player_id} {sort_key}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(player_id: str, cursor: str) -> str:
    """The sort key a ``cursor`` of ``player_id``'s history resumes after. Raises
    InvalidCursorError unless it is one ``encode_cursor`` made for this player (a ``HIST#``
    key)."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, ValueError):
        raise InvalidCursorError() from None
    pk, _, sk = text.partition(" ")
    if pk != f"PLAYER#{player_id}" or not _HIST_SK.fullmatch(sk):
        raise InvalidCursorError()
    return sk


def history(
    deps: Deps,
    req: Request,
    caller_id: str,
    player_id: str | None,
    cursor: str | None,
    limit: int | None,
) -> None:
    """``history``: one page of the player's finished tournaments (``player_id``, default the
    caller), newest first, and the cursor of the next page (null on the last). Raises
    NotFoundError (no such player) and InvalidCursorError. Reads: the player item (1 RRU) and
    one Query of ``limit + 1`` entries (0.5 RRU per 8: 1.5 for a page of 20)."""
    pid = player_id or caller_id
    before = decode_cursor(pid, cursor) if cursor is not None else None
    if deps.store.get_player(pid) is None:
        raise NotFoundError("no such player")
    size = limit or HISTORY_PAGE
    items, more = _reader(deps).history(pid, size, before)
    tournaments = [
        out.HistoryEntry(
            tournament_id=str(e["tournament_id"]),
            ended_ms=int(e["ended_ms"]),
            language=str(e["language"]),
            place=int(e["place"]),
            players=int(e["players"]),
            rating_before=int(e["rating_before"]),
            rating_after=int(e["rating_after"]),
            opponents=[
                out.Opponent(player_id=str(o["player_id"]), nickname=str(o["nickname"]))
                for o in e.get("opponents") or []
            ],
        )
        for e in items
    ]
    next_cursor = encode_cursor(pid, items[-1]["sk"]) if more and items else None
    _reply(
        deps,
        req,
        out.HistoryEvent(player_id=pid, tournaments=tournaments, next_cursor=next_cursor),
    )


def replay(deps: Deps, req: Request, tournament_id: str) -> None:
    """``replay``: a finished tournament's whole record (``TournamentRecord``), the players'
    current nicknames where they still exist. Raises NotFoundError while it runs (no summary
    yet) or when it is unknown or expired. Reads: one Query (about 4 RRU for a whole
    8-player tournament, 16 at the 128 KB worst case) and one BatchGetItem of the players
    (8 RRU)."""
    found = _reader(deps).tournament_record(tournament_id)
    if found is None:
        raise NotFoundError("no such finished tournament")
    summary, rounds = found
    now = deps.store.get_players(str(p["player_id"]) for p in summary["players"])
    players = [
        out.RecordPlayer(
            player_id=str(p["player_id"]),
            nickname=now[p["player_id"]].nickname if p["player_id"] in now else str(p["nickname"]),
            place=int(p["place"]),
            rating_before=int(p["rating_before"]),
            rating_change=int(p["rating_change"]),
            rating_after=int(p["rating_after"]),
        )
        for p in summary["players"]
    ]
    record = out.TournamentRecord(
        tournament_id=tournament_id,
        language=str(summary["language"]),
        started_ms=int(summary["started_ms"]),
        ended_ms=int(summary["ended_ms"]),
        players=players,
        rounds=[_round(r) for r in rounds],
    )
    _reply(deps, req, out.ReplayEvent(record=record))


def _round(item: dict[str, Any]) -> out.RecordRound:
    return out.RecordRound(
        round_no=int(item["round_no"]),
        bye=item.get("bye"),
        duels=[
            out.RecordDuel(
                duel_id=str(d["duel_id"]),
                players=[str(p) for p in d["players"]],
                first=str(d["first"]),
                word=str(d["word"]),
                length=int(d["length"]),
                result=d["result"],
                winner=d.get("winner"),
                reason=d["reason"],
                rows=[
                    out.RecordRow(
                        player_id=str(r["player_id"]),
                        word=r.get("word"),
                        tiles=r.get("tiles"),
                        marks=r.get("marks"),
                        skipped=bool(r["skipped"]),
                        at_ms=int(r["at_ms"]),
                    )
                    for r in d.get("rows") or []
                ],
            )
            for d in item.get("duels") or []
        ],
    )
