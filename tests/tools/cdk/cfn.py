"""Test helpers: read a synthesized CloudFormation template (parsed JSON)."""

from __future__ import annotations

from typing import Any

from infra.cdk.constructs.nag import render

__all__ = ["as_list", "functions_by_handler", "live_alias", "render", "resources"]

PAGE_TOPIC = "arn:aws:sns:eu-west-1:111111111111:wordle-page"
TICKET_TOPIC = "arn:aws:sns:eu-west-1:111111111111:wordle-ticket"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
"""The commit the session fixture synthesizes as (``add_stage(commit=...)``)."""
TOPICS = {"prod": {"page_topic_arn": PAGE_TOPIC, "ticket_topic_arn": TICKET_TOPIC}}
"""The session fixture synthesizes prod with its two alarm topics, as the runbook deploys it;
dev without."""


def resources(template: dict[str, Any], type_name: str) -> dict[str, dict[str, Any]]:
    """Logical id -> properties of every resource of ``type_name``."""
    return {
        logical_id: resource.get("Properties", {})
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == type_name
    }


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def functions_by_handler(template: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Lambda handler (``functions.messages.guess``) -> (logical id, properties)."""
    return {
        props["Handler"]: (logical_id, props)
        for logical_id, props in resources(template, "AWS::Lambda::Function").items()
    }


def role_statements(template: dict[str, Any], role_logical_id: str) -> list[dict[str, Any]]:
    """Every statement of every inline policy attached to the role."""
    statements: list[dict[str, Any]] = []
    for props in resources(template, "AWS::IAM::Policy").values():
        if {"Ref": role_logical_id} in props["Roles"]:
            statements += props["PolicyDocument"]["Statement"]
    return statements


def granted(template: dict[str, Any], role_logical_id: str) -> set[tuple[str, str]]:
    """(action, rendered resource) pairs the role is allowed."""
    return {
        (action, render(resource))
        for s in role_statements(template, role_logical_id)
        if s["Effect"] == "Allow"
        for action in as_list(s["Action"])
        for resource in as_list(s["Resource"])
    }


def live_alias(template: dict[str, Any], function_logical_id: str) -> str:
    """The logical id of the function's ``live`` alias."""
    (alias_id,) = [
        logical_id
        for logical_id, props in resources(template, "AWS::Lambda::Alias").items()
        if props["FunctionName"] == {"Ref": function_logical_id} and props["Name"] == "live"
    ]
    return alias_id


def machine_id(template: dict[str, Any]) -> str:
    """The logical id of the one state machine."""
    (logical_id,) = resources(template, "AWS::StepFunctions::StateMachine")
    return logical_id
