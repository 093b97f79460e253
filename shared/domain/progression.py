"""Domain layer: progression — what a finished tournament adds to each player's history and
statistics, the weekly boards' weeks, the rating histogram's arithmetic, and what a player
profile's change does to the rating board.

Pure values and functions, no storage: the history use case (``shared.services.history``)
applies them through its port. Items, idempotency and costs: RULINGS.md, design notes,
"Progression: history". Times are UTC epoch ms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from shared.domain.duel import Duel
from shared.domain.rating import INITIAL_RATING
from shared.domain.tournament import ClosedRound, Tournament

WEEK_MS = 7 * 24 * 3600 * 1000
"""A week in ms."""
PODIUM = 3
"""Places 1 to 3 count as a podium."""


# ---------------------------------------------------------------------------- weeks
def week_start_ms(at_ms: int) -> int:
    """Monday 00:00 UTC of the week holding ``at_ms`` (epoch ms): the weekly boards reset then
    (issue 38). 1970-01-01 was a Thursday, so weeks start 3 days after the epoch."""
    monday0 = 4 * 24 * 3600 * 1000  # 1970-01-05, a Monday
    return at_ms - (at_ms - monday0) % WEEK_MS


def week_of(at_ms: int) -> str:
    """The week holding ``at_ms`` as its Monday, ``YYYY-MM-DD`` (UTC): a weekly board's name."""
    return datetime.fromtimestamp(week_start_ms(at_ms) / 1000, tz=UTC).strftime("%Y-%m-%d")


def previous_week(week: str) -> str:
    """The week before ``week`` (both ``YYYY-MM-DD`` Mondays)."""
    day = datetime.strptime(week, "%Y-%m-%d").replace(tzinfo=UTC) - timedelta(days=7)
    return day.strftime("%Y-%m-%d")


# ---------------------------------------------------------------------------- records
@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One closed round as kept for replays: its number, bye and duels (every row, secret)."""

    tournament_id: str
    round_no: int
    bye: str | None
    duels: tuple[Duel, ...]
    closed_ms: int
    """When the round closed (its last duel's end), for the record's TTL."""


def closed_rounds(t: Tournament) -> list[RoundRecord]:
    """The rounds a stored tournament document lets the history function record: the closed
    round it carries, and, once the tournament is over, its last round (``duels``)."""
    found: list[RoundRecord] = []
    rounds: list[ClosedRound] = []
    if t.closed is not None:
        rounds.append(t.closed)
    if t.over:
        rounds.append(ClosedRound(t.round_no, t.duels, t.bye))
    for r in rounds:
        ends = [d.ended_ms for d in r.duels if d.ended_ms is not None]
        closed = max(ends) if ends else (t.ended_ms or t.started_ms)
        found.append(RoundRecord(t.tournament_id, r.round_no, r.bye, r.duels, closed))
    return found


@dataclass(frozen=True, slots=True)
class Standing:
    """One player's line in a finished tournament's summary."""

    player_id: str
    nickname: str
    place: int
    rating_before: int
    rating_change: int

    @property
    def rating_after(self) -> int:
        return self.rating_before + self.rating_change


@dataclass(frozen=True, slots=True)
class Summary:
    """A finished tournament's immutable summary (the ``RECORD`` item)."""

    tournament_id: str
    language: str
    started_ms: int
    ended_ms: int
    rounds: int
    standings: tuple[Standing, ...]
    """Ordered by place, then player id."""


def summary_of(t: Tournament) -> Summary:
    """The summary of a finished tournament (rulings 1 and 2: places and rating changes as
    fixed by the tournament, ratings from its start snapshot). Raises ValueError while it
    runs."""
    if not t.over or t.ended_ms is None:
        raise ValueError("the tournament is not over")
    standings = sorted(
        (
            Standing(p.player_id, p.nickname, p.place or 0, p.rating, p.rating_change or 0)
            for p in t.players
        ),
        key=lambda s: (s.place, s.player_id),
    )
    return Summary(
        t.tournament_id, t.language, t.started_ms, t.ended_ms, t.round_no, tuple(standings)
    )


@dataclass(frozen=True, slots=True)
class Opponent:
    player_id: str
    nickname: str


Pairs = Mapping[int, Sequence[tuple[str, str]]]
"""A tournament's duels by round: round number -> each duel's two players."""


def pairs_of(rounds: Iterable[RoundRecord]) -> dict[int, list[tuple[str, str]]]:
    """The duels' players of each round record."""
    return {r.round_no: [d.players for d in r.duels] for r in rounds}


def opponents(player_id: str, pairs: Pairs, nicknames: Mapping[str, str]) -> tuple[Opponent, ...]:
    """The players ``player_id`` met (one per duel, in round order; the same player twice when
    met twice), with their nickname in that tournament."""
    met: list[Opponent] = []
    for _, duels in sorted(pairs.items()):
        for a, b in duels:
            if player_id in (a, b):
                other = b if a == player_id else a
                met.append(Opponent(other, nicknames.get(other, "")))
    return tuple(met)


@dataclass(frozen=True, slots=True)
class PlayerEntry:
    """A player's history entry for one finished tournament, and what it adds to their
    statistics and to the weekly board of its language."""

    player_id: str
    nickname: str
    tournament_id: str
    ended_ms: int
    language: str
    place: int
    players: int
    rating_before: int
    rating_after: int
    opponents: tuple[Opponent, ...]

    @property
    def week(self) -> str:
        """The weekly board the tournament counts on: the week it ended in."""
        return week_of(self.ended_ms)

    @property
    def points(self) -> int:
        """Weekly board points: the rating change (may be negative)."""
        return self.rating_after - self.rating_before

    @property
    def win(self) -> int:
        return int(self.place == 1)

    @property
    def podium(self) -> int:
        return int(self.place <= PODIUM)


def player_entries(summary: Summary, pairs: Pairs) -> list[PlayerEntry]:
    """Each player's history entry of a finished tournament, in the summary's order."""
    nicknames = {s.player_id: s.nickname for s in summary.standings}
    return [
        PlayerEntry(
            player_id=s.player_id,
            nickname=s.nickname,
            tournament_id=summary.tournament_id,
            ended_ms=summary.ended_ms,
            language=summary.language,
            place=s.place,
            players=len(summary.standings),
            rating_before=s.rating_before,
            rating_after=s.rating_after,
            opponents=opponents(s.player_id, pairs, nicknames),
        )
        for s in summary.standings
    ]


@dataclass(frozen=True, slots=True)
class Stats:
    """A player's progression counters (the ``STATS`` item)."""

    tournaments: int = 0
    wins: int = 0
    podiums: int = 0
    place_sum: int = 0

    def plus(self, entry: PlayerEntry) -> Stats:
        """The counters once ``entry`` is counted."""
        return Stats(
            self.tournaments + 1,
            self.wins + entry.win,
            self.podiums + entry.podium,
            self.place_sum + entry.place,
        )

    @property
    def average_place(self) -> float | None:
        """The mean place, None before the first tournament."""
        return self.place_sum / self.tournaments if self.tournaments else None


# ---------------------------------------------------------------------------- rating board
def block_of(rating: int, block: int) -> int:
    """The histogram block of ``rating`` (``block`` rating points per block; floor division,
    so a negative rating falls in a negative block)."""
    return rating // block


def rank_of(score: int, blocks: Mapping[int, int], values: Mapping[int, int], block: int) -> int:
    """Rank on a board from its histogram: 1 + the number of entries with a strictly higher
    score = the counts of every block above ``score``'s block plus the counts of the higher
    values within it. ``blocks``: block -> count; ``values``: the counts of ``score``'s block
    by value (other values are ignored)."""
    mine = block_of(score, block)
    above = sum(n for b, n in blocks.items() if b > mine)
    above += sum(n for v, n in values.items() if v > score and block_of(v, block) == mine)
    return 1 + above


@dataclass(frozen=True, slots=True)
class Profile:
    """What the rating board needs of a player's profile item (an image in its stream record)."""

    player_id: str
    nickname: str
    rating: int
    version: int


@dataclass(frozen=True, slots=True)
class BoardEntry:
    """A player's rating board entry as stored: ``score`` None for the tombstone a removed
    player leaves (it keeps later-arriving older changes out)."""

    player_id: str
    nickname: str
    score: int | None
    version: int


@dataclass(frozen=True, slots=True)
class BoardMove:
    """A change to apply to the rating board: from ``before`` (None: no entry yet) to
    ``after`` (``score`` None: removed). The histogram moves from ``before.score`` (if any) to
    ``after.score`` (if any)."""

    before: BoardEntry | None
    after: BoardEntry

    @property
    def removed(self) -> int | None:
        """The score taken out of the histogram, if any."""
        return self.before.score if self.before is not None else None

    @property
    def added(self) -> int | None:
        """The score put into the histogram, if any."""
        return self.after.score


def board_move(
    old: Profile | None, new: Profile | None, entry: BoardEntry | None
) -> BoardMove | None:
    """What a profile's stream record (``old`` / ``new`` images; None: absent) does to the
    rating board, given the stored ``entry``. None: nothing (a repeat or older record, no rated
    tournament yet, no visible change).

    - an entry of the same or a later version wins: the record is a repeat or came late;
    - a removed player (no ``new``) leaves a tombstone at ``old``'s version (also without an
      entry: a record of theirs arriving late must not make one);
    - only a player who has played a rated tournament gets an entry: the rating moved in this
      change, or differs from the initial rating;
    - a live entry moves when the rating or nickname differs."""
    if new is None:
        if old is None:
            return None
        if entry is not None and (entry.score is None or entry.version > old.version):
            return None
        return BoardMove(entry, BoardEntry(old.player_id, old.nickname, None, old.version))
    if entry is not None and entry.version >= new.version:
        return None
    live = entry if entry is not None and entry.score is not None else None
    if live is None:
        moved = old is not None and old.rating != new.rating
        if not moved and new.rating == INITIAL_RATING:
            return None
    elif live.score == new.rating and live.nickname == new.nickname:
        return None
    return BoardMove(entry, BoardEntry(new.player_id, new.nickname, new.rating, new.version))


@dataclass(frozen=True, slots=True)
class ProfileChange:
    """A player profile's stream record: the image before and after (None: absent; an INSERT
    has no ``old``, a REMOVE no ``new``)."""

    old: Profile | None
    new: Profile | None

    @property
    def player_id(self) -> str:
        image = self.new or self.old
        assert image is not None
        return image.player_id
