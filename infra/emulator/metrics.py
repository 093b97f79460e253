"""Twin: the CloudWatch side — a metric stream the twin's functions and services write into,
and an evaluator of the synthesized template's alarms over it.

``MetricStream`` holds datapoints ``(namespace, name, dimensions, time, value)``: the functions'
EMF documents (Powertools Metrics, ``put_emf``), the access-log metric filters (``put_log``,
the template's ``AWS::Logs::MetricFilter`` patterns) and the service metrics the twin models
from what it does (``put``: AWS/Lambda, AWS/States, AWS/DynamoDB, AWS/ApiGateway).

``Alarms.from_template`` reads every ``AWS::CloudWatch::Alarm`` (a metric, or metric math with
``Metrics``) and ``AWS::CloudWatch::CompositeAlarm`` of a synthesized template and
``Alarms.evaluate`` runs them as CloudWatch documents them (AWS, "Using Amazon CloudWatch
alarms", https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html):
datapoints aggregated per ``Period`` aligned to the period, the last ``EvaluationPeriods`` of
them, ALARM when ``DatapointsToAlarm`` of those breach; missing datapoints are filled with the
``TreatMissingData`` result only when fewer real datapoints than ``DatapointsToAlarm`` were
retrieved ("Configuring how CloudWatch alarms treat missing data", same page). Metric math
yields no value at a time where any series it reads has none (use ``FILL``; AWS, "Using metric
math", https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html).
The twin evaluates at each period's end over complete periods: CloudWatch evaluates every
minute and can count the running period, so a time to fire measured here is an upper bound.
"""

from __future__ import annotations

import ast
import bisect
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Dims = tuple[tuple[str, str], ...]
"""Dimensions, sorted by name."""


def dims_of(mapping: Mapping[str, str]) -> Dims:
    return tuple(sorted((str(k), str(v)) for k, v in mapping.items()))


@dataclass
class MetricStream:
    """Datapoints by (namespace, metric name, dimensions): times (UTC ms, sorted on read) and
    values."""

    series: dict[tuple[str, str, Dims], list[tuple[int, float]]] = field(
        default_factory=lambda: defaultdict(list)
    )

    def put(self, namespace: str, name: str, value: float, t_ms: int, **dims: str) -> None:
        self.series[(namespace, name, dims_of(dims))].append((t_ms, float(value)))

    def put_emf(self, doc: Mapping[str, Any], t_ms: int | None = None) -> None:
        """One EMF document (AWS, "Embedded metric format specification",
        https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
        each metric of each ``CloudWatchMetrics`` directive, once per dimension set, with the
        document's value (a list is several values); ``t_ms`` overrides ``_aws.Timestamp``."""
        aws = doc["_aws"]
        when = int(aws["Timestamp"]) if t_ms is None else t_ms
        for directive in aws["CloudWatchMetrics"]:
            for dim_set in directive["Dimensions"]:
                dims = {k: str(doc[k]) for k in dim_set}
                for metric in directive["Metrics"]:
                    raw = doc.get(metric["Name"])
                    for v in raw if isinstance(raw, list) else [raw]:
                        if v is not None:
                            self.put(directive["Namespace"], metric["Name"], v, when, **dims)

    def values(
        self, namespace: str, name: str, dims: Dims, start_ms: int, end_ms: int
    ) -> list[float]:
        """Values of the series with exactly these dimensions in [start_ms, end_ms)."""
        points = self.series.get((namespace, name, dims))
        if not points:
            return []
        points.sort()
        lo = bisect.bisect_left(points, (start_ms, -math.inf))
        hi = bisect.bisect_left(points, (end_ms, -math.inf))
        return [v for _, v in points[lo:hi]]

    def names(self) -> set[tuple[str, str, Dims]]:
        return set(self.series)


# -- metric filters ---------------------------------------------------------------------------

_FILTER = re.compile(r'^\{\s*\$\.(\w+)\s*=\s*"?([^"\s]*)"?\s*\}$')


@dataclass(frozen=True)
class MetricFilter:
    """A JSON metric filter ``{ $.field = "value" }`` (a trailing ``*`` matches a prefix) with
    its transformation (AWS, "Filter pattern syntax for metric filters",
    https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/FilterAndPatternSyntax.html)."""

    field: str
    pattern: str
    namespace: str
    name: str
    value: str
    dimensions: tuple[tuple[str, str], ...]

    def apply(self, stream: MetricStream, record: Mapping[str, Any], t_ms: int) -> None:
        got = record.get(self.field)
        if got is None:
            return
        text = str(got)
        ok = (
            text.startswith(self.pattern[:-1])
            if self.pattern.endswith("*")
            else text == self.pattern
        )
        if not ok:
            return
        dims = {
            k: str(record.get(v[2:], "")) if v.startswith("$.") else v for k, v in self.dimensions
        }
        value = (
            float(record.get(self.value[2:], 0))
            if self.value.startswith("$.")
            else float(self.value)
        )
        stream.put(self.namespace, self.name, value, t_ms, **dims)


def metric_filters(template: Mapping[str, Any]) -> list[MetricFilter]:
    """The template's ``AWS::Logs::MetricFilter`` resources of the ``{ $.f = "v" }`` form."""
    out = []
    for res in template["Resources"].values():
        if res["Type"] != "AWS::Logs::MetricFilter":
            continue
        props = res["Properties"]
        m = _FILTER.match(props["FilterPattern"])
        if m is None:
            raise ValueError(f"unsupported filter pattern {props['FilterPattern']!r}")
        for tr in props["MetricTransformations"]:
            out.append(
                MetricFilter(
                    field=m.group(1),
                    pattern=m.group(2),
                    namespace=tr["MetricNamespace"],
                    name=tr["MetricName"],
                    value=str(tr["MetricValue"]),
                    dimensions=tuple((d["Key"], d["Value"]) for d in tr.get("Dimensions", [])),
                )
            )
    return out


# -- alarms -----------------------------------------------------------------------------------


def statistic(values: list[float], stat: str) -> float:
    """CloudWatch's statistic of one period's values (``Sum``, ``Maximum``, ``Minimum``,
    ``Average``, ``SampleCount``, ``pNN``: the value below which NN % of the values fall)."""
    if stat == "Sum":
        return sum(values)
    if stat == "Maximum":
        return max(values)
    if stat == "Minimum":
        return min(values)
    if stat == "Average":
        return sum(values) / len(values)
    if stat == "SampleCount":
        return float(len(values))
    if stat.startswith("p"):
        s = sorted(values)
        rank = max(1, math.ceil(float(stat[1:]) / 100 * len(s)))
        return s[rank - 1]
    raise ValueError(f"unsupported statistic {stat!r}")


Resolve = Callable[[Any], str]
"""A template value (a string, ``{"Ref": id}``) -> the name the twin uses for it."""


def default_resolve(value: Any) -> str:
    if isinstance(value, dict) and "Ref" in value:
        return str(value["Ref"])
    return str(value)


@dataclass(frozen=True)
class Query:
    """One metric a series reads: namespace, name, dimensions, period (s), statistic."""

    namespace: str
    name: str
    dims: Dims
    period_s: int
    stat: str

    def datapoint(self, stream: MetricStream, end_ms: int) -> float | None:
        start = end_ms - self.period_s * 1000
        vals = stream.values(self.namespace, self.name, self.dims, start, end_ms)
        return statistic(vals, self.stat) if vals else None


_MATH_FUNCS = {"FILL"}


def _eval_math(expr: str, env: Mapping[str, float | None]) -> float | None:
    """A metric math expression over single values: ``+ - * /``, numbers, ids and
    ``FILL(id, value)``; None (no datapoint) where an id it reads has none and is not filled."""
    tree = ast.parse(expr, mode="eval").body

    def ev(node: ast.AST) -> float | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id != "FILL" or len(node.args) != 2:
                raise ValueError(f"unsupported metric math {expr!r}")
            got = ev(node.args[0])
            return ev(node.args[1]) if got is None else got
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.Div):
                return a / b if b else None
        raise ValueError(f"unsupported metric math {expr!r}")

    return ev(tree)


@dataclass(frozen=True)
class Alarm:
    """One metric alarm of the template (its logical id and settings)."""

    logical_id: str
    period_s: int
    threshold: float
    comparison: str
    evaluation_periods: int
    datapoints_to_alarm: int
    treat_missing: str
    queries: Mapping[str, Query]
    """Id -> metric (a plain alarm: one, id ``m``)."""
    expression: str | None = None
    """The returned metric math expression (None: the one query)."""

    def datapoint(self, stream: MetricStream, end_ms: int) -> float | None:
        env = {qid: q.datapoint(stream, end_ms) for qid, q in self.queries.items()}
        if self.expression is None:
            return env["m"]
        return _eval_math(self.expression, env)

    def breaches(self, value: float) -> bool:
        t = self.threshold
        return {
            "GreaterThanOrEqualToThreshold": value >= t,
            "GreaterThanThreshold": value > t,
            "LessThanThreshold": value < t,
            "LessThanOrEqualToThreshold": value <= t,
        }[self.comparison]

    def state(self, stream: MetricStream, end_ms: int, previous: str) -> str:
        """The state after evaluating the ``evaluation_periods`` periods ending at ``end_ms``
        (module docstring: missing data filled only when fewer real datapoints than
        ``datapoints_to_alarm`` were retrieved)."""
        p = self.period_s * 1000
        points = [self.datapoint(stream, end_ms - i * p) for i in range(self.evaluation_periods)]
        real = [v for v in points if v is not None]
        bad = sum(1 for v in real if self.breaches(v))
        if len(real) >= self.datapoints_to_alarm:
            return "ALARM" if bad >= self.datapoints_to_alarm else "OK"
        missing = len(points) - len(real)
        if self.treat_missing == "breaching":
            bad += missing
        elif self.treat_missing == "ignore" and not real:
            return previous
        elif self.treat_missing == "missing" and not real:
            return "INSUFFICIENT_DATA"
        return "ALARM" if bad >= self.datapoints_to_alarm else "OK"


_RULE = re.compile(r'ALARM\("([^"]+)"\)')


@dataclass(frozen=True)
class Composite:
    """A composite alarm whose rule is ``ALARM(a) OR ALARM(b) ...`` (AWS, "Create a composite
    alarm", https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Create_Composite_Alarm.html)."""

    logical_id: str
    any_of: tuple[str, ...]


def _rule_text(rule: Any) -> str:
    """A rendered ``AlarmRule``: ``Fn::GetAtt [id, Arn]`` becomes the logical id."""
    if isinstance(rule, str):
        return rule
    if isinstance(rule, dict) and "Fn::Join" in rule:
        sep, parts = rule["Fn::Join"]
        return str(sep).join(_rule_text(p) for p in parts)
    if isinstance(rule, dict) and "Fn::GetAtt" in rule:
        return str(rule["Fn::GetAtt"][0])
    raise ValueError(f"unsupported alarm rule part {rule!r}")


def _query(metric: Mapping[str, Any], period: Any, stat: str, resolve: Resolve) -> Query:
    dims = dims_of({d["Name"]: resolve(d["Value"]) for d in metric.get("Dimensions", [])})
    return Query(metric["Namespace"], metric["MetricName"], dims, int(period), stat)


@dataclass
class Alarms:
    """Every alarm of one template (``from_template``) and what evaluating them found."""

    alarms: dict[str, Alarm]
    composites: dict[str, Composite]

    @classmethod
    def from_template(
        cls, template: Mapping[str, Any], resolve: Resolve = default_resolve
    ) -> Alarms:
        alarms: dict[str, Alarm] = {}
        composites: dict[str, Composite] = {}
        for logical_id, res in template["Resources"].items():
            props = res.get("Properties", {})
            if res["Type"] == "AWS::CloudWatch::CompositeAlarm":
                text = _rule_text(props["AlarmRule"])
                if re.sub(_RULE, "", text).replace("OR", "").strip("() ") != "":
                    raise ValueError(f"unsupported composite rule {text!r}")
                composites[logical_id] = Composite(logical_id, tuple(_RULE.findall(text)))
                continue
            if res["Type"] != "AWS::CloudWatch::Alarm":
                continue
            expression = None
            if "Metrics" in props:
                queries = {}
                for m in props["Metrics"]:
                    if "MetricStat" in m:
                        ms = m["MetricStat"]
                        queries[m["Id"]] = _query(ms["Metric"], ms["Period"], ms["Stat"], resolve)
                    elif m.get("ReturnData", True):
                        expression = m["Expression"]
                period = next(iter(queries.values())).period_s
            else:
                stat = props.get("ExtendedStatistic") or props["Statistic"]
                queries = {"m": _query(props, props["Period"], stat, resolve)}
                period = int(props["Period"])
            periods = int(props["EvaluationPeriods"])
            alarms[logical_id] = Alarm(
                logical_id=logical_id,
                period_s=period,
                threshold=float(props["Threshold"]),
                comparison=props["ComparisonOperator"],
                evaluation_periods=periods,
                datapoints_to_alarm=int(props.get("DatapointsToAlarm", periods)),
                treat_missing=props.get("TreatMissingData", "missing"),
                queries=queries,
                expression=expression,
            )
        return cls(alarms, composites)

    def evaluate(self, stream: MetricStream, start_ms: int, end_ms: int) -> Evaluation:
        """Run every alarm at each of its period ends in (start_ms, end_ms] (periods aligned
        to the epoch, as CloudWatch aligns them); composites follow their members."""
        ev = Evaluation()
        state = dict.fromkeys(self.alarms, "INSUFFICIENT_DATA")
        ticks: dict[int, list[Alarm]] = defaultdict(list)
        for a in self.alarms.values():
            p = a.period_s * 1000
            t = (start_ms // p + 1) * p
            while t <= end_ms:
                ticks[t].append(a)
                t += p
        for t in sorted(ticks):
            for a in ticks[t]:
                new = a.state(stream, t, state[a.logical_id])
                if new == "ALARM" and state[a.logical_id] != "ALARM":
                    ev.fired.setdefault(a.logical_id, []).append(t)
                state[a.logical_id] = new
            for c in self.composites.values():
                if any(state.get(m) == "ALARM" for m in c.any_of):
                    if c.logical_id not in ev.alarm_now:
                        ev.fired.setdefault(c.logical_id, []).append(t)
                        ev.alarm_now.add(c.logical_id)
                else:
                    ev.alarm_now.discard(c.logical_id)
        ev.alarm_now |= {k for k, v in state.items() if v == "ALARM"}
        return ev


@dataclass
class Evaluation:
    fired: dict[str, list[int]] = field(default_factory=dict)
    """Alarm logical id -> each time (UTC ms) it went into ALARM."""
    alarm_now: set[str] = field(default_factory=set)
    """Alarms in ALARM at the end."""

    def first(self, logical_id: str) -> int | None:
        times = self.fired.get(logical_id)
        return times[0] if times else None


def resources_named(
    template: Mapping[str, Any], type_name: str
) -> Iterable[tuple[str, Mapping[str, Any]]]:
    for logical_id, res in template["Resources"].items():
        if res["Type"] == type_name:
            yield logical_id, res.get("Properties", {})
