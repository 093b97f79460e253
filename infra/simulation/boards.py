"""Simulation: the leaderboards' partition load at the capacity plan's peak (issue 38: 1 M
players, 2,000 rating changes/s), and the read units of a board read.

Run ``python -m infra.simulation.boards [--seconds S] [--write]`` (``--write`` replaces the
section "leaderboards at the peak" of ``infra/simulation/RESULTS.md``). A population of
``Peak.players`` players (16-hex ids; ratings normal around ``INITIAL_RATING`` with the spread
the rating code produces, ``rating_spread``; a share never rated, with no board entry) plays
``changes_per_s / 8`` tournaments a second, each of 8 players of neighbouring ratings (the
matchmaking window) in one language of ``LANGUAGE_MIX``, places at random and rating changes
by ``shared.domain.rating.rating_changes``. Per tournament end each player's writes are those of
the design (``shared/domain/RULINGS.md``, design notes, "Progression: capacity and
cost"): the history transaction (history entry, statistics, weekly entry), the best-rating
update and the board transaction (rating entry, the histogram's block and value counters),
with the REAL key functions of ``shared.adapters.dynamo.schema``; each write is charged on its
partitions (table ``pk`` and ``gsi_board``'s ``board_pk``) by the load simulation's own model
(``FakeDynamoClient._write_charges``: 1 WCU per KB, a transaction's table writes 2x, index
writes 1x, a changed index key = a delete and a put). Round records and summaries (one
``TOURN#`` key each) and the per-player keys are charged too. Figures are computed, not
timed; deterministic for a seed.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import re
import statistics
import subprocess
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.benchmarks import progression as pg
from infra.benchmarks import units
from infra.simulation.dynamo import FakeDynamoClient, Limits
from infra.simulation.engine import Sim
from shared.adapters.dynamo import schema
from shared.domain.rating import INITIAL_RATING, rating_changes

RESULTS = Path(__file__).with_name("RESULTS.md")
SECTION = "leaderboards at the peak"
WCU_LIMIT = Limits().wcu_per_s
RCU_LIMIT = Limits().rcu_per_s
LANGUAGE_MIX: tuple[tuple[str, float], ...] = (
    ("en", 0.55),
    ("es", 0.12),
    ("pt", 0.08),
    ("de", 0.06),
    ("fr", 0.06),
    ("ru", 0.04),
    ("it", 0.03),
    ("pl", 0.02),
    ("nl", 0.01),
    ("id", 0.01),
    ("uk", 0.01),
    ("kk", 0.005),
    ("uz", 0.005),
)
"""Share of tournaments per game language (assumption: most in English)."""


@dataclass(frozen=True)
class Peak:
    players: int = 1_000_000
    changes_per_s: float = 2_000.0
    """Rating changes per second (8 per tournament end)."""
    seconds: int = 10
    """Simulated seconds at the peak rate."""
    never_rated: float = 0.2
    """Share of the players at ``INITIAL_RATING`` with no rating change yet (no board entry)."""
    histogram_shards: int = schema.HISTOGRAM_SHARDS
    skip_same_block: bool = False
    """Leave the block counters alone when the old and new rating share a block (their net
    change is 0); the first design updates them on every change."""
    views_per_s: float | None = None
    """Rating board reads (top 100 + rank + around) a second; None: one per rating change."""
    seed: int = 1


@dataclass
class BoardLoad:
    """What one run found."""

    peak: Peak
    spread: float
    """The rating spread (standard deviation) the population was drawn with."""
    wcu: dict[str, float]
    """Partition (``table:<pk>`` or ``gsi_board:<board_pk>``) -> mean WCU/s over the run."""
    wcu_peak_second: dict[str, float]
    changes: int
    first_entries: int
    crossings: int
    """Rating changes of a rated player whose old and new rating lie in different blocks."""
    reads: pg.ReadPlan
    rcu: dict[str, float] = field(default_factory=dict)
    """Partition -> RCU/s of the board reads at ``views_per_s``."""

    def hottest(self, prefix: str = "") -> tuple[str, float]:
        name = max((k for k in self.wcu if k.startswith(prefix)), key=lambda k: self.wcu[k])
        return name, self.wcu[name]

    def hottest_read(self) -> tuple[str, float]:
        name = max(self.rcu, key=lambda k: self.rcu[k])
        return name, self.rcu[name]

    @property
    def families(self) -> dict[str, tuple[str, float, float]]:
        """Key family -> (hottest key, its WCU/s, its busiest second's WCU)."""
        out: dict[str, tuple[str, float, float]] = {}
        for label, pattern in FAMILIES:
            keys = [k for k in self.wcu if re.fullmatch(pattern, k)]
            if keys:
                k = max(keys, key=lambda n: self.wcu[n])
                out[label] = (k, self.wcu[k], self.wcu_peak_second[k])
        return out


FAMILIES: tuple[tuple[str, str], ...] = (
    ("rating board (gsi_board)", r"gsi_board:RATING#\d+"),
    ("weekly board (gsi_board)", r"gsi_board:WEEK#.*"),
    ("histogram block counters", r"table:RANKHIST#\d+"),
    ("histogram value counters", r"table:RANKHIST#\d+#\d+"),
    ("board entries (BOARD#pid)", r"table:BOARD#.*"),
    ("player items (PLAYER#pid)", r"table:PLAYER#.*"),
    ("tournament records (TOURN#tid)", r"table:TOURN#.*"),
)


def rating_spread(seed: int = 1, players: int = 4_096, rounds: int = 40) -> float:
    """The standard deviation of ratings the rating code produces: ``players`` players with a
    hidden skill (normal, sd 200 Elo points) all start at ``INITIAL_RATING`` and play ``rounds``
    tournaments of 8 neighbours by rating; places by skill + a performance draw (sd 200)."""
    rng = random.Random(seed)
    skill = [rng.gauss(0, 200) for _ in range(players)]
    rating = [INITIAL_RATING] * players
    for _ in range(rounds):
        order = sorted(range(players), key=lambda i: (rating[i], rng.random()))
        for g in range(0, players - 7, 8):
            seats = order[g : g + 8]
            perf = sorted(seats, key=lambda i: -(skill[i] + rng.gauss(0, 200)))
            places = [perf.index(i) + 1 for i in seats]
            for i, d in zip(seats, rating_changes([rating[i] for i in seats], places), strict=True):
                rating[i] += d
    return statistics.pstdev(rating)


@contextlib.contextmanager
def histogram_shards(n: int) -> Iterator[None]:
    """Run the real key functions with ``schema.HISTOGRAM_SHARDS`` = ``n`` (a what-if)."""
    before = schema.HISTOGRAM_SHARDS
    schema.HISTOGRAM_SHARDS = n
    try:
        yield
    finally:
        schema.HISTOGRAM_SHARDS = before


class _Model:
    def __init__(self, peak: Peak) -> None:
        self.peak = peak
        self.rng = random.Random(peak.seed)
        self.fake = FakeDynamoClient(Sim(), random.Random(0), limits=Limits(throttle=False))
        self.spread = rating_spread(peak.seed)
        rng = self.rng
        n = peak.players
        self.ids = [pg.player_id(rng) for _ in range(n)]
        unrated = int(n * peak.never_rated)
        self.rating = [INITIAL_RATING] * unrated + [
            min(2400, max(400, round(rng.gauss(INITIAL_RATING, self.spread))))
            for _ in range(n - unrated)
        ]
        self.rated = [False] * unrated + [True] * (n - unrated)
        self.nick: dict[int, str] = {}
        self.version: dict[int, int] = defaultdict(lambda: 40)
        self.blocks: dict[int, Counter[int]] = defaultdict(Counter)
        self.values: dict[tuple[int, int], Counter[int]] = defaultdict(Counter)
        for i in range(n):
            if self.rated[i]:
                shard = schema.histogram_shard(self.ids[i])
                r = self.rating[i]
                self.blocks[shard][r // schema.HISTOGRAM_BLOCK] += 1
                self.values[(r // schema.HISTOGRAM_BLOCK, shard)][r] += 1
        self.order = sorted(range(n), key=lambda i: self.rating[i])
        self.weekly: dict[tuple[str, int], int] = {}
        self.wcu: dict[str, list[float]] = defaultdict(lambda: [0.0] * peak.seconds)
        self.first_entries = 0
        self.crossings = 0
        self.changes = 0

    def nickname(self, i: int) -> str:
        if i not in self.nick:
            self.nick[i] = pg.nickname(random.Random(i))
        return self.nick[i]

    def charge(self, second: int, old: Any, new: Any, *, transaction: bool) -> None:
        """Charge one item's write as the load simulation's fake client does."""
        for name, _, w in self.fake._write_charges(old, new if new is not None else old, 1):
            self.wcu[name][second] += w * 2 if transaction and name.startswith("table:") else w

    def tournament(self, second: int, ended_ms: int) -> None:
        rng = self.rng
        at = rng.randrange(len(self.order) - 8)
        seats = self.order[at : at + 8]
        language = rng.choices([lang for lang, _ in LANGUAGE_MIX], [w for _, w in LANGUAGE_MIX])[0]
        week = pg.week_of(ended_ms)
        places = list(range(1, 9))
        rng.shuffle(places)
        before = [self.rating[i] for i in seats]
        deltas = rating_changes(before, places)
        tid = pg.player_id(rng)
        outcome = [
            pg.Seat(self.ids[i], self.nickname(i), p, r, r + d)
            for i, p, r, d in zip(seats, places, before, deltas, strict=True)
        ]
        self.charge(
            second,
            None,
            pg.summary_record(tid, language, ended_ms - 700_000, ended_ms, 8, outcome),
            transaction=False,
        )
        for i, seat, delta in zip(seats, outcome, deltas, strict=True):
            self.player(second, i, seat, delta, tid, language, week, ended_ms, outcome)

    def player(
        self,
        second: int,
        i: int,
        seat: pg.Seat,
        delta: int,
        tid: str,
        language: str,
        week: str,
        ended_ms: int,
        outcome: list[pg.Seat],
    ) -> None:
        pid = seat.player_id
        # the history transaction: history entry, statistics, weekly entry
        self.charge(
            second, None, pg.history_entry(seat, tid, language, ended_ms, outcome), transaction=True
        )
        stats = pg.stats_item(pid, 21, [language], week)
        self.charge(second, stats, stats, transaction=True)
        points = self.weekly.get((language, i), 0)  # on the board already (not Monday)
        new_points = points + delta
        self.charge(
            second,
            pg.weekly_entry(language, week, seat, points),
            pg.weekly_entry(language, week, seat, new_points),
            transaction=True,
        )
        self.weekly[(language, i)] = new_points
        # the best-rating update: 1 WCU, its condition held or not
        self.charge(second, None, {schema.PK: stats[schema.PK], "x": pg.av(1)}, transaction=False)
        # the board transaction (the PROFILE record): entry + histogram counters
        old_r, new_r = seat.rating_before, seat.rating_after
        self.changes += 1
        if old_r == new_r and self.rated[i]:
            return
        had = self.rated[i]
        if not had:
            self.first_entries += 1
        version = self.version[i]
        self.version[i] = version + 1
        self.charge(
            second,
            pg.rating_entry(pid, seat.nickname, old_r, version) if had else None,
            pg.rating_entry(pid, seat.nickname, new_r, version + 1),
            transaction=True,
        )
        shard = schema.histogram_shard(pid)
        block_old, block_new = old_r // schema.HISTOGRAM_BLOCK, new_r // schema.HISTOGRAM_BLOCK
        blocks = self.blocks[shard]
        if had and block_old != block_new:
            self.crossings += 1
        if not (self.peak.skip_same_block and had and block_old == block_new):
            old_item = pg.blocks_item(shard, blocks)
            if had:
                blocks[block_old] -= 1
            blocks[block_new] += 1
            self.charge(second, old_item, pg.blocks_item(shard, blocks), transaction=True)
        for block in sorted({block_old, block_new} if had else {block_new}):
            counts = self.values[(block, shard)]
            old_item = pg.values_item(block, shard, counts)
            if had and old_r // schema.HISTOGRAM_BLOCK == block:
                counts[old_r] -= 1
            if block == block_new:
                counts[new_r] += 1
            self.charge(second, old_item, pg.values_item(block, shard, counts), transaction=True)
        self.rating[i] = new_r
        self.rated[i] = True

    def reads(self) -> tuple[pg.ReadPlan, dict[str, float]]:
        """Read units of a rating board read from this population's items, and the RCU/s each
        partition serves at ``views_per_s`` (every view reads every rating shard's top and
        around, every block item and the value items of the viewer's block)."""
        peak = self.peak
        t = pg.build(pg.Shape(8, 32, 146, 693_000), seed=peak.seed)
        plan = pg.read_plan(t)
        top: dict[str, list[Any]] = defaultdict(list)
        for i in reversed(self.order[-20_000:]):
            entry = pg.index_entry(
                pg.rating_entry(self.ids[i], self.nickname(i), self.rating[i], 41)
            )
            pk = entry["board_pk"]["S"]
            if len(top[pk]) < pg.TOP_PER_SHARD:
                top[pk].append(entry)
        top_units = {pk: pg.read_units_of(es, per_item=False) for pk, es in top.items()}
        around = pg.read_units_of(next(iter(top.values()))[:5], per_item=False)
        views = peak.views_per_s if peak.views_per_s is not None else peak.changes_per_s
        rcu: dict[str, float] = defaultdict(float)
        for pk, u in top_units.items():
            rcu[f"gsi_board:{pk}"] += views * (u + 2 * around)
        for shard, counts in self.blocks.items():
            rcu[f"table:{schema.rank_blocks_key(shard)[schema.PK]}"] += views * (
                units.read_units(units.item_size(pg.blocks_item(shard, counts)), consistent=False)
            )
        share = Counter(r // schema.HISTOGRAM_BLOCK for r in self.rating)
        for (block, shard), counts in self.values.items():
            per = units.read_units(
                units.item_size(pg.values_item(block, shard, counts)), consistent=False
            )
            rcu[f"table:{schema.rank_values_key(block, shard)[schema.PK]}"] += (
                views * share[block] / len(self.rating) * per
            )
        top_total = sum(top_units.values())
        rank = sum(
            units.read_units(units.item_size(pg.blocks_item(s, c)), consistent=False)
            for s, c in self.blocks.items()
        ) + sum(
            units.read_units(units.item_size(pg.values_item(b, s, c)), consistent=False)
            for (b, s), c in self.values.items()
            if b == INITIAL_RATING // schema.HISTOGRAM_BLOCK
        )
        plan = pg.ReadPlan(
            profile=plan.profile,
            rating_top=top_total,
            rating_rank=rank,
            rating_around=2 * len(top) * around,
            rating_board=top_total + rank + 2 * len(top) * around + 0.5,
            weekly_board=plan.weekly_board,
            history_page=plan.history_page,
            replay=plan.replay,
        )
        return plan, dict(rcu)


def simulate(peak: Peak = Peak()) -> BoardLoad:
    """One run (module docstring)."""
    with histogram_shards(peak.histogram_shards):
        m = _Model(peak)
        per_s = peak.changes_per_s / 8
        start_ms = 1_800_000_000_000
        for second in range(peak.seconds):
            owed = per_s * (second + 1) - per_s * second
            for k in range(round(per_s * (second + 1)) - round(per_s * second)):
                m.tournament(second, start_ms + second * 1000 + int(1000 * k / max(1, owed)))
        reads, rcu = m.reads()
    return BoardLoad(
        peak=peak,
        spread=m.spread,
        wcu={k: sum(v) / peak.seconds for k, v in m.wcu.items()},
        wcu_peak_second={k: max(v) for k, v in m.wcu.items()},
        changes=m.changes,
        first_entries=m.first_entries,
        crossings=m.crossings,
        reads=reads,
        rcu=rcu,
    )


VARIANTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("spec: 8 histogram shards, block counters on every change", {"histogram_shards": 8}),
    (
        f"schema: {schema.HISTOGRAM_SHARDS} histogram shards",
        {"histogram_shards": schema.HISTOGRAM_SHARDS},
    ),
    (
        "8 histogram shards, block counters only when the block changes",
        {"histogram_shards": 8, "skip_same_block": True},
    ),
    (
        f"{schema.HISTOGRAM_SHARDS} histogram shards, block counters only when the block changes",
        {"histogram_shards": schema.HISTOGRAM_SHARDS, "skip_same_block": True},
    ),
)


def _pct(wcu: float, limit: float = WCU_LIMIT) -> str:
    return f"{100 * wcu / limit:.1f}%"


def table(runs: list[tuple[str, BoardLoad]]) -> str:
    labels = [label for label, _ in FAMILIES]
    lines = [
        "| variant | " + " | ".join(labels) + " | hottest key |",
        "|---|" + "---|" * (len(labels) + 1),
    ]
    for name, r in runs:
        fam = r.families
        cells = []
        for label in labels:
            if label in fam:
                k, w, p = fam[label]
                cells.append(f"`{k.split(':', 1)[1]}` {w:.0f} ({_pct(w)}; busiest s {p:.0f})")
            else:
                cells.append("-")
        k, w = r.hottest()
        lines.append(f"| {name} | " + " | ".join(cells) + f" | `{k}` **{_pct(w)}** |")
    return "\n".join(lines)


def report(runs: list[tuple[str, BoardLoad]], commit: str) -> str:
    """The section ``SECTION`` of ``RESULTS.md``: ``runs`` = (variant, result), the schema's
    own shard count among them (its name starts with "schema")."""
    return pg.reflow(_report(runs, commit))


def _report(runs: list[tuple[str, BoardLoad]], commit: str) -> str:
    r = next(b for name, b in runs if name.startswith("schema"))
    spec = runs[0][1]
    p = r.peak
    reads = r.reads
    rk, rw = r.hottest_read()
    views = p.views_per_s if p.views_per_s is not None else p.changes_per_s
    half_views = views * (RCU_LIMIT / 2) / rw
    sk, sw = spec.hottest()
    hk, hw = r.hottest()
    verdict = "below" if sw < WCU_LIMIT / 2 else "**not below**"
    rated = max(1, r.changes - r.first_entries)
    top_shard = reads.rating_top / schema.RATING_BOARD_SHARDS
    around_shard = reads.rating_around / schema.RATING_BOARD_SHARDS
    cached_views = (RCU_LIMIT / 2) / around_shard
    return f"""## {SECTION}

Regenerated by `python -m infra.simulation.boards --write` (`infra/simulation/boards.py`):
{p.players:,} players (ratings normal around {INITIAL_RATING}, sd {r.spread:.0f}: the spread the
rating code produces, `rating_spread`; {p.never_rated:.0%} never rated, no board entry),
{p.changes_per_s:,.0f} rating changes/s ({p.changes_per_s / 8:,.0f} tournament ends/s, 8
neighbours by rating, one language each: en 55%, es 12%, pt 8%, ...) for {p.seconds} simulated
s; each player's writes as designed (history transaction, best rating, board transaction with
the histogram counters; every player already on this week's board of the language) on the real
keys, charged by the simulation's partition model (1 WCU per KB, table writes in a transaction
2x, `gsi_board` 1x, a moved score = delete + put). Cells: the family's hottest partition key in
WCU/s averaged over the run (% of the 1,000 WCU/s per
partition key; the busiest second's WCU). Code: commit `{commit}`; seed {p.seed}.

{table(runs)}

{r.changes:,} rating changes, {r.first_entries:,} of them a player's first (a new board entry);
{100 * r.crossings / rated:.0f}% of the others cross a {schema.HISTOGRAM_BLOCK}-point block.
As specified (8 histogram shards, the block counters updated on every change) the hottest key
is `{sk.split(":", 1)[1]}` at {sw:.0f} WCU/s ({_pct(sw)}), {verdict} half the limit: every
change rewrites its shard's block counters (one small item: 1 WCU, 2 in the transaction), so
each of the 8 takes 2,000 / 8 x 2 = 500 WCU/s on average and more on the shard the ids favour.
`schema.HISTOGRAM_SHARDS` is therefore {schema.HISTOGRAM_SHARDS}: the hottest key is then
`{hk.split(":", 1)[1]}` at {hw:.0f} WCU/s ({_pct(hw)}); a rank read reads
2 x {schema.HISTOGRAM_SHARDS} small items instead of 2 x 8. Skipping
the block counters when the block does not change (their net change is 0) would also do, at 8
shards (third row); both combined: fourth row.

Reads (eventually consistent, from this population's items): top 100 of the rating board
{reads.rating_top:.1f} RCU ({schema.RATING_BOARD_SHARDS} Queries of {pg.TOP_PER_SHARD} index
entries,
{top_shard:.1f} RCU each); a rank {reads.rating_rank:.1f} RCU (BatchGetItem of the
{r.peak.histogram_shards} block items and the {r.peak.histogram_shards} value items of the
caller's block, 0.5 each); "around" {reads.rating_around:.1f} RCU (2 Queries of 5 per shard);
the whole rating board answer {reads.rating_board:.1f} RCU; the weekly board
{reads.weekly_board:.1f} RCU; a profile {reads.profile:.1f} RCU; a history page
{reads.history_page:.1f} RCU; a replay {reads.replay:.1f} RCU. Read load: every rating board
view queries every rating shard, so each shard serves {top_shard + around_shard:.1f} RCU per
view whatever the shard count. At {views:,.0f} views/s (one per rating change, an upper bound)
the hottest key is `{rk}` at {rw:,.0f} RCU/s ({_pct(rw, RCU_LIMIT)} of 3,000): half the read
limit is reached at about {half_views:,.0f} views/s. Caching the top 100 in the function for a
few seconds (the same for everyone) leaves "around" ({around_shard:.1f} RCU per shard and
view): about {cached_views:,.0f} views/s at half the limit; above that, "around" on request
only (not in every board answer).
"""


def write(text: str) -> None:
    current = RESULTS.read_text()
    pattern = re.compile(rf"(?ms)^## {re.escape(SECTION)}\n.*?(?=^## |\Z)")
    if pattern.search(current):
        updated = pattern.sub(lambda _: text.rstrip() + "\n\n", current)
    else:
        at = current.find("\n## ")
        updated = current[:at] + "\n" + text.rstrip() + "\n" + current[at:]
    RESULTS.write_text(updated.rstrip() + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=Peak.seconds)
    parser.add_argument("--players", type=int, default=Peak.players)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--write", action="store_true", help="update infra/simulation/RESULTS.md")
    args = parser.parse_args()
    runs = []
    for name, kw in VARIANTS:
        peak = Peak(players=args.players, seconds=args.seconds, seed=args.seed, **kw)
        runs.append((name, simulate(peak)))
        print(f"{name}: hottest {runs[-1][1].hottest()}", flush=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    text = report(runs, commit or "?")
    print(text)
    if args.write:
        write(text)
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
