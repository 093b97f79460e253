"""Infrastructure: every published version names its commit, and the deadline machine has
versions and a ``live`` alias the functions start executions through, so a rollback moves the
definition with the code (``infra.operations.rollback``)."""

from __future__ import annotations

from infra.cdk.versions import LIVE_ALIAS, commit_of, version_description
from tests.tools.cdk.cfn import COMMIT, functions_by_handler, machine_id, resources


def test_every_function_version_carries_the_commit_synthesized(prod):
    versions = resources(prod, "AWS::Lambda::Version")
    assert len(versions) == len(functions_by_handler(prod))
    for logical_id, props in versions.items():
        assert commit_of(props["Description"]) == COMMIT
        # rollback points live back at it
        assert prod["Resources"][logical_id]["DeletionPolicy"] == "Retain"


def test_the_machine_has_a_retained_version_per_revision_and_a_live_alias(prod):
    ((version_id, props),) = resources(prod, "AWS::StepFunctions::StateMachineVersion").items()
    assert props["StateMachineArn"] == {"Ref": machine_id(prod)}
    assert props["StateMachineRevisionId"] == {
        "Fn::GetAtt": [machine_id(prod), "StateMachineRevisionId"]
    }
    assert commit_of(props["Description"]) == COMMIT
    assert prod["Resources"][version_id]["DeletionPolicy"] == "Retain"
    (alias,) = resources(prod, "AWS::StepFunctions::StateMachineAlias").values()
    assert alias["Name"] == LIVE_ALIAS
    (route,) = alias["RoutingConfiguration"]
    assert route == {"StateMachineVersionArn": {"Fn::GetAtt": [version_id, "Arn"]}, "Weight": 100}


def test_a_description_names_its_commit_and_nothing_else_does():
    assert commit_of(version_description("abc123")) == "abc123"
    assert commit_of("guess") is None
    assert commit_of(None) is None


def test_preflight_reads_the_reservations_the_template_sets(prod):
    """``infra.operations.preflight --template`` sums what the synthesized stack reserves:
    the same figures as the source it was synthesized from."""
    from infra.cdk.stack import STAGES
    from infra.operations.preflight import reservations_from_template

    assert sorted(reservations_from_template(prod).values()) == sorted(
        STAGES["prod"].reserved.values()
    )


def test_the_pause_waits_out_every_function_that_may_start_a_tournament():
    """``infra.operations.pause`` sweeps again after ``SETTLE_S``: a ``join`` or
    ``party_start`` that read the switch before it was written has ended by then."""
    from functions.messages import STARTS
    from functions.routes import function_of
    from infra.cdk.constructs.functions import SPECS
    from infra.operations.pause import SETTLE_S

    assert {"join", "party_start"} == STARTS
    assert max(SPECS[function_of(a)].timeout_s for a in STARTS) < SETTLE_S
