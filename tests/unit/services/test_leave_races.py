"""Unit: a ``leave`` that meets another change between its first read and its save (the 8th
seat starting the tournament, the seat already freed), as deterministic interleavings: the
first read of the player is served as it was before the other change; on the fakes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from shared.domain.errors import AlreadyPlayingError, NotQueuedError
from shared.services import matchmaking
from shared.services.deps import Deps
from shared.services.model import Player, PlayerStatus
from shared.services.outbox import Request
from tests.fakes import fake_deps, new_player, sent_of, stored_player


class _ReadBefore:
    """The store, except that the first read of ``before``'s player returns ``before``."""

    def __init__(self, store: Any, before: Player) -> None:
        self._store = store
        self._before: Player | None = before

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def get_player(self, player_id: str) -> Player | None:
        if self._before is not None and player_id == self._before.player_id:
            before, self._before = self._before, None
            return before
        return self._store.get_player(player_id)  # type: ignore[no-any-return]


def _seat(deps: Deps, n: int) -> list[tuple[str, str]]:
    seated = []
    for i in range(n):
        pid = new_player(deps, f"c{i}")
        matchmaking.join(deps, Request(f"c{i}"), pid, "en")
        seated.append((f"c{i}", pid))
    return seated


def _stale(deps: Deps, before: Player) -> Deps:
    return dataclasses.replace(deps, store=_ReadBefore(deps.store, before))


def test_a_leave_that_arrives_as_the_tournament_starts_says_to_leave_again() -> None:
    deps = fake_deps()
    seated = _seat(deps, 7)
    c0, p0 = seated[0]
    waiting = stored_player(deps, p0)
    pid = new_player(deps, "c7")
    matchmaking.join(deps, Request("c7"), pid, "en")  # the 8th seat: the tournament starts
    with pytest.raises(
        AlreadyPlayingError,
        match=r"^the tournament started before your leave arrived; send leave again to leave it$",
    ):
        matchmaking.leave(_stale(deps, waiting), Request(c0), p0)
    assert stored_player(deps, p0).status is PlayerStatus.PLAYING


def test_a_leave_whose_seat_was_already_freed_is_not_queued() -> None:
    deps = fake_deps()
    (c0, p0), (c1, _) = _seat(deps, 2)
    waiting = stored_player(deps, p0)
    matchmaking.leave(deps, Request(c0), p0)
    with pytest.raises(NotQueuedError, match=r"^you are not in a lobby or tournament$"):
        matchmaking.leave(_stale(deps, waiting), Request(c0), p0)
    assert stored_player(deps, p0).status is PlayerStatus.IDLE
    assert len(sent_of(deps, c1, "lobby")[-1]["players"]) == 1


def test_a_player_in_nothing_leaving_is_not_queued() -> None:
    deps = fake_deps()
    pid = new_player(deps, "c")
    with pytest.raises(NotQueuedError, match=r"^you are not in a lobby or tournament$"):
        matchmaking.leave(deps, Request("c"), pid)


def test_leaving_a_lobby_whose_push_finds_a_connection_gone_disconnects_it() -> None:
    deps = fake_deps()
    (c0, p0), (c1, p1) = _seat(deps, 2)
    deps.notifier.gone.add(c1)  # type: ignore[attr-defined]
    matchmaking.leave(deps, Request(c0), p0)
    assert stored_player(deps, p1).connected is False


def test_leaving_a_tournament_whose_push_finds_a_connection_gone_disconnects_it() -> None:
    deps = fake_deps()
    seated = _seat(deps, 8)
    (c0, p0), (c1, p1) = seated[0], seated[1]
    deps.notifier.gone.add(c1)  # type: ignore[attr-defined]
    matchmaking.leave(deps, Request(c0), p0)
    assert stored_player(deps, p1).connected is False
