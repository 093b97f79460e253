"""The history function's reading of a DynamoDB Streams record in the Lambda event shape
(``shared.adapters.dynamo.history.stream_change``;
https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html): a tournament ``STATE`` record
only when its new image carries ``hist``, a player ``PROFILE`` record's old and new images
(INSERT, MODIFY, REMOVE), anything else ignored."""

from __future__ import annotations

import base64
from typing import Any

from shared.adapters.dynamo import schema
from shared.adapters.dynamo.history import stream_change
from shared.adapters.dynamo.store import to_av
from shared.adapters.dynamo.tournament_document import tournament_to_item
from shared.domain.progression import Profile, ProfileChange
from shared.domain.tournament import Tournament
from shared.services.model import TournamentRecord
from tests.unit.domain.helpers import play_round, start


def _json(av: Any) -> Any:
    """Attribute values as the Lambda event's JSON carries them: binary as base64 text."""
    if isinstance(av, bytes | bytearray):
        return base64.b64encode(bytes(av)).decode("ascii")
    if isinstance(av, dict):
        return {k: _json(v) for k, v in av.items()}
    if isinstance(av, list):
        return [_json(v) for v in av]
    return av


def _record(name: str, keys: dict[str, str], new: Any = None, old: Any = None) -> dict[str, Any]:
    """One record as Lambda delivers it (JSON: the document's Binary attribute in base64)."""
    data: dict[str, Any] = {
        "Keys": to_av(keys),
        "SequenceNumber": "111",
        "SizeBytes": 26,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
        "ApproximateCreationDateTime": 1_800_000_000,
    }
    if new is not None:
        data["NewImage"] = to_av(new)
    if old is not None:
        data["OldImage"] = to_av(old)
    return _json(
        {
            "eventID": "1",
            "eventName": name,
            "eventVersion": "1.1",
            "eventSource": "aws:dynamodb",
            "awsRegion": "us-east-1",
            "dynamodb": data,
            "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/x",
        }
    )


def _closed() -> Tournament:
    t, dealer, _ = start(4, seed=3)
    t, _ = play_round(t, dealer, {})
    assert t.closed is not None
    return t


def _profile_item(pid: str, nickname: str, rating: int, version: int) -> dict[str, Any]:
    return {**schema.player_key(pid), "nickname": nickname, "rating": rating, "version": version}


def test_a_round_closing_write_gives_its_tournament() -> None:
    t = _closed()
    item = tournament_to_item(TournamentRecord(tournament=t, version=3), now_ms=0)
    change = stream_change(_record("MODIFY", schema.tournament_key(t.tournament_id), item))
    assert change == t


def test_a_tournament_write_without_hist_is_ignored() -> None:
    t, _, _ = start(4, seed=3)
    item = tournament_to_item(TournamentRecord(tournament=t, version=0), now_ms=0)
    assert "hist" not in item
    assert stream_change(_record("INSERT", schema.tournament_key(t.tournament_id), item)) is None
    # a removal (TTL) has no new image
    key = schema.tournament_key(t.tournament_id)
    assert stream_change(_record("REMOVE", key, None, item)) is None


def test_profile_records_give_both_images() -> None:
    key = schema.player_key("p1")
    a, b = _profile_item("p1", "Nick", 1000, 1), _profile_item("p1", "Nick", 1025, 2)
    assert stream_change(_record("INSERT", key, a)) == ProfileChange(
        None, Profile("p1", "Nick", 1000, 1)
    )
    assert stream_change(_record("MODIFY", key, b, a)) == ProfileChange(
        Profile("p1", "Nick", 1000, 1), Profile("p1", "Nick", 1025, 2)
    )
    assert stream_change(_record("REMOVE", key, None, b)) == ProfileChange(
        Profile("p1", "Nick", 1025, 2), None
    )


def test_other_items_are_ignored() -> None:
    for keys in (
        schema.rating_key("p1", "t1"),
        schema.connection_key("c1"),
        schema.record_key("t1"),
        schema.stats_key("p1"),
    ):
        assert stream_change(_record("INSERT", keys, {**keys, "x": 1})) is None
