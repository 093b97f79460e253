"""Infrastructure: the optional edge guard (``edgeGuard``; ``infra.cdk.constructs.edge``) — a
CloudFront distribution in front of the WebSocket API with an AWS WAF web ACL whose rate-based
rule blocks a source address past ``CONNECTS_PER_SOURCE`` connection attempts per window. Off
by default; cdk-nag and cfn-lint cover the guarded stack too (``test_template_checks``)."""

from __future__ import annotations

from typing import Any

from infra.cdk.constructs.edge import CONNECTS_PER_SOURCE, RULE_NAME, WINDOW_SECONDS
from tests.tools.cdk.cfn import resources


def test_the_stages_have_no_edge_guard_unless_asked(dev, prod):
    for template in (dev, prod):
        assert resources(template, "AWS::WAFv2::WebACL") == {}
        assert resources(template, "AWS::CloudFront::Distribution") == {}


def test_many_connections_from_one_source_are_blocked_at_the_edge(prod_edge):
    """One web ACL for CloudFront, allowing by default, whose one rule counts requests (the
    WebSocket upgrades) per source IP over the window and blocks past the limit."""
    (props,) = resources(prod_edge, "AWS::WAFv2::WebACL").values()
    assert props["Scope"] == "CLOUDFRONT"
    assert props["DefaultAction"] == {"Allow": {}}
    (rule,) = props["Rules"]
    assert rule["Name"] == RULE_NAME
    assert rule["Action"] == {"Block": {}}
    rate = rule["Statement"]["RateBasedStatement"]
    assert rate == {
        "AggregateKeyType": "IP",
        "Limit": CONNECTS_PER_SOURCE,
        "EvaluationWindowSec": WINDOW_SECONDS,
    }
    assert 10 <= CONNECTS_PER_SOURCE < 500  # WAF's minimum; the 500-connection flood is cut
    assert WINDOW_SECONDS in (60, 120, 300, 600)


def _acl_id(template: dict[str, Any]) -> str:
    (acl_id,) = resources(template, "AWS::WAFv2::WebACL")
    return acl_id


def test_the_distribution_carries_the_acl_and_fronts_the_api_stage(prod_edge):
    (dist,) = resources(prod_edge, "AWS::CloudFront::Distribution").values()
    config = dist["DistributionConfig"]
    assert config["WebACLId"] == {"Fn::GetAtt": [_acl_id(prod_edge), "Arn"]}
    (origin,) = config["Origins"]
    assert origin["OriginPath"] == "/prod"
    assert origin["CustomOriginConfig"]["OriginProtocolPolicy"] == "https-only"
    (api_id,) = resources(prod_edge, "AWS::ApiGatewayV2::Api")
    assert {"Ref": api_id} in origin["DomainName"]["Fn::Join"][1]
    behavior = config["DefaultCacheBehavior"]
    assert behavior["ViewerProtocolPolicy"] == "https-only"
    assert "OriginRequestPolicyId" in behavior  # the Sec-WebSocket-* headers go through
    outputs = prod_edge["Outputs"]
    assert any(key.startswith("EdgeWebSocketUrl") for key in outputs)


def test_the_guard_refuses_a_region_where_its_acl_cannot_live(prod_edge):
    """A CLOUDFRONT web ACL exists only in us-east-1: the template asserts the region."""
    rules = prod_edge.get("Rules", {})
    assertions = [a for rule in rules.values() for a in rule["Assertions"]]
    assert any(
        a["Assert"] == {"Fn::Equals": [{"Ref": "AWS::Region"}, "us-east-1"]} for a in assertions
    )


def test_the_access_log_records_the_source_address(prod_edge, prod):
    for template in (prod, prod_edge):
        (stage,) = resources(template, "AWS::ApiGatewayV2::Stage").values()
        assert "$context.identity.sourceIp" in stage["AccessLogSettings"]["Format"]
