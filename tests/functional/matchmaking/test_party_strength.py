"""Flows: a party counts as strong as its strongest member (ruling 8) — solo players fill a
party lobby only within 200 of the party's highest rating, through the real handlers on moto."""

from __future__ import annotations

from shared.adapters.dynamo import schema
from shared.adapters.dynamo.store import to_av
from tests.functional.stored import lobby_item, player_item, set_rating


def _boosted_party(backend):
    """A 1355-rated leader with three fresh 1000-rated accounts (mean 1089), started in
    ``en``; returns the leader and the party lobby's id."""
    leader, *members = (backend.player(f"m{i}") for i in range(4))
    set_rating(backend, leader, 1355)
    leader.send("party_create")
    for m in members:
        m.send("party_join", invite=leader.last("party")["invite"])
    leader.send("party_start", language="en")
    return leader, leader.last("lobby")["lobby_id"]


def _seat_ids(backend, lobby_id):
    return [s["player_id"] for s in lobby_item(backend, lobby_id)["seats"]]


def test_a_boosted_leader_cannot_bring_fresh_accounts_among_new_players(backend):
    """The attack the mean allowed: a 1000-rated newcomer is 355 below the leader, so it is
    refused (it opens its own lobby); a 1200-rated player is within 200 and is seated."""
    _, lobby_id = _boosted_party(backend)
    item = lobby_item(backend, lobby_id)
    assert (item["waiting_lo"], item["waiting_hi"]) == (1155, 1555)  # indexed by the highest
    newcomer, strong = backend.player("newcomer"), backend.player("strong")
    set_rating(backend, strong, 1200)

    newcomer.join("en")
    strong.join("en")

    assert newcomer.last("lobby")["lobby_id"] != lobby_id
    assert player_item(backend, newcomer)["lobby_id"] != lobby_id
    assert newcomer.id not in _seat_ids(backend, lobby_id)
    assert strong.last("lobby")["lobby_id"] == lobby_id
    assert _seat_ids(backend, lobby_id)[4:] == [strong.id]
    assert (player_item(backend, strong)["status"], player_item(backend, strong)["lobby_id"]) == (
        "queued",
        lobby_id,
    )


def test_an_index_entry_written_by_the_mean_seats_nobody_the_highest_refuses(backend):
    """A party lobby indexed before the ruling changed (range around the mean 1089: 889..1289)
    still nominates the 1000 newcomer; the re-read lobby refuses them. The 1200 player is
    seated, and that write re-indexes the lobby from its seats."""
    _, lobby_id = _boosted_party(backend)
    backend.client.update_item(
        TableName=backend.table_name,
        Key=to_av(schema.lobby_key(lobby_id)),
        UpdateExpression="SET waiting_lo = :lo, waiting_hi = :hi",
        ExpressionAttributeValues=to_av({":lo": 889, ":hi": 1289}),
    )
    newcomer, strong = backend.player("newcomer"), backend.player("strong")
    set_rating(backend, strong, 1200)

    newcomer.join("en")
    strong.join("en")

    assert newcomer.last("lobby")["lobby_id"] != lobby_id
    assert newcomer.id not in _seat_ids(backend, lobby_id)
    assert strong.last("lobby")["lobby_id"] == lobby_id
    item = lobby_item(backend, lobby_id)
    assert (item["waiting_lo"], item["waiting_hi"]) == (1155, 1400)  # 1355 and the solo 1200
