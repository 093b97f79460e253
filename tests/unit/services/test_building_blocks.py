"""Unit: the services' building blocks on their own — liveness (``Connection.silent``,
``deadlines.check_heard``, ruling 14), the party's status and screen (``snapshot``,
``presenter``, ruling 10), and every use case's reply finding its connection gone (``drop``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from functions import apply_deadlines
from shared.domain.party import create
from shared.services import deadlines, matchmaking, parties, sessions
from shared.services.deps import Deps
from shared.services.model import PartyRecord, Player, PlayerStatus
from shared.services.outbox import Request
from shared.services.presenter import party_event
from shared.services.snapshot import party_status
from tests.fakes import fake_deps

T0 = 1_800_000_000_000


def _pid(deps: Deps, cid: str) -> str:
    sessions.connect(deps, cid)
    sessions.session(deps, Request(cid), None)
    return deps.notifier.sent[cid][-1]["player"]["id"]  # type: ignore[attr-defined, no-any-return]


def _player(deps: Deps, pid: str) -> Player:
    player = deps.store.get_player(pid)
    assert player is not None
    return player


# ------------------------------------------------------------------ liveness (ruling 14)
def _active(deps: Deps, cid: str) -> int:
    """The client sent a message now (API Gateway's ``LastActiveAt`` moves); returns now."""
    now = deps.clock.now_ms()
    deps.notifier.activity(cid, now)  # type: ignore[attr-defined]
    return now


def test_a_connection_is_silent_from_exactly_the_heartbeat_timeout() -> None:
    deps = fake_deps(heartbeat_ms=20_000)
    pid = _pid(deps, "c")
    heard = _active(deps, "c")
    deps.clock.now = heard + 19_999  # type: ignore[attr-defined]
    assert deadlines.check_heard(deps, pid, "c") == ()
    assert _player(deps, pid).connected is True
    deps.clock.now = heard + 20_000  # type: ignore[attr-defined]
    deadlines.check_heard(deps, pid, "c")
    assert _player(deps, pid).connected is False
    assert deps.notifier.reads == ["c", "c"]  # type: ignore[attr-defined]  # one GetConnection each


def test_check_heard_reads_nothing_with_liveness_off_or_no_connection() -> None:
    deps = fake_deps()  # heartbeat_ms None: liveness off
    pid = _pid(deps, "c")
    deps.clock.now += 10 * 60_000  # type: ignore[attr-defined]
    assert deadlines.check_heard(deps, pid, "c") == ()
    assert deadlines.check_heard(deps, pid, None) == ()
    assert _player(deps, pid).connected is True
    assert "c" not in deps.notifier.closed  # type: ignore[attr-defined]


def _counting(deps: Deps) -> tuple[Deps, Counter[str]]:
    counted: Counter[str] = Counter()

    def count(name: str, value: float) -> None:
        counted[name] += int(value)

    counting = dataclasses.replace(deps, metrics=count)
    counting.clock.fire = lambda state: apply_deadlines.handle(state, counting)  # type: ignore[attr-defined]
    return counting, counted


def test_a_silent_seat_holder_is_disconnected_from_when_the_timeout_passed() -> None:
    deps, counted = _counting(fake_deps(heartbeat_ms=20_000))
    pid = _pid(deps, "c")
    matchmaking.join(deps, Request("c"), pid, "en")
    heard = _active(deps, "c")
    deps.clock.now += 45_000  # type: ignore[attr-defined]
    assert deadlines.check_heard(deps, pid, "c") == ()
    player = _player(deps, pid)
    assert (player.connected, player.connection_id) == (False, None)
    assert player.reconnect_deadline_ms == heard + 20_000 + deps.timing.reconnect_ms
    assert "c" in deps.notifier.closed  # type: ignore[attr-defined]
    assert counted["SilentConnectionsClosed"] == 1


def test_a_seat_holder_whose_connection_is_gone_is_disconnected_now() -> None:
    deps = fake_deps(heartbeat_ms=20_000)
    pid = _pid(deps, "c")
    matchmaking.join(deps, Request("c"), pid, "en")
    _active(deps, "c")
    deps.notifier.gone.add("c")  # type: ignore[attr-defined]  # GetConnection: 410
    deps.clock.now += 1_000  # type: ignore[attr-defined]
    deadlines.check_heard(deps, pid, "c")
    player = _player(deps, pid)
    assert player.connected is False
    assert player.reconnect_deadline_ms == deps.clock.now_ms() + deps.timing.reconnect_ms


def test_a_heard_connection_is_left_alone() -> None:
    deps = fake_deps(heartbeat_ms=20_000)
    pid = _pid(deps, "c")
    _active(deps, "c")
    deps.clock.now += 19_000  # type: ignore[attr-defined]
    assert deadlines.check_heard(deps, pid, "c") == ()
    assert _player(deps, pid).connected is True


# ------------------------------------------------------------------ parties (ruling 10)
def _member(pid: str, status: PlayerStatus) -> Player:
    return Player(pid, f"N{pid}", 1000, T0, status=status)


def test_a_partys_status_is_playing_then_queued_then_open() -> None:
    idle, queued, playing = PlayerStatus.IDLE, PlayerStatus.QUEUED, PlayerStatus.PLAYING
    assert party_status({"a": _member("a", idle), "b": _member("b", idle)}) == "open"
    assert party_status({"a": _member("a", idle), "b": _member("b", queued)}) == "queued"
    assert party_status({"a": _member("a", queued), "b": _member("b", playing)}) == "playing"
    assert party_status({}) == "open"


def test_a_party_screen_shows_a_member_without_a_profile_as_unknown() -> None:
    rec = PartyRecord(create("x", "A" * 22, "a"))
    rec.party = dataclasses.replace(rec.party, members=("a", "b"))
    event = party_event(rec, {"a": _member("a", PlayerStatus.IDLE)}, "open")
    assert [(m.id, m.nickname, m.rating) for m in event.members] == [
        ("a", "Na", 1000),
        ("b", "?", 0),
    ]
    assert (event.leader, event.invite, event.status) == ("a", "A" * 22, "open")


# ---------------------------------------------------------- a reply finds its connection gone
def _party_create(deps: Deps, pid: str) -> None:
    parties.create(deps, Request("c"), pid)


def _party_join(deps: Deps, pid: str) -> None:
    lead = _pid(deps, "lead")
    parties.create(deps, Request("lead"), lead)
    invite = deps.notifier.sent["lead"][-1]["invite"]  # type: ignore[attr-defined]
    parties.join(deps, Request("c"), pid, invite)


ACTIONS: dict[str, Callable[[Deps, str], Any]] = {
    "nickname": lambda deps, pid: sessions.nickname(deps, Request("c"), pid, "Somebody"),
    "join": lambda deps, pid: matchmaking.join(deps, Request("c"), pid, "en"),
    "party_create": _party_create,
    "party_join": _party_join,
}


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_a_reply_that_finds_its_connection_gone_starts_the_disconnect(action: str) -> None:
    deps = fake_deps()
    pid = _pid(deps, "c")
    deps.notifier.gone.add("c")  # type: ignore[attr-defined]  # vanished without $disconnect
    ACTIONS[action](deps, pid)
    player = _player(deps, pid)
    assert (player.connected, player.connection_id) == (False, None)
    assert deps.store.get_connection("c").closed_ms is not None  # kept as a tombstone


# ------------------------------------------------------- what a client gets of a language
def test_a_languages_info_names_its_multi_letter_tiles_and_direction() -> None:
    from shared.domain.languages import get_language
    from shared.services.snapshot import language_info

    uz = language_info(get_language("uz"))
    assert uz.multi_letter_tiles == ["oʻ", "gʻ", "sh", "ch"]
    assert (uz.code, uz.direction) == ("uz", "ltr")
    assert language_info(get_language("en")).multi_letter_tiles == []
    rtl = dataclasses.replace(get_language("en"), direction="rtl")
    assert language_info(rtl).direction == "rtl"


def test_a_reconnect_deadline_of_an_unknown_or_connected_player_does_nothing() -> None:
    deps = fake_deps()
    pid = _pid(deps, "c")
    assert deadlines.reconnect_deadline(deps, "ghost", 1) is None
    assert deadlines.reconnect_deadline(deps, pid, 0) is None
    assert _player(deps, pid).connected is True
