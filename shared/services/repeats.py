"""Service building block: ruling 18 for the actions written on the player item — a ``join``,
``leave`` or ``party_start`` repeated with the same ``request_id`` gets the first outcome
again and is applied once.

The player item keeps its last ``RECENT_REQUESTS`` applied request ids (``Player.recent_requests``:
id, action, and what the outcome was about: the lobby or the tournament), saved in the same
conditional write that applies the action, so a key costs no write of its own. A repeat finds
its id there and is answered from the current state of that lobby or tournament (one read),
nothing written. Costs and lifetime: ``shared/domain/RULINGS.md``, "Repeated requests".
(A guess keeps its id in the row it played: ``shared.services.duels``.)
"""

from __future__ import annotations

from dataclasses import replace

from shared.protocol import outbound as out
from shared.services.change import push
from shared.services.deps import Deps
from shared.services.model import Player
from shared.services.outbox import Gone, Outbox, Request
from shared.services.presenter import lobby_event, player_view

RECENT_REQUESTS = 8
"""Applied request ids a player item remembers (the oldest is forgotten first)."""

LOBBY = "lobby:"
TOURNAMENT = "tournament:"


def remember(player: Player, req: Request | None, action: str, ref: str) -> None:
    """Note on ``player`` (saved by the caller's write) that ``req`` applied ``action`` with
    the outcome ``ref`` (``LOBBY`` or ``TOURNAMENT`` + id). No-op without a ``request_id``."""
    if req is None or req.request_id is None:
        return
    kept = [r for r in player.recent_requests if r[0] != req.request_id]
    player.recent_requests = (*kept, (req.request_id, action, ref))[-RECENT_REQUESTS:]


def repeated(player: Player, req: Request, action: str) -> str | None:
    """The outcome ``ref`` of an earlier ``action`` with ``req``'s ``request_id``, or None."""
    if req.request_id is None:
        return None
    for rid, done, ref in player.recent_requests:
        if rid == req.request_id and done == action:
            return ref
    return None


def answer_again(deps: Deps, req: Request, player: Player, action: str, ref: str) -> Gone:
    """Answer a repeat (to the caller only, ``request_id`` echoed): a ``join`` or
    ``party_start``, the lobby as it is now; a ``leave`` of a lobby, that lobby with status
    ``left``; a ``leave`` of a tournament, the player's ``eliminated``. One read; when the
    lobby or tournament is gone, the ``player`` event."""
    deps.metrics("RepeatedRequests", 1)
    box = Outbox(reply_to=req)
    event: out.LobbyEvent | out.EliminatedEvent | out.PlayerEvent = out.PlayerEvent(
        player=player_view(player)
    )
    if ref.startswith(LOBBY):
        rec = deps.store.get_lobby(ref.removeprefix(LOBBY))
        if rec is not None:
            lobby = lobby_event(rec.lobby, deps.lexicon.language(rec.lobby.language))
            event = replace(lobby, status="left") if action == "leave" else lobby
    elif ref.startswith(TOURNAMENT):
        trec = deps.store.get_tournament(ref.removeprefix(TOURNAMENT))
        if trec is not None:
            t = trec.tournament
            me = next((p for p in t.players if p.player_id == player.player_id), None)
            if me is not None and me.out_round is not None:
                event = out.EliminatedEvent(
                    tournament_id=t.tournament_id,
                    round=me.out_round,
                    player_id=player.player_id,
                    reason="left",
                )
    box.add([req.connection_id], event)
    return push(deps, box)
