"""Infrastructure: the CDK app entry point (``cdk.json`` runs ``python -m infra.cdk.app``).

Context: ``stage`` (``dev`` | ``prod``, default ``dev``); ``layerDir`` (use a prebuilt layer
folder instead of building one with pip); ``pageTopicArn`` and ``ticketTopicArn`` (existing SNS
topics: the composite alarm ``GameDegraded`` pages through the first, every other alarm files a
ticket through the second; ``alarmTopicArn``, one topic for all, is refused: say which);
``apiGatewayAccountRole`` (``true`` to have this stack set API Gateway's region-wide CloudWatch
role; default off: that setting belongs to the account, not to one stack); ``tracing``
(``active`` | ``off``, default the stage's policy: active in dev, off in prod);
``reserveConcurrency`` (``false`` for an account whose concurrency quota cannot spare the
stage's reservations); ``edgeGuard`` (``true``: CloudFront and an AWS WAF rate-based rule per
source address in front of the API, ``infra.cdk.constructs.edge``; us-east-1 only);
``commit`` (default: ``git_commit()``), written into every published version's description for
rollback. The stack is environment-agnostic: synth needs no AWS credentials.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from aws_cdk import App, Validations
from cdk_nag import AwsSolutionsChecks

from infra.cdk.layer import build_layer
from infra.cdk.stack import STAGES, WordleTournamentStack


def git_commit(repo: Path | None = None) -> str:
    """The checkout's commit (40 hex digits), with ``-dirty`` when files differ from it, or
    ``unknown`` outside a git checkout: what a deploy's function versions are labelled with."""
    cwd = repo or Path(__file__).resolve().parents[2]
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{sha}-dirty" if dirty else sha


def stack_name(stage: str) -> str:
    return f"WordleTournament-{stage}"


def add_stage(
    app: App,
    stage: str,
    *,
    layer_dir: Path,
    page_topic_arn: str | None = None,
    ticket_topic_arn: str | None = None,
    account_log_role: bool = False,
    tracing: str | None = None,
    reserve_concurrency: bool = True,
    legacy_waiting_index: bool = False,
    board_index: bool = True,
    edge_guard: bool = False,
    name: str | None = None,
    commit: str = "unknown",
) -> WordleTournamentStack:
    """Add the stack of ``stage`` to ``app`` (named ``name``, default ``stack_name(stage)``).
    Raises KeyError for an unknown stage."""
    if stage not in STAGES:
        raise KeyError(f"unknown stage {stage!r}; choose one of {sorted(STAGES)}")
    return WordleTournamentStack(
        app,
        name or stack_name(stage),
        config=STAGES[stage],
        layer_dir=layer_dir,
        page_topic_arn=page_topic_arn,
        ticket_topic_arn=ticket_topic_arn,
        account_log_role=account_log_role,
        tracing=tracing,
        reserve_concurrency=reserve_concurrency,
        legacy_waiting_index=legacy_waiting_index,
        board_index=board_index,
        edge_guard=edge_guard,
        commit=commit,
        description=f"Wordle Tournament backend ({stage})",
    )


def add_checks(app: App) -> None:
    """cdk-nag's AWS Solutions pack as a policy-validation plugin: synth fails on any finding
    not acknowledged with a reason (``infra.cdk.constructs.nag.acknowledge``)."""
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))


def _flag(value: object, default: bool) -> bool:
    if value is None:
        return default
    return str(value).lower() not in ("false", "0", "no")


def main() -> None:
    app = App()
    context = app.node.try_get_context
    stage = str(context("stage") or "dev")
    layer_dir = context("layerDir")
    if context("alarmTopicArn"):
        raise SystemExit(
            "alarmTopicArn is replaced by pageTopicArn and ticketTopicArn (infra/README.md)"
        )
    add_stage(
        app,
        stage,
        layer_dir=Path(layer_dir) if layer_dir else build_layer(),
        page_topic_arn=context("pageTopicArn"),
        ticket_topic_arn=context("ticketTopicArn"),
        account_log_role=_flag(context("apiGatewayAccountRole"), default=False),
        tracing=context("tracing"),
        reserve_concurrency=_flag(context("reserveConcurrency"), default=True),
        legacy_waiting_index=_flag(context("legacyWaitingIndex"), default=False),
        board_index=_flag(context("boardIndex"), default=True),
        edge_guard=_flag(context("edgeGuard"), default=False),
        commit=str(context("commit") or git_commit()),
    )
    add_checks(app)
    app.synth()


if __name__ == "__main__":
    main()
