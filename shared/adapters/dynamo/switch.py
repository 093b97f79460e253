"""Adapters layer: ``DynamoGameSwitch`` — the operators' kill switch as one item of the game's
table (``schema.switch_key``), present while the game is paused, with ``paused_ms`` (UTC ms).

Why an item of the table and not an SSM parameter or an environment variable: every function
already holds a DynamoDB client (no new client, IAM grant or cold-start cost), the item is read
only where a tournament may start (``join``, ``party_start``) and by the watchdog — a guess
reads its tournament item, which carries its own pause — and writing it takes effect at once
(an environment variable needs a new version of every function). RULINGS.md, design notes,
"Kill switch".
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from shared.adapters.dynamo import schema


class DynamoGameSwitch:
    """The kill switch item (``shared.services.ports.GameSwitch``). ``client``: a boto3
    DynamoDB client; ``table``: the game's table."""

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def paused_since_ms(self) -> int | None:
        """When the game was paused (UTC ms), or None: one strongly consistent GetItem
        (1 RRU), so a route sees a pause the moment the command wrote it."""
        item = self._client.get_item(
            TableName=self._table,
            Key={k: {"S": v} for k, v in schema.switch_key().items()},
            ConsistentRead=True,
        ).get("Item")
        return None if item is None else int(item["paused_ms"]["N"])

    def pause(self, at_ms: int) -> int:
        """Pause the game from ``at_ms`` unless it is paused already; returns when the game
        was paused (``at_ms``, or the earlier pause's time: pausing twice keeps the first)."""
        try:
            self._client.put_item(
                TableName=self._table,
                Item={
                    **{k: {"S": v} for k, v in schema.switch_key().items()},
                    "kind": {"S": "switch"},
                    "paused_ms": {"N": str(at_ms)},
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise
            since = self.paused_since_ms()
            return at_ms if since is None else since
        return at_ms

    def clear(self) -> None:
        """Let the game run again (delete the item; already running: nothing)."""
        # unconditional: only the operator's resume deletes it, after its sweep; deleting an
        # absent item changes nothing
        self._client.delete_item(
            TableName=self._table, Key={k: {"S": v} for k, v in schema.switch_key().items()}
        )
