"""Entrypoints: inbound action -> the one service call it makes (the route table's targets)."""

from __future__ import annotations

from typing import Any

from functions._handler import RECEIVED_MS, Action, for_player
from shared.domain.errors import NotInDuelError, NotInTournamentError
from shared.protocol import outbound as out
from shared.services import lobbies, parties, players, tournaments
from shared.services.base import Deps, Outbox
from shared.services.errors import NotFoundError


def _session(deps: Deps, connection_id: str, m: Any) -> None:
    players.session(deps, connection_id, m.token, m.request_id)


def _guess(deps: Deps, connection_id: str, m: Any) -> None:
    # the tournament item knows the player's connection: no session lookup needed (1 read).
    # Only when the guess is refused for "not yours" is the session checked, so a connection
    # without one learns `no_session` like for every other action (issue 4).
    try:
        tournaments.guess(deps, connection_id, m.duel_id, m.word, RECEIVED_MS.get())
    except (NotFoundError, NotInDuelError, NotInTournamentError):
        players.player_for_connection(deps, connection_id)  # raises NoSessionError
        raise


def _ping(deps: Deps, connection_id: str, m: Any) -> None:
    # The one action that needs no session. A sign of life (ruling 14): its receipt is
    # stamped on the connection item (one conditional UpdateItem, no read), then ``pong``
    # carries the server time for the client's clock offset.
    players.heard(deps, connection_id, RECEIVED_MS.get())
    box = Outbox()
    box.add(
        [connection_id], out.PongEvent(server_time_ms=deps.clock.now_ms(), request_id=m.request_id)
    )
    box.flush(deps)


ACTIONS: dict[str, Action] = {
    "session": _session,
    "join": for_player(lambda d, p, m: lobbies.join(d, p, m.language)),
    "leave": for_player(lambda d, p, m: lobbies.leave(d, p)),
    "guess": _guess,
    "nickname": for_player(lambda d, p, m: players.nickname(d, p, m.nickname, m.request_id)),
    "party_create": for_player(lambda d, p, m: parties.create(d, p)),
    "party_join": for_player(lambda d, p, m: parties.join(d, p, m.invite)),
    "party_leave": for_player(lambda d, p, m: parties.leave(d, p)),
    "party_start": for_player(lambda d, p, m: parties.start(d, p, m.language)),
    "ping": _ping,
}


def dispatch(deps: Deps, connection_id: str, message: Any) -> None:
    """Call the action named by the parsed message."""
    ACTIONS[message.action](deps, connection_id, message)
