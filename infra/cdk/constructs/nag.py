"""Infrastructure: cdk-nag v3 acknowledgements, always with the reason written down.

cdk-nag v3 runs as a CDK policy-validation plugin and reads acknowledgements recorded by
``Validations.of(scope).acknowledge(...)``; each finding is acknowledged by its exact id (e.g.
``AwsSolutions-IAM5[Resource::*]``), never a whole rule for a whole stack.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, Stack, Validations
from constructs import IConstruct


def acknowledge(scope: IConstruct, finding: str, reason: str) -> None:
    """Acknowledge one cdk-nag finding on ``scope`` (and its children) with ``reason``."""
    if len(reason.split()) < 6:
        raise ValueError(f"acknowledging {finding} needs a real reason, got {reason!r}")
    Validations.of(scope).acknowledge(Acknowledgment(id=finding, reason=reason))


def render(value: Any) -> str:
    """A resolved CloudFormation value as text, as cdk-nag prints it in a finding id:
    ``Ref`` -> ``<Id>``, ``Fn::GetAtt`` -> ``<Id.Attr>``, ``Fn::Join`` joined. The infra tests
    read templates with it too. Raises ValueError for other intrinsics."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Ref" in value:
        return f"<{value['Ref']}>"
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return f"<{'.'.join(value['Fn::GetAtt'])}>"
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(render(p) for p in parts)
    raise ValueError(f"cannot render {value!r} as a cdk-nag finding")


def wildcard_resource_finding(scope: IConstruct, resource: str) -> str:
    """The ``AwsSolutions-IAM5`` finding id for a policy resource ARN (tokens allowed)."""
    return f"AwsSolutions-IAM5[Resource::{render(Stack.of(scope).resolve(resource))}]"
