"""Infrastructure: the optional edge guard — a CloudFront distribution in front of the WebSocket
API with an AWS WAF web ACL whose rate-based rule blocks a source address that opens too many
connections.

AWS WAF cannot be associated with a WebSocket API itself; AWS's pattern puts CloudFront (which
carries WebSocket connections) in front of it and the web ACL on the distribution (Serverless
Land, "Amazon API Gateway WebSocket API with Amazon CloudFront & AWS WAF":
https://serverlessland.com/patterns/waf-cloudfront-websocket-apigw-cdk-python). WAF sees the
HTTP upgrade request, not the frames after it: the rule counts connection attempts per source
address (AWS WAF, "Rate-based rule statement":
https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based.html);
messages on an open connection are the per-connection guard's (``functions.messages``). A web
ACL for CloudFront must be created in us-east-1 (AWS WAF, "Resource types you can protect"), so
the stack asserts its region when the guard is on.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Aws, CfnRule, CfnRuleAssertion, Fn
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

from infra.cdk.constructs.nag import acknowledge

CONNECTS_PER_SOURCE: Final = 200
"""Connection attempts (WebSocket upgrades) one source address may make per
:data:`WINDOW_SECONDS` before WAF blocks it until its rate falls back under: a home or a
campus behind one NAT reconnecting all its players at once stays well under it (a player
reconnects about once a minute in a storm); a script opening 500 connections is cut at 200."""
WINDOW_SECONDS: Final = 60
"""The rate-based rule's evaluation window (WAF allows 60, 120, 300 or 600 s)."""
RULE_NAME: Final = "ConnectsPerSource"


class EdgeGuard(Construct):
    """A CloudFront distribution whose origin is the API's stage (``api_domain``, ``stage``)
    and a CLOUDFRONT-scoped web ACL on it with one rate-based rule (:data:`CONNECTS_PER_SOURCE`
    per :data:`WINDOW_SECONDS`, by source IP, block). Attributes: ``web_acl``,
    ``distribution``, ``url`` (``wss://`` on the distribution's domain)."""

    def __init__(self, scope: Construct, construct_id: str, *, api_domain: str, stage: str) -> None:
        super().__init__(scope, construct_id)
        visibility = wafv2.CfnWebACL.VisibilityConfigProperty(
            cloud_watch_metrics_enabled=True,
            metric_name=RULE_NAME,
            sampled_requests_enabled=True,
        )
        self.web_acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            scope="CLOUDFRONT",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=wafv2.CfnWebACL.VisibilityConfigProperty(
                cloud_watch_metrics_enabled=True,
                metric_name="EdgeGuard",
                sampled_requests_enabled=True,
            ),
            rules=[
                wafv2.CfnWebACL.RuleProperty(
                    name=RULE_NAME,
                    priority=0,
                    action=wafv2.CfnWebACL.RuleActionProperty(block={}),
                    statement=wafv2.CfnWebACL.StatementProperty(
                        rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                            aggregate_key_type="IP",
                            limit=CONNECTS_PER_SOURCE,
                            evaluation_window_sec=WINDOW_SECONDS,
                        )
                    ),
                    visibility_config=visibility,
                )
            ],
        )
        self.distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment="Wordle Tournament WebSocket API behind AWS WAF",
            web_acl_id=self.web_acl.attr_arn,
            price_class=cloudfront.PriceClass.PRICE_CLASS_100,
            default_behavior=cloudfront.BehaviorOptions(
                origin=origins.HttpOrigin(
                    api_domain,
                    origin_path=f"/{stage}",
                    protocol_policy=cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
                ),
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
                cache_policy=cloudfront.CachePolicy.CACHING_DISABLED,
                # the Sec-WebSocket-* headers reach the API; Host must be the origin's
                origin_request_policy=cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
            ),
        )
        self.url = f"wss://{self.distribution.distribution_domain_name}"
        CfnRule(
            self,
            "WebAclRegion",
            assertions=[
                CfnRuleAssertion(
                    assert_=Fn.condition_equals(Aws.REGION, "us-east-1"),
                    assert_description="The edge guard's web ACL (scope CLOUDFRONT) must be "
                    "created in us-east-1: deploy this stack there, or without edgeGuard.",
                )
            ],
        )
        acknowledge(
            self.distribution,
            "AwsSolutions-CFR1",
            "Players come from every country; the game has no geographic restriction to enforce.",
        )
        acknowledge(
            self.distribution,
            "AwsSolutions-CFR3",
            "Every connection is logged by the API stage's access log (source address included); "
            "a second log of the same upgrades in S3 would add cost, not information.",
        )
        acknowledge(
            self.distribution,
            "AwsSolutions-CFR4",
            "The default cloudfront.net certificate cannot pin a TLS minimum; a custom domain "
            "with its own certificate and TLSv1.2_2021 is the operator's choice (infra/README.md).",
        )
