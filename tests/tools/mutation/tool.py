"""Mutation testing: run mutmut over ``shared/domain`` and ``shared/services`` and report.

One command, from the repository root, after ``bash .ci/setup``::

    .venv/bin/python -m tests.tools.mutation  # the whole run (about 30 min on 2 cores)
    .venv/bin/python -m tests.tools.mutation --report-only  # rewrite RESULTS.md from mutants/

The run starts from nothing (``mutants/`` is removed first, so no result is reused from an
earlier run), runs ``mutmut run`` with the ``[tool.mutmut]`` table of ``pyproject.toml`` (which
tests, no xdist inside a mutant's run), then writes ``tests/tools/mutation/RESULTS.md``: per
module the
mutants, killed, survived, timed out, without a covering test, and the score; every survivor with
its change and its verdict from ``tests/tools/mutation/verdicts.toml`` (``[equivalent]``: why no
test
can tell it from the original; ``[closed]``: the named test that now kills a gap a run found).

Scores: a mutant is *detected* when a test failed (killed) or ran out of time with it (timed
out: the change made a test loop or crawl). The raw score is detected / all mutants; the score
against the goals is detected / (all mutants - those declared equivalent), the goals being 95 %
for ``shared/domain`` and 90 % for ``shared/services`` (``GOALS``).

The CI smoke (``tests/tools/mutation/test_mutation_smoke.py``) runs ``smoke``: a seeded sample of
the
mutants of one small module, in a scratch copy of the repository, so the set-up cannot rot.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
RESULTS = REPO / "tests" / "mutation" / "RESULTS.md"
VERDICTS = REPO / "tests" / "mutation" / "verdicts.toml"
GOALS = {"shared/domain": 95.0, "shared/services": 90.0}
"""The least share of non-equivalent mutants to detect, per area (percent)."""
COMMAND = ".venv/bin/python -m tests.tools.mutation"

# What a scratch copy for the smoke needs: the code, the tests, and what the tests import.
_COPIED = ("shared", "tests", "functions", "infra", "wordlists")
_IGNORED = shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache", "mutants")

# mutmut's exit codes of a mutant's test run, as its own ``status_by_exit_code`` reads them.
_STATUS = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    36: "timeout",
    37: "caught by type check",
    -24: "timeout",
    24: "timeout",
    152: "timeout",
    255: "timeout",
}


def status_of(exit_code: int | None) -> str:
    """The verdict mutmut gives a mutant's exit code (``None``: not run)."""
    if exit_code is None:
        return "not checked"
    return _STATUS.get(exit_code, "suspicious")


@dataclass
class Module:
    """One mutated source file and what became of its mutants."""

    path: str
    status: dict[str, str] = field(default_factory=dict)
    """Mutant name -> mutmut's status."""

    def count(self, *statuses: str) -> int:
        return sum(1 for s in self.status.values() if s in statuses)

    @property
    def detected(self) -> int:
        return self.count("killed", "timeout")


# ------------------------------------------------------------------ configuration
def mutmut_table(pyproject: Path) -> dict[str, object]:
    """The ``[tool.mutmut]`` table of a ``pyproject.toml``."""
    table = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["mutmut"]
    assert isinstance(table, dict)
    return table


def with_mutmut_table(text: str, table: dict[str, object]) -> str:
    """``text`` (a pyproject.toml) with its ``[tool.mutmut]`` table replaced by ``table``."""
    lines = [f"{key} = {json.dumps(value, ensure_ascii=False)}" for key, value in table.items()]
    new = "[tool.mutmut]\n" + "\n".join(lines) + "\n\n"
    pattern = re.compile(r"^\[tool\.mutmut\]\n.*?(?=^\[)", re.S | re.M)
    if not pattern.search(text):
        raise ValueError("pyproject.toml has no [tool.mutmut] table")
    return pattern.sub(lambda _: new, text, count=1)


def verdicts(path: Path = VERDICTS) -> tuple[dict[str, str], dict[str, str]]:
    """``(equivalent, closed)`` from the verdicts file: mutant name -> why, and mutant name ->
    the test that kills it."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return dict(data.get("equivalent", {})), dict(data.get("closed", {}))


def races(path: Path = VERDICTS) -> dict[str, str]:
    """The ``[race]`` table: mutants that differ only under a concurrent change -> why."""
    return dict(tomllib.loads(path.read_text(encoding="utf-8")).get("race", {}))


def issue_gaps(path: Path = VERDICTS) -> dict[str, str]:
    """The ``[issue]`` table: gaps found by hand that are no mutmut mutant -> the test."""
    return dict(tomllib.loads(path.read_text(encoding="utf-8")).get("issue", {}))


# ------------------------------------------------------------------ running mutmut
def _mutmut() -> str:
    script = Path(sys.executable).with_name("mutmut")
    return str(script) if script.exists() else "mutmut"


def run_mutmut(root: Path, names: Sequence[str] = (), max_children: int = 1) -> None:
    """``mutmut run`` in ``root`` (its mutants/ directory), for ``names`` or every mutant."""
    cmd = [_mutmut(), "run", "--max-children", str(max_children), *names]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-4000:]
        raise RuntimeError(f"mutmut run failed ({done.returncode}):\n{tail}")


def read_results(root: Path) -> dict[str, Module]:
    """Every mutated module under ``root/mutants`` with its mutants' statuses."""
    modules: dict[str, Module] = {}
    for meta in sorted((root / "mutants").rglob("*.py.meta")):
        path = meta.relative_to(root / "mutants").as_posix().removesuffix(".meta")
        codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {})
        if codes:
            modules[path] = Module(path, {k: status_of(v) for k, v in codes.items()})
    return modules


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def change_of(root: Path, name: str) -> str:
    """The mutant's change in one line: ``old`` -> ``new`` (the lines its diff changes)."""
    from mutmut.configuration import reset_config
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    with _cwd(root):
        reset_config()
        try:
            diff = get_diff_for_mutant(name)
        except Exception as error:  # a report line must not stop the report
            return f"(no diff: {type(error).__name__})"
        finally:
            reset_config()
    minus = [line[1:].strip() for line in diff.splitlines() if line.startswith("-")]
    plus = [line[1:].strip() for line in diff.splitlines() if line.startswith("+")]
    minus = [line for line in minus if not line.startswith("--")]
    plus = [line for line in plus if not line.startswith("++")]
    old = " / ".join(minus) or "(nothing)"
    new = " / ".join(plus) or "(deleted)"
    return f"`{_clip(old)}` → `{_clip(new)}`"


def _clip(text: str, width: int = 90) -> str:
    text = text.replace("`", "'")
    return text if len(text) <= width else text[: width - 1] + "…"


def mutant_names(root: Path, module: str) -> list[str]:
    """Every mutant mutmut makes of ``module`` (a path under ``root``), without running any."""
    from mutmut.configuration import reset_config
    from mutmut.mutation.file_mutation import mutate_file_contents
    from mutmut.utils.format_utils import get_mutant_name

    with _cwd(root):
        reset_config()
        try:
            code = (root / module).read_text(encoding="utf-8")
            mutated = mutate_file_contents(module, code)
            return sorted(get_mutant_name(Path(module), n) for n in mutated.mutant_names)
        finally:
            reset_config()


# ------------------------------------------------------------------ narrowed runs
def scratch_copy(workdir: Path, only_mutate: Sequence[str], tests: Sequence[str] | None) -> None:
    """A copy of the repository at ``workdir`` whose [tool.mutmut] table mutates ``only_mutate``
    (globs) and, when given, selects ``tests`` instead of the configured unit tests."""
    for name in _COPIED:
        shutil.copytree(REPO / name, workdir / name, ignore=_IGNORED)
    table = mutmut_table(REPO / "pyproject.toml")
    table["only_mutate"] = list(only_mutate)
    if tests is not None:
        table["pytest_add_cli_args_test_selection"] = list(tests)
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    (workdir / "pyproject.toml").write_text(with_mutmut_table(pyproject, table), encoding="utf-8")


def explore(workdir: Path, only_mutate: Sequence[str], tests: Sequence[str] | None) -> None:
    """While writing tests: mutate only some modules (in a scratch copy), print what survives."""
    scratch_copy(workdir, only_mutate, tests)
    run_mutmut(workdir, max_children=1)
    equivalent, _ = verdicts()
    for mod in read_results(workdir).values():
        missed = sorted(
            (n for n, s in mod.status.items() if s not in ("killed", "timeout")), key=_natural
        )
        print(f"{mod.path}: {len(mod.status)} mutants, {len(missed)} not detected")
        for name in missed:
            mark = " (equivalent)" if name in equivalent else ""
            print(f"  {name} [{mod.status[name]}]{mark} {change_of(workdir, name)}")


# ------------------------------------------------------------------ the smoke
def smoke(
    workdir: Path,
    module: str = "shared/domain/scoring.py",
    tests: Sequence[str] = ("tests/unit/domain/test_scoring.py",),
    sample: int = 8,
    seed: int = 20,
) -> dict[str, str]:
    """Run a seeded sample of ``sample`` mutants of ``module`` against ``tests`` in a scratch
    copy of the repository at ``workdir``, with the repository's own [tool.mutmut] table (only
    the module and the tests narrowed). Returns mutant name -> status for the sample.

    Raises ValueError when mutmut finds fewer than ``sample`` mutants in the module.
    """
    scratch_copy(workdir, [module], tests)
    names = mutant_names(workdir, module)
    if len(names) < sample:
        raise ValueError(f"mutmut made {len(names)} mutants of {module}, fewer than {sample}")
    chosen = sorted(random.Random(seed).sample(names, sample))
    run_mutmut(workdir, chosen, max_children=1)
    results = read_results(workdir)
    statuses = results[module].status if module in results else {}
    return {name: statuses.get(name, "not checked") for name in chosen}


# ------------------------------------------------------------------ the report
def area_of(path: str) -> str:
    return next((area for area in GOALS if path.startswith(area + "/")), "other")


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "–"


def _row(label: str, mods: Sequence[Module], equivalent: dict[str, str]) -> str:
    total = sum(len(m.status) for m in mods)
    killed = sum(m.count("killed") for m in mods)
    survived = sum(m.count("survived") for m in mods)
    timeout = sum(m.count("timeout") for m in mods)
    untested = sum(m.count("no tests") for m in mods)
    other = total - killed - survived - timeout - untested
    detected = killed + timeout
    equiv = sum(1 for m in mods for name in m.status if name in equivalent)
    return (
        f"| {label} | {total} | {killed} | {survived} | {timeout} | {untested} | {other} "
        f"| {equiv} | {_pct(detected, total)} | {_pct(detected, total - equiv)} |"
    )


def score(mods: Sequence[Module], equivalent: dict[str, str]) -> float:
    """Detected / non-equivalent mutants of ``mods``, in percent."""
    total = sum(len(m.status) for m in mods)
    equiv = sum(1 for m in mods for name in m.status if name in equivalent)
    detected = sum(m.detected for m in mods)
    return 100 * detected / (total - equiv) if total > equiv else 100.0


def report(
    root: Path,
    modules: dict[str, Module],
    equivalent: dict[str, str],
    closed: dict[str, str],
    *,
    header: str,
) -> str:
    """RESULTS.md: the totals against the goals, the table per module, then every mutant that
    was not detected with its change and its verdict."""
    out = [
        "# Mutation testing: results",
        "",
        f"Written by `{COMMAND}` (tests/tools/mutation/tool.py); do not edit by hand. {header}",
        "",
        "Detected = killed (a test failed) or timed out (the change made a test loop or crawl). "
        "Score = detected / (mutants − declared equivalent). Mutants of code no selected test "
        'runs count as not detected ("no tests"); "other" is mutmut\'s suspicious, skipped '
        "or not checked.",
        "",
        "## Against the goals",
        "",
        "| area | mutants | detected | equivalent | score | goal | met |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    by_area: dict[str, list[Module]] = {}
    for mod in modules.values():
        by_area.setdefault(area_of(mod.path), []).append(mod)
    for area, goal in GOALS.items():
        mods = by_area.get(area, [])
        total = sum(len(m.status) for m in mods)
        equiv = sum(1 for m in mods for name in m.status if name in equivalent)
        value = score(mods, equivalent)
        met = "yes" if mods and value >= goal else "no"
        detected = sum(m.detected for m in mods)
        out.append(
            f"| `{area}` | {total} | {detected} | {equiv} | {value:.1f} % | {goal:.0f} % | {met} |"
        )
    head = (
        "| module | mutants | killed | survived | timed out | no tests | other | equivalent "
        "| raw score | score |"
    )
    out += ["", "## Per module", "", head, "| --- " * 10 + "|"]
    for area in GOALS:
        mods = sorted(by_area.get(area, []), key=lambda m: m.path)
        out += [_row(f"`{m.path}`", [m], equivalent) for m in mods]
        out.append(_row(f"**`{area}` total**", mods, equivalent))
    out += ["", "## Not detected, with verdicts", ""]
    for mod in sorted(modules.values(), key=lambda m: m.path):
        missed = sorted(
            (n for n, s in mod.status.items() if s not in ("killed", "timeout")),
            key=_natural,
        )
        if not missed:
            continue
        out += [f"### `{mod.path}`", ""]
        race_only = races()
        for name in missed:
            if name in equivalent:
                verdict = f"equivalent: {equivalent[name]}"
            elif name in race_only:
                verdict = f"race only (not detected here): {race_only[name]}"
            else:
                verdict = "**open**: no test tells it apart (a gap to close)"
            short = name.split(".", 3)[-1]
            out.append(f"- `{short}` ({mod.status[name]}) {change_of(root, name)}: {verdict}")
        out.append("")
    if closed:
        out += [
            "## Gaps closed",
            "",
            "Mutants that survived an earlier run, and the named test that kills them now "
            "(this run's status in brackets).",
            "",
        ]
        everything = {n: s for m in modules.values() for n, s in m.status.items()}
        for name, test in sorted(closed.items(), key=lambda kv: _natural(kv[0])):
            out.append(f"- `{name}` [{everything.get(name, 'not in this run')}]: `{test}`")
        out.append("")
    by_hand = issue_gaps()
    if by_hand:
        out += [
            "## Gaps found by hand that mutmut does not make",
            "",
            "mutmut swaps no `min`/`max` and mutates no class-level default; these changes, "
            "found by an earlier hand-run, each have the named test that fails on them.",
            "",
        ]
        out += [f"- {gap}: `{test}`" for gap, test in by_hand.items()] + [""]
    stale = sorted(n for n in equivalent if not any(n in m.status for m in modules.values()))
    if stale:
        out += ["## Verdicts naming no mutant of this run", ""]
        out += [f"- `{n}`" for n in stale] + [""]
    return "\n".join(out)


def _natural(name: str) -> tuple[str, int]:
    stem, _, number = name.rpartition("__mutmut_")
    return stem, int(number) if number.isdigit() else 0


def _git_head() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.tools.mutation", description=__doc__)
    parser.add_argument("--max-children", type=int, default=2, help="mutmut workers (2)")
    parser.add_argument(
        "--report-only", action="store_true", help="rewrite RESULTS.md from mutants/, no run"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when an area misses its goal")
    parser.add_argument(
        "--explore",
        nargs="+",
        metavar="GLOB",
        help="while writing tests: mutate only these files (scratch copy), print survivors",
    )
    parser.add_argument("--tests", nargs="+", help="with --explore: these tests instead")
    args = parser.parse_args(argv)
    if args.explore:
        import tempfile

        explore(Path(tempfile.mkdtemp(prefix="mutation-")), args.explore, args.tests)
        return 0
    run_file = REPO / "mutants" / "run.json"
    if not args.report_only:
        shutil.rmtree(REPO / "mutants", ignore_errors=True)  # one run, nothing reused
        started = datetime.now(UTC)
        commit = _git_head()  # the tests copied for the run are this commit's
        t0 = time.monotonic()
        run_mutmut(REPO, max_children=args.max_children)
        run = {
            "commit": commit,
            "started": f"{started:%Y-%m-%d %H:%M} UTC",
            "minutes": round((time.monotonic() - t0) / 60),
            "workers": args.max_children,
        }
        run_file.write_text(json.dumps(run), encoding="utf-8")
    modules = read_results(REPO)
    if not modules:
        print("no mutants found under mutants/: run without --report-only", file=sys.stderr)
        return 2
    import mutmut

    run = json.loads(run_file.read_text(encoding="utf-8")) if run_file.exists() else {}
    header = (
        f"Run of commit `{run.get('commit', 'unknown')}` (tests as committed there), "
        f"mutmut {mutmut.__version__}, Python {sys.version.split()[0]}, started "
        f"{run.get('started', 'unknown')}, took {run.get('minutes', '?')} min with "
        f"{run.get('workers', '?')} workers on a shared 2-core machine."
    )
    equivalent, closed = verdicts()
    RESULTS.write_text(report(REPO, modules, equivalent, closed, header=header), encoding="utf-8")
    failed = False
    for area, goal in GOALS.items():
        mods = [m for m in modules.values() if area_of(m.path) == area]
        value = score(mods, equivalent)
        print(f"{area}: {value:.1f} % of non-equivalent mutants detected (goal {goal:.0f} %)")
        failed |= value < goal
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 1 if args.check and failed else 0
