"""Preflight (``infra.operations.preflight``) on moto: API Gateway's account settings and
CloudWatch Logs' resource policies are moto's; moto implements neither Lambda's
``GetAccountSettings`` nor Service Quotas for ``states`` (only ``vpc``), so those two calls
are answered by botocore's ``Stubber`` with AWS's documented response shapes."""

from __future__ import annotations

import json

import boto3
from botocore.stub import Stubber

from infra.cdk.stack import STAGES
from infra.operations.preflight import (
    DELIVERY_STATEMENT_CHARS,
    MIN_UNRESERVED,
    POLICY_MAX_CHARS,
    VENDED_LOGS_RESOURCE,
    main,
    preflight,
    reservations_from_source,
)

REGION = "us-east-1"
ACCOUNT = "123456789012"


def _lambda(quota: int, unreserved: int) -> tuple[object, Stubber]:
    client = boto3.client("lambda", region_name=REGION)
    stub = Stubber(client)
    stub.add_response(
        "get_account_settings",
        {
            "AccountLimit": {
                "ConcurrentExecutions": quota,
                "UnreservedConcurrentExecutions": unreserved,
            },
            "AccountUsage": {"FunctionCount": 0},
        },
    )
    stub.activate()
    return client, stub


def _quotas(quotas: list[dict] | None) -> object:
    client = boto3.client("service-quotas", region_name=REGION)
    stub = Stubber(client)
    if quotas is None:
        stub.add_client_error("list_service_quotas", "NoSuchResourceException")
    else:
        stub.add_response("list_service_quotas", {"Quotas": quotas})
    stub.activate()
    return client


def _run(reserved, *, quota=1000, unreserved=1000, quotas=None, need=0.0):
    lam, _ = _lambda(quota, unreserved)
    return preflight(
        apigateway=boto3.client("apigateway", region_name=REGION),
        lam=lam,
        logs=boto3.client("logs", region_name=REGION),
        quotas=_quotas(quotas),
        region=REGION,
        account=ACCOUNT,
        reserved=reserved,
        start_executions_per_second=need,
    )


def _by_check(findings):
    return {f.check: f for f in findings}


def test_a_fresh_account_lacks_only_the_api_gateway_role_for_dev(aws):
    findings = _by_check(_run(reservations_from_source("dev")))
    role = findings["API Gateway CloudWatch role"]
    assert not role.ok
    assert "apiGatewayAccountRole=true" in role.raise_to
    assert findings["Lambda concurrency"].ok  # dev's 51 reserved of 1,000 leaves 949
    assert findings["Logs resource policies"].ok
    assert findings["Step Functions StartExecution"].ok  # nothing asked: unknown is no shortfall
    boto3.client("apigateway", region_name=REGION).update_account(
        patchOperations=[
            {"op": "replace", "path": "/cloudwatchRoleArn", "value": "arn:aws:iam::1:role/apigw"}
        ]
    )
    assert all(f.ok for f in _run(reservations_from_source("dev")))


def test_a_fresh_account_must_raise_its_concurrency_quota_for_prod(aws):
    """prod is sized for 100,000 players (``infra.limits``): its reservations exceed the
    default quota of 1,000, and the preflight names the value to request."""
    reserved = reservations_from_source("prod")
    need = sum(reserved.values()) + MIN_UNRESERVED
    assert need > 1_000
    finding = _by_check(_run(reserved))["Lambda concurrency"]
    assert not finding.ok
    assert f">= {need}" in finding.raise_to


def test_a_small_concurrency_quota_names_the_value_to_request(aws):
    reserved = reservations_from_source("prod")
    need = sum(reserved.values())
    finding = _by_check(_run(reserved, quota=400, unreserved=400))["Lambda concurrency"]
    assert not finding.ok
    # 400 - need leaves a deficit: request 400 + 100 + the deficit
    assert f">= {400 + MIN_UNRESERVED + need - 400}" in finding.raise_to
    assert "reserveConcurrency=false" in finding.raise_to
    assert _by_check(_run({}, quota=400, unreserved=400))["Lambda concurrency"].ok


def test_a_full_log_delivery_policy_is_a_shortfall_unless_it_covers_vended_logs(aws):
    logs = boto3.client("logs", region_name=REGION)
    statements: list[dict] = []
    doc = ""
    while len(doc) + DELIVERY_STATEMENT_CHARS <= POLICY_MAX_CHARS:  # one group at a time
        statements.append(
            {
                "Sid": f"s{len(statements)}",
                "Effect": "Allow",
                "Principal": {"Service": "delivery.logs.amazonaws.com"},
                "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                "Resource": f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:/g/{len(statements)}:*",
            }
        )
        doc = json.dumps({"Version": "2012-10-17", "Statement": statements})
    assert len(doc) <= POLICY_MAX_CHARS
    logs.put_resource_policy(policyName="AWSLogDeliveryWrite20150319", policyDocument=doc)
    finding = _by_check(_run({}))["Logs resource policies"]
    assert not finding.ok
    assert "free" in finding.raise_to
    wildcard = VENDED_LOGS_RESOURCE.format(region=REGION, account=ACCOUNT)
    covered = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "v",
                    "Effect": "Allow",
                    "Principal": {"Service": "delivery.logs.amazonaws.com"},
                    "Action": ["logs:PutLogEvents"],
                    "Resource": wildcard,
                }
            ],
        }
    )
    logs.put_resource_policy(policyName="AWSLogDeliveryWrite20150319", policyDocument=covered)
    assert _by_check(_run({}))["Logs resource policies"].ok


def test_the_start_execution_quota_is_read_and_compared_with_the_need(aws):
    listed = [
        {
            "QuotaName": "StartExecution throttle token refill rate for Express",
            "QuotaCode": "L-TEST",
            "Value": 1000.0,
            "ServiceCode": "states",
        }
    ]
    short = _by_check(_run({}, quotas=listed, need=3100))["Step Functions StartExecution"]
    assert not short.ok
    assert "L-TEST >= 3100" in short.raise_to
    assert _by_check(_run({}, quotas=listed, need=500))["Step Functions StartExecution"].ok
    unknown = _by_check(_run({}, quotas=None, need=500))["Step Functions StartExecution"]
    assert not unknown.ok
    assert "differs per Region" in unknown.what


def test_reservations_come_from_the_source():
    assert reservations_from_source("dev") == STAGES["dev"].reserved
    assert reservations_from_source("prod") == STAGES["prod"].reserved


def test_the_command_exits_1_listing_each_shortfall(aws, monkeypatch, capsys):
    import infra.operations.preflight as module

    lam, _ = _lambda(400, 400)
    quotas = _quotas([])
    real = boto3.session.Session.client

    def client(self, name, *args, **kwargs):
        return {"lambda": lam, "service-quotas": quotas}.get(name) or real(
            self, name, *args, **kwargs
        )

    monkeypatch.setattr(boto3.session.Session, "client", client)
    assert module.main(["--stage", "prod", "--region", REGION]) == 1
    out = capsys.readouterr().out
    assert out.count("FAIL") == 2  # the API Gateway role and the concurrency quota
    assert main is module.main
