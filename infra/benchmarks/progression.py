"""Benchmark, figure 3d: what progression (issue 38) adds per 8-player tournament — the items the
history function writes (the design, ``shared/domain/RULINGS.md``, design notes,
"Progression: capacity and cost"), built with the real keys of
``shared.adapters.dynamo.schema`` and sized by DynamoDB's rules (``infra.benchmarks.units``);
their write units (a transaction's items at 2x, index writes at 1x), the history function's
invocations, the storage until each item's TTL, and the read actions' units. The round records
are built from the played tournament's shape (rounds, duels, rows: ``TournamentRun``).
"""

from __future__ import annotations

import datetime as dt
import math
import random
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from boto3.dynamodb.types import TypeSerializer

from infra.benchmarks import units
from infra.benchmarks.storage import ITEM_OVERHEAD_BYTES, MONTH_S
from shared.adapters.dynamo import schema
from shared.domain.duel import DuelId
from shared.domain.rating import INITIAL_RATING, rating_changes
from shared.domain.tournament import LIVES, WORD_LENGTHS

AV = dict[str, Any]
_SERIALIZER = TypeSerializer()

PLAYERS = 8
"""Players per tournament (``shared.domain.tournament.PLAYERS``)."""
WORD_LENGTH = 5
NICKNAME_CHARS = 12
"""A typical nickname's length (at most ``shared.domain.nicknames.NICKNAME_MAX_CHARS``)."""
LANGUAGES_PLAYED = 2
"""Languages a player's statistics item carries counters for (typical)."""
BATCH_SIZE = 100
"""The history function's event source mapping: records per batch (spec, CDK)."""
BATCH_WINDOW_S = 5
"""The event source mapping's batching window (spec: a few seconds)."""
HISTORY_MEMORY_MB = 256
"""The history function's memory when the CDK source configures none yet (assumption)."""
PROGRESSION_MEMORY_MB = 256
"""The read actions' function (``progression``) memory when the CDK source has none yet."""


def memory_mb(module: str, default: int) -> int:
    """``module``'s memory as the CDK source configures it (``infra.cdk.constructs.functions``),
    else ``default``."""
    from infra.benchmarks.prices import function_memory_mb

    return function_memory_mb().get(module, default)


CPU_MS_PER_RECORD = 2.0
"""The history function's own CPU per stream record (decode the image, build items; stated:
the tournament document's decode measured in figure 1b takes about 1 ms)."""
STREAM_PRICING = "https://aws.amazon.com/dynamodb/pricing/on-demand/"
"""GetRecords calls made by a Lambda trigger on the table's stream are free (this page, "Change
data capture for DynamoDB Streams")."""


def av(value: Any) -> AV:
    """A Python value (str, int, bool, None, list, dict) in DynamoDB's attribute-value form."""
    return dict(_SERIALIZER.serialize(value))


def item(key: dict[str, str], **attributes: Any) -> AV:
    """An item: its key (``schema`` key function) and plain attributes, in attribute-value form."""
    return {k: av(v) for k, v in {**key, **attributes}.items()}


def week_of(ended_ms: int) -> str:
    """The weekly board's week of a tournament ended at ``ended_ms``: its Monday (UTC), as
    ``YYYY-MM-DD``."""
    day = dt.datetime.fromtimestamp(ended_ms / 1000, dt.UTC).date()
    return (day - dt.timedelta(days=day.weekday())).isoformat()


def player_id(rng: random.Random) -> str:
    """An id like ``shared.services.deps.new_id`` makes (16 hex digits)."""
    return f"{rng.getrandbits(64):016x}"


def nickname(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters) for _ in range(NICKNAME_CHARS))


# ---------------------------------------------------------------------------- items (the design)
def duel_map(
    rng: random.Random,
    tid: str,
    round_no: int,
    index: int,
    pair: Sequence[str],
    rows: int,
    length: int = WORD_LENGTH,
) -> dict[str, Any]:
    """One duel of a round record: ``rows`` rows alternating between the two players."""
    secret = "".join(rng.choice(string.ascii_lowercase) for _ in range(length))
    at = 1_800_000_000_000 + rng.randrange(10**6)
    out = []
    for r in range(rows):
        skipped = rng.random() < 0.04
        word = "".join(rng.choice(string.ascii_lowercase) for _ in range(length))
        at += rng.randrange(3_000, 15_000)
        out.append(
            {
                "player_id": pair[r % 2],
                "word": None if skipped else word,
                "tiles": None if skipped else list(word),
                "marks": None
                if skipped
                else [rng.choice(("correct", "present", "absent")) for _ in word],
                "skipped": skipped,
                "at_ms": at,
            }
        )
    return {
        "duel_id": str(DuelId(tid, round_no, index)),
        "players": list(pair),
        "first": pair[0],
        "word": secret,
        "length": length,
        "result": "win",
        "winner": pair[0],
        "reason": "solved",
        "rows": out,
    }


def round_record(
    tid: str, round_no: int, duels: list[dict[str, Any]], bye: str | None, ended_ms: int
) -> AV:
    return item(
        schema.round_record_key(tid, round_no),
        kind="round",
        tournament_id=tid,
        round_no=round_no,
        bye=bye,
        duels=duels,
        ttl=schema.record_ttl(ended_ms),
    )


@dataclass(frozen=True)
class Seat:
    """One player's outcome in a tournament."""

    player_id: str
    nickname: str
    place: int
    rating_before: int
    rating_after: int


def summary_record(
    tid: str, language: str, started_ms: int, ended_ms: int, rounds: int, seats: list[Seat]
) -> AV:
    players = [
        {
            "player_id": s.player_id,
            "nickname": s.nickname,
            "place": s.place,
            "rating_before": s.rating_before,
            "rating_change": s.rating_after - s.rating_before,
            "rating_after": s.rating_after,
        }
        for s in sorted(seats, key=lambda s: (s.place, s.player_id))
    ]
    return item(
        schema.record_key(tid),
        kind="record",
        tournament_id=tid,
        language=language,
        started_ms=started_ms,
        ended_ms=ended_ms,
        rounds=rounds,
        players=players,
        ttl=schema.record_ttl(ended_ms),
    )


def history_entry(seat: Seat, tid: str, language: str, ended_ms: int, seats: list[Seat]) -> AV:
    opponents = [
        {"player_id": s.player_id, "nickname": s.nickname}
        for s in seats
        if s.player_id != seat.player_id
    ]
    return item(
        schema.player_history_key(seat.player_id, ended_ms, tid),
        tournament_id=tid,
        ended_ms=ended_ms,
        language=language,
        place=seat.place,
        players=len(seats),
        rating_before=seat.rating_before,
        rating_after=seat.rating_after,
        opponents=opponents,
        ttl=schema.record_ttl(ended_ms),
    )


def stats_item(pid: str, tournaments: int, languages: Sequence[str], week: str) -> AV:
    """A player's statistics after ``tournaments`` tournaments spread over ``languages``."""
    counters: dict[str, Any] = {
        "tournaments": tournaments,
        "wins": tournaments // 8,
        "podiums": tournaments * 3 // 8,
        "place_sum": tournaments * 9 // 2,
        "best_rating": INITIAL_RATING + 137,
        "weeks": dict.fromkeys(languages, week),
    }
    for lang in languages:
        counters[f"lang_{lang}_n"] = tournaments // len(languages)
        counters[f"lang_{lang}_places"] = tournaments * 9 // 2 // len(languages)
    return item(schema.stats_key(pid), **counters)


def weekly_entry(language: str, week: str, seat: Seat, points: int) -> AV:
    start = dt.datetime.fromisoformat(week).replace(tzinfo=dt.UTC)
    return item(
        schema.weekly_entry_key(language, week, seat.player_id),
        board_pk=schema.weekly_board_pk(language, week, seat.player_id),
        board_score=points,
        player_id=seat.player_id,
        nickname=seat.nickname,
        language=language,
        week=week,
        ttl=int(start.timestamp()) + schema.WEEKLY_TTL_SECONDS,
    )


def rating_entry(pid: str, nick: str, rating: int, version: int) -> AV:
    return item(
        schema.rating_entry_key(pid),
        board_pk=schema.rating_board_pk(pid),
        board_score=rating,
        player_id=pid,
        nickname=nick,
        version=version,
    )


def blocks_item(shard: int, counts: dict[int, int]) -> AV:
    return item(schema.rank_blocks_key(shard), blocks={str(b): n for b, n in counts.items()})


def values_item(block: int, shard: int, counts: dict[int, int]) -> AV:
    return item(schema.rank_values_key(block, shard), values={str(r): n for r, n in counts.items()})


# ---------------------------------------------------------------------------- write units
@dataclass
class Writes:
    """Write units by line (``table`` at the request's rate, ``index`` = ``gsi_board``)."""

    lines: dict[str, list[float]] = field(default_factory=dict)
    """line -> [requests, table WRU, index WRU]."""

    def add(
        self, line: str, old: AV | None, new: AV | None, *, factor: int = 1, requests: float = 0
    ) -> None:
        size = max(units.item_size(old), units.item_size(new))
        row = self.lines.setdefault(line, [0.0, 0.0, 0.0])
        row[0] += requests
        row[1] += units.write_units(size) * factor
        row[2] += units.index_write_units(old, new)

    @property
    def table(self) -> float:
        return sum(r[1] for r in self.lines.values())

    @property
    def index(self) -> float:
        return sum(r[2] for r in self.lines.values())

    @property
    def requests(self) -> float:
        return sum(r[0] for r in self.lines.values())


@dataclass(frozen=True)
class Shape:
    """What the played tournament looked like (from ``TournamentRun``)."""

    rounds: int
    duels: int
    rows: int
    duration_ms: int


@dataclass
class Tournament:
    """One finished tournament's progression items, as the history function writes them."""

    rounds: list[AV]
    summary: AV
    seats: list[Seat]
    history: list[AV]
    stats_before: list[AV]
    stats_after: list[AV]
    weekly_before: list[AV | None]
    weekly_after: list[AV]
    entries_before: list[AV | None]
    entries_after: list[AV]
    histogram: list[tuple[AV | None, AV]]
    """Each histogram item a board transaction updates: (before, after)."""
    language: str
    ended_ms: int


def build(
    shape: Shape, seed: int = 1, language: str = "en", word_length: int = WORD_LENGTH
) -> Tournament:
    """The items of one 8-player tournament of ``shape`` with typical players: ratings near the
    default, a statistics item after 20 tournaments in 2 languages, a weekly entry already
    on the board, and histogram items as full as at 1 M players (every block and value
    counted). The rounds share ``shape.duels`` evenly, the duels ``shape.rows``."""
    rng = random.Random(seed)
    tid = player_id(rng)
    started = 1_800_000_000_000
    ended = started + shape.duration_ms
    week = week_of(ended)
    pids = [player_id(rng) for _ in range(PLAYERS)]
    nicks = [nickname(rng) for _ in range(PLAYERS)]
    ratings = [INITIAL_RATING + rng.randrange(-150, 150) for _ in range(PLAYERS)]
    places = list(range(1, PLAYERS + 1))
    changes = rating_changes(ratings, places)
    seats = [
        Seat(p, n, pl, r, r + c)
        for p, n, pl, r, c in zip(pids, nicks, places, ratings, changes, strict=True)
    ]
    rows_per_duel = shape.rows / max(1, shape.duels)
    rounds: list[AV] = []
    made = 0
    for n in range(1, shape.rounds + 1):
        duels = []
        count = (shape.duels * n) // shape.rounds - (shape.duels * (n - 1)) // shape.rounds
        for i in range(count):
            rows = round(rows_per_duel * (made + 1)) - round(rows_per_duel * made)
            made += 1
            pair = (pids[(2 * i) % PLAYERS], pids[(2 * i + 1) % PLAYERS])
            duels.append(duel_map(rng, tid, n, i, pair, rows, word_length))
        bye = pids[-1] if count * 2 < PLAYERS and count % 2 == 1 else None
        rounds.append(round_record(tid, n, duels, bye, ended))
    summary = summary_record(tid, language, started, ended, shape.rounds, seats)
    history = [history_entry(s, tid, language, ended, seats) for s in seats]
    langs = [language, "es" if language != "es" else "en"][:LANGUAGES_PLAYED]
    stats_before = [stats_item(s.player_id, 20, langs, week) for s in seats]
    stats_after = [stats_item(s.player_id, 21, langs, week) for s in seats]
    weekly_before: list[AV | None] = [weekly_entry(language, week, s, 40) for s in seats]
    weekly_after = [
        weekly_entry(language, week, s, 40 + s.rating_after - s.rating_before) for s in seats
    ]
    entries_before: list[AV | None] = [
        rating_entry(s.player_id, s.nickname, s.rating_before, 41) for s in seats
    ]
    entries_after = [rating_entry(s.player_id, s.nickname, s.rating_after, 42) for s in seats]
    histogram: list[tuple[AV | None, AV]] = []
    full_blocks = {b: 3_000 + 40 * b for b in range(6, 38)}  # 400..2400: every block counted
    for s in seats:
        shard = schema.histogram_shard(s.player_id)
        histogram.append((blocks_item(shard, full_blocks), blocks_item(shard, full_blocks)))
        for block in sorted(
            {s.rating_before // schema.HISTOGRAM_BLOCK, s.rating_after // schema.HISTOGRAM_BLOCK}
        ):
            base = block * schema.HISTOGRAM_BLOCK
            full = {base + v: 120 for v in range(schema.HISTOGRAM_BLOCK)}
            histogram.append((values_item(block, shard, full), values_item(block, shard, full)))
    return Tournament(
        rounds,
        summary,
        seats,
        history,
        stats_before,
        stats_after,
        weekly_before,
        weekly_after,
        entries_before,
        entries_after,
        histogram,
        language,
        ended,
    )


def writes(t: Tournament) -> Writes:
    """The history function's writes for ``t`` (spec, write side 2): each round record and the
    summary a conditional Put; per player a transaction (history entry, statistics, weekly
    entry: 2x), the best-rating Update (1 WRU whether its condition holds or not), and the
    board transaction (rating entry + its histogram items: 2x) with ``gsi_board``'s writes."""
    w = Writes()
    for r in t.rounds:
        w.add("round records (conditional Put)", None, r, requests=1)
    w.add("summary (conditional Put)", None, t.summary, requests=1)
    for i in range(len(t.seats)):
        w.add("per player: history entry (transaction)", None, t.history[i], factor=2, requests=1)
        w.add("per player: statistics (transaction)", t.stats_before[i], t.stats_after[i], factor=2)
        w.add(
            "per player: weekly entry (transaction)",
            t.weekly_before[i],
            t.weekly_after[i],
            factor=2,
        )
        w.add("per player: best rating (Update)", None, {"k": av("x")}, requests=1)
        w.add(
            "per player: rating entry (transaction)",
            t.entries_before[i],
            t.entries_after[i],
            factor=2,
            requests=1,
        )
    for before, after in t.histogram:
        w.add("per player: histogram counters (transaction)", before, after, factor=2)
    return w


# ---------------------------------------------------------------------------- invocations
@dataclass(frozen=True)
class Invocations:
    """The history function's invocations per tournament (stream batches)."""

    records: int
    """Stream records the event filter passes per tournament."""
    quiet: int
    """Upper bound: a quiet table, every batching window holding one tournament's records (one
    per round closed, the last round's with the end's profile records)."""
    busy: float
    """At scale: full batches of ``BATCH_SIZE`` records."""
    calls_per_tournament: int
    """DynamoDB calls the function makes per tournament."""


def invocations(t: Tournament, profile_writes: int) -> Invocations:
    """``profile_writes``: PROFILE writes per tournament (the filter passes every PROFILE
    record: it cannot compare the old and new images)."""
    records = len(t.rounds) + profile_writes
    calls = len(t.rounds) + 1 + 1 + len(t.seats) * 3  # puts, the rounds Query, per player 3
    return Invocations(records, len(t.rounds), records / BATCH_SIZE, calls)


# ---------------------------------------------------------------------------- reads
def read_units_of(items: Iterable[AV | None], *, per_item: bool) -> float:
    """Eventually consistent read units of reading ``items``: per item (GetItem, BatchGetItem)
    or summed then rounded (Query)."""
    sizes = [units.item_size(i) for i in items if i is not None]
    if per_item:
        return sum(units.read_units(s, consistent=False) for s in sizes)
    return units.read_units(sum(sizes), consistent=False)


def index_entry(entry: AV) -> AV:
    """What ``gsi_board`` keeps of ``entry`` (its keys and ``BOARD_PROJECTION``)."""
    keep = {schema.PK, schema.SK, "board_pk", "board_score", *schema.BOARD_PROJECTION}
    return {k: v for k, v in entry.items() if k in keep}


@dataclass(frozen=True)
class ReadPlan:
    """Read units of each read action (eventually consistent; spec, read side)."""

    profile: float
    rating_top: float
    rating_rank: float
    rating_around: float
    rating_board: float
    weekly_board: float
    history_page: float
    replay: float


TOP_PER_SHARD = 25
"""Index entries a top-100 read takes from each board shard (4 x the fair share of 16 shards;
the read side's plan, ``shared/domain/RULINGS.md``, "Progression: reads")."""


def read_plan(t: Tournament) -> ReadPlan:
    """From ``t``'s item sizes, as the read side reads ("Progression: reads"): profile = the
    player item (strongly consistent) + STATS + a Query of 101 ``HIST#`` entries; rating board
    = ``RATING_BOARD_SHARDS`` Queries of ``TOP_PER_SHARD`` index entries (top) + BatchGetItem of
    ``2 x HISTOGRAM_SHARDS`` histogram items (rank) + 2 Queries of 5 per shard (around) + the
    caller's entry; weekly = ``WEEKLY_BOARD_SHARDS`` Queries of ``TOP_PER_SHARD`` + the
    caller's entry; history = the player item + a Query of 21 entries; replay = a Query of the
    summary and round records + the 8 players' items (strongly consistent, about 200 bytes)."""
    entry = index_entry(t.entries_after[0])
    weekly = index_entry(t.weekly_after[0])
    player = units.read_units(200, consistent=True)
    stats = units.read_units(units.item_size(t.stats_after[0]), consistent=False)
    hist_page = read_units_of([t.history[0]] * 101, per_item=False)
    top = schema.RATING_BOARD_SHARDS * read_units_of([entry] * TOP_PER_SHARD, per_item=False)
    blocks = [after for after, _ in t.histogram[:1]]
    values = [after for after, _ in t.histogram[1:2]]
    rank = schema.HISTOGRAM_SHARDS * (
        read_units_of(blocks, per_item=True) + read_units_of(values, per_item=True)
    )
    around = 2 * schema.RATING_BOARD_SHARDS * read_units_of([entry] * 5, per_item=False)
    me = read_units_of([t.entries_after[0]], per_item=True)
    weekly_top = schema.WEEKLY_BOARD_SHARDS * read_units_of(
        [weekly] * TOP_PER_SHARD, per_item=False
    )
    replay = read_units_of([t.summary, *t.rounds], per_item=False) + len(t.seats) * player
    return ReadPlan(
        profile=player + stats + hist_page,
        rating_top=top,
        rating_rank=rank,
        rating_around=around,
        rating_board=top + rank + around + me,
        weekly_board=weekly_top + read_units_of([t.weekly_after[0]], per_item=True),
        history_page=player + read_units_of([t.history[0]] * 21, per_item=False),
        replay=replay,
    )


def history_reads(t: Tournament) -> float:
    """Read units the history function spends per tournament (strongly consistent): the Query
    of the round records at the end, the summary's GetItem, and per rating change a GetItem of
    the profile (about 200 bytes) and of the board entry (the version condition's input)."""
    rounds = units.read_units(sum(units.item_size(r) for r in t.rounds), consistent=True)
    summary = units.read_units(units.item_size(t.summary), consistent=True)
    per_change = units.read_units(200, consistent=True) + units.read_units(
        units.item_size(t.entries_after[0]), consistent=True
    )
    return rounds + summary + len(t.seats) * per_change


# ---------------------------------------------------------------------------- storage
def stored_bytes(items: Iterable[AV | None]) -> int:
    """Billed bytes (DynamoDB's size + ``ITEM_OVERHEAD_BYTES`` each)."""
    return sum(units.item_size(i) + ITEM_OVERHEAD_BYTES for i in items if i is not None)


def storage_gb_months(t: Tournament) -> dict[str, tuple[int, float]]:
    """Per kind: (billed bytes per tournament, GB-months until the TTL). Records and history
    entries are kept ``RECORD_TTL_SECONDS``; a weekly entry ``WEEKLY_TTL_SECONDS`` (charged here
    in full to one tournament, though a week's tournaments of a player share it). Statistics,
    rating entries and histogram items are kept per player, not per tournament: left out."""
    year = schema.RECORD_TTL_SECONDS / MONTH_S
    weeks = schema.WEEKLY_TTL_SECONDS / MONTH_S
    rounds = stored_bytes(t.rounds)
    summary = stored_bytes([t.summary])
    history = stored_bytes(t.history)
    weekly = stored_bytes(t.weekly_after) + stored_bytes(index_entry(e) for e in t.weekly_after)
    return {
        "round records": (rounds, rounds * year / 1e9),
        "summary": (summary, summary * year / 1e9),
        "history entries": (history, history * year / 1e9),
        "weekly entries (+ index)": (weekly, weekly * weeks / 1e9),
    }


# ---------------------------------------------------------------------------- the bill
READS_PER_PLAYER: dict[str, float] = {
    "profile": 1.0,
    "rating board": 1.0,
    "weekly board": 1.0,
    "history page": 1.0,
    "replay": 0.5,
}
"""Read actions per player per tournament (assumption: a look at each screen after a
tournament, every other player opening the replay)."""
READ_CALLS: dict[str, int] = {
    "profile": 3,
    "rating board": schema.RATING_BOARD_SHARDS * 3 + 2,
    "weekly board": schema.WEEKLY_BOARD_SHARDS + 1,
    "history page": 2,
    "replay": 2,
}
"""DynamoDB calls per read action (spec, read side): profile = PROFILE, STATS, a ``HIST#``
Query; rating board = per shard the top Query and 2 "around" Queries, the histogram
BatchGetItem, the caller's entry; weekly = per shard a Query, the caller's entry; history =
the player item and a Query; replay = a Query and the profiles' BatchGetItem."""


@dataclass(frozen=True)
class Played:
    """What the played tournament wrote that the history function's filter passes."""

    shape: Shape
    profile_writes: list[int]
    """When (ms from the first write) each PROFILE write happened."""
    round_closes: list[int]
    """When each round closed (its last duel's end), ms on the same clock."""
    state_writes: int
    """Writes of the tournament item (each would be a stream record the filter drops)."""
    records: list[AV] = field(default_factory=list)
    """The table's stream during the play (``stream_record``), in order."""
    history: HistoryRun | None = None
    """The real history function over that stream (``run_history``), when the tree has it."""
    play_wru: float = 0.0
    """Write units (table + indexes) the play's own invocations consumed (figure 3 counts)."""


def _written_keys(params: dict[str, Any], op: str) -> list[AV]:
    """The keys a write request names (a ConditionCheck writes nothing)."""
    if op == "PutItem":
        return [{k: params["Item"][k] for k in (schema.PK, schema.SK)}]
    if op in ("UpdateItem", "DeleteItem"):
        return [params["Key"]]
    if op == "TransactWriteItems":
        out = []
        for t in params["TransactItems"]:
            ((kind, spec),) = t.items()
            if kind != "ConditionCheck":
                key = spec["Item"] if "Item" in spec else spec["Key"]
                out.append({k: key[k] for k in (schema.PK, schema.SK)})
        return out
    return []


def stream_record(old: AV | None, new: AV | None, key: AV, at_ms: int, seq: int) -> AV:
    """A DynamoDB Streams record as Lambda receives it (``NEW_AND_OLD_IMAGES``) for ``old`` ->
    ``new`` (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html)."""
    image: dict[str, Any] = {
        "ApproximateCreationDateTime": at_ms // 1000,
        "Keys": key,
        "SequenceNumber": f"{seq:021d}",
        "SizeBytes": units.item_size(old) + units.item_size(new),
        "StreamViewType": schema.STREAM_VIEW_TYPE,
    }
    if old is not None:
        image["OldImage"] = old
    if new is not None:
        image["NewImage"] = new
    return {
        "eventID": f"{seq:08x}",
        "eventName": "INSERT" if old is None else "REMOVE" if new is None else "MODIFY",
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": image,
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-01-01",
    }


def play(seed: int = 11, with_history: bool = False) -> Played:
    """One tournament played on moto as the cost benchmark plays it (same seed), with every
    write's key and time noted, and the table's stream as DynamoDB would write it (each changed
    item's old and new image, read around the write by an unhooked client: ``stream_record``;
    moto's own stream API is not used); ``with_history``: then run the real history function
    over it (``run_history``)."""
    from infra.benchmarks.calls import CountingBackend, moto_env
    from infra.benchmarks.play import PlayStyle, play_tournament

    writes_at: list[tuple[str, str, int]] = []
    records: list[AV] = []

    with moto_env():
        b = CountingBackend(seed=seed)
        raw = b.counter.raw

        def get(key: AV) -> AV | None:
            found: AV | None = raw.get_item(
                TableName=b.table_name, Key=key, ConsistentRead=True
            ).get("Item")
            return found

        def before(params: dict[str, Any], model: Any, context: Any, **_: Any) -> None:
            keys = _written_keys(params, model.name)
            context["progression_before"] = [(k, get(k)) for k in keys]
            for k in keys:
                writes_at.append((k[schema.PK]["S"], k[schema.SK]["S"], b.clock.now_ms()))

        def after(model: Any, context: Any, **_: Any) -> None:
            for key, old in context.pop("progression_before", []):
                new = get(key)
                if new != old:
                    records.append(stream_record(old, new, key, b.clock.now_ms(), len(records)))

        b.client.meta.events.register("provide-client-params.dynamodb.*", before)
        b.client.meta.events.register("after-call.dynamodb.*", after)
        run = play_tournament(b, PlayStyle(), seed=seed)
        b.client.meta.events.unregister("provide-client-params.dynamodb.*", before)
        b.client.meta.events.unregister("after-call.dynamodb.*", after)
        play_wru = sum(c.wru + c.gsi_wru for inv in b.counter.invocations for c in inv.calls)
        history = run_history(b, records) if with_history else None
    t0 = min(at for _, _, at in writes_at)
    closes: dict[str, int] = {}
    for duel_id, at in run.duel_ends.items():
        round_no = duel_id.split(".")[1]
        closes[round_no] = max(closes.get(round_no, 0), at - t0)
    return Played(
        shape=Shape(run.rounds, run.duels, run.rows, run.duration_ms),
        profile_writes=[
            at - t0 for pk, sk, at in writes_at if pk.startswith("PLAYER#") and sk == "PROFILE"
        ],
        round_closes=sorted(closes.values()),
        state_writes=sum(1 for pk, sk, _ in writes_at if sk == "STATE"),
        records=records,
        history=history,
        play_wru=play_wru,
    )


def batches(times: Sequence[int], window_ms: int = BATCH_WINDOW_S * 1000) -> int:
    """Invocations of a quiet table: a batch opens at a record and takes every record of the
    next ``window_ms`` (up to ``BATCH_SIZE``)."""
    count, opened, size = 0, None, 0
    for t in sorted(times):
        if opened is None or t - opened >= window_ms or size >= BATCH_SIZE:
            count, opened, size = count + 1, t, 0
        size += 1
    return count


def stream_settings() -> tuple[int, int]:
    """(records per batch, batching window in s) of the history function's event source
    mapping: ``HISTORY`` of the streams entrypoint module when the tree has it, else the designed
    ``BATCH_SIZE`` and ``BATCH_WINDOW_S``."""
    import importlib

    try:
        source = importlib.import_module("functions.streams").HISTORY
    except (ImportError, AttributeError):
        return BATCH_SIZE, BATCH_WINDOW_S
    return int(source.batch_size), int(source.batching_window_s)


def _leaf_matches(conditions: list[Any], value: AV | None) -> bool:
    """One leaf of a Lambda filter pattern (literals, ``prefix``, ``exists``) against a value
    (https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html)."""
    for c in conditions:
        if isinstance(c, dict) and "exists" in c:
            if bool(c["exists"]) == (value is not None):
                return True
        elif isinstance(c, dict) and "prefix" in c:
            if isinstance(value, str) and value.startswith(str(c["prefix"])):
                return True
        elif value == c:
            return True
    return False


def matches(pattern: dict[str, Any], event: Any) -> bool:
    """Whether a stream record matches a Lambda filter pattern (nested keys; leaves are lists
    of conditions)."""
    for key, want in pattern.items():
        value = event.get(key) if isinstance(event, dict) else None
        if isinstance(want, dict):
            if not matches(want, value if value is not None else {}):
                return False
        elif not _leaf_matches(want, value):
            return False
    return True


def history_filters() -> tuple[dict[str, Any], ...] | None:
    """The history function's filter patterns (``HISTORY`` of the streams entrypoint module),
    None when the tree has none yet."""
    import importlib

    try:
        return tuple(importlib.import_module("functions.streams").HISTORY.filters)
    except (ImportError, AttributeError):
        return None


def group_batches(records: list[AV], window_s: int, size: int) -> list[list[AV]]:
    """``records`` cut as a quiet table's event source mapping would: a batch opens at a
    record and takes the records of the next ``window_s`` seconds, up to ``size``."""
    out: list[list[AV]] = []
    opened = None
    for r in records:
        at = int(r["dynamodb"]["ApproximateCreationDateTime"])
        if opened is None or at - opened >= window_s or len(out[-1]) >= size:
            out.append([])
            opened = at
        out[-1].append(r)
    return out


@dataclass(frozen=True)
class HistoryRun:
    """The real history function run over the played tournament's filtered stream."""

    records: int
    invocations: int
    calls: int
    wru: float
    index_wru: float
    rru: float
    failures: int


def run_history(backend: Any, records: list[AV]) -> HistoryRun | None:
    """Run the history entrypoint (when the tree has it) on ``records`` filtered by its
    mapping's patterns and cut in batches, inside ``backend``'s call counting (each batch one
    invocation); None when the tree has no history function yet."""
    import importlib
    from types import SimpleNamespace

    filters = history_filters()
    try:
        handler = importlib.import_module("functions.history")
        adapter = importlib.import_module("shared.adapters.dynamo.history")
    except ImportError:
        return None
    if filters is None:
        return None
    passed = [r for r in records if any(matches(f, r) for f in filters)]
    size, window = stream_settings()
    store = adapter.DynamoHistory(backend.client, backend.table_name, backend.clock.now_ms)
    deps = SimpleNamespace(history=store)
    mark = backend.counter.mark()
    failures = 0
    for batch in group_batches(passed, window, size):
        with backend.counter.invocation("history"):
            answer = handler.handle({"Records": batch}, deps)
        failures += len(answer.get("batchItemFailures", []))
    invs = backend.counter.since(mark)
    calls = [c for i in invs for c in i.calls]
    return HistoryRun(
        records=len(passed),
        invocations=len(invs),
        calls=len(calls),
        wru=sum(c.wru for c in calls),
        index_wru=sum(c.gsi_wru for c in calls),
        rru=sum(c.rru for c in calls),
        failures=failures,
    )


@dataclass
class Bill:
    """The added cost per tournament (USD) by line, and the figures behind it."""

    lines: list[tuple[str, float, str]]
    """(item, USD per tournament, how)."""
    base_usd: float
    """Today's all-in cost per tournament (figure 3)."""
    wru: float
    index_wru: float
    records: int
    invocations_quiet: int
    invocations_busy: float
    storage_bytes: int
    gb_months: float
    reads: ReadPlan
    rru_per_tournament: float
    replay_reply_bytes: int
    replay_worst_bytes: int
    """The replay reply of the largest tournament: ``WORST``."""
    measured: bool
    """The history function's lines come from running it (``run_history``), not the model."""
    compact_saving_usd: float
    """What ``compact_rounds`` would save per tournament (storage, round writes, play path)."""
    compact_bytes: tuple[int, int]
    """Round records' billed bytes per tournament: as specified, and compact."""
    play_path_wru: float
    """Write units the tournament item's writes gain by carrying the closed round (the
    round-closing write of each round)."""

    @property
    def write_side_usd(self) -> float:
        return sum(u for item, u, _ in self.lines if not item.startswith("reads:"))

    @property
    def reads_usd(self) -> float:
        return sum(u for item, u, _ in self.lines if item.startswith("reads:"))

    @property
    def total_usd(self) -> float:
        return self.write_side_usd + self.reads_usd


def reply_bytes(t: Tournament) -> int:
    """Bytes of the replay reply for ``t`` (its record as JSON, keys as designed)."""
    import json

    from boto3.dynamodb.types import TypeDeserializer

    des = TypeDeserializer()

    def plain(x: AV) -> dict[str, Any]:
        return {k: des.deserialize(v) for k, v in x.items() if k not in (schema.PK, schema.SK)}

    summary = plain(t.summary)
    record = {
        "format": "wordle-tournament-record",
        "version": 1,
        **{k: summary[k] for k in ("tournament_id", "language", "started_ms", "ended_ms")},
        "players": summary["players"],
        "rounds": [{k: plain(r)[k] for k in ("round_no", "bye", "duels")} for r in t.rounds],
    }
    body = {"type": "replay", "request_id": "r" * 16, "seq": None, "record": record}
    return len(json.dumps(body, default=int, separators=(",", ":")).encode())


def compact_rounds(rounds: list[AV]) -> list[AV]:
    """``rounds`` with each row stored compactly (a proposal): ``marks`` as one letter per tile
    (``c``/``p``/``a``), ``tiles`` left out where they are the word's letters (a reader derives
    them)."""
    from boto3.dynamodb.types import TypeDeserializer

    des = TypeDeserializer()
    out = []
    for r in rounds:
        plain = {k: des.deserialize(v) for k, v in r.items()}
        for duel in plain["duels"]:
            for row in duel["rows"]:
                if row["tiles"] is not None and row["tiles"] == list(row["word"]):
                    del row["tiles"]
                if row["marks"] is not None:
                    row["marks"] = "".join(m[0] for m in row["marks"])
        out.append({k: av(v) for k, v in plain.items()})
    return out


WORST = Shape(
    rounds=PLAYERS * LIVES - 1,
    duels=PLAYERS * LIVES - 1,
    rows=(PLAYERS * LIVES - 1) * 12,
    duration_ms=0,
)
"""The largest record: every duel costs at least one life, so at most 8 x 3 - 1 = 23 duels (one
a round at worst, for the most per-round overhead), each of 12 rows (6 turns each) of the
longest words (``WORD_LENGTHS``)."""


def _modelled_history_lines(
    t: Tournament,
    w: Writes,
    inv: Invocations,
    quiet: int,
    history_ms: float,
    history_mb: int,
    prices: dict[str, Any],
) -> list[tuple[str, float, str]]:
    """The history function's lines from the designed items alone (no function to run yet)."""
    ddb, lam = prices["dynamodb"], prices["lambda"]
    wru_usd = float(ddb["write_request_unit"])
    rru_usd = float(ddb["read_request_unit"])
    gbs_usd = float(lam["gb_second_arm64"])
    return [
        (
            "history function: writes",
            (w.table + w.index) * wru_usd,
            f"{w.table:.0f} WRU table + {w.index:.0f} WRU gsi_board",
        ),
        (
            "history function: invocations",
            quiet * float(lam["request"]) + history_ms / 1000 * history_mb / 1024 * gbs_usd,
            f"{quiet} invocations (a quiet table; {inv.records / BATCH_SIZE:.2f} at scale), "
            f"{history_ms:.0f} ms at {history_mb} MB",
        ),
        (
            "history function: reads",
            history_reads(t) * rru_usd,
            f"{history_reads(t):g} RRU (the rounds' Query at the end, the summary check, "
            "per rating change the profile and the board entry, strongly consistent)",
        ),
        ("stream reads", 0.0, f"free for a Lambda trigger ({STREAM_PRICING})"),
    ]


def bill(
    played: Played,
    prices: dict[str, Any],
    base_usd: float,
    history_mb: int | None = None,
    progression_mb: int | None = None,
    base_play_wru: float | None = None,
) -> Bill:
    """The added cost of progression per tournament at ``prices`` (``infra.benchmarks.prices``);
    the functions' memory: as configured (``memory_mb``) unless given."""
    history_mb = history_mb or memory_mb("history", HISTORY_MEMORY_MB)
    progression_mb = progression_mb or memory_mb("progression", PROGRESSION_MEMORY_MB)
    from infra.benchmarks.prices import CALL_LATENCY_MS

    ddb, lam, api = prices["dynamodb"], prices["lambda"], prices["apigateway_websocket"]
    t = build(played.shape)
    w = writes(t)
    wru_usd = float(ddb["write_request_unit"])
    rru_usd = float(ddb["read_request_unit"])
    gbs_usd = float(lam["gb_second_arm64"])
    inv = invocations(t, len(played.profile_writes))
    quiet = batches(played.round_closes + played.profile_writes, stream_settings()[1] * 1000)
    history_ms = (
        inv.calls_per_tournament * CALL_LATENCY_MS["dynamodb"]
        + (inv.records + len(t.seats)) * CPU_MS_PER_RECORD
    )
    real = played.history
    if real is not None and real.invocations:
        # measured: the real function on moto over the played stream (calls counted)
        real_ms = real.calls * CALL_LATENCY_MS["dynamodb"] + real.records * CPU_MS_PER_RECORD
        lines: list[tuple[str, float, str]] = [
            (
                "history function: writes",
                (real.wru + real.index_wru) * wru_usd,
                f"{real.wru:.0f} WRU table + {real.index_wru:.0f} WRU gsi_board (measured: the "
                f"real function on moto; the model says {w.table:.0f} + {w.index:.0f})",
            ),
            (
                "history function: invocations",
                real.invocations * float(lam["request"])
                + real_ms / 1000 * history_mb / 1024 * gbs_usd,
                f"{real.invocations} invocations for {real.records} records (measured, a quiet "
                f"table; {real.records / BATCH_SIZE:.2f} at scale), {real.calls} calls, "
                f"{real_ms:.0f} ms at {history_mb} MB",
            ),
            (
                "history function: reads",
                real.rru * rru_usd,
                f"{real.rru:g} RRU (measured; the model says {history_reads(t):g})",
            ),
            ("stream reads", 0.0, f"free for a Lambda trigger ({STREAM_PRICING})"),
        ]
    else:
        lines = _modelled_history_lines(t, w, inv, quiet, history_ms, history_mb, prices)
    storage = storage_gb_months(t)
    gb_months = sum(g for _, g in storage.values())
    storage_bytes = sum(b for b, _ in storage.values())
    per_gb = float(ddb["storage_gb_month"]) + float(ddb["pitr_gb_month"])
    lines.append(
        (
            "storage (records a year, weekly entries 5 weeks)",
            gb_months * per_gb,
            f"{storage_bytes:,} bytes, {gb_months:.6f} GB-months, storage + PITR",
        )
    )
    # the play path: the round-closing write carries the closed round
    round_wru = sum(units.write_units(units.item_size(r)) for r in t.rounds)
    if base_play_wru is not None and played.play_wru:
        extra = played.play_wru - base_play_wru
        lines.append(
            (
                "play path: the tournament item keeps the closed round",
                extra * wru_usd,
                f"{extra:+.0f} WRU (measured: the play's {played.play_wru:.0f} WRU against "
                f"figure 3's {base_play_wru:.0f})",
            )
        )
    else:
        lines.append(
            (
                "play path: the tournament item keeps the closed round",
                round_wru * wru_usd,
                f"about {round_wru} WRU more over {len(t.rounds)} rounds (estimate: the "
                "round's size added to one write)",
            )
        )
    reads = read_plan(t)
    rru = {
        "profile": reads.profile,
        "rating board": reads.rating_board,
        "weekly board": reads.weekly_board,
        "history page": reads.history_page,
        "replay": reads.replay,
    }
    replay_bytes = reply_bytes(t)
    increment = int(api["message_increment_bytes"])
    out_messages = dict.fromkeys(READ_CALLS, 1) | {"replay": math.ceil(replay_bytes / increment)}
    per = len(t.seats)
    reads_rru = sum(per * n * rru[a] for a, n in READS_PER_PLAYER.items())
    reads_inv = sum(per * n for n in READS_PER_PLAYER.values())
    reads_ms = sum(
        per * n * (READ_CALLS[a] * CALL_LATENCY_MS["dynamodb"] + CPU_MS_PER_RECORD)
        for a, n in READS_PER_PLAYER.items()
    )
    reads_messages = sum(per * n * (1 + out_messages[a]) for a, n in READS_PER_PLAYER.items())
    lines += [
        ("reads: read units", reads_rru * rru_usd, f"{reads_rru:.0f} RRU"),
        (
            "reads: invocations",
            reads_inv * float(lam["request"]) + reads_ms / 1000 * progression_mb / 1024 * gbs_usd,
            f"{reads_inv:.0f} invocations, {reads_ms:.0f} ms at {progression_mb} MB "
            "(calls in turn)",
        ),
        (
            "reads: API Gateway messages",
            reads_messages * float(api["message"]),
            f"{reads_messages:.0f} messages in and out",
        ),
    ]
    small = compact_rounds(t.rounds)
    small_bytes = stored_bytes(small)
    small_wru = sum(units.write_units(units.item_size(r)) for r in small)
    saving = (
        (storage["round records"][0] - small_bytes)
        * (schema.RECORD_TTL_SECONDS / MONTH_S)
        / 1e9
        * per_gb
        + 2 * (round_wru - small_wru) * wru_usd  # the record's Put and the play path's write
    )
    return Bill(
        measured=real is not None and real.invocations > 0,
        compact_saving_usd=saving,
        compact_bytes=(storage["round records"][0], small_bytes),
        lines=lines,
        base_usd=base_usd,
        wru=w.table,
        index_wru=w.index,
        records=inv.records,
        invocations_quiet=quiet,
        invocations_busy=inv.busy,
        storage_bytes=storage_bytes,
        gb_months=gb_months,
        reads=reads,
        rru_per_tournament=reads_rru,
        replay_reply_bytes=replay_bytes,
        replay_worst_bytes=reply_bytes(build(WORST, word_length=max(WORD_LENGTHS))),
        play_path_wru=float(round_wru),
    )


# ---------------------------------------------------------------------------- the report
TITLE = "## 3d. Progression (issue 38): the added cost per tournament"


def measure(base_usd: float | None = None, seed: int = 11) -> Bill:
    """Play one tournament (as figure 3) and bill progression's additions; ``base_usd``:
    today's all-in cost per tournament (default: ``results.json``'s, figure 3); the play
    path's write units are compared with that run's."""
    from infra.benchmarks.figures import load_results
    from infra.benchmarks.prices import load_prices

    if base_usd is None:
        base_usd = float(load_results()["cost"]["total"])
    counts = load_results().get("cost", {}).get("counts", {})
    base_wru = float(counts["wru"]) + float(counts["gsi_wru"]) if "wru" in counts else None
    return bill(play(seed, with_history=True), load_prices(), base_usd, base_play_wru=base_wru)


def _usd(x: float) -> str:
    return f"${x:.6f}"


def reflow(text: str, width: int = 96) -> str:
    """``text`` with each prose paragraph refilled to ``width`` (headings, tables and blank
    lines kept as they are); no word is broken."""
    import textwrap

    out: list[str] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            out.append(
                textwrap.fill(" ".join(para), width, break_long_words=False, break_on_hyphens=False)
            )
            para.clear()

    for line in text.splitlines():
        if not line.strip() or line.startswith(("#", "|")):
            flush()
            out.append(line)
        else:
            para.append(line.strip())
    flush()
    return "\n".join(out) + "\n"


def section(b: Bill) -> str:
    """The section ``TITLE`` of ``infra/benchmarks/RESULTS.md``."""
    return reflow(_section(b))


def _section(b: Bill) -> str:
    rows = [
        f"| {item} | {_usd(usd)} | {100 * usd / b.base_usd:.1f}% | {how} |"
        for item, usd, how in b.lines
    ]
    r = b.reads
    model = (
        f"the items the designed history function writes for the tournament figure 3 plays (same "
        f"seed: {b.records} stream records pass the event filter — one per round closed, every "
        "PROFILE write), built with the real keys and sized by DynamoDB's rules; transactions' "
        "table writes at 2x, `gsi_board` writes at 1x (a moved score: a delete and a put)."
    )
    method = (
        "the real history function (`functions/history.py`) run on moto over the stream of the "
        "tournament figure 3 plays (same seed; the records its mapping's filters pass, cut in "
        "batches by its batching window as on a quiet table; every call counted and sized as "
        f"figure 1 does); the storage, the reads and the replay from {model}"
        if b.measured
        else model
    )
    reads = ", ".join(f"{n:g} {a}" for a, n in READS_PER_PLAYER.items())
    write_pct = 100 * b.write_side_usd / b.base_usd
    total_pct = 100 * b.total_usd / b.base_usd
    return f"""{TITLE}

`infra.benchmarks.progression` (`python -m infra.benchmarks.progression --write` rewrites this
section; a full run of `python -m infra.benchmarks` writes it too): {method}
Stream reads by a Lambda trigger are free ({STREAM_PRICING}).
Storage: each item + 100 bytes, records and history entries a year (`RECORD_TTL_SECONDS`),
weekly entries 5 weeks, storage + PITR. Reads: {reads}
per player per tournament (an assumption), each one invocation of `progression` (memory as
the line says) with its calls in turn, a message in and its reply out (32 KB
increments). Today's all-in cost: {_usd(b.base_usd)} (figure 3).

| added item | USD / tournament | of today's cost | how |
|---|---|---|---|
{chr(10).join(rows)}
| **write side (history, storage, play path)** | **{_usd(b.write_side_usd)}** \
| **{write_pct:.1f}%** | |
| **with the reads** | **{_usd(b.total_usd)}** | **{total_pct:.1f}%** | |

Before: {_usd(b.base_usd)} per tournament; after: {_usd(b.base_usd + b.write_side_usd)} with the
history written ({write_pct:.1f}%, aim <= 10%),
{_usd(b.base_usd + b.total_usd)} with the assumed reads ({total_pct:.1f}%). Read units per
action: profile {r.profile:g}, rating board {r.rating_board:g} (top 100 {r.rating_top:g}, rank
{r.rating_rank:g}, around {r.rating_around:g}), weekly board {r.weekly_board:g}, history page
{r.history_page:g}, replay {r.replay:g}. The replay reply of this tournament is
{b.replay_reply_bytes:,} bytes; of the largest possible one (23 duels of 12 rows of 6 letters)
{b.replay_worst_bytes:,} bytes, under API Gateway's 128 KB message limit
({100 * b.replay_worst_bytes / 131072:.0f}%).

Proposal (not in the totals): rows stored compactly (`compact_rounds`: marks as one letter per
tile, tiles left out where they are the word's letters) make the round records
{b.compact_bytes[0]:,} -> {b.compact_bytes[1]:,} bytes per tournament and save
{_usd(b.compact_saving_usd)} ({100 * b.compact_saving_usd / b.base_usd:.1f}% of today's cost);
the export format can stay as specified (the reader expands them).
"""


def write(text: str, path: Any = None) -> None:
    """Replace (or add, before figure 4) the section ``TITLE`` of ``RESULTS.md``."""
    import re
    from pathlib import Path

    out = Path(path) if path is not None else Path(__file__).with_name("RESULTS.md")
    current = out.read_text()
    pattern = re.compile(rf"(?ms)^{re.escape(TITLE)}\n.*?(?=^## )")
    if pattern.search(current):
        updated = pattern.sub(lambda _: text.rstrip() + "\n\n", current)
    else:
        at = current.index("\n## 4. ")
        updated = current[:at] + "\n\n" + text.rstrip() + "\n" + current[at:]
    out.write_text(updated)


def results_json(b: Bill) -> dict[str, Any]:
    """The figures the docs quote (``infra.benchmarks.figures``)."""
    return {
        "base_usd": b.base_usd,
        "write_side_usd": b.write_side_usd,
        "total_usd": b.total_usd,
        "lines": [{"item": i, "usd": u, "how": h} for i, u, h in b.lines],
        "wru": b.wru,
        "index_wru": b.index_wru,
        "records": b.records,
        "invocations_quiet": b.invocations_quiet,
        "invocations_busy": b.invocations_busy,
        "storage_bytes": b.storage_bytes,
        "rru_per_tournament": b.rru_per_tournament,
        "replay_reply_bytes": b.replay_reply_bytes,
        "replay_worst_bytes": b.replay_worst_bytes,
        "compact_saving_usd": b.compact_saving_usd,
    }


def main(argv: Sequence[str] | None = None) -> int:
    import argparse
    import json
    import os

    from infra.benchmarks.figures import RESULTS_JSON, load_results

    parser = argparse.ArgumentParser(
        prog="python -m infra.benchmarks.progression", description=__doc__
    )
    parser.add_argument("--write", action="store_true", help="update RESULTS.md and results.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
    b = measure()
    text = section(b)
    print(text)
    if args.write:
        write(text)
        results = load_results()
        results["progression"] = results_json(b)
        RESULTS_JSON.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
