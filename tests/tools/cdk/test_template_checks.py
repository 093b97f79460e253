"""Infrastructure: the synthesized templates pass cfn-lint (no errors) and cdk-nag's AWS
Solutions pack (no unacknowledged finding; every acknowledgement carries a reason)."""

from __future__ import annotations

import json

import pytest
from aws_cdk import Validations
from cdk_nag import AwsSolutionsChecks
from cfnlint.api import ManualArgs, lint

REGIONS = ["us-east-1"]  # resource specs barely differ by region; one keeps the lint fast

TOLERATED_WARNINGS = {
    # CDK makes each function and the state machine DependsOn their role next to the GetAtt
    # that already orders them: redundant, harmless, and not ours to remove.
    "W3005",
}


@pytest.mark.parametrize("stage", ["dev", "prod", "prod-edge"])
def test_cfn_lint_finds_no_errors(synthesized, stage):
    matches = lint(json.dumps(synthesized.templates[stage]), config=ManualArgs(regions=REGIONS))
    errors = [f"{m.rule.id} {m.path}: {m.message}" for m in matches if m.rule.id.startswith("E")]
    assert errors == []
    warnings = [
        f"{m.rule.id} {m.path}: {m.message}"
        for m in matches
        if m.rule.id.startswith("W") and m.rule.id not in TOLERATED_WARNINGS
    ]
    assert warnings == []


def test_cdk_nag_aws_solutions_has_no_unacknowledged_finding(synthesized):
    report = AwsSolutionsChecks().validate_scope(synthesized.app)
    findings = [
        f"{v.rule_name} at {[r.resource_logical_id for r in v.violating_resources]}"
        for v in report.violations
    ]
    assert findings == []
    assert report.success


def test_every_acknowledgement_has_a_reason(synthesized):
    key = Validations.ACKNOWLEDGED_RULES_METADATA_KEY
    # aws-cdk-lib records {"Annotation::<finding id>": reason}; cdk-nag 3 matches the id.
    acknowledged = {
        finding: reason
        for construct in synthesized.app.node.find_all()
        for entry in construct.node.metadata
        if entry.type == key
        for finding, reason in entry.data.items()
    }
    # IAM4 (API Gateway's account log role) only with -c apiGatewayAccountRole=true;
    # SF2 (an untraced machine) only where the stage's tracing policy is off (prod); CFR1, 3, 4
    # only with the edge guard (infra.cdk.constructs.edge); SQS3: the stream's failure queue
    # is itself a dead-letter queue (infra.cdk.constructs.streams)
    assert {f.split("::", 1)[1].split("[")[0] for f in acknowledged} == {
        "AwsSolutions-APIG4",
        "AwsSolutions-CFR1",
        "AwsSolutions-CFR3",
        "AwsSolutions-CFR4",
        "AwsSolutions-IAM5",
        "AwsSolutions-L1",
        "AwsSolutions-SF2",
        "AwsSolutions-SQS3",
    }
    for finding, reason in acknowledged.items():
        assert len(reason.split()) >= 8, finding
