"""Operator command: void a flagged tournament's rating changes (ruling 17).

``python -m infra.operations.void_ratings --table NAME [--region R] [--endpoint-url URL]
[--force] [--dry-run] TOURNAMENT_ID``

A tournament is flagged when its ratings are applied if most seats were players created moments
before its start who left or were eliminated without a guess of their own (a rating farm: the
``FlaggedTournaments`` metric and a WARN line name it). Voiding restores every player of the
tournament by exactly their change in it: for each player, one transaction marks the player's
rating history item (``PLAYER#id / RATING#tournament``) ``voided_ms`` — on the condition that it
is not voided yet — and ``ADD``s minus the change to the player's rating (and one to its
``version``, so a concurrent save of the profile re-reads and keeps the correction). Running it
again changes nothing: every history item is already voided. A player whose profile is gone
gets only the mark. A tournament that is not flagged is refused unless ``--force``; one still
running is always refused; a finished tournament is kept a week (``schema.FINISHED_TTL_SECONDS``),
so void within that week.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from shared.adapters.dynamo import schema
from shared.adapters.dynamo.store import DynamoStore, from_av, to_av


class VoidRefusedError(Exception):
    """The tournament cannot be voided (missing, running, or not flagged without ``force``)."""


@dataclass
class VoidReport:
    """What a run did, player by player (ids)."""

    tournament_id: str
    voided: dict[str, int] = field(default_factory=dict)
    """Player id -> the change taken back."""
    already: list[str] = field(default_factory=list)
    """Players whose change was voided by an earlier run."""
    unrated: list[str] = field(default_factory=list)
    """Players with no rating change recorded for this tournament (nothing to void)."""
    gone: list[str] = field(default_factory=list)
    """Players whose profile no longer exists (the history item is marked all the same)."""

    def summary(self) -> str:
        total = sum(self.voided.values())
        return (
            f"tournament {self.tournament_id}: voided {len(self.voided)} changes "
            f"(net {total:+d} taken back), {len(self.already)} already voided, "
            f"{len(self.unrated)} without a change, {len(self.gone)} profiles gone"
        )


def void_ratings(
    client: Any,
    table: str,
    tournament_id: str,
    *,
    force: bool = False,
    dry_run: bool = False,
    now_ms: Callable[[], int] = lambda: int(time.time() * 1000),
) -> VoidReport:
    """Void the rating changes of ``tournament_id`` (see the module docstring). ``client``: a
    boto3 DynamoDB client. Raises ``VoidRefusedError``; DynamoDB errors other than a failed
    condition are raised as they come (a rerun picks up where it stopped)."""
    record = DynamoStore(client, table, now_ms).get_tournament(tournament_id)
    if record is None:
        raise VoidRefusedError(
            f"no tournament {tournament_id} (finished tournaments are kept "
            f"{schema.FINISHED_TTL_SECONDS // 86400} days)"
        )
    if not record.tournament.over:
        raise VoidRefusedError(f"tournament {tournament_id} is still running")
    if not record.flagged and not force:
        raise VoidRefusedError(
            f"tournament {tournament_id} is not flagged (--force to void it anyway)"
        )
    report = VoidReport(tournament_id)
    for player in record.tournament.players:
        pid = player.player_id
        key = to_av(schema.rating_key(pid, tournament_id))
        raw = client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
        if raw is None:
            report.unrated.append(pid)
            continue
        history = from_av(raw)
        if "voided_ms" in history:
            report.already.append(pid)
            continue
        change = int(history["change"])
        if dry_run:
            report.voided[pid] = change
            continue
        _void_one(client, table, pid, key, change, now_ms(), report)
    return report


def _void_one(
    client: Any,
    table: str,
    player_id: str,
    history_key: dict[str, Any],
    change: int,
    at_ms: int,
    report: VoidReport,
) -> None:
    mark = {
        "TableName": table,
        "Key": history_key,
        "UpdateExpression": "SET voided_ms = :at",
        # conditional: voided once, whatever runs at the same time
        "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(voided_ms)",
        "ExpressionAttributeValues": {":at": {"N": str(at_ms)}},
    }
    restore = {
        "TableName": table,
        "Key": to_av(schema.player_key(player_id)),
        "UpdateExpression": "ADD rating :back, version :one",
        "ConditionExpression": "attribute_exists(pk)",
        "ExpressionAttributeValues": {":back": {"N": str(-change)}, ":one": {"N": "1"}},
    }
    try:
        client.transact_write_items(TransactItems=[{"Update": mark}, {"Update": restore}])
    except ClientError as err:
        if err.response.get("Error", {}).get("Code") != "TransactionCanceledException":
            raise
        reasons = [r.get("Code") for r in err.response.get("CancellationReasons", []) or []]
        if reasons[:1] == ["ConditionalCheckFailed"]:
            report.already.append(player_id)  # voided meanwhile by another run
            return
        if reasons[1:2] == ["ConditionalCheckFailed"]:
            try:
                client.update_item(**mark)  # the profile is gone: mark the change all the same
            except ClientError as again:
                if again.response.get("Error", {}).get("Code") != (
                    "ConditionalCheckFailedException"
                ):
                    raise
                report.already.append(player_id)
                return
            report.gone.append(player_id)
            return
        raise
    report.voided[player_id] = change


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m infra.operations.void_ratings",
        description="Void a flagged tournament's rating changes for all its players (ruling 17).",
    )
    parser.add_argument("tournament_id")
    parser.add_argument("--table", required=True, help="the game's DynamoDB table")
    parser.add_argument("--region", default=None, help="AWS region (default: the profile's)")
    parser.add_argument("--endpoint-url", default=None, help="another DynamoDB (a local one)")
    parser.add_argument("--force", action="store_true", help="void a tournament not flagged")
    parser.add_argument("--dry-run", action="store_true", help="show what would be voided")
    args = parser.parse_args(argv)

    import boto3

    client = boto3.client("dynamodb", region_name=args.region, endpoint_url=args.endpoint_url)
    try:
        report = void_ratings(
            client, args.table, args.tournament_id, force=args.force, dry_run=args.dry_run
        )
    except VoidRefusedError as err:
        print(f"refused: {err}", file=sys.stderr)
        return 2
    print(("dry run: " if args.dry_run else "") + report.summary())
    for pid, change in sorted(report.voided.items()):
        print(f"  {pid}: {-change:+d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
