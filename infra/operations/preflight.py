"""Operator command: check an account and Region before a stage's deploy, and say what to raise.

``python -m infra.operations.preflight --stage prod [--template PATH] [--no-reserved-concurrency]
[--start-executions-per-second N] [--region R]``

Each check reads the account and compares it with what the stack needs; the figures the stack
needs come from its source, never typed here: the reserved concurrency of every function from
``infra.cdk.stack.STAGES`` or, with ``--template``, from the synthesized template
(``cdk synth`` writes ``cdk.out/WordleTournament-<stage>.template.json``). Exit 0 when the deploy
can go ahead, 1 with one line per shortfall and the value to request:

- **API Gateway CloudWatch role** (``apigateway get-account``): a WebSocket stage with access
  logging fails to deploy without the account's ``cloudwatchRoleArn`` (AWS, "Set up CloudWatch
  logging for WebSocket APIs",
  https://docs.aws.amazon.com/apigateway/latest/developerguide/websocket-api-logging.html).
- **Lambda concurrency** (``lambda get-account-settings``): the stack's reservations must leave
  100 unreserved (AWS, "Lambda function scaling", reserved concurrency:
  https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html).
- **CloudWatch Logs resource policies** (``logs describe-resource-policies``): Step Functions
  logs through a policy of the account, at most 5,120 characters each and 10 per Region (AWS,
  "Logging using CloudWatch Logs",
  https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html); the machine's
  ``/aws/vendedlogs/`` group needs one statement or an existing wildcard.
- **Step Functions StartExecution** (Service Quotas ``list-service-quotas`` for ``states``): the
  applied quota, against ``--start-executions-per-second`` (``infra/CAPACITY.md`` gives the need
  per level); when Service Quotas does not list it, says so (the default differs per Region).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

MIN_UNRESERVED = 100
"""Lambda keeps at least this many concurrent executions unreserved in an account and Region."""
POLICY_MAX_CHARS = 5_120
"""A CloudWatch Logs resource policy document's limit (characters)."""
POLICY_MAX_COUNT = 10
"""Resource policies per account and Region (CloudWatch Logs)."""
VENDED_LOGS_RESOURCE = "arn:aws:logs:{region}:{account}:log-group:/aws/vendedlogs/*"
"""The resource a log-delivery statement names for every vended-logs group at once."""
DELIVERY_STATEMENT_CHARS = 420
"""About what one log-delivery statement (Sid, principal, two actions, the group's ARN with
conditions) adds to the account's delivery policy."""


@dataclass(frozen=True)
class Finding:
    """One check: ``ok``; ``what`` it found; ``raise_to``: what to request when short."""

    check: str
    ok: bool
    what: str
    raise_to: str = ""

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        tail = f" -> {self.raise_to}" if self.raise_to else ""
        return f"{mark} {self.check}: {self.what}{tail}"


def reservations_from_source(stage: str) -> dict[str, int]:
    """Function module -> reserved concurrency, as ``infra/cdk/stack.py`` sets the stage."""
    from infra.cdk.stack import STAGES

    return dict(STAGES[stage].reserved)


def reservations_from_template(template: dict[str, Any]) -> dict[str, int]:
    """Function logical id -> ``ReservedConcurrentExecutions`` in a synthesized template."""
    return {
        logical_id: int(resource["Properties"]["ReservedConcurrentExecutions"])
        for logical_id, resource in template.get("Resources", {}).items()
        if resource.get("Type") == "AWS::Lambda::Function"
        and "ReservedConcurrentExecutions" in resource.get("Properties", {})
    }


def check_api_gateway_role(apigateway: Any) -> Finding:
    role = apigateway.get_account().get("cloudwatchRoleArn")
    if role:
        return Finding("API Gateway CloudWatch role", True, role)
    return Finding(
        "API Gateway CloudWatch role",
        False,
        "not set in this Region",
        "deploy once with -c apiGatewayAccountRole=true (infra/README.md)",
    )


def check_lambda_concurrency(lam: Any, reserved: dict[str, int]) -> Finding:
    """The stack's reservations against the account's unreserved pool (first deploy: none of
    them is held yet)."""
    settings = lam.get_account_settings()["AccountLimit"]
    quota = int(settings["ConcurrentExecutions"])
    unreserved = int(settings["UnreservedConcurrentExecutions"])
    need = sum(reserved.values())
    left = unreserved - need
    what = (
        f"quota {quota}, unreserved {unreserved}; the stack reserves {need} "
        f"({len(reserved)} functions), leaving {left} (at least {MIN_UNRESERVED})"
    )
    if left >= MIN_UNRESERVED:
        return Finding("Lambda concurrency", True, what)
    return Finding(
        "Lambda concurrency",
        False,
        what,
        f"request ConcurrentExecutions >= {quota + MIN_UNRESERVED - left} (Service Quotas, "
        "Lambda, 'Concurrent executions'), or deploy with -c reserveConcurrency=false",
    )


def check_logs_policies(logs: Any, region: str, account: str) -> Finding:
    policies = logs.describe_resource_policies().get("resourcePolicies", [])
    wildcard = VENDED_LOGS_RESOURCE.format(region=region, account=account)
    sizes = {p["policyName"]: len(p.get("policyDocument", "")) for p in policies}
    if any(wildcard in p.get("policyDocument", "") for p in policies):
        return Finding("Logs resource policies", True, "the vended-logs wildcard is there")
    delivery = [n for n in sizes if n.startswith("AWSLogDeliveryWrite")]
    if delivery:
        size = max(sizes[n] for n in delivery)
        what = f"{delivery[0]} holds {size} of {POLICY_MAX_CHARS} characters"
        if size + DELIVERY_STATEMENT_CHARS <= POLICY_MAX_CHARS:
            return Finding("Logs resource policies", True, what)
        return Finding(
            "Logs resource policies",
            False,
            what,
            f"free {size + DELIVERY_STATEMENT_CHARS - POLICY_MAX_CHARS} characters: replace "
            f"its per-group statements by one on {wildcard} (aws logs put-resource-policy)",
        )
    what = f"{len(policies)} of {POLICY_MAX_COUNT} policies"
    if len(policies) < POLICY_MAX_COUNT:
        return Finding("Logs resource policies", True, what)
    return Finding(
        "Logs resource policies",
        False,
        what,
        "delete an unused one (aws logs delete-resource-policy): the first deploy adds one",
    )


def check_start_execution(quotas: Any, need_per_second: float) -> Finding:
    listed: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"ServiceCode": "states"}
    try:
        while True:
            page = quotas.list_service_quotas(**kwargs)
            listed += page.get("Quotas", [])
            if not page.get("NextToken"):
                break
            kwargs["NextToken"] = page["NextToken"]
    except (ClientError, BotoCoreError) as err:  # refused or unreachable: the quota is unknown
        listed = []
        why = f"Service Quotas did not answer ({type(err).__name__})"
    else:
        why = "Service Quotas lists no StartExecution quota for states"
    found = [q for q in listed if "StartExecution" in q.get("QuotaName", "")]
    express = [q for q in found if "xpress" in q["QuotaName"]] or found
    if not express:
        ok = need_per_second <= 0
        return Finding(
            "Step Functions StartExecution",
            ok,
            f"{why}; the default differs per Region (infra/CAPACITY.md, [AWS 7])",
            "" if ok else f"ask AWS for an Express StartExecution refill >= {need_per_second:g}/s",
        )
    quota = max(express, key=lambda q: float(q.get("Value", 0)))
    value = float(quota.get("Value", 0))
    what = f"{quota['QuotaName']} = {value:g}; needed {need_per_second:g}/s"
    if value >= need_per_second:
        return Finding("Step Functions StartExecution", True, what)
    return Finding(
        "Step Functions StartExecution",
        False,
        what,
        f"request {quota.get('QuotaCode', quota['QuotaName'])} >= {need_per_second:g}",
    )


def preflight(
    *,
    apigateway: Any,
    lam: Any,
    logs: Any,
    quotas: Any,
    region: str,
    account: str,
    reserved: dict[str, int],
    start_executions_per_second: float = 0.0,
) -> list[Finding]:
    """Every check, in order (see the module docstring)."""
    return [
        check_api_gateway_role(apigateway),
        check_lambda_concurrency(lam, reserved),
        check_logs_policies(logs, region, account),
        check_start_execution(quotas, start_executions_per_second),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m infra.operations.preflight",
        description="Check the account before a deploy; exit 1 listing what to raise.",
    )
    parser.add_argument("--stage", required=True, choices=("dev", "prod"))
    parser.add_argument("--template", default=None, help="a synthesized template (cdk.out)")
    parser.add_argument(
        "--no-reserved-concurrency",
        action="store_true",
        help="the stage will deploy with -c reserveConcurrency=false",
    )
    parser.add_argument(
        "--start-executions-per-second",
        type=float,
        default=0.0,
        help="the StartExecution rate to plan for (infra/CAPACITY.md, per level)",
    )
    parser.add_argument("--region", default=None, help="AWS region (default: the profile's)")
    args = parser.parse_args(argv)

    import boto3

    session = boto3.session.Session(region_name=args.region)
    region = session.region_name or "us-east-1"
    if args.no_reserved_concurrency:
        reserved: dict[str, int] = {}
    elif args.template:
        reserved = reservations_from_template(json.loads(Path(args.template).read_text()))
    else:
        reserved = reservations_from_source(args.stage)
    account = session.client("sts").get_caller_identity()["Account"]
    findings = preflight(
        apigateway=session.client("apigateway"),
        lam=session.client("lambda"),
        logs=session.client("logs"),
        quotas=session.client("service-quotas"),
        region=region,
        account=account,
        reserved=reserved,
        start_executions_per_second=args.start_executions_per_second,
    )
    for finding in findings:
        print(finding.line())
    short = [f for f in findings if not f.ok]
    if short:
        print(
            f"{len(short)} shortfall(s): raise them before deploying {args.stage}", file=sys.stderr
        )
        return 1
    print(f"ready to deploy {args.stage} in {region}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
