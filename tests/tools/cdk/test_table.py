"""Infrastructure: the table is built from ``shared.adapters.dynamo.schema`` — keys, attribute
types, indexes, TTL — on demand with point-in-time recovery; prod keeps it."""

from __future__ import annotations

from shared.adapters.dynamo import schema
from tests.tools.cdk.cfn import resources


def _table(template):
    ((logical_id, props),) = resources(template, "AWS::DynamoDB::Table").items()
    return logical_id, props, template["Resources"][logical_id]


def _normalised_indexes(indexes):
    return sorted(
        (
            {
                "IndexName": i["IndexName"],
                "KeySchema": i["KeySchema"],
                "Projection": {"ProjectionType": i["Projection"]["ProjectionType"]},
            }
            for i in indexes
        ),
        key=lambda i: i["IndexName"],
    )


def test_keys_and_attributes_are_the_schema_modules(dev):
    _, table, _ = _table(dev)
    assert table["KeySchema"] == schema.KEY_SCHEMA
    assert sorted(table["AttributeDefinitions"], key=str) == sorted(
        schema.ATTRIBUTE_DEFINITIONS, key=str
    )


def test_indexes_are_the_schema_modules(dev):
    _, table, _ = _table(dev)
    assert _normalised_indexes(table["GlobalSecondaryIndexes"]) == _normalised_indexes(
        schema.GLOBAL_SECONDARY_INDEXES
    )


def test_on_demand_with_pitr_and_ttl(dev):
    _, table, _ = _table(dev)
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert table["TimeToLiveSpecification"] == {
        "AttributeName": schema.TTL_ATTRIBUTE,
        "Enabled": True,
    }


def test_prod_table_is_protected_and_retained(prod):
    """Kept when the stack is deleted or an update replaces it, but deleted by the rollback of
    the create that made it: ``RetainExceptOnCreate`` (AWS, "DeletionPolicy attribute",
    https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-attribute-deletionpolicy.html)."""
    _, table, resource = _table(prod)
    assert table["DeletionProtectionEnabled"] is True
    assert resource["DeletionPolicy"] == "RetainExceptOnCreate"
    assert resource["UpdateReplacePolicy"] == "Retain"


def test_a_failed_first_create_leaves_no_retained_orphans(dev, prod):
    """Every resource prod keeps (the table, every log group) is ``RetainExceptOnCreate``: a
    first deploy that fails and rolls back deletes them, so the retry does not trip over a
    table or a fixed-name log group left behind. dev deletes everything with its stack."""
    for type_name in ("AWS::DynamoDB::Table", "AWS::Logs::LogGroup"):
        kept = [r for r in prod["Resources"].values() if r["Type"] == type_name]
        assert kept, type_name
        for resource in kept:
            assert resource["DeletionPolicy"] == "RetainExceptOnCreate", type_name
            assert resource["UpdateReplacePolicy"] == "Retain", type_name
        for resource in (r for r in dev["Resources"].values() if r["Type"] == type_name):
            assert resource["DeletionPolicy"] == "Delete", type_name
            assert resource["UpdateReplacePolicy"] == "Delete", type_name


def test_dev_table_goes_with_its_stack(dev):
    _, table, resource = _table(dev)
    assert table.get("DeletionProtectionEnabled", False) is False
    assert resource["DeletionPolicy"] == "Delete"


def _table_alone(**kwargs):
    from aws_cdk import App, Stack
    from aws_cdk.assertions import Template

    from infra.cdk.constructs.table import GameTable

    stack = Stack(App(analytics_reporting=False), "TableOnly")
    GameTable(stack, "Data", retain_data=False, **kwargs)
    ((_, props),) = resources(Template.from_stack(stack).to_json(), "AWS::DynamoDB::Table").items()
    return props


def test_the_first_upgrade_deployment_keeps_the_legacy_waiting_index_beside_the_new_one():
    """Upgrading a stack made with ``gsi_waiting`` takes three deployments (CloudFormation adds
    or deletes one GSI per update): the first keeps it and adds ``gsi_lobbies``, the next drops
    it, the last adds ``gsi_board``. Each time exactly one GSI differs from the stack before."""
    legacy = _table_alone(legacy_waiting_index=True)
    current = _table_alone()
    names = {i["IndexName"] for i in legacy["GlobalSecondaryIndexes"]}
    assert names == {"gsi_waiting", schema.GSI_WAITING, schema.GSI_DUE}
    assert {"AttributeName": "waiting_sk", "AttributeType": "S"} in legacy["AttributeDefinitions"]
    (old,) = [i for i in legacy["GlobalSecondaryIndexes"] if i["IndexName"] == "gsi_waiting"]
    assert old["KeySchema"] == schema.LEGACY_WAITING_INDEX["KeySchema"]
    dropped = _table_alone(board_index=False)
    assert {i["IndexName"] for i in dropped["GlobalSecondaryIndexes"]} == names - {"gsi_waiting"}
    assert {i["IndexName"] for i in current["GlobalSecondaryIndexes"]} == (
        names - {"gsi_waiting"}
    ) | {schema.GSI_BOARD}
    assert schema.GSI_WAITING != "gsi_waiting"  # a new name: no GSI changes in place
