"""Benchmark, figure 2: the cold start of each handler against the floor any handler pays.

Each sample is a fresh interpreter, run as deployed (``Deployed``: the runtime's Python with only
the code asset and the dependency layer on ``sys.path``), timed from start to exit: a handler
imports its module and runs ``functions._entry.container_deps()``; the floor
(``BASELINE_LABEL``) imports boto3 and builds a DynamoDB and a Management API client. Two more
rows time the ``guess`` function's first message against its own floor
(``infra.benchmarks.layers.first_message``). The figure is the median per handler and its ratio
to the floor (goal <= 1.5x); method: ``infra/benchmarks/RESULTS.md`` and
``shared/domain/RULINGS.md``, design notes, "Measuring a cold start". Needs Python 3.13 and, on a
fresh checkout, PyPI once (the layer's first build).
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from infra.cdk.runtime_version import RUNTIME_ENVIRONMENT

ROOT = Path(__file__).resolve().parents[2]
GOAL_RATIO = 1.5
FIRST_CALL_IMPORTS = (
    "boto3",
    "shared.adapters.dynamo.store",
    "shared.adapters.notifier",
    "shared.adapters.step_functions",
    "shared.adapters.lexicon",
)
"""What ``functions._entry.container_deps()`` imports on a handler's first invocation
(adapters, boto3)."""
COLD_PATH_MODULE = "functions.messages"
COLD_PATH_LABEL = "functions.messages + first-call imports"
BASELINE_LABEL = "boto3 + DynamoDB and Management API clients"
BASELINE = (
    "import boto3; s = boto3.session.Session(); s.client('dynamodb'); "
    "s.client('apigatewaymanagementapi', endpoint_url='https://abc.execute-api.us-east-1."
    "amazonaws.com/prod')"
)
ENV = {
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "cold-start",
    "AWS_SECRET_ACCESS_KEY": "cold-start",
    "TABLE_NAME": "wordle-tournament",
    "CALLBACK_URL": "https://abc.execute-api.us-east-1.amazonaws.com/prod",
    "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:clock",
    **RUNTIME_ENVIRONMENT,
}
"""What a deployed function's environment holds (fake credentials: nothing is sent), the
interpreter's variables (``infra.cdk.runtime_version.RUNTIME_ENVIRONMENT``) included."""
FIRST_GUESS_LABEL = "first guess: functions.messages, container_deps() and one guess handled"
FIRST_CALLS_LABEL = "floor + the guess's AWS calls (canned answers)"
"""The floor of ``FIRST_GUESS_LABEL``: the two clients built and the recorded guess's AWS calls
made once with the recorded answers (botocore's first-call work included)."""
"""The same, then the ``guess`` function's first message (a valid guess recorded on moto,
``infra.benchmarks.layers``) through its Lambda handler, the container's clients answering with
the recorded responses: what a cold container pays before its first reply, work deferred to the
first message included."""


def cold_statement(module: str) -> str:
    """Import ``module`` and build the container's dependencies, as a first invocation does."""
    return f"import {module}; from functions._entry import container_deps; container_deps()"


def handler_modules() -> list[str]:
    """Every module that ``functions.routes`` names (routes and timers), sorted."""
    from functions.routes import ROUTES, TIMERS

    return sorted({spec.split(":")[0] for spec in {**ROUTES, **TIMERS}.values()})


HARNESS = ("infra/__init__.py", "infra/benchmarks/__init__.py", "infra/benchmarks/layers.py")
"""The benchmark modules a first-guess row imports (stdlib-only at import)."""


@dataclass(frozen=True)
class Deployed:
    """How every row runs: ``python`` (the runtime's base interpreter) with ``path`` (the code
    asset, the layer's ``python/``, the harness) put first on ``sys.path``."""

    python: Path
    path: tuple[str, ...]

    def argv(self, statement: str, *flags: str) -> list[str]:
        """``python -I -S -B [flags] -c`` running ``statement`` after setting ``sys.path``."""
        prelude = f"import sys; sys.path[:0] = {list(self.path)!r}; "
        return [str(self.python), "-I", "-S", "-B", *flags, "-c", prelude + statement]


@cache
def deployed() -> Deployed:
    """Build (or find cached) the code asset and the layer for this CPU as CDK deploys them,
    and compile the harness the same way in a temporary folder (kept for this process). Raises
    ``infra.cdk.bytecode.NoRuntimePythonError`` without the runtime's Python."""
    import atexit

    from infra.cdk.bytecode import CODE_PREFIX, NoRuntimePythonError, build_code_asset, compile_tree
    from infra.cdk.constructs.functions import CODE_EXCLUDE
    from infra.cdk.layer import build_layer, host_platform
    from infra.cdk.runtime_version import LAMBDA_PYTHON_VERSION, runtime_python

    python = runtime_python()
    if python is None:
        raise NoRuntimePythonError(f"no Python {LAMBDA_PYTHON_VERSION} to run the cold start on")
    code = build_code_asset(ROOT, CODE_EXCLUDE)
    layer = build_layer(platform=host_platform()) / "python"
    harness = Path(tempfile.mkdtemp(prefix="cold-harness-"))
    atexit.register(shutil.rmtree, harness, ignore_errors=True)
    for name in HARNESS:
        (harness / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, harness / name)
    compile_tree(harness, CODE_PREFIX, python)
    return Deployed(python, (str(code), str(layer), str(harness)))


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return {**env, **ENV, **extra}


def _time_import(statement: str) -> tuple[float, float]:
    """Wall ms and CPU ms (user + system of the child, ``os.wait4``) of one fresh process."""
    argv = deployed().argv(statement)
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env()
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, argv)
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


@dataclass
class ColdResult:
    rounds: int
    samples: dict[str, list[float]] = field(default_factory=dict)
    """Statement label -> wall ms per fresh process."""
    cpu: dict[str, list[float]] = field(default_factory=dict)
    """Statement label -> CPU ms (user + system) per fresh process: on a loaded machine the
    wall time also counts waiting for a core, the CPU time does not."""
    first_guess_operations: list[str] = field(default_factory=list)
    """The AWS calls the first-guess statement made (checked once, before the rounds)."""
    importtime_module: str = ""
    by_package: list[tuple[str, float]] = field(default_factory=list)
    """(top-level package, self ms) for ``importtime_module``, biggest first."""
    top_modules: list[tuple[str, float]] = field(default_factory=list)
    """(module, cumulative ms) of the first-level imports of ``importtime_module``."""

    def median(self, label: str) -> float:
        return statistics.median(self.samples[label])

    @property
    def boto3_ms(self) -> float:
        return self.median("boto3")

    @property
    def baseline_ms(self) -> float:
        return self.median(BASELINE_LABEL)

    def ratio(self, label: str) -> float:
        """``label``'s median over the floor's (``BASELINE_LABEL``)."""
        return self.median(label) / self.baseline_ms

    def round_ratios(self, label: str) -> list[float]:
        """``label``'s wall time over the floor's in the same round, one per round: the
        machine's pace drifts (other work shares its cores), and a round's rows run close
        together."""
        return [
            a / b for a, b in zip(self.samples[label], self.samples[BASELINE_LABEL], strict=True)
        ]

    def ratio_spread(self, label: str) -> tuple[float, float]:
        """The middle half (first and third quartiles) of ``round_ratios(label)``: how far
        one round's ratio strays, beside the ratio of the medians."""
        q1, _, q3 = statistics.quantiles(self.round_ratios(label), n=4)
        return q1, q3

    def cpu_median(self, label: str) -> float:
        return statistics.median(self.cpu[label])

    def cpu_ratio(self, label: str) -> float:
        """``label``'s median CPU time over the floor's."""
        return self.cpu_median(label) / self.cpu_median(BASELINE_LABEL)

    @property
    def first_guess_ratio(self) -> float | None:
        """The first guess's median over its own floor's (the same AWS calls made directly)."""
        if FIRST_GUESS_LABEL not in self.samples:
            return None
        return self.median(FIRST_GUESS_LABEL) / self.median(FIRST_CALLS_LABEL)


def importtime(module: str) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """Self time per top-level package and the heaviest direct imports (cumulative), in ms."""
    proc = subprocess.run(
        deployed().argv(f"import {module}", "-X", "importtime"),
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        env=_env(),
    )
    by_package: dict[str, float] = defaultdict(float)
    direct: dict[str, float] = {}
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, raw_name = line[len("import time:") :].split("|")
        name = raw_name.strip()
        depth = (len(raw_name) - len(raw_name.lstrip()) - 1) // 2
        by_package[name.split(".")[0]] += int(self_us) / 1000
        # the heavy subtrees below the handler's own modules (nested: a parent's cumulative
        # time includes its children's)
        if depth >= 1 and name.count(".") <= 3 and not name.startswith(("functions", "encodings")):
            direct[name] = max(direct.get(name, 0.0), int(cumulative_us) / 1000)
    return (
        sorted(by_package.items(), key=lambda kv: -kv[1]),
        sorted(direct.items(), key=lambda kv: -kv[1]),
    )


def _first_guess_statements() -> tuple[str, str, list[str]]:
    """The first-guess statement, its floor (a guess recorded on moto now, saved to a temporary
    file that lives as long as this process) and the AWS calls the first makes, run once to
    check it."""
    import atexit
    import tempfile

    from infra.benchmarks import layers

    rec = layers.record_guess()
    fd, path = tempfile.mkstemp(prefix="cold-guess-", suffix=".pickle")
    os.close(fd)
    atexit.register(os.unlink, path)
    layers.save(rec, path)
    statement = (
        f"{cold_statement(COLD_PATH_MODULE)}; from infra.benchmarks.layers import first_message; "
        f"print(' '.join(first_message({path!r})))"
    )
    proc = subprocess.run(
        deployed().argv(statement, "-W", "ignore"),
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        env=_env(POWERTOOLS_LOG_LEVEL="ERROR", POWERTOOLS_METRICS_DISABLED="true"),
    )
    made = proc.stdout.strip().splitlines()[-1].split() if proc.stdout.strip() else []
    floor = f"from infra.benchmarks.layers import first_calls; first_calls({path!r})"
    return statement, floor, made


def measure(
    rounds: int = 21,
    modules: list[str] | None = None,
    seed: int = 1,
    warm: bool = True,
    first_guess: bool = True,
) -> ColdResult:
    modules = modules if modules is not None else handler_modules()
    statements = {
        "pass": "pass",
        "boto3": "import boto3",
        BASELINE_LABEL: BASELINE,
        **{m: cold_statement(m) for m in modules},
    }
    made: list[str] = []
    if first_guess and COLD_PATH_MODULE in modules:
        statements[FIRST_GUESS_LABEL], statements[FIRST_CALLS_LABEL], made = (
            _first_guess_statements()
        )
    result = ColdResult(
        rounds, {label: [] for label in statements}, {label: [] for label in statements}, made
    )
    rng = random.Random(seed)
    for label in statements if warm else ():  # warm the file cache once (not recorded)
        _time_import(statements[label])
    for _ in range(rounds):
        order = list(statements)
        rng.shuffle(order)
        for label in order:
            wall, cpu = _time_import(statements[label])
            result.samples[label].append(wall)
            result.cpu[label].append(cpu)
    worst = max(modules, key=result.median)
    result.importtime_module = worst
    result.by_package, result.top_modules = importtime(worst)
    return result
