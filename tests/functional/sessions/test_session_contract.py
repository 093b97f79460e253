"""The ``session`` reply as a contract (issue 37): protocol versions declared and answered,
the intervals a client keeps as data, and retry semantics on the wire (``retry_after_ms``)."""

from __future__ import annotations

import dataclasses

import pytest

from shared.protocol.limits import PING_INTERVAL_SECONDS, TRY_AGAIN_AFTER_MS
from shared.protocol.version import PROTOCOL, PROTOCOL_MIN
from shared.runtime.rate_limit import RateLimiter
from shared.services.errors import TryAgainError


def test_the_session_reply_says_the_versions_and_the_intervals_of_the_settings(backend):
    p = backend.player("p", session=False)
    p.send("session", request_id="s1", protocol="1.0")
    reply = p.last("session")
    assert (reply["protocol"], reply["protocol_version"], reply["protocol_min"]) == (
        1,
        PROTOCOL,
        PROTOCOL_MIN,
    )
    assert reply["ping_interval_ms"] == PING_INTERVAL_SECONDS * 1000
    # the harness runs with reconnect_seconds=60 and the heartbeat check off (protocol default)
    assert reply["reconnect_window_ms"] == backend.deps.timing.reconnect_ms
    assert reply["heartbeat_timeout_ms"] == 60_000


def test_the_intervals_follow_the_settings_not_a_constant(backend):
    timing = dataclasses.replace(backend.deps.timing, heartbeat_ms=45_000, reconnect_ms=90_000)
    backend.deps = dataclasses.replace(backend.deps, timing=timing)
    reply = backend.player("p").last("session")
    assert (reply["heartbeat_timeout_ms"], reply["reconnect_window_ms"]) == (45_000, 90_000)


@pytest.mark.parametrize("version", ["1.0", "1.1", "1.7"])
def test_a_client_of_the_same_major_is_served(backend, version):
    p = backend.player("p", session=False)
    p.send("session", protocol=version)
    assert p.last("session")["protocol_version"] == PROTOCOL


@pytest.mark.parametrize(
    ("version", "code"),
    [
        ("2.0", "unsupported_protocol"),
        ("0.9", "unsupported_protocol"),
        ("1", "invalid_value"),
        ("v1.1", "invalid_value"),
    ],
)
def test_another_major_is_refused_and_creates_nobody(backend, version, code):
    p = backend.player("p", session=False)
    before = backend.snapshot()
    p.send("session", request_id="v", protocol=version)
    assert [(m["type"], m.get("code"), m["request_id"]) for m in p.messages] == [
        ("error", code, "v")
    ]
    assert backend.snapshot() == before


def test_rate_limited_says_when_a_token_is_back(backend):
    backend.deps = dataclasses.replace(
        backend.deps, limiter=RateLimiter(per_second=4, burst=2, close_after_strikes=10)
    )
    p = backend.player("p")  # the session took a token
    p.send("nickname", nickname="Quick One")
    p.send("nickname", nickname="Quick Two", request_id="n3")
    refused = p.last("error")
    assert (refused["code"], refused["request_id"]) == ("rate_limited", "n3")
    assert refused["retry_after_ms"] == 250  # one token at 4 per second, the clock stood still
    backend.clock.advance(refused["retry_after_ms"])
    p.send("nickname", nickname="Quick Two", request_id="n3")
    assert p.last("player")["request_id"] == "n3"


def test_try_again_carries_retry_after_ms(backend):
    p = backend.player("p")

    def busy(*args, **kwargs):
        raise TryAgainError("busy")

    backend.deps = dataclasses.replace(
        backend.deps, store=type("Busy", (), {"__getattr__": lambda self, name: busy})()
    )
    p.send("join", language="en", request_id="j")
    error = p.last("error")
    assert (error["code"], error["request_id"], error["retry_after_ms"]) == (
        "try_again",
        "j",
        TRY_AGAIN_AFTER_MS,
    )
    assert all(m["retry_after_ms"] is None for m in p.all("error") if m["code"] != "try_again")


def test_a_session_with_the_token_on_the_same_connection_resyncs(backend):
    """The guide's resync: ``session`` with the token on the open connection answers what a
    resume on a new connection would (the snapshot), without reconnecting."""
    players = backend.fill_lobby("en")
    backend.end_intro()
    p = players[0]
    p.clear()
    p.send("session", token=p.token, request_id="resync")
    reply = p.last("session")
    assert (reply["request_id"], reply["resumed"]) == ("resync", True)
    p.token = reply["token"]
    here = reply["snapshot"]
    p.resume()  # the same player on a new connection, for comparison
    elsewhere = p.last("session")["snapshot"]
    assert here == elsewhere
    assert here["duel"]["duel_id"] == p.current_duel().duel_id
