"""Flows: sessions that can be taken back (ruling 11) through the real handlers on moto — the
token rotates at every resume (the previous one resumes for a grace, an older one is refused
and flagged), ``sign_out_everywhere`` revokes every token, and a connection belongs to one
player for its whole life (``session_bound``)."""

from __future__ import annotations

import dataclasses
import logging

from shared.adapters.dynamo import schema
from shared.runtime.settings import Settings

GRACE_MS = round(Settings().token_grace_seconds * 1000)


class Counts:
    """A ``Deps.metrics`` sink that keeps every count."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, float]] = []

    def __call__(self, name: str, value: float) -> None:
        self.seen.append((name, value))

    def total(self, name: str) -> float:
        return sum(v for n, v in self.seen if n == name)


def _counting(backend) -> Counts:
    counts = Counts()
    backend.deps = dataclasses.replace(backend.deps, metrics=counts)
    return counts


def _present(backend, token: str, name: str = "x"):
    """A new connection that sends ``session`` with ``token`` (request id ``s``)."""
    p = backend.player(name, session=False)
    p.send("session", token=token, request_id="s")
    return p


def test_the_grace_is_two_minutes():
    assert Settings().token_grace_seconds == 120


def test_a_resume_rotates_the_token_and_stores_only_its_hash(backend):
    a = backend.player("a")
    first = a.token

    a.disconnect()
    a.resume()

    reply = a.last("session")
    assert reply["resumed"] is True
    assert reply["token"] not in (None, first)
    assert a.token == reply["token"]
    everything = backend.snapshot()
    assert a.token not in everything
    assert first not in everything
    profile = backend.item(schema.player_key(a.id))
    assert profile["token_generation"] == 1
    assert profile["token_grace_until_ms"] == backend.clock.now + GRACE_MS


def test_a_lost_reply_does_not_lock_the_player_out(backend):
    a = backend.player("a")
    lost = a.token
    a.disconnect()
    a.resume()  # its reply (the new token) never reaches the client

    backend.clock.advance(GRACE_MS - 1_000)
    again = _present(backend, lost)

    assert again.last("session")["resumed"] is True
    assert again.last("session")["player"]["id"] == a.id
    assert again.errors == []


def test_the_previous_token_after_the_grace_is_refused_and_flagged(backend, caplog):
    counts = _counting(backend)
    a = backend.player("a")
    copied = a.token
    a.disconnect()
    a.resume()  # the owner moved on
    backend.clock.advance(GRACE_MS + 1_000)
    thief = backend.player("thief", session=False)
    before = backend.snapshot()

    with caplog.at_level(logging.WARNING):
        thief.send("session", token=copied, request_id="s")

    assert [(m["type"], m["code"], m["request_id"]) for m in thief.messages] == [
        ("error", "invalid_token", "s")
    ]
    assert backend.snapshot() == before
    assert counts.total("TokenReuse") == 1
    warning = [r for r in caplog.records if "old session token" in r.getMessage()]
    assert warning
    assert warning[0].levelno == logging.WARNING
    assert copied not in caplog.text
    # the family is not revoked: the owner's current token still resumes
    a.disconnect()
    a.resume()
    assert a.last("session")["resumed"] is True


def test_an_older_generation_is_refused_even_within_the_grace(backend):
    counts = _counting(backend)
    a = backend.player("a")
    oldest = a.token
    for _ in range(2):
        a.disconnect()
        a.resume()

    thief = _present(backend, oldest, "thief")

    assert thief.errors == ["invalid_token"]
    assert counts.total("TokenReuse") == 1


def test_sign_out_everywhere_revokes_every_token_and_keeps_this_connection(backend):
    counts = _counting(backend)
    a = backend.player("a")
    first = a.token
    a.disconnect()
    a.resume()
    current = a.token

    a.send("sign_out_everywhere", request_id="out")

    reply = a.last("session")
    assert reply["request_id"] == "out"
    assert reply["resumed"] is True
    assert reply["snapshot"] is not None
    assert reply["token"] not in (None, first, current)
    fresh = reply["token"]
    a.join("en")  # the connection is still the player's
    assert a.last("lobby")
    for old in (first, current):  # within the grace, too
        assert _present(backend, old, "thief").errors == ["invalid_token"]
    assert counts.total("TokenReuse") == 2
    assert counts.total("SignOutEverywhere") == 1
    back = _present(backend, fresh, "owner")
    assert back.last("session")["player"]["id"] == a.id


def test_sign_out_everywhere_needs_a_session(backend):
    p = backend.player("p", session=False)

    p.send("sign_out_everywhere")

    assert p.errors == ["no_session"]


def test_another_players_token_on_a_bound_connection_is_refused_and_changes_nothing(backend):
    a = backend.player("a")
    b = backend.player("b")
    a.join("en")
    before = backend.snapshot()

    a.send("session", token=b.token, request_id="s2")

    assert a.last("error")["code"] == "session_bound"
    assert a.last("error")["request_id"] == "s2"
    assert backend.snapshot() == before
    # the connection still acts as a alone: its leave is a's, and b is untouched
    a.send("leave")
    assert backend.item(schema.player_key(a.id))["status"] == "idle"
    assert backend.item(schema.player_key(b.id))["connection_id"] == b.connection_id
    b.send("session", token=b.token)  # b's token, and b's own connection: a resume
    assert b.last("session")["resumed"] is True


def test_a_tokenless_session_on_a_bound_connection_is_refused(backend):
    a = backend.player("a")
    before = backend.snapshot()

    a.send("session", request_id="s2")

    assert a.last("error")["code"] == "session_bound"
    assert backend.snapshot() == before
    assert sum(1 for i in backend.items() if i["sk"] == "PROFILE") == 1


def test_the_owners_token_on_its_own_connection_resumes(backend):
    a = backend.player("a")

    a.send("session", token=a.token)

    assert a.last("session")["resumed"] is True
    assert a.errors == []
