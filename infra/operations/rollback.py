"""Operator command: roll the whole stack's code back to the versions of a named commit.

``python -m infra.operations.rollback --to COMMIT --functions "$FUNCTIONS"
[--state-machine-arn ARN] [--repo DIR] [--override] [--dry-run] [--region R]``

``$FUNCTIONS`` is the stack's output ``FunctionNames`` (``module=function-name`` pairs); ``ARN``
its output ``StateMachineArn``. Every deploy publishes a version of every function whose
description names the commit it was built from (``infra.cdk.constructs.functions.
version_description``), and a version of the deadline machine per definition revision with a
``live`` alias the functions start executions through. This command moves every function's
``live`` alias to the version built from ``COMMIT`` — all of them or none: it first finds each
one and refuses when one is missing (that commit was never deployed, or its versions were
deleted).

It refuses (unless ``--override``) when, between the commit live now and ``COMMIT`` (read from
the git checkout ``--repo``), the data schema differs (``STATE_SCHEMA`` in
``shared/adapters/dynamo/tournament_document.py``, or ``shared/adapters/dynamo/schema.py``) —
the older code may not read what the newer wrote (RULINGS.md, "Persistence", rollback rule) —
or the deadline machine's definition may differ (``shared/adapters/step_functions.py``). With
``--override`` and a different definition it also moves the machine's ``live`` alias to the
newest version published at or before ``COMMIT``. What it cannot roll back, it says: the
stack's IAM policies, throttles, alarms and table (a redeploy of the old commit does).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.cdk.versions import LIVE_ALIAS, commit_of

SCHEMA_FILES = ("shared/adapters/dynamo/schema.py",)
"""Files whose change between two commits is a data-model change."""
DOCUMENT_FILE = "shared/adapters/dynamo/tournament_document.py"
"""Where ``STATE_SCHEMA`` (the tournament document's layout version) is set."""
DEFINITION_FILES = ("shared/adapters/step_functions.py",)
"""Files the deadline machine's definition is generated from."""
NOT_ROLLED_BACK = (
    "IAM policies, route throttles, reserved concurrency, alarms and the table stay as deployed "
    "(redeploy the old commit for those: infra/RUNBOOK.md, Rollback)"
)


class RollbackRefusedError(Exception):
    """The rollback cannot be done as asked; nothing was moved."""


@dataclass
class Plan:
    """What a rollback moves: function name -> (version live now, version to move to)."""

    target: str
    live_commits: set[str] = field(default_factory=set)
    functions: dict[str, tuple[str, str]] = field(default_factory=dict)
    machine: tuple[str, str] | None = None
    """(version ARN live now, version ARN to move to), when the machine's alias moves."""
    differences: list[str] = field(default_factory=list)
    """What differs between the live commit and the target (schema, definition)."""


class Repo:
    """The git checkout the commits are read from (``git`` on the PATH)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", *args], cwd=self.path, capture_output=True, text=True, check=check
        )

    def resolve(self, ref: str) -> str:
        """The full commit id of ``ref``. Raises RollbackRefusedError for an unknown one."""
        done = self._git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        if done.returncode != 0:
            raise RollbackRefusedError(f"no commit {ref!r} in {self.path} (git fetch first?)")
        return done.stdout.strip()

    def changed(self, a: str, b: str, paths: Sequence[str]) -> bool:
        """True when any of ``paths`` differs between commits ``a`` and ``b``."""
        return self._git("diff", "--quiet", a, b, "--", *paths, check=False).returncode != 0

    def show(self, commit: str, path: str) -> str:
        return self._git("show", f"{commit}:{path}").stdout

    def is_ancestor(self, a: str, b: str) -> bool:
        """True when ``a`` is ``b`` or one of its ancestors."""
        return self._git("merge-base", "--is-ancestor", a, b, check=False).returncode == 0


def state_schema(repo: Repo, commit: str) -> int | None:
    """``STATE_SCHEMA`` as set at ``commit`` (None when the file does not set one)."""
    found = re.search(r"^STATE_SCHEMA\s*=\s*(\d+)", repo.show(commit, DOCUMENT_FILE), re.M)
    return int(found.group(1)) if found else None


def differences(repo: Repo, live: str, target: str) -> tuple[list[str], bool]:
    """What differs between the ``live`` and ``target`` commits that a rollback of the
    functions' aliases cannot carry: the data schema and the machine's definition. Returns the
    list (empty: compatible) and whether the definition may differ."""
    found = []
    old, new = state_schema(repo, target), state_schema(repo, live)
    if old != new:
        found.append(f"STATE_SCHEMA {new} live, {old} at the target")
    if repo.changed(live, target, SCHEMA_FILES):
        found.append(f"the data model ({', '.join(SCHEMA_FILES)}) differs")
    definition = repo.changed(live, target, DEFINITION_FILES)
    if definition:
        found.append(f"the deadline machine's definition ({', '.join(DEFINITION_FILES)}) differs")
    return found, definition


def parse_function_names(text: str) -> dict[str, str]:
    """``module=function-name`` pairs (the stack's output ``FunctionNames``) -> module -> name."""
    pairs = dict(part.split("=", 1) for part in text.split() if "=" in part)
    if not pairs:
        raise RollbackRefusedError("no module=function-name pairs in --functions")
    return pairs


def _versions(lam: Any, function: str) -> list[dict[str, Any]]:
    versions: list[dict[str, Any]] = []
    for page in lam.get_paginator("list_versions_by_function").paginate(FunctionName=function):
        versions += [v for v in page["Versions"] if v["Version"] != "$LATEST"]
    return versions


def _machine_versions(sfn: Any, machine_arn: str) -> list[tuple[str, str | None]]:
    """(version ARN, commit) of every published version of the machine, newest first."""
    arns: list[str] = []
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"stateMachineArn": machine_arn}
        if token:
            kwargs["nextToken"] = token
        page = sfn.list_state_machine_versions(**kwargs)
        arns += [v["stateMachineVersionArn"] for v in page.get("stateMachineVersions", [])]
        token = page.get("nextToken")
        if not token:
            break
    found = [
        (arn, commit_of(sfn.describe_state_machine(stateMachineArn=arn).get("description")))
        for arn in arns
    ]
    return sorted(found, key=lambda v: int(v[0].rsplit(":", 1)[1]), reverse=True)


def plan(
    lam: Any,
    repo: Repo,
    functions: dict[str, str],
    target_ref: str,
    *,
    sfn: Any = None,
    machine_arn: str | None = None,
    override: bool = False,
) -> Plan:
    """Find every version to move to and check the commits' compatibility (module docstring).
    Raises RollbackRefusedError; moves nothing."""
    target = repo.resolve(target_ref)
    result = Plan(target)
    for module, name in sorted(functions.items()):
        live = lam.get_alias(FunctionName=name, Name=LIVE_ALIAS)["FunctionVersion"]
        versions = _versions(lam, name)
        by_version = {v["Version"]: v for v in versions}
        live_commit = commit_of(by_version.get(live, {}).get("Description"))
        result.live_commits.add(live_commit or "unknown")
        matches = [v["Version"] for v in versions if commit_of(v.get("Description")) == target]
        if not matches:
            raise RollbackRefusedError(
                f"{module} ({name}) has no version built from {target[:12]}: "
                "it was never deployed, or its versions were deleted"
            )
        result.functions[name] = (live, max(matches, key=int))
    definition = False
    for live_commit in sorted(result.live_commits):
        if live_commit == "unknown" or live_commit.endswith("-dirty"):
            result.differences.append(
                f"a live version was built from {live_commit}: its code cannot be compared"
            )
            definition = True
            continue
        found, changed = differences(repo, repo.resolve(live_commit), target)
        result.differences += found
        definition = definition or changed
    if result.differences and not override:
        raise RollbackRefusedError(
            "refusing: " + "; ".join(result.differences) + " (--override to roll back anyway)"
        )
    if definition and sfn is not None and machine_arn:
        result.machine = _machine_target(sfn, repo, machine_arn, target)
    return result


def _machine_target(sfn: Any, repo: Repo, machine_arn: str, target: str) -> tuple[str, str]:
    alias_arn = f"{machine_arn}:{LIVE_ALIAS}"
    routes = sfn.describe_state_machine_alias(stateMachineAliasArn=alias_arn)
    live = routes["routingConfiguration"][0]["stateMachineVersionArn"]
    for arn, commit in _machine_versions(sfn, machine_arn):
        if commit and not commit.endswith("-dirty") and repo.is_ancestor(commit, target):
            return live, arn
    raise RollbackRefusedError(
        f"no version of the deadline machine was published at or before {target[:12]}"
    )


def apply(lam: Any, result: Plan, *, sfn: Any = None, machine_arn: str | None = None) -> None:
    """Move every alias the plan names (functions first, then the machine's)."""
    for name, (_, version) in sorted(result.functions.items()):
        lam.update_alias(FunctionName=name, Name=LIVE_ALIAS, FunctionVersion=version)
    if result.machine is not None and sfn is not None and machine_arn:
        sfn.update_state_machine_alias(
            stateMachineAliasArn=f"{machine_arn}:{LIVE_ALIAS}",
            routingConfiguration=[{"stateMachineVersionArn": result.machine[1], "weight": 100}],
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m infra.operations.rollback",
        description="Move every function's live alias (and the machine's) to a commit's versions.",
    )
    parser.add_argument("--to", required=True, help="the commit to roll back to")
    parser.add_argument("--functions", required=True, help="the stack's FunctionNames output")
    parser.add_argument("--state-machine-arn", default=None, help="output StateMachineArn")
    parser.add_argument("--repo", default=".", help="the git checkout to compare commits in")
    parser.add_argument("--override", action="store_true", help="roll back across a difference")
    parser.add_argument("--dry-run", action="store_true", help="show what would move")
    parser.add_argument("--region", default=None, help="AWS region (default: the profile's)")
    args = parser.parse_args(argv)

    import boto3

    lam = boto3.client("lambda", region_name=args.region)
    sfn = boto3.client("stepfunctions", region_name=args.region)
    try:
        result = plan(
            lam,
            Repo(Path(args.repo)),
            parse_function_names(args.functions),
            args.to,
            sfn=sfn,
            machine_arn=args.state_machine_arn,
            override=args.override,
        )
    except RollbackRefusedError as err:
        print(f"refused: {err}", file=sys.stderr)
        return 2
    for name, (live, version) in sorted(result.functions.items()):
        print(f"  {name}: {live} -> {version}")
    if result.machine is not None:
        print(f"  deadline machine: {result.machine[0]} -> {result.machine[1]}")
    for difference in result.differences:
        print(f"  overridden: {difference}")
    if not args.dry_run:
        apply(lam, result, sfn=sfn, machine_arn=args.state_machine_arn)
    print(("dry run: " if args.dry_run else "") + f"rolled back to {result.target}")
    print(f"not rolled back: {NOT_ROLLED_BACK}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
