"""Local runtime: the twin's matcher of Lambda filter patterns (``infra.emulator.streams``)
against the examples of AWS's "Lambda event filtering" page
(https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html), and the history
mapping's patterns (``functions.streams``) against the records the table writes."""

from __future__ import annotations

from typing import Any

import pytest

from functions.streams import HISTORY, PLAYER_PROFILE, TOURNAMENT_CLOSED_ROUND
from infra.emulator.streams import matches, matches_any

# -- AWS's documented comparison operators ---------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "event", "expected"),
    [
        # Null: "UserID": [ null ]
        ({"UserID": [None]}, {"UserID": None}, True),
        ({"UserID": [None]}, {"UserID": "u1"}, False),
        # Empty: "LastName": [""]
        ({"LastName": [""]}, {"LastName": ""}, True),
        ({"LastName": [""]}, {"LastName": "Doe"}, False),
        # Equals: "Name": [ "Alice" ]
        ({"Name": ["Alice"]}, {"Name": "Alice"}, True),
        ({"Name": ["Alice"]}, {"Name": "alice"}, False),
        # And: "Location": [ "New York" ], "Day": ["Monday"]
        (
            {"Location": ["New York"], "Day": ["Monday"]},
            {"Location": "New York", "Day": "Monday"},
            True,
        ),
        (
            {"Location": ["New York"], "Day": ["Monday"]},
            {"Location": "New York", "Day": "Sunday"},
            False,
        ),
        # Or: "PaymentType": [ "Credit", "Debit"]
        ({"PaymentType": ["Credit", "Debit"]}, {"PaymentType": "Debit"}, True),
        ({"PaymentType": ["Credit", "Debit"]}, {"PaymentType": "Cash"}, False),
        # Not: "Weather": [ { "anything-but": [ "Raining" ] } ]
        ({"Weather": [{"anything-but": ["Raining"]}]}, {"Weather": "Sunny"}, True),
        ({"Weather": [{"anything-but": ["Raining"]}]}, {"Weather": "Raining"}, False),
        # Exists: "ProductName": [ { "exists": true } ]
        ({"ProductName": [{"exists": True}]}, {"ProductName": "x"}, True),
        ({"ProductName": [{"exists": True}]}, {"Other": "x"}, False),
        # Does not exist: "ProductName": [ { "exists": false } ]
        ({"ProductName": [{"exists": False}]}, {"Other": "x"}, True),
        ({"ProductName": [{"exists": False}]}, {"ProductName": "x"}, False),
        # Begins with: "Region": [ {"prefix": "us-" } ]
        ({"Region": [{"prefix": "us-"}]}, {"Region": "us-east-1"}, True),
        ({"Region": [{"prefix": "us-"}]}, {"Region": "eu-west-1"}, False),
        # numbers match numbers, not their text
        ({"Count": [5]}, {"Count": 5}, True),
        ({"Count": [5]}, {"Count": "5"}, False),
        # an array value matches when any element does
        ({"Tags": ["blue"]}, {"Tags": ["red", "blue"]}, True),
    ],
)
def test_the_documented_operators(pattern: Any, event: Any, expected: bool) -> None:
    assert matches(pattern, event) is expected


def test_the_documented_dynamodb_example_matches_nested_keys() -> None:
    """The page's DynamoDB example: a filter on ``dynamodb.NewImage.<attr>.<type>``."""
    pattern = {"dynamodb": {"NewImage": {"Region": {"S": [{"prefix": "us-"}]}}}}
    record = {"eventName": "INSERT", "dynamodb": {"NewImage": {"Region": {"S": "us-west-2"}}}}
    assert matches(pattern, record)
    assert not matches(pattern, {"eventName": "REMOVE", "dynamodb": {"OldImage": {}}})
    # "exists" applies to leaves only: an intermediate node's presence is not a leaf
    assert not matches({"dynamodb": {"NewImage": {"Region": [{"exists": True}]}}}, record)


def test_syntax_the_twin_does_not_know_is_refused_rather_than_guessed() -> None:
    with pytest.raises(ValueError, match="not supported by the twin"):
        matches({"Price": [{"numeric": [">", 10]}]}, {"Price": 11})
    with pytest.raises(ValueError, match="list of conditions"):
        matches({"Price": 10}, {"Price": 10})


# -- the history mapping's patterns ----------------------------------------------------------


def _record(event: str, pk: str, sk: str, new: dict[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"Keys": {"pk": {"S": pk}, "sk": {"S": sk}}}
    if new is not None:
        body["NewImage"] = {"pk": {"S": pk}, "sk": {"S": sk}, **new}
    if event != "INSERT":
        body["OldImage"] = {"pk": {"S": pk}, "sk": {"S": sk}}
    return {"eventName": event, "eventSource": "aws:dynamodb", "dynamodb": body}


@pytest.mark.parametrize(
    ("record", "pattern"),
    [
        (_record("MODIFY", "TOURN#t1", "STATE", {"hist": {"N": "3"}}), TOURNAMENT_CLOSED_ROUND),
        (_record("INSERT", "PLAYER#p1", "PROFILE", {"rating": {"N": "1500"}}), PLAYER_PROFILE),
        (_record("MODIFY", "PLAYER#p1", "PROFILE", {"rating": {"N": "1510"}}), PLAYER_PROFILE),
        (_record("REMOVE", "PLAYER#p1", "PROFILE", None), PLAYER_PROFILE),
    ],
)
def test_the_history_function_gets_closed_rounds_and_profiles(
    record: dict[str, Any], pattern: Any
) -> None:
    assert matches(pattern, record)
    assert matches_any(HISTORY.filters, record)


@pytest.mark.parametrize(
    "record",
    [
        _record("MODIFY", "TOURN#t1", "STATE", {"seq": {"N": "9"}}),  # a guess: no hist
        _record("REMOVE", "TOURN#t1", "STATE", None),  # TTL: no new image
        _record("INSERT", "TOURN#t1", "ROUND#01", {"hist": {"N": "1"}}),  # its own output
        _record("INSERT", "PLAYER#p1", "STATS", {"tournaments": {"N": "1"}}),
        _record("INSERT", "PLAYER#p1", "RATING#t1", {"rating": {"N": "1500"}}),
        _record("MODIFY", "LOBBY#l1", "STATE", {"hist": {"N": "1"}}),
        _record("INSERT", "CONN#c1", "PROFILE", {}),
    ],
)
def test_every_other_record_is_left_out(record: dict[str, Any]) -> None:
    assert not matches_any(HISTORY.filters, record)
