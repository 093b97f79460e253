"""Infrastructure: the game table, built from the schema module
(``shared.adapters.dynamo.schema``) so keys, indexes and TTL are written down once."""

from __future__ import annotations

from typing import Any

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from shared.adapters.dynamo import schema

_TYPES = {
    "S": dynamodb.AttributeType.STRING,
    "N": dynamodb.AttributeType.NUMBER,
    "B": dynamodb.AttributeType.BINARY,
}
_PROJECTIONS = {
    "ALL": dynamodb.ProjectionType.ALL,
    "KEYS_ONLY": dynamodb.ProjectionType.KEYS_ONLY,
    "INCLUDE": dynamodb.ProjectionType.INCLUDE,
}


def _attribute(name: str) -> dynamodb.Attribute:
    definitions = [*schema.ATTRIBUTE_DEFINITIONS, *schema.LEGACY_ATTRIBUTE_DEFINITIONS]
    types = {a["AttributeName"]: a["AttributeType"] for a in definitions}
    return dynamodb.Attribute(name=name, type=_TYPES[types[name]])


def _keys(key_schema: list[dict[str, str]]) -> tuple[dynamodb.Attribute, dynamodb.Attribute | None]:
    by_type = {k["KeyType"]: k["AttributeName"] for k in key_schema}
    sort = by_type.get("RANGE")
    return _attribute(by_type["HASH"]), _attribute(sort) if sort else None


class GameTable(Construct):
    """One on-demand table with point-in-time recovery, TTL and a stream
    (``schema.STREAM_VIEW_TYPE``); in a stage that keeps its data
    (prod) also deletion protection and CloudFormation's ``RetainExceptOnCreate`` (kept on stack
    deletion, deleted by the rollback of the operation that created it).

    ``legacy_waiting_index`` keeps the waiting index from before ``gsi_lobbies``
    (``schema.LEGACY_WAITING_INDEX``) for the first of the three deployments that upgrade a
    stack created with it: CloudFormation adds or deletes one GSI per update, never both.
    ``board_index=False`` (implied by ``legacy_waiting_index``) leaves out ``gsi_board``, the
    leaderboards' index, until the third (``infra/RUNBOOK.md``).

    Attributes: ``table`` — the ``dynamodb.Table``; ``index_names`` — its GSI names.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        retain_data: bool,
        legacy_waiting_index: bool = False,
        board_index: bool = True,
    ) -> None:
        super().__init__(scope, construct_id)
        self.table = self._build_table(retain_data)
        indexes = list(schema.GLOBAL_SECONDARY_INDEXES)
        if legacy_waiting_index or not board_index:
            # one GSI added or deleted per update: the upgrade from ``gsi_waiting`` adds
            # ``gsi_board`` in a deployment of its own (infra/RUNBOOK.md)
            indexes = [i for i in indexes if i["IndexName"] != schema.GSI_BOARD]
        if legacy_waiting_index:
            indexes.insert(0, schema.LEGACY_WAITING_INDEX)
        self.index_names = self._build_indexes(indexes)

    def _build_table(self, retain_data: bool) -> dynamodb.Table:
        partition_key, sort_key = _keys(schema.KEY_SCHEMA)
        return dynamodb.Table(
            self,
            "Table",
            partition_key=partition_key,
            sort_key=sort_key,
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=schema.TTL_ATTRIBUTE,
            # the history function reads it (``functions.streams``): old and new images
            stream=dynamodb.StreamViewType(schema.STREAM_VIEW_TYPE),
            deletion_protection=retain_data,
            # RetainExceptOnCreate: kept but for a rollback of the create (``infra.cdk.stack``,
            # ``retained_removal_policy``)
            removal_policy=(
                RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE if retain_data else RemovalPolicy.DESTROY
            ),
        )

    def _build_indexes(self, indexes: list[dict[str, Any]]) -> list[str]:
        for index in indexes:
            partition_key, sort_key = _keys(index["KeySchema"])
            projection = index["Projection"]
            self.table.add_global_secondary_index(
                index_name=index["IndexName"],
                partition_key=partition_key,
                sort_key=sort_key,
                projection_type=_PROJECTIONS[projection["ProjectionType"]],
                non_key_attributes=projection.get("NonKeyAttributes"),
            )
        return [index["IndexName"] for index in indexes]
