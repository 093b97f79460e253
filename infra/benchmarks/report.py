"""Benchmarks: the results of one run as a summary table and as ``RESULTS.md``.

Every figure is printed beside its goal; proposals are computed from the same run (what the
counted calls would cost under each change), never typed in by hand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

GUESS_ROWS = ("guess (valid", "guess (winning", "guess (round-closing")


@dataclass
class Results:
    quick: bool
    started: str
    commit: str
    machine: str
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    seconds: float = 0.0
    calls: list[Any] | None = None
    items: Any = None
    layers: Any = None
    cold: Any = None
    cost: Any = None
    capacity: Any = None
    memory: list[Any] | None = None
    """Figure 3b: ``infra.benchmarks.memory.Sizing`` per function (with figure 3)."""
    progression: Any = None
    """Figure 3d: ``infra.benchmarks.progression.Bill`` (with figure 3)."""
    notes: list[str] = field(default_factory=list)


def _table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def _usd(x: float) -> str:
    return f"${x:.5f}"


# ------------------------------------------------------------------------------ figure 1
def _recipients(a: Any) -> int:
    return len({c.target for c in a.calls if c.op == "PostToConnection"})


def guess_floor(a: Any) -> tuple[bool, str]:
    """The brief's floor for a guess: 1 read + 1 conditional write + 1 post per recipient
    (+ at most 1 StartExecution); a round close may add the BatchGet of placed players and
    make the write a transaction."""
    ops = a.ops()
    gets = ops.get("Get", 0)
    writes = ops.get("Put", 0) + ops.get("Update", 0) + ops.get("TransactWrite", 0)
    starts = ops.get("StartExec", 0)
    per = a.posts / max(1, _recipients(a))
    db_ok = gets == 1 and writes == 1 and starts <= 1
    posts_ok = per <= 1.0
    why = []
    if not db_ok:
        why.append(f"{gets} Get, {writes} writes, {starts} StartExec")
    if not posts_ok:
        why.append(f"{per:.1f} posts per recipient")
    return db_ok and posts_ok, "; ".join(why) or "at the floor"


def calls_table(rows: list[Any]) -> str:
    body = []
    for a in rows:
        verdict = ""
        if a.action.startswith(GUESS_ROWS):
            ok, why = guess_floor(a)
            verdict = ("meets" if ok else "misses") + f" ({why})"
        body.append(
            [
                a.action,
                str(len(a.invocations)),
                a.ops_text(),
                f"{a.rru:g}",
                f"{a.wru:g}" + (f" + {a.gsi_wru:g}" if a.gsi_wru else ""),
                f"{a.posts} / {_recipients(a)}",
                verdict or a.note,
            ]
        )
    return _table(
        [
            "action",
            "Lambda inv.",
            "AWS calls",
            "RRU",
            "WRU (table + GSI)",
            "posts / recipients",
            "goal / note",
        ],
        body,
    )


# ------------------------------------------------------------------------------ figure 2
def _functions_of(module: str) -> str:
    from functions.routes import ROUTES, TIMERS, function_name

    names = sorted(
        function_name(spec)
        for spec in {**ROUTES, **TIMERS}.values()
        if spec.split(":")[0] == module
    )
    return ", ".join(dict.fromkeys(names))


def cold_table(c: Any) -> str:
    from infra.benchmarks.cold import (
        BASELINE_LABEL,
        FIRST_CALLS_LABEL,
        FIRST_GUESS_LABEL,
        GOAL_RATIO,
    )

    rows = []
    for label in c.samples:
        med = c.median(label)
        ratio = c.ratio(label)
        verdict = ""
        what = f"`{label}`"
        if label.startswith("functions"):
            verdict = "meets" if ratio <= GOAL_RATIO else "misses"
            what = f"`{label}` ({_functions_of(label)}): import + `container_deps()`"
        elif label == BASELINE_LABEL:
            what = f"**floor**: {label}"
        elif label == FIRST_GUESS_LABEL:
            made = " ".join(c.first_guess_operations) or "none"
            what = f"{label} (canned AWS answers; it made {made})"
            verdict = f"{c.first_guess_ratio:.2f}x its own floor (next row)"
        elif label == FIRST_CALLS_LABEL:
            what = f"floor of the first guess: {label}"
        rows.append(
            [
                what,
                f"{med:.0f}",
                f"{min(c.samples[label]):.0f}",
                f"{ratio:.2f}x",
                "{:.2f}-{:.2f}x".format(*c.ratio_spread(label)) if c.rounds >= 2 else "-",
                f"{c.cpu_median(label):.0f}",
                f"{c.cpu_ratio(label):.2f}x",
                verdict,
            ]
        )
    return _table(
        [
            "cold start",
            "median ms",
            "min ms",
            "vs floor",
            "per round vs floor (middle half)",
            "CPU ms",
            "CPU vs floor",
            f"goal <= {GOAL_RATIO}x",
        ],
        rows,
    )


def worst_handler(c: Any) -> tuple[str, float]:
    labels = [k for k in c.samples if k.startswith("functions.")]
    worst = max(labels, key=c.ratio)
    return worst, c.ratio(worst)


def worst_cpu_handler(c: Any) -> tuple[str, float]:
    labels = [k for k in c.cpu if k.startswith("functions.")]
    worst = max(labels, key=c.cpu_ratio)
    return worst, c.cpu_ratio(worst)


# ------------------------------------------------------------------------------ figure 1b
def items_table(r: Any) -> str:
    from infra.benchmarks import units

    return _table(
        ["layout", "item bytes", "WRU per write", "RRU per consistent read"],
        [
            [
                "schema 1 (before): named-field JSON in a String, connections and parties as Maps",
                f"{r.schema1_size_bytes:,}",
                f"{units.write_units(r.schema1_size_bytes)}",
                f"{units.read_units(r.schema1_size_bytes, consistent=True):g}",
            ],
            [
                "schema 2 (now): positional JSON, zlib, in a Binary",
                f"{r.size_bytes:,}",
                f"{r.wru}",
                f"{r.rru:g}",
            ],
        ],
    )


# ------------------------------------------------------------------------------ figure 3
def layers_table(r: Any) -> str:
    from infra.benchmarks.layers import LAYERS

    rows = [
        [layer, f"{r.layers[layer]:.3f}", f"{r.layers[layer] / r.total_ms:.0%}"] for layer in LAYERS
    ]
    rows.append(["**whole invocation**", f"**{r.total_ms:.3f}**", "100%"])
    rows.append(
        ["our code (invocation - botocore)", f"{r.own_ms:.3f}", f"{r.own_ms / r.total_ms:.0%}"]
    )
    rows.append(["floor: the same AWS calls, canned answers", f"{r.floor_ms:.3f}", ""])
    return _table(["layer", "CPU ms (median)", "share"], rows)


def cost_tables(r: Any) -> str:
    from infra.benchmarks import cost, play

    run = r.run
    lines = sorted(r.lines, key=lambda x: -x.usd)
    body = [
        [
            ln.item,
            f"{ln.quantity:,.1f} {ln.unit}",
            _usd(ln.usd),
            f"{100 * ln.usd / r.total:.0f}%",
            _usd(ln.floor_usd),
            ln.floor_why,
        ]
        for ln in lines
    ]
    body.append(
        [
            "**total (the built clock)**",
            "",
            f"**{_usd(r.total)}**",
            "100%",
            f"**{_usd(r.floor)}**",
            "the floor of this design (Step Functions clock, rulings 13-14)",
        ]
    )
    designs = [
        [
            d.name,
            str(d.executions),
            str(d.transitions) if d.transitions else "-",
            f"{d.express_gb_s:.1f}" if d.express_gb_s else "-",
            str(d.clock_invocations),
            _usd(d.sfn_usd),
            _usd(d.usd),
            _usd(r.total_with(d)),
            d.note,
        ]
        for d in r.designs
    ]
    posts, _ = cost.fanout(run)
    stats = (
        f"One tournament: {run.rounds} rounds, {run.duels} duels, {run.guesses} guesses "
        f"({run.guesses / max(1, run.duels):.1f} per duel), {run.skips} skips applied by the "
        f"clock, {run.invalid} refused words; {run.duration_ms / 60000:.1f} min of play "
        f"(simulated time); {len(run.invocations)} Lambda invocations "
        f"({r.counts['route_invocations']:.0f} routes + {r.counts['clock_invocations']:.0f} "
        f"clock); {posts} PostToConnection ({r.counts['post_bytes'] / max(1, posts):.0f} B "
        f"mean); {r.counts['start_executions']:.0f} StartExecution (intro and reconnect "
        f"timers, and successors at handovers; a turn starts nothing), "
        f"{r.counts['executions']:.0f} Express executions (handovers included) for "
        f"{r.counts['deadlines']:.0f} distinct deadlines (turn deadlines read from the "
        "`duel_start` and `turn` messages). "
        f"Liveness (ruling 14): {r.counts['pings']:.0f} pings (each player after "
        f"{play.PING_EVERY_MS / 1000:.0f} s without sending anything), answered by API Gateway "
        "itself "
        "(a MOCK route: no Lambda, no write), and "
        f"{r.counts['liveness_reads']:.0f} GetConnection reads of a connection's LastActiveAt "
        "(when a turn ran out or the 8th seat filled; not billed by API Gateway, the caller's "
        f"wait is): {_usd(r.counts['liveness_usd'])} of the total (ping and pong messages, "
        f"reads), of which {_usd(r.counts['stamp_usd'])} for the reads alone."
    )
    ms = sorted(i.ms for i in run.invocations)
    if ms:
        stats += (
            f" Handler wall time in-process on moto: median {ms[len(ms) // 2]:.0f} ms, "
            f"p90 {ms[int(0.9 * (len(ms) - 1))]:.0f} ms (moto included); own CPU per route "
            f"invocation {r.counts['route_own_cpu_ms']:.2f} ms, billed {r.counts['route_ms']:.1f} "
            f"ms with the AWS waits (clock {r.counts['clock_ms']:.1f} ms) at each function's "
            "configured memory (figure 3b). X-Ray in dev (active) would add "
            f"{_usd(r.counts['xray_dev_usd'])} per tournament."
        )
    return (
        stats
        + "\n\n"
        + _table(["item", "quantity", "cost", "share", "floor", "why not lower"], body)
        + "\n\nClock designs on the same timeline (cost = Step Functions + the clock "
        "function's Lambda requests/duration + its reads; the first row is the built clock as "
        "the interpreter of the deployed state machine ran it, the others are modelled from "
        "the play's deadlines: the intro and reconnect timers scheduled, and a turn deadline "
        "per `duel_start` and per `turn` message with a `deadline_ms` — the turn timers of "
        "the per-deadline design before; each modelled wait ends when the built one would, "
        "at the deadline plus the skip grace, on the whole second):\n\n"
        + _table(
            [
                "design",
                "executions",
                "transitions",
                "Express GB-s",
                "clock Lambda inv.",
                "Step Functions (SQS)",
                "clock total",
                "tournament total",
                "note",
            ],
            designs,
        )
    )


def _design(r: Any, prefix: str) -> Any:
    return next(d for d in r.designs if d.name.startswith(prefix))


def proposals(r: Any) -> list[tuple[str, float, float]]:
    """(change, tournament cost before, after) — each computed from this run's counts."""
    from infra.benchmarks import cost

    prices = r.prices
    wru_price = float(prices["dynamodb"]["write_request_unit"])
    msg_price = float(prices["apigateway_websocket"]["message"])
    best = r.best
    out = []
    total = r.total
    after_clock = r.total_with(best)
    if best is not r.built:
        out.append((f"clock: {best.name}", total, after_clock))
    saved_wru = r.counts["wru"] - r.counts["alt_wru"]
    after_zip = after_clock - saved_wru * wru_price
    out.append(
        ("DynamoDB: store the tournament document zlib-compressed (Binary)", after_clock, after_zip)
    )
    posts, frames = cost.fanout(r.run)
    after_frames = after_zip - (posts - frames) * msg_price
    out.append(
        (
            "API Gateway: one frame per recipient per invocation (a list of events)",
            after_zip,
            after_frames,
        )
    )
    return out


# ------------------------------------------------------------------------------ figure 4
def _runs_by_level(levels: list[Any]) -> dict[int, list[Any]]:
    """Tournament count -> its runs, in the order they ran."""
    runs: dict[int, list[Any]] = {}
    for lv in levels:
        runs.setdefault(lv.tournaments, []).append(lv)
    return runs


def capacity_table(c: Any) -> str:
    rows = []
    runs = _runs_by_level(c.levels)
    for lv in c.levels:
        same = runs[lv.tournaments]
        rows.append(
            [
                str(lv.tournaments)
                + (f" (run {same.index(lv) + 1} of {len(same)})" if len(same) > 1 else ""),
                f"{lv.started} / {lv.finished}",
                f"{lv.seconds:.0f}",
                f"{lv.guesses} ({lv.guesses_per_s:.1f}/s)",
                f"{lv.p50:.0f}",
                f"{lv.p99:.0f}",
                fmt_nan(lv.steady_p99),
                f"{fmt_nan(lv.bots_lag_p99)} / {fmt_nan(max(lv.bots_lag_ms, default=math.nan))}",
                f"{lv.judged_late} / {lv.sent_in_time}",
                f"{fmt_nan(lv.max_lateness_ms)} "
                f"({fmt_nan(max(lv.due_lateness_ms, default=math.nan))})",
                f"{lv.steady_cpu_pct:.0f}% ({fmt_nan(lv.steady_cpu_ms_per_guess)})",
                f"{lv.server_cpu_pct:.0f}% ({fmt_nan(lv.server_cpu_ms_per_guess)})",
                f"{lv.server_rss_mb:.0f} / {lv.server_peak_mb:.0f}",
                f"{lv.bots_cpu_s:.0f}",
                "; ".join(
                    (["cut off"] if lv.cut_off else [])
                    + ([lv.error] if lv.error else [])
                    + [f"{n}x {name}" for name, n in sorted(lv.server_errors.items())]
                ),
                "meets" if lv.meets else "misses",
            ]
        )
    return _table(
        [
            "tournaments at once",
            "started / finished",
            "s",
            "guesses",
            "p50 ms",
            "p99 ms",
            "p99 ms steady",
            "bots' loop lag p99 / max ms",
            "judged late / sent in time",
            "max deadline lateness ms after the wake (after due)",
            "server CPU steady (ms / guess)",
            "server CPU whole level (ms / guess)",
            "server RSS / peak MB",
            "bots CPU s",
            "cut off / errors (server log)",
            "goal",
        ],
        rows,
    )


def capacity_verdict(c: Any) -> str:
    """The largest level that meets every goal (p99, none judged late, lateness <= 1 s)."""
    from infra.benchmarks.capacity import GOAL_P99_MS, GOAL_TOURNAMENTS

    ok = {n: same for n, same in _runs_by_level(c.levels).items() if all(lv.meets for lv in same)}
    if not ok:
        return (
            f"No level met the goals (p99 < {GOAL_P99_MS:.0f} ms, no guess sent in time judged "
            f"late, no deadline more than 1 s late) in every run; the goal is "
            f"{GOAL_TOURNAMENTS} tournaments."
        )
    best = max(ok)
    same = ok[best]
    p99s = ", ".join(f"{lv.p99:.0f}" for lv in same)
    rates = ", ".join(f"{lv.guesses_per_s:.1f}" for lv in same)
    return (
        f"The largest level meeting every goal in every run: {best} human-paced tournaments "
        f"(p99 {p99s} ms; {rates} guesses/s{f' over {len(same)} runs' if len(same) > 1 else ''});"
        f" the goal is {GOAL_TOURNAMENTS}."
    )


# ------------------------------------------------------------------------------ summary
def summary_rows(res: Results) -> list[list[str]]:
    from infra.benchmarks.capacity import GOAL_P99_MS, GOAL_TOURNAMENTS
    from infra.benchmarks.clocks import SQS_DESIGN
    from infra.benchmarks.cost import GOAL_USD

    rows = []
    if res.calls is not None:
        guess = next(a for a in res.calls if a.action.startswith("guess (valid, turn"))
        meets, why = guess_floor(guess)
        closing = [a for a in res.calls if a.action.startswith("guess (round-closing")]
        worst = max(closing, key=lambda a: a.posts / max(1, _recipients(a)), default=None)
        extra = ""
        if worst is not None:
            extra = f"; round-closing guess: {worst.posts} posts to {_recipients(worst)}"
        rows.append(
            [
                "1. AWS calls, valid guess",
                guess.ops_text()
                + f", {guess.rru:g} RRU, {guess.wru + guess.gsi_wru:g} WRU"
                + extra,
                "1 read + 1 cond. write + 1 post/recipient (+<=1 StartExec)",
                ("meets" if meets else "misses") + f" ({why})",
            ]
        )
    if res.items is not None:
        it = res.items
        rows.append(
            [
                "1b. tournament item at its worst",
                f"{it.size_bytes:,} bytes: {it.wru} WRU per write, {it.rru:g} RRU per read "
                f"(schema 1: {it.schema1_size_bytes:,} bytes); codec {it.encode_us:.0f} µs "
                f"encode, {it.decode_us:.0f} µs decode",
                "<= 2 WRU, <= 1 RRU",
                "meets" if it.wru <= 2 and it.rru <= 1 else "misses",
            ]
        )
    if res.layers is not None:
        lr = res.layers
        rows.append(
            [
                "1c. CPU per valid guess by layer",
                f"{lr.total_ms:.2f} ms = {lr.ratio:.2f}x the botocore floor ({lr.floor_ms:.2f} ms"
                f", {' '.join(lr.operations)} canned); our code {lr.own_ms:.2f} ms",
                "near the floor (about 1.4x)",
                "measured",
            ]
        )
    if res.cold is not None:
        from infra.benchmarks.cold import GOAL_RATIO

        worst, ratio = worst_handler(res.cold)
        rows.append(
            [
                "2. cold start vs the floor (boto3 + 2 clients)",
                f"worst `{worst}` {ratio:.2f}x (floor {res.cold.baseline_ms:.0f} ms"
                + (
                    "; per round, middle half {:.2f}-{:.2f}x)".format(*res.cold.ratio_spread(worst))
                    if res.cold.rounds >= 2
                    else ")"
                )
                + "; CPU time: worst `{}` {:.2f}x".format(*worst_cpu_handler(res.cold))
                + (
                    f"; first guess handled: {res.cold.first_guess_ratio:.2f}x its floor"
                    if res.cold.first_guess_ratio is not None
                    else ""
                ),
                f"<= {GOAL_RATIO}x (goal 1.3x)",
                "meets" if ratio <= GOAL_RATIO else "misses",
            ]
        )
    if res.cost is not None:
        r = res.cost
        with_sqs = r.total_with(_design(r, SQS_DESIGN))
        why_not = []
        if r.floor > GOAL_USD:
            why_not.append("so does the floor of the Step Functions design")
        if with_sqs <= GOAL_USD:
            why_not.append("the SQS clock would meet it: a design decision")
        rows.append(
            [
                "3. cost per 8-player tournament",
                f"{_usd(r.total)} with the built clock (Express, one looping execution per "
                f"round); floor of this design {_usd(r.floor)} (each item at its floor, table "
                f"3); {_usd(r.total_with(r.before))} with the clock before (Standard, one "
                "execution per deadline); "
                f"{_usd(with_sqs)} with an SQS delay-queue clock "
                "(a model: it would replace Step Functions, a design decision)",
                f"<= ${GOAL_USD}",
                "meets"
                if r.total <= GOAL_USD
                else "misses" + (f" ({'; '.join(why_not)})" if why_not else ""),
            ]
        )
    if res.capacity is not None:
        levels = [lv for lv in res.capacity.levels if lv.latencies_ms]
        runs = _runs_by_level(levels)
        text = "no latency samples"
        verdict = "not measured"
        if runs:
            n = max(runs)
            top = runs[n]
            p50 = ", ".join(f"{lv.p50:.0f}" for lv in top)
            p99 = ", ".join(f"{lv.p99:.0f}" for lv in top)
            rate = ", ".join(f"{lv.guesses_per_s:.1f}" for lv in top)
            late = ", ".join(fmt_nan(lv.max_lateness_ms) for lv in top)
            text = (
                f"{n} human-paced tournaments at once"
                + (f", {len(top)} runs" if len(top) > 1 else "")
                + f": p50 {p50} ms, p99 {p99} ms, {rate} guesses/s, "
                f"{sum(lv.judged_late for lv in top)} judged late, deadline lateness max {late} ms"
            )
            kept = [k for k, same in runs.items() if all(lv.meets for lv in same)]
            verdict = (
                f"{'meets' if max(kept, default=0) >= GOAL_TOURNAMENTS else 'misses'} "
                f"({max(kept, default=0)} tournaments meet every goal in every run)"
            )
        rows.append(
            [
                "4. local capacity",
                text,
                f"{GOAL_TOURNAMENTS} tournaments, p99 < {GOAL_P99_MS:.0f} ms, none late",
                verdict,
            ]
        )
    return rows


def summary_table(res: Results) -> str:
    return _table(["figure", "measured", "goal", "verdict"], summary_rows(res))


def render(res: Results) -> str:
    from infra.benchmarks import clocks, cost, prices

    parts = [
        "# Benchmark results",
        "",
        "Generated by `python -m infra.benchmarks` (do not edit by hand; the analysis below the "
        "figures is computed from the same run). "
        + ("**Quick smoke run: small samples, not results.**" if res.quick else ""),
        "",
        f"- run: {res.started}, commit `{res.commit}`, {res.seconds:.0f} s",
        f"- machine: {res.machine}; load average before {res.load_before[0]:.1f}, after "
        f"{res.load_after[0]:.1f} (other work on the box shares the 2 cores: absolute times "
        "are noisy, the interleaved ratios less so)",
        "",
        "## Summary",
        "",
        summary_table(res),
    ]
    if res.calls is not None:
        parts += [
            "",
            "## 1. AWS calls per action",
            "",
            "Real adapters: DynamoStore and ApiGatewayNotifier on moto, counted with a botocore "
            "`provide-client-params` / `after-call` hook on each client, only while a handler "
            "runs; StepFunctionsClock on the local interpreter of the deployed state machine "
            "(`infra.emulator.states`, manual time), each of its `start_execution` calls counted "
            "as a StartExecution (a successor's, started by the StartSuccessor Task, on the wake "
            "that handed over). Capacity units are **computed from item sizes by DynamoDB's "
            "rules** (moto reports fixed numbers): strongly consistent reads ceil(size/4 KB), "
            "Query eventually consistent (half), writes ceil(max(old, new)/1 KB), "
            "transactions x2, failed conditions still charged; GSI writes separately "
            "(KEYS_ONLY `gsi_due`: 2 WRU when `due_ms` changes; INCLUDE `gsi_lobbies`: its small "
            "entry rewritten at every seat). "
            "Abbreviations: Get = GetItem, Put = PutItem, TransactWrite = TransactWriteItems, "
            "Post = PostToConnection, DelConn = DeleteConnection, StartExec = StartExecution.",
            "",
            calls_table(res.calls),
        ]
    if res.items is not None:
        it = res.items
        parts += [
            "",
            "## 1b. The tournament item at its worst",
            "",
            "Built on purpose, not played (`infra.benchmarks.items`): 8 players with 20-letter "
            "Cyrillic nicknames, all disconnected with reconnect deadlines, rated; 4 duels of "
            "12 rows of 6 random Russian letters (2 UTF-8 bytes each; random letters compress "
            "worse than words); 12 used secrets; production id lengths (16 hex digits; "
            "16-character connection ids). Sizes by DynamoDB's rules, as `DynamoStore` writes "
            "the item.",
            "",
            items_table(it),
            "",
            f"Codec CPU (median of process-time samples): encode {it.encode_us:.0f} µs, decode "
            f"{it.decode_us:.0f} µs per call; the schema-1 JSON of the same record is "
            f"{it.json_bytes:,} bytes before compression.",
        ]
    if res.layers is not None:
        lr = res.layers
        parts += [
            "",
            "## 1c. CPU per action by layer",
            "",
            f"`{lr.action}`, recorded on moto ({', '.join(lr.operations)}), then replayed "
            f"{lr.repeat} times in-process on the deployed path (`functions.messages`, the real "
            "DynamoStore and ApiGatewayNotifier) with boto3 clients whose requests never leave "
            "botocore: a `before-send` hook answers each with the recorded response, so botocore "
            "still validates, serialises, signs and parses (`infra.benchmarks.layers`). Process "
            "CPU is charged to the innermost layer running (timing proxies around the ports, the "
            "codec, the protocol and the use case; the Powertools wrapper is left out). The floor "
            "is the same calls with the same parameters and answers made directly on the "
            f"clients. One replay made: {' '.join(lr.replayed_operations)}.",
            "",
            layers_table(lr),
        ]
    if res.cold is not None:
        c = res.cold
        parts += [
            "",
            "## 2. Cold start",
            "",
            f"Median wall time of a fresh `python -c '...'` over {c.rounds} interleaved, "
            "shuffled rounds (interpreter start included in every row, `pass` shows it; the "
            "CPU columns: the child's user + system time, which waiting for a core on a loaded "
            "machine does not inflate), each "
            "run as deployed: the runtime's Python with only the code asset and the dependency "
            "layer (built for this CPU) on `sys.path`, both loading the unchecked-hash bytecode "
            "they ship (`infra.cdk.bytecode`); the floor's boto3 comes from the same layer. A "
            "handler's row imports its module and builds its dependencies as the first "
            "invocation does (`functions._entry.container_deps()`: settings, boto3 clients, "
            "adapters); the floor imports boto3 and builds a DynamoDB and an API Gateway "
            "Management API client. Clients a path may not need (Step Functions; the Management "
            "API, which `$connect` never calls) are built on first use. The first-guess rows "
            "add what a cold container defers to its first "
            "message: the guess function's first message through its Lambda handler (a valid "
            "guess recorded on moto, the container's clients answering with the recorded "
            "responses), beside its own floor (the clients built and the same AWS calls made "
            "once with the same answers). The machine is shared, so one round's ratio strays: "
            "the middle half of the per-round ratios (a row over the floor in the same round) "
            "stands beside the ratio of the medians, which the verdict uses. Every row runs "
            "with the functions' interpreter variables (`PYDANTIC_DISABLE_PLUGINS=__all__`: no "
            "scan of the installed distributions for pydantic plugins).",
            "",
            cold_table(c),
            "",
            f"`python -X importtime -c 'import {c.importtime_module}'` (slowest handler): self "
            "time by top-level package —",
            "",
            _table(
                ["package", "self ms"],
                [[f"`{name}`", f"{ms:.0f}"] for name, ms in c.by_package[:10]],
            ),
            "",
            "Heaviest subtrees (cumulative ms, nested):",
            "",
            _table(
                ["module", "cumulative ms"],
                [[f"`{name}`", f"{ms:.0f}"] for name, ms in c.top_modules[:12]],
            ),
        ]
    if res.cost is not None:
        r = res.cost
        p = r.prices
        parts += [
            "",
            "## 3. Cost per 8-player tournament",
            "",
            f"List prices from `prices.json` ({p['region']}, as of {p['as_of']}; sources in the "
            f"file). Lambda duration measured (own CPU + AWS waits of "
            f"{', '.join(f'{k} {v:.0f} ms' for k, v in prices.CALL_LATENCY_MS.items())}; "
            f"CPU stretched by the memory's share of a vCPU, {prices.VCPU_MB} MB = 1 vCPU) at "
            "each function's configured memory (from the CDK source), arm64; "
            f"{cost.CONNECTION_MINUTES_PER_PLAYER:.0f} "
            "connection minutes per player; Standard: 2 transitions per deadline execution "
            "(Wait, Task), 3 per loop wake + 1; Express: 64 MB, the wait is billed, "
            f"{clocks.CLOCK_TASK_MS} ms per clock task; no free tiers. Play: scripted players on "
            "the harness, think 3–15 s per turn, 4% of turns time out, 5% refused words, duels "
            "solved after 4–8 rows.",
            "",
            cost_tables(r),
            "",
            "### What dominates, and what was changed",
            "",
        ]
        top = max(r.lines, key=lambda x: x.usd)
        built, before = r.built, r.before
        gaps = sorted(r.lines, key=lambda x: x.floor_usd - x.usd)
        parts.append(
            f"- Floor: each item at its least for this play under the design (a Step Functions "
            f"clock) and the rulings sums to {_usd(r.floor)} against {_usd(r.total)} as built "
            f"(goal ${cost.GOAL_USD}). The largest gaps: "
            + "; ".join(
                f"{ln.item.split(' (')[0]} {_usd(ln.usd - ln.floor_usd)}"
                for ln in gaps[:3]
                if ln.usd > ln.floor_usd
            )
            + ". The items at their floor are fixed by the rulings (a ping every 20 s answered "
            "by pong, one frame per recipient per change) or by the play itself."
        )
        model = _design(r, "Express, one looping execution per round (model)")
        parts.append(
            f"- **{top.item}** is the largest item: {_usd(top.usd)} of {_usd(r.total)} "
            f"({100 * top.usd / r.total:.0f}%)."
        )
        parts.append(
            f"- The clock: {_usd(built.usd)} per tournament as built ({built.executions} Express "
            f"executions, {built.express_gb_s:.1f} GB-s, {built.clock_invocations} clock "
            f"invocations) against {_usd(before.usd)} for the design before ({before.executions} "
            f"Standard executions, {before.transitions} transitions, one clock invocation per "
            "deadline, most for turns whose guess came first). The model of the built design "
            "(the per-round Express row) is within "
            f"{_usd(abs(model.usd - built.usd))}"
            " of the measured figure."
        )
        if r.best is not built:
            parts.append(
                f"- Cheapest correct clock on this play: **{r.best.name}** — {_usd(r.best.usd)} "
                f"({r.best.note})."
            )
        parts += [
            "",
            _table(
                ["optimisation made", "before", "after"],
                [
                    [
                        "clock: Standard, one execution per deadline -> Express, one looping "
                        "execution per round",
                        _usd(r.total_with(before)),
                        _usd(r.total),
                    ]
                ],
            ),
        ]
        parts += [
            "",
            _table(
                ["further proposed change (cumulative)", "before", "after"],
                [[name, _usd(a), _usd(b)] for name, a, b in proposals(r)],
            ),
        ]
    parts += memory_and_storage(res)
    if res.progression is not None:
        from infra.benchmarks import progression

        parts += ["", progression.section(res.progression).rstrip()]
    if res.capacity is not None:
        c = res.capacity
        parts += [
            "",
            "## 4. Local capacity",
            "",
            f"Emulator alone in a child process (@connections called in-process, embedded moto "
            f"DynamoDB in its own process over a pipe, local clock, real handlers on a worker "
            f"pool sized to the cores plus one, queued work taken guess first, then the clock, "
            f"then the rest); 8 bots "
            f"per tournament in the benchmark process, human-paced: think time lognormal "
            f"(median {c.think_median_s:g} s, sigma {c.think_sigma:g}) capped by the turn clock "
            f"({c.turn_seconds:.0f} s), {c.timeout_rate:.0%} of turns left to time out, intro "
            f"{c.intro_seconds:g} s; tournaments arrive at random within {c.ramp_seconds:.0f} s "
            f"and each level is cut off after {c.level_seconds:.0f} s; a level run more "
            "than once (the largest, on a full run: one run's p99 strays on a shared machine) "
            "meets only if every run does, each with a fresh emulator. Latency: guess sent -> "
            "the row received by the opponent. Judged late: guesses sent before their deadline "
            "refused `turn_over`. Deadline lateness: a skipped turn's row or a duel start "
            "reaching the player, minus the clock's wake (the due time rounded up to the "
            "second, as the Step Functions Wait does); in brackets, minus the due time. CPU "
            "from /proc (user + system; the emulator with its DynamoDB process and "
            "forkserver, RSS summed over the three); steady: from 15 s after the last arrival "
            "(no joins). "
            "Bots' loop lag: how late a 20 ms sleep wakes in the bots' process (8 bots per "
            "tournament on one event loop); a row's arrival is noted when that loop gets to "
            "it, so up to this much of a latency sample is the load generator's own. The "
            "machine is shared: figures are noisy.",
            "",
            capacity_table(c),
            "",
            capacity_verdict(c),
        ]
    parts += ["", "## Notes", "", *[f"- {n}" for n in notes(res) + res.notes]]
    return "\n".join(parts) + "\n"


def notes(res: Results) -> list[str]:
    """Computed remarks: sensitivities, what limits each figure, method caveats."""
    from infra.benchmarks import prices

    out = []
    if res.cold is not None and res.cold.top_modules:
        c = res.cold
        name, ms = c.top_modules[0]
        worst, _ = worst_handler(c)
        after = (c.median(worst) - ms) / c.baseline_ms
        out.append(
            f"Cold start: the heaviest subtree of `{c.importtime_module}` is `{name}` "
            f"({ms:.0f} ms cumulative under -X importtime). Not importing it on the cold path "
            f"would bring `{worst}` from {c.ratio(worst):.2f}x to about {after:.2f}x of the "
            "floor (estimate: median minus that subtree)."
        )
    if res.cost is not None:
        r = res.cost
        ms = r.counts["route_ms"]
        duration = sum(
            prices.waits_ms(i) / 1000 * prices.memory_mb_of(i) / 1024 for i in r.run.invocations
        ) * float(r.prices["lambda"]["gb_second_arm64"])
        out.append(
            f"Sensitivity: every AWS wait doubled (Lambda at about {2 * ms:.0f} ms instead of "
            f"{ms:.0f} ms) adds {_usd(duration)}; the clock's Express duration is "
            "billed from each execution's start to its end (the waits; the interpreter's "
            "history), plus the clock task per wake, rounded up to 100 ms."
        )
        out.append(
            "Why one loop per round is correct: each wake applies every deadline due (earliest "
            "first) and returns the round's earliest pending one; within a round a deadline is "
            "only replaced by one no earlier (a guess sets now + 30 s, a skip old + 30 s) and the "
            "next wake is the earliest of those pending, so nothing can fall due before it; a "
            "new round brings its own intro timer and loop. Duplicate Express executions are "
            "harmless "
            "(the clock function only applies what is due); an execution hands over to a "
            "successor before Express's 5-minute limit; the watchdog applies a dead loop's "
            "overdue deadline and restarts the round's loop."
        )
    if res.capacity is not None and res.capacity.levels:
        busiest = max(res.capacity.levels, key=lambda lv: lv.server_cpu_s)
        if busiest.guesses:
            retries = sum(lv.server_errors.get("TryAgainError", 0) for lv in res.capacity.levels)
            out.append(
                f"Capacity: the handlers, gateway and clock are one Python process (one core at "
                f"most, the GIL), moto's DynamoDB another; at {busiest.tournaments} tournaments "
                f"they used {busiest.steady_cpu_pct:.0f}% of a core in the steady part "
                f"({busiest.steady_own_cpu_pct:.0f}% the emulator's own, the rest DynamoDB; "
                f"{fmt_nan(busiest.steady_cpu_ms_per_guess)} ms of CPU per delivered guess: the "
                f"guess, the clock, pings and pushes) and {busiest.server_cpu_pct:.0f}% over the "
                f"whole level "
                f"(joins and sessions during the arrivals); TryAgainError in the server log: "
                f"{retries}x."
            )
        out.append(
            "The capacity bots join one at a time (a semaphore released at each bot's first "
            "`lobby` event): joined all at once, two joins can each find no waiting lobby and "
            "each create one, leaving lobbies that never fill, and many joins on one lobby "
            "exhaust its retries (`try_again`)."
        )
    return out


def fmt_nan(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.0f}"


# ------------------------------------------------------------------------- figures 3b, 3c
def right_sized_total(res: Results) -> float | None:
    """The tournament's total with every function at its right size (figure 3b)."""
    if res.cost is None or res.memory is None:
        return None
    delta = sum(m.at(m.chosen_mb).usd - m.at(m.configured_mb).usd for m in res.memory)
    return float(res.cost.total + delta)


def memory_and_storage(res: Results) -> list[str]:
    """The sections of figure 3b (memory against cost) and 3c (storage), when measured."""
    from infra.benchmarks import memory, prices

    parts: list[str] = []
    if res.memory is not None and res.cost is not None:
        cold_note = (
            "cold starts: figure 2's median CPU per handler"
            if res.cold is not None
            else "cold starts not measured in this run (figure 2 left out): warm goal only"
        )
        rows = []
        for m in res.memory:
            conf, best = m.at(m.configured_mb), m.at(m.chosen_mb)

            def cell(c: Any) -> str:
                cold = "-" if c.cold_ms is None else f"{c.cold_ms:.0f}"
                return f"{c.memory_mb} MB: {c.warm_ms:.1f} / {cold} ms, {_usd(c.usd)}" + (
                    "" if c.meets else " (misses)"
                )

            rows.append(
                [
                    f"`{m.module}`",
                    str(m.invocations),
                    f"{m.cpu_ms:.2f}",
                    f"{m.waits_ms:.1f}",
                    "-" if m.cold_cpu_ms is None else f"{m.cold_cpu_ms:.0f}",
                    cell(conf),
                    cell(best)
                    if m.invocations or m.chosen_mb != m.configured_mb
                    else "not invoked: kept",
                ]
            )
        total = right_sized_total(res)
        parts += [
            "",
            "## 3b. Memory against cost, per function",
            "",
            "Each function at each candidate memory (`infra.benchmarks.memory`): CPU per "
            "invocation measured on the play (own CPU + "
            f"{prices.CLIENT_CPU_MS_PER_CALL} ms of AWS client per call) stretched by the "
            f"memory's share of a vCPU ({prices.VCPU_MB} MB = 1 vCPU), plus the AWS waits; "
            f"{cold_note}, stretched the same way (AWS bills the INIT phase). Goals: at most "
            f"{memory.WARM_CPU_GOAL_MS:.0f} ms of CPU per warm invocation, a cold start within "
            f"{memory.COLD_GOAL_MS:.0f} ms. The right size is the cheapest candidate meeting "
            "both; a function the play did not invoke keeps its configured memory unless its cold "
            "start misses the goal there. Cost: its "
            "invocations in this tournament (requests + duration).",
            "",
            _table(
                [
                    "function",
                    "invocations",
                    "CPU ms (1 vCPU)",
                    "AWS waits ms",
                    "cold start CPU ms (1 vCPU)",
                    "configured: warm / cold ms, per tournament",
                    "right size: warm / cold ms, per tournament",
                ],
                rows,
            ),
            "",
            f"All-in per tournament at the configured memory: {_usd(res.cost.total)}; at the "
            f"right sizes: {_usd(total or 0.0)}; the floor of this design: "
            f"{_usd(res.cost.floor)}.",
        ]
    storage = getattr(res.cost, "storage", None) if res.cost is not None else None
    if storage is not None and storage.items:
        from infra.benchmarks import storage as st

        summary = st.summary(storage, res.cost.prices)
        rows = [[k, f"{v:,.0f}"] for k, v in summary["per_tournament_by_kind"].items()]
        parts += [
            "",
            "## 3c. Storage",
            "",
            "The table as the play left it, scanned on moto (`infra.benchmarks.storage`): sizes "
            f"by DynamoDB's rules plus {st.ITEM_OVERHEAD_BYTES} bytes of overhead per item, "
            "each held until its TTL; items without one (`RATING#`) billed for "
            f"{st.KEPT_MONTHS} months in the cost per tournament.",
            "",
            _table(["a tournament adds", "bytes"], rows),
            "",
            f"- a player at rest: {summary['per_player_bytes']:,.0f} bytes (profile "
            f"{summary['profile_bytes']:,.0f}, current token {summary['token_bytes']:,.0f});",
            f"- kept for good per tournament: {summary['kept_bytes_per_tournament']:,.0f} bytes;",
            f"- at {summary['target_players']:,} concurrent players "
            f"({summary['tournaments_per_month']:,.0f} tournaments a month): "
            f"{summary['steady_gb']:,.0f} GB of expiring items at steady state, "
            f"{summary['monthly_growth_gb']:,.1f} GB a month of kept ones "
            f"(${summary['monthly_growth_usd']:,.2f} more each month, storage + PITR);",
            f"- players a script creates and abandons at prod's `$connect` throttle "
            f"({summary['abuse_creates_per_s']:g}/s): at most {summary['abuse_gb']:,.0f} GB "
            f"(${summary['abuse_usd']:,.0f} a month), removed by TTL a token lifetime later.",
        ]
    return parts


def results_json(res: Results) -> dict[str, Any]:
    """The figures the docs quote (``infra.benchmarks.figures``), from the same run."""
    out: dict[str, Any] = {"run": {"started": res.started, "commit": res.commit}}
    if res.cost is not None:
        r = res.cost
        out["cost"] = {
            "total": r.total,
            "floor": r.floor,
            "right_sized_total": right_sized_total(res) or r.total,
            "duration_s": r.run.duration_ms / 1000,
            "players": r.run.players,
            "rounds": r.run.rounds,
            "guesses": r.run.guesses,
            "counts": dict(r.counts),
            "clock": {
                "built_usd": r.built.usd,
                "best_name": r.best.name,
                "best_usd": r.best.usd,
                "best_total": r.total_with(r.best),
            },
            "lines": [
                {
                    "item": ln.item,
                    "usd": ln.usd,
                    "floor_usd": ln.floor_usd,
                    "share": ln.usd / r.total,
                }
                for ln in sorted(r.lines, key=lambda x: -x.usd)
            ],
        }
        if getattr(r, "storage", None) is not None and r.storage.items:
            from infra.benchmarks import storage as st

            out["storage"] = st.summary(r.storage, r.prices)
    if res.progression is not None:
        from infra.benchmarks import progression

        out["progression"] = progression.results_json(res.progression)
    if res.memory is not None:
        out["memory"] = [
            {
                "module": m.module,
                "configured_mb": m.configured_mb,
                "chosen_mb": m.chosen_mb,
                "invocations": m.invocations,
                "cpu_ms": m.cpu_ms,
                "waits_ms": m.waits_ms,
                "cold_cpu_ms": m.cold_cpu_ms,
            }
            for m in res.memory
        ]
    return out
