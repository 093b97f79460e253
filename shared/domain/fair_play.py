"""Domain layer: fair play (ruling 17) — what new identities are counted under, and when a
tournament's seats look like a farm of throw-away players.

Stdlib only: the services decide with these, the adapters store what they return.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

MAX_SOURCE_KEY = 64
"""Longest source key kept (an address that does not parse is kept cut to this)."""


def source_key(source_ip: str) -> str:
    """The key new players from ``source_ip`` (the ``$connect`` event's address) are counted
    under: an IPv4 address itself; an IPv6 address by its /64 (one subscriber's prefix, in which
    a host picks addresses at will), an IPv4-mapped IPv6 address as its IPv4 address. A value
    that is no address is kept as it came (cut to ``MAX_SOURCE_KEY``)."""
    try:
        address = ipaddress.ip_address(source_ip.strip())
    except ValueError:
        return source_ip[:MAX_SOURCE_KEY]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def window_start(now_ms: int, window_ms: int) -> int:
    """The start of the fixed window (``window_ms`` long, aligned to the epoch) ``now_ms`` is in:
    new players are counted per source and window."""
    return now_ms - now_ms % window_ms


def fresh_seats(created_ms: dict[str, int], started_ms: int, fresh_ms: int) -> frozenset[str]:
    """The players (id -> when the player was created) created at most ``fresh_ms`` before the
    tournament started at ``started_ms``: the seats a farm fills with throw-away players."""
    return frozenset(pid for pid, at in created_ms.items() if started_ms - at <= fresh_ms)


def farmed(unplayed_fresh: Iterable[str], out: Iterable[str], threshold: int) -> bool:
    """Ruling 17: a tournament is flagged when at least ``threshold`` of its seats are fresh
    players who never played a turn of their own (``unplayed_fresh``) and left or were
    eliminated (``out``: everyone but the winners). ``threshold`` 0 flags nothing."""
    if threshold <= 0:
        return False
    return len(set(unplayed_fresh) & set(out)) >= threshold
