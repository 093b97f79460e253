"""Unit: ruling 17's rules — what new players are counted under, and when a tournament's seats
look farmed (``shared.domain.fair_play``)."""

from __future__ import annotations

import pytest

from shared.domain.fair_play import farmed, fresh_seats, source_key, window_start


@pytest.mark.parametrize(
    ("address", "key"),
    [
        ("198.51.100.7", "198.51.100.7"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2::ffff", "2001:db8:1:2::/64"),
        ("::ffff:198.51.100.7", "198.51.100.7"),
        ("not an address", "not an address"),
    ],
)
def test_a_source_is_an_ipv4_address_or_an_ipv6_64(address: str, key: str) -> None:
    assert source_key(address) == key


def test_windows_are_fixed_and_aligned() -> None:
    hour = 3_600_000
    assert window_start(5 * hour + 17, hour) == 5 * hour
    assert window_start(5 * hour, hour) == 5 * hour


def test_fresh_seats_are_players_created_within_the_window_before_the_start() -> None:
    created = {"old": 0, "edge": 400, "new": 900}
    assert fresh_seats(created, 1_000, 600) == {"edge", "new"}


def test_a_tournament_is_farmed_when_enough_fresh_seats_went_out_unplayed() -> None:
    out = ["a", "b", "c", "d", "e", "f", "g"]
    assert farmed({"a", "b", "c", "d", "e"}, out, 5)
    assert not farmed({"a", "b", "c", "d"}, out, 5)
    assert not farmed({"a", "b", "c", "d", "winner"}, out, 5)  # the winner is not out
    assert not farmed({"a", "b", "c", "d", "e"}, out, 0)  # 0: never
