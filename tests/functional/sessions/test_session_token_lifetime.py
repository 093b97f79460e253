"""Session tokens expire after 30 days unused (``shared.services.deps.TOKEN_IDLE_MS``); every
resume issues a new one, for another 30 days. An expired token is refused like an unknown one
(``invalid_token``) and nothing changes; the client then starts a new anonymous player
(ruling 11)."""

from __future__ import annotations

from shared.services.deps import TOKEN_IDLE_MS

DAY_MS = 24 * 3600 * 1000


def _reconnect(backend, player) -> None:
    """A new connection for ``player`` (``$connect`` only: the session comes next)."""
    player.disconnect()
    cid = f"conn-{backend.clock.now}="
    backend.invoke("$connect", cid)
    player.connection_id = cid


def test_thirty_days_is_the_documented_lifetime():
    assert TOKEN_IDLE_MS == 30 * DAY_MS


def test_a_token_unused_past_its_lifetime_is_refused_and_nothing_changes(backend):
    a = backend.player("a")
    backend.clock.advance(TOKEN_IDLE_MS + 1_000)
    _reconnect(backend, a)
    before = backend.snapshot()

    a.send("session", token=a.token, request_id="r1")

    assert [(m["type"], m["code"], m["request_id"]) for m in a.messages] == [
        ("error", "invalid_token", "r1")
    ]
    assert backend.snapshot() == before


def test_a_token_used_on_its_last_day_works_and_is_renewed(backend):
    a = backend.player("a")
    for _ in range(3):  # 3 x 30 days in all: each resume issues a token for 30 more days
        backend.clock.advance(TOKEN_IDLE_MS)
        _reconnect(backend, a)
        a.send("session", token=a.token)
        assert a.last("session")["resumed"] is True
        assert a.all("error") == []
        a.token = a.last("session")["token"]
