"""Figures in the docs, generated: counts, sums and prices read from the synthesized templates
(every stage of ``infra.cdk.stack.STAGES``, synthesized when this runs) and from the last
benchmark run (``RESULTS_JSON``, written with ``RESULTS.md``), never typed by hand.

    python -m infra.benchmarks.figures [--write | --check]

A figure sits in a document between marker comments, ``<!-- figures:begin NAME -->`` and
``<!-- figures:end -->`` (inline or over several lines); ``--write`` rewrites what is between
them from ``render(NAME)``, ``--check`` (the default) lists the blocks that differ and exits 1.
``tests/tools/cdk/test_figures.py`` fails on any drift. Documents: ``DOCUMENTS``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS_JSON = Path(__file__).with_name("results.json")
"""The figures of the last full benchmark run (``python -m infra.benchmarks``)."""
DOCUMENTS = (
    ROOT / "infra" / "README.md",
    ROOT / "infra" / "CAPACITY.md",
    ROOT / "infra" / "RUNBOOK.md",
)
BLOCK = re.compile(
    r"(<!-- figures:begin (?P<name>[\w.-]+) -->)(?P<body>.*?)(<!-- figures:end -->)", re.S
)
ACCOUNT_CONCURRENCY = 1000
"""Lambda's default concurrency quota per account and region, of which 100 must stay
unreserved (https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html)."""
UNRESERVED_MINIMUM = 100
SATURATION_MIN = 5
"""A function gets a saturation alarm when its reservation is at least this
(``infra.cdk.constructs.monitoring``: for a smaller one no warning can come before a throttle)."""


# ----------------------------------------------------------------------------- the templates
def synth_templates() -> dict[str, dict[str, Any]]:
    """Stage -> its synthesized CloudFormation template (parsed), as the tests synthesize them:
    in-process, a stub dependency layer, prod with its two alarm topics."""
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from aws_cdk import App

    from infra.cdk.app import add_stage
    from infra.cdk.stack import STAGES

    layer_dir = Path(tempfile.mkdtemp(prefix="figures-layer-"))
    (layer_dir / "python").mkdir()
    (layer_dir / "python" / "README.txt").write_text("stub layer: figures build no wheels\n")
    app = App(outdir=tempfile.mkdtemp(prefix="figures-cdk-"), analytics_reporting=False)
    page, ticket = (f"arn:aws:sns:us-east-1:111111111111:{t}" for t in ("page", "ticket"))
    stacks = {
        stage: add_stage(
            app,
            stage,
            layer_dir=layer_dir,
            page_topic_arn=page if stage == "prod" else None,
            ticket_topic_arn=ticket if stage == "prod" else None,
        )
        for stage in STAGES
    }
    assembly = app.synth()
    return {s: assembly.get_stack_by_name(st.stack_name).template for s, st in stacks.items()}


def _of_type(template: dict[str, Any], type_name: str) -> list[dict[str, Any]]:
    return [
        r.get("Properties", {}) for r in template["Resources"].values() if r["Type"] == type_name
    ]


def alarm_metrics(template: dict[str, Any]) -> int:
    """Metrics the template's metric alarms are billed for: one per single-metric alarm, one
    per ``MetricStat`` of a metric-math alarm (CloudWatch pricing: "per alarm metric")."""
    total = 0
    for alarm in _of_type(template, "AWS::CloudWatch::Alarm"):
        if "Metrics" in alarm:
            total += sum(1 for m in alarm["Metrics"] if "MetricStat" in m)
        else:
            total += 1
    return total


def published_metric_names() -> set[str]:
    """The custom metric names the code publishes (``metrics("Name"`` through
    ``Deps.metrics``, ``add_metric(name="Name"``), read from the source."""
    pattern = re.compile(r"""(?:metrics\(\s*|add_metric\(\s*name=)["']([A-Za-z]+)["']""")
    names: set[str] = set()
    for folder in ("functions", "shared"):
        for path in (ROOT / folder).rglob("*.py"):
            names.update(pattern.findall(path.read_text()))
    return names


def custom_metrics(template: dict[str, Any]) -> int:
    """Custom metrics a stage can publish: the code's names and its log metric filters'."""
    filters = {
        t["MetricName"]
        for f in _of_type(template, "AWS::Logs::MetricFilter")
        for t in f.get("MetricTransformations", [])
    }
    return len(published_metric_names() | filters)


def fixed_month_usd(template: dict[str, Any], prices: dict[str, Any]) -> float:
    """What a stage costs a month whatever it serves: its alarm metrics, composite alarms,
    dashboards and custom metrics at ``prices.json``'s CloudWatch prices."""
    cw = prices["cloudwatch"]
    return (
        alarm_metrics(template) * float(cw["alarm_metric_month"])
        + len(_of_type(template, "AWS::CloudWatch::CompositeAlarm"))
        * float(cw["composite_alarm_month"])
        + len(_of_type(template, "AWS::CloudWatch::Dashboard")) * float(cw["dashboard_month"])
        + custom_metrics(template) * float(cw["custom_metric_month"])
    )


def template_figures(
    templates: dict[str, dict[str, Any]], prices: dict[str, Any]
) -> dict[str, Any]:
    """Name -> value of every figure read from the templates (per stage: ``<stage>.<name>``);
    ``all.reserved`` sums the stages of ``infra.cdk.stack.STAGES`` only (a variant such as the
    tests' edge-guarded prod is not a stage one deploys beside the others)."""
    from infra.cdk.stack import STAGES

    out: dict[str, Any] = {}
    reserved_all = 0
    for stage, t in templates.items():
        functions = _of_type(t, "AWS::Lambda::Function")
        ours = [f for f in functions if str(f.get("Handler", "")).startswith("functions.")]
        reserved = sum(int(f.get("ReservedConcurrentExecutions", 0)) for f in ours)
        if stage in STAGES:
            reserved_all += reserved
        out[f"{stage}.alarms"] = len(_of_type(t, "AWS::CloudWatch::Alarm"))
        out[f"{stage}.composite_alarms"] = len(_of_type(t, "AWS::CloudWatch::CompositeAlarm"))
        out[f"{stage}.alarm_metrics"] = alarm_metrics(t)
        out[f"{stage}.dashboards"] = len(_of_type(t, "AWS::CloudWatch::Dashboard"))
        out[f"{stage}.custom_metrics"] = custom_metrics(t)
        out[f"{stage}.functions"] = len(ours)
        out[f"{stage}.reserved"] = reserved
        out[f"{stage}.saturation"] = sum(
            1 for f in ours if int(f.get("ReservedConcurrentExecutions", 0)) >= SATURATION_MIN
        )
        out[f"{stage}.fixed_month_usd"] = fixed_month_usd(t, prices)
        out[f"{stage}.memory_mb"] = sorted(int(f["MemorySize"]) for f in ours)
    out["all.reserved"] = reserved_all
    out["account.reservable"] = ACCOUNT_CONCURRENCY - UNRESERVED_MINIMUM
    return out


# ----------------------------------------------------------------------------- rendering
def _usd(x: float, digits: int = 5) -> str:
    return f"${x:.{digits}f}"


def _n(x: float) -> str:
    return f"{x:,.0f}"


def renderers(fig: dict[str, Any], res: dict[str, Any]) -> dict[str, Callable[[], str]]:
    """Block name -> the text it holds, from the template figures ``fig`` and the benchmark's
    ``res`` (``RESULTS_JSON``)."""
    cost = res.get("cost", {})
    storage = res.get("storage", {})
    memory = res.get("memory", [])

    def alarms_by_stage() -> str:
        return f"{fig['dev.alarms']} alarms in dev, {fig['prod.alarms']} in prod"

    def fixed_monthly() -> str:
        lines = []
        for stage in ("prod", "dev"):
            lines.append(
                f"{stage}: {fig[f'{stage}.alarms']} standard alarms with "
                f"{fig[f'{stage}.alarm_metrics']} alarm metrics, "
                f"{fig[f'{stage}.composite_alarms']} composite alarm(s), "
                f"{fig[f'{stage}.dashboards']} dashboard(s) and "
                f"{fig[f'{stage}.custom_metrics']} custom metric names: "
                f"**${fig[f'{stage}.fixed_month_usd']:.2f} a month**"
            )
        return "; ".join(lines)

    def per_tournament_items() -> str:
        rows = [
            f"- {line['item']}: {_usd(line['usd'])} ({line['share']:.0%}; floor "
            f"{_usd(line['floor_usd'])})"
            for line in cost.get("lines", [])
        ]
        return "\n" + "\n".join(rows) + "\n"

    def memory_table() -> str:
        head = (
            "| function | configured MB | right-sized MB (measured) | invocations per "
            "tournament | CPU ms per invocation (1 vCPU) | AWS waits ms | cold start CPU ms "
            "(1 vCPU) |\n|---|---|---|---|---|---|---|"
        )
        rows = [
            f"| `{m['module']}` | {m['configured_mb']} | {m['chosen_mb']} | {m['invocations']} "
            f"| {m['cpu_ms']:.2f} | {m['waits_ms']:.1f} | "
            + ("-" if m["cold_cpu_ms"] is None else f"{m['cold_cpu_ms']:.0f}")
            + " |"
            for m in memory
        ]
        return "\n" + head + "\n" + "\n".join(rows) + "\n"

    def storage_text() -> str:
        s = storage
        return (
            f"\nA player at rest holds **{_n(s['per_player_bytes'])} bytes** (its profile "
            f"{_n(s['profile_bytes'])} and its current token's item {_n(s['token_bytes'])}, "
            "DynamoDB's 100 bytes of overhead per item included), until a token lifetime (30 "
            "days) after its last session. A tournament adds "
            f"**{_n(s['per_tournament_bytes'])} bytes**: "
            + ", ".join(f"{k} {_n(v)}" for k, v in s["per_tournament_by_kind"].items())
            + f"; of those, {_n(s['kept_bytes_per_tournament'])} bytes (the players' `RATING#` "
            "items) are kept for good, the rest goes by TTL (tournament and lobby 7 days after "
            "the end, connections 3 hours, tokens 30 days). At the plan's target "
            f"({_n(s['target_players'])} concurrent players, "
            f"{_n(s['tournaments_per_month'])} tournaments a month) the table holds about "
            f"**{s['steady_gb']:,.0f} GB** of expiring items at steady state and grows by "
            f"**{s['monthly_growth_gb']:,.1f} GB a month** of kept ones "
            f"(${s['monthly_growth_usd']:,.2f} more each month with PITR). A script creating "
            "and abandoning players at prod's `$connect` throttle "
            f"({s['abuse_creates_per_s']:g}/s) "
            f"holds at most {s['abuse_gb']:,.0f} GB (${s['abuse_usd']:,.0f} a month): TTL "
            "removes each a lifetime later.\n"
        )

    counts = cost.get("counts", {})
    month_s = 730 * 3600

    def per_player_month() -> float:
        return float(cost["total"]) * month_s / float(cost["duration_s"]) / int(cost["players"])

    def monthly_cost() -> str:
        per = per_player_month()
        levels = (10_000, 100_000, 1_000_000)
        per_month = [n / int(cost["players"]) * month_s / float(cost["duration_s"]) for n in levels]
        top = ", ".join(
            f"{ln['item'].split(' (')[0]} {ln['share']:.0%}" for ln in cost["lines"][:6]
        )
        return (
            f"\n{_usd(cost['total'])} per 8-player tournament [B] x (N / 8) tournaments running x "
            f"(730 h x 3,600 s / {cost['duration_s']:.0f} s) tournaments per slot per month = "
            f"**${per:.2f} per concurrent player per month** (held at that level all month; "
            f"${per * 3600 / month_s:.4f} per player-hour):\n\n"
            "| | 10 k | 100 k | 1 M |\n|---|---|---|---|\n"
            "| tournaments per month | "
            + " | ".join(f"{t / 1e6:,.2f} M" for t in per_month)
            + " |\n| cost per month | "
            + " | ".join(f"**${n * per:,.0f}**" for n in levels)
            + " |\n\n"
            f"The split is [B]'s, largest first: {top}. [B] also gives each item's floor with a "
            f"Step Functions clock: {_usd(cost['floor'])} in all; at the memory measurement says "
            f"is enough (figure 3b) the tournament costs {_usd(cost['right_sized_total'])}. The "
            f"fixed monitoring cost (${counts.get('fixed_month_usd', 0.0):.2f} a month, prod) is "
            "spread over 100,000 tournaments a month; at these levels it is noise, so the costs "
            "above are slightly high.\n"
        )

    def progression_text() -> str:
        prog = res["progression"]
        base = float(prog["base_usd"])
        return (
            f"{_usd(prog['write_side_usd'], 6)} per tournament "
            f"({100 * prog['write_side_usd'] / base:.1f}% of {_usd(base)}) for the history "
            f"written, the boards and the storage; {_usd(prog['total_usd'], 6)} "
            f"({100 * prog['total_usd'] / base:.1f}%) with the assumed reads"
        )

    def sqs_clock() -> str:
        clock = cost["clock"]
        total = float(clock["best_total"])
        per = total * month_s / float(cost["duration_s"]) / int(cost["players"])
        return (
            f"On the same play it costs {_usd(clock['best_usd'])} instead of "
            f"{_usd(clock['built_usd'])}, and the state machine's execution log "
            f"({_usd(counts.get('sfn_log_usd', 0.0))}) goes with Step Functions, so a "
            f"tournament would cost {_usd(total)} ({1 - total / float(cost['total']):.0%} less, "
            f"about ${per:.2f} per concurrent player per month)."
        )

    def xray() -> str:
        traces = counts["invocations"] + counts["executions"]
        usd = counts["xray_dev_usd"]
        return (
            f"about {traces:,.0f} traces or\n**${usd:.4f} per tournament, "
            f"{usd / float(cost['total']):.0%} on top of the {_usd(cost['total'])} the tournament "
            "costs without it**"
        )

    def play_counts() -> str:
        c = counts
        wru = c["wru"] + c["gsi_wru"]
        return (
            f'`{res["run"]["commit"]}`), section 3 "Cost\n  per 8-player tournament": an '
            f"8-player tournament ({cost['rounds']} rounds) lasts "
            f"**{cost['duration_s'] / 60:.1f} min ({cost['duration_s']:.0f} s)** and makes\n  "
            f"**{c['invocations']:.0f} Lambda invocations** ({c['route_invocations']:.0f} routes + "
            f"{c['clock_invocations']:.0f} clock wakes), **{c['inbound_messages']:.0f} messages "
            f"in** ({c['inbound_messages'] - c['pings']:.0f} to functions,\n  {c['pings']:.0f} "
            f"pings), **{c['posts']:.0f} PostToConnection**, **{c['pings']:.0f} pong route "
            f"responses**, **{cost['guesses']} guesses**,\n  **{c['liveness_reads']:.0f} "
            f"GetConnection reads**, **{c['start_executions']:.0f} StartExecution / "
            f"{c['executions']:.0f} Express executions**, **{wru:.0f} WRU** (table +\n  indexes) "
            f"and **{c['route_rru']:.0f} RRU** (routes; the clock's reads, 1 "
            "RRU per wake, are counted in its cost);"
        )

    return {
        "play-counts": play_counts,
        "alarms-by-stage": alarms_by_stage,
        "saturation": lambda: f"{fig['dev.saturation']} / {fig['prod.saturation']}",
        "route-ms": lambda: f"**{counts['route_ms']:.1f} ms** mean",
        "tournament-counts": lambda: (
            f"{counts['invocations']:,.0f}\nLambda invocations, {counts['executions']:,.0f} "
            f"Express executions and {_usd(cost['total'])}"
        ),
        "xray": xray,
        "monthly-cost": monthly_cost,
        "sqs-clock": sqs_clock,
        "functions": lambda: str(fig["prod.functions"]),
        "reserved-dev": lambda: str(fig["dev.reserved"]),
        "reserved-prod": lambda: str(fig["prod.reserved"]),
        "reservations-need": lambda: (
            f"{fig['prod.reserved'] + UNRESERVED_MINIMUM} (prod's reservations, "
            f"{fig['prod.reserved']}, + the {UNRESERVED_MINIMUM} Lambda keeps unreserved)"
        ),
        "reserved-both": lambda: (
            f"{fig['all.reserved']:,}, where an account at the default quota can reserve "
            f"{fig['account.reservable']}: check with `python -m infra.operations.preflight`"
        ),
        "fixed-monthly": fixed_monthly,
        "tournament-usd": lambda: _usd(cost["total"]),
        "floor-usd": lambda: _usd(cost["floor"]),
        "per-tournament-items": per_tournament_items,
        "lambda-memory": memory_table,
        "right-sized-usd": lambda: _usd(cost["right_sized_total"]),
        "storage": storage_text,
        "progression-usd": progression_text,
    }


def load_results(path: Path = RESULTS_JSON) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    return found


def rewrite(text: str, render: dict[str, Callable[[], str]]) -> tuple[str, list[str]]:
    """``text`` with every block's body rendered, and the names of the blocks that changed.
    Raises KeyError for a block name nobody renders."""
    changed: list[str] = []

    def sub(m: re.Match[str]) -> str:
        new = render[m["name"]]()
        if new != m["body"]:
            changed.append(m["name"])
        return m.group(1) + new + m.group(4)

    return BLOCK.sub(sub, text), changed


def drift(
    templates: dict[str, dict[str, Any]],
    results: dict[str, Any] | None = None,
    documents: Sequence[Path] = DOCUMENTS,
) -> list[str]:
    """``path: block`` for every block of ``documents`` whose text differs from the source."""
    from infra.benchmarks.prices import load_prices

    render = renderers(template_figures(templates, load_prices()), results or load_results())
    out = []
    for path in documents:
        _, changed = rewrite(path.read_text(), render)
        out += [f"{path.relative_to(ROOT)}: {name}" for name in changed]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.benchmarks.figures", description=__doc__)
    parser.add_argument("--write", action="store_true", help="rewrite the blocks in place")
    args = parser.parse_args(argv)
    from infra.benchmarks.prices import load_prices

    render = renderers(template_figures(synth_templates(), load_prices()), load_results())
    stale = []
    for path in DOCUMENTS:
        text, changed = rewrite(path.read_text(), render)
        stale += [f"{path.relative_to(ROOT)}: {name}" for name in changed]
        if args.write and changed:
            path.write_text(text)
    for line in stale:
        print(("rewrote " if args.write else "differs: ") + line)
    return 0 if args.write or not stale else 1


if __name__ == "__main__":
    sys.exit(main())
