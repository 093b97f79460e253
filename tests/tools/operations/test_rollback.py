"""Rollback (``infra.operations.rollback``) on moto's Lambda and Step Functions, against a
throw-away git history: all aliases move to one commit's versions or none does; a schema or
definition difference is refused unless overridden; with the override the machine's alias
moves with the functions'.

moto implements Lambda versions and aliases, Step Functions publishing (``publish=True``) and
aliases, but not ``ListStateMachineVersions``: ``WithVersionList`` answers that one call from
the versions the test published (everything else is moto's)."""

from __future__ import annotations

import io
import json
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import boto3
import pytest

from infra.cdk.versions import LIVE_ALIAS, version_description
from infra.operations.rollback import (
    DEFINITION_FILES,
    DOCUMENT_FILE,
    SCHEMA_FILES,
    Repo,
    RollbackRefusedError,
    apply,
    parse_function_names,
    plan,
)

FUNCTIONS = {"guess": "stack-guess", "apply_deadlines": "stack-clock"}


class History:
    """A git repository whose commits change the files the rollback compares."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._git("init", "-q")
        self._git("config", "user.email", "t@example.com")
        self._git("config", "user.name", "t")
        self.write(DOCUMENT_FILE, "STATE_SCHEMA = 2\n")
        self.write(SCHEMA_FILES[0], "GSI_DUE = 'gsi_due'\n")
        self.write(DEFINITION_FILES[0], "WAIT = 1\n")

    def _git(self, *args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=self.path, check=True, capture_output=True, text=True
        ).stdout.strip()

    def write(self, path: str, text: str) -> None:
        target = self.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def commit(self, message: str, **changes: str) -> str:
        for path, text in changes.items():
            self.write(path, text)
        self.write("functions/code.py", f"# {message}\n")
        self._git("add", "-A")
        self._git("commit", "-q", "-m", message)
        return self._git("rev-parse", "HEAD")


class WithVersionList:
    """moto's Step Functions client plus ``list_state_machine_versions`` (moto lacks it)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.published: list[str] = []

    def list_state_machine_versions(self, **_: Any) -> dict[str, Any]:
        return {"stateMachineVersions": [{"stateMachineVersionArn": a} for a in self.published]}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def _zip(text: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("handler.py", text)
    return buf.getvalue()


class Account:
    """The stack's functions and machine on moto; ``deploy(commit)`` publishes a version of
    each (as CDK does) and points ``live`` at it."""

    def __init__(self) -> None:
        iam = boto3.client("iam")
        self.role = iam.create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        self.lam = boto3.client("lambda")
        self.sfn = WithVersionList(boto3.client("stepfunctions"))
        self.machine: str | None = None
        self.definition: str | None = None

    def deploy(self, commit: str, *, definition: str = "1", functions: dict | None = None) -> None:
        for name in (functions or FUNCTIONS).values():
            code = {"ZipFile": _zip(f"def handler(e, c):\n    return {commit!r}\n")}
            try:
                self.lam.get_function(FunctionName=name)
                self.lam.update_function_code(FunctionName=name, **code)
            except self.lam.exceptions.ResourceNotFoundException:
                self.lam.create_function(
                    FunctionName=name,
                    Runtime="python3.13",
                    Role=self.role,
                    Handler="handler.handler",
                    Code=code,
                )
            version = self.lam.publish_version(
                FunctionName=name, Description=version_description(commit)
            )["Version"]
            try:
                self.lam.update_alias(FunctionName=name, Name=LIVE_ALIAS, FunctionVersion=version)
            except self.lam.exceptions.ResourceNotFoundException:
                self.lam.create_alias(FunctionName=name, Name=LIVE_ALIAS, FunctionVersion=version)
        body = json.dumps(
            {"StartAt": "S", "States": {"S": {"Type": "Pass", "Comment": definition, "End": True}}}
        )
        if self.machine is None:
            made = self.sfn.create_state_machine(
                name="deadlines",
                definition=body,
                roleArn=self.role,
                type="EXPRESS",
                publish=True,
                versionDescription=version_description(commit),
            )
            self.machine = made["stateMachineArn"]
            self.sfn.published.append(made["stateMachineVersionArn"])
            self.sfn.create_state_machine_alias(
                name=LIVE_ALIAS,
                routingConfiguration=[
                    {"stateMachineVersionArn": made["stateMachineVersionArn"], "weight": 100}
                ],
            )
        elif definition != self.definition:  # a new revision: CloudFormation publishes it
            made = self.sfn.update_state_machine(
                stateMachineArn=self.machine,
                definition=body,
                publish=True,
                versionDescription=version_description(commit),
            )
            self.sfn.published.append(made["stateMachineVersionArn"])
            self.sfn.update_state_machine_alias(
                stateMachineAliasArn=f"{self.machine}:{LIVE_ALIAS}",
                routingConfiguration=[
                    {"stateMachineVersionArn": made["stateMachineVersionArn"], "weight": 100}
                ],
            )
        self.definition = definition

    def live(self) -> dict[str, str]:
        """Function name -> the commit its live version was built from."""
        out = {}
        for name in FUNCTIONS.values():
            version = self.lam.get_alias(FunctionName=name, Name=LIVE_ALIAS)["FunctionVersion"]
            out[name] = self.lam.get_function(FunctionName=name, Qualifier=version)[
                "Configuration"
            ]["Description"].split()[1]
        return out

    def machine_live(self) -> str:
        alias = self.sfn.describe_state_machine_alias(stateMachineAliasArn=f"{self.machine}:live")
        return alias["routingConfiguration"][0]["stateMachineVersionArn"]


@pytest.fixture
def history(tmp_path: Path) -> History:
    return History(tmp_path)


@pytest.fixture
def account(aws: None) -> Account:
    return Account()


def test_a_code_only_rollback_moves_every_alias_to_the_commits_versions(history, account):
    a = history.commit("a")
    b = history.commit("b")
    account.deploy(a)
    account.deploy(b)
    result = plan(account.lam, Repo(history.path), FUNCTIONS, a[:8])
    assert result.differences == []
    assert result.machine is None  # same definition: the machine's alias stays
    apply(account.lam, result)
    assert set(account.live().values()) == {a}


def test_a_schema_change_is_refused_and_nothing_moves_unless_overridden(history, account):
    a = history.commit("a")
    c = history.commit("c", **{DOCUMENT_FILE: "STATE_SCHEMA = 3\n"})
    account.deploy(a)
    account.deploy(c)
    with pytest.raises(RollbackRefusedError, match="STATE_SCHEMA 3 live, 2 at the target"):
        plan(account.lam, Repo(history.path), FUNCTIONS, a)
    assert set(account.live().values()) == {c}
    result = plan(account.lam, Repo(history.path), FUNCTIONS, a, override=True)
    apply(account.lam, result)
    assert set(account.live().values()) == {a}


def test_a_definition_change_moves_the_machines_alias_with_the_functions(history, account):
    a = history.commit("a")
    b = history.commit("b")
    d = history.commit("d", **{DEFINITION_FILES[0]: "WAIT = 2\n"})
    account.deploy(a, definition="1")
    account.deploy(b, definition="1")  # same revision: no new machine version
    first = account.machine_live()
    account.deploy(d, definition="2")
    assert account.machine_live() != first
    repo = Repo(history.path)
    with pytest.raises(RollbackRefusedError, match="definition"):
        plan(account.lam, repo, FUNCTIONS, b, sfn=account.sfn, machine_arn=account.machine)
    result = plan(
        account.lam,
        repo,
        FUNCTIONS,
        b,
        sfn=account.sfn,
        machine_arn=account.machine,
        override=True,
    )
    apply(account.lam, result, sfn=account.sfn, machine_arn=account.machine)
    assert set(account.live().values()) == {b}
    assert account.machine_live() == first  # the version published at a, b's definition


def test_a_commit_one_function_never_ran_is_refused_before_anything_moves(history, account):
    a = history.commit("a")
    b = history.commit("b")
    account.deploy(a, functions={"guess": "stack-guess"})  # the clock function came later
    account.deploy(b)
    with pytest.raises(RollbackRefusedError, match=r"apply_deadlines .* no version built from"):
        plan(account.lam, Repo(history.path), FUNCTIONS, a)
    assert set(account.live().values()) == {b}
    with pytest.raises(RollbackRefusedError, match="no commit"):
        plan(account.lam, Repo(history.path), FUNCTIONS, "f" * 40)


def test_the_function_names_output_parses_into_modules():
    assert parse_function_names("guess=stack-guess apply_deadlines=stack-clock") == FUNCTIONS
    with pytest.raises(RollbackRefusedError):
        parse_function_names("")
