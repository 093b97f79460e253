"""Flows: new anonymous players are limited per source address and window (ruling 17), through
the real handlers on moto, with the deployed default limit and clients from several addresses.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from infra.emulator.testing import Backend, running_backend
from shared.adapters.dynamo import schema
from shared.runtime.settings import Settings

LIMIT = Settings().new_players_per_source
HOUR = 3_600_000


@pytest.fixture
def limited(monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    """The harness with the deployed limit on new players per source."""
    yield from running_backend(monkeypatch, new_players_per_source=LIMIT)


def test_the_deployed_default_is_ten_per_hour():
    assert (Settings().new_players_per_source, Settings().new_players_window_seconds) == (
        10,
        3600.0,
    )


def test_a_source_past_its_limit_is_refused_and_nothing_is_created(limited):
    for i in range(LIMIT):
        assert limited.player(f"ok{i}", source_ip="198.51.100.7").id
    players_before = [i for i in limited.items() if i["sk"] == "PROFILE"]

    late = limited.player("late", session=False, source_ip="198.51.100.7")
    late.send("session", request_id="s1")

    error = late.last("error")
    assert error["code"] == "too_many_new_players"
    assert error["request_id"] == "s1"
    assert "10 new players per hour" in error["message"]
    assert "198.51.100.7" not in error["message"]
    assert [i for i in limited.items() if i["sk"] == "PROFILE"] == players_before
    assert limited.item(schema.connection_key(late.connection_id))["source"] == "198.51.100.7"


def test_other_sources_and_the_next_window_are_not_affected(limited):
    for i in range(LIMIT):
        limited.player(f"a{i}", source_ip="198.51.100.7")
    refused = limited.player("refused", session=False, source_ip="198.51.100.7")
    refused.send("session")
    assert refused.errors == ["too_many_new_players"]

    assert limited.player("other", source_ip="198.51.100.8").id
    limited.clock.advance(HOUR)
    assert limited.player("next hour", source_ip="198.51.100.7").id


def test_a_resume_is_never_counted(limited):
    first = [limited.player(f"a{i}", source_ip="198.51.100.7") for i in range(LIMIT)]

    for p in first:  # every one of them comes back from the same address
        p.disconnect()
        p.resume()

    assert all(p.last("session")["resumed"] for p in first)
    assert all(p.errors == [] for p in first)


def test_an_ipv6_host_is_counted_by_its_64_prefix(limited):
    for i in range(LIMIT):
        limited.player(f"a{i}", source_ip=f"2001:db8:1:2::{i + 1:x}")

    same_prefix = limited.player("b", session=False, source_ip="2001:db8:1:2:ffff::1")
    same_prefix.send("session")
    assert same_prefix.errors == ["too_many_new_players"]
    assert limited.player("c", source_ip="2001:db8:1:3::1").id


def test_the_source_is_never_sent_to_a_client(limited):
    a = limited.player("a", source_ip="198.51.100.77")
    a.join("en")

    assert "198.51.100.77" not in str(limited.notifier.raw)
