"""Protocol layer: what answers each action — the request/reply half of the contract.

Every inbound message gets exactly one answer carrying its ``request_id``: one event of
``REPLIES[action]`` or an ``error`` (the client guide, "Every request answered"). The answer is
the first event the change sends to the requester's connection; when that change sends it
several events they come as one ``batch`` (whose own ``request_id`` is always null) and the
answer is the batch's first event for the connection, the one carrying the ``request_id``. The
AsyncAPI document declares these as each receive operation's ``reply`` with a
``correlationId`` on ``$message.payload#/request_id``. Stdlib only.
"""

from __future__ import annotations

from typing import Final

REPLIES: Final[dict[str, tuple[str, ...]]] = {
    "session": ("session",),
    "sign_out_everywhere": ("session",),
    "join": ("lobby",),
    "leave": ("lobby", "eliminated"),
    "guess": ("turn",),
    "nickname": ("player",),
    "party_create": ("party",),
    "party_join": ("party",),
    "party_leave": ("party",),
    "party_start": ("lobby",),
    "party_remove": ("party",),
    "party_reset_invite": ("party",),
    "ping": ("pong",),
    "profile": ("profile",),
    "leaderboard": ("leaderboard",),
    "history": ("history",),
    "replay": ("replay",),
}
"""Action -> the event types that answer it when it succeeds (``error`` answers any action)."""

REPLY_WHEN: Final[dict[str, str]] = {
    "session": "`session`: the player, the token, the protocol version and the intervals; a "
    "`snapshot` when resuming.",
    "sign_out_everywhere": "`session` with the only token that resumes from now on.",
    "join": "`lobby` with the seat taken (status `waiting`, or `started` when this seat was the "
    "8th: `round` follows in the same batch).",
    "leave": "`lobby` status `left` from a lobby; `eliminated` (reason `left`) from a running "
    "tournament; from a player already out of a running tournament (a spectator, ruling 7, "
    "or one who left it), their own `eliminated` again (round and reason as first sent), "
    "after which none of its messages come, `tournament_end` included. After the tournament "
    "ended: `error` `not_queued`.",
    "guess": "`turn` with the scored row (then `duel_end`, `standings`, ... in the same batch "
    "when it ends the duel).",
    "nickname": "`player`: you as others now see you.",
    "party_create": "`party` with the invite.",
    "party_join": "`party` with the members (every member gets it).",
    "party_leave": "`party` status `left`.",
    "party_start": "`lobby` (with `party_id`), then `party` status `queued` in the same batch.",
    "party_remove": "`party` with the new member list.",
    "party_reset_invite": "`party` with the new invite.",
    "ping": "`pong` (API Gateway answers it).",
    "profile": "`profile`: the player's public profile and rating history.",
    "leaderboard": "`leaderboard`: the top 100, your line and (rating board) the players "
    "around you.",
    "history": "`history`: one page of finished tournaments, newest first, and the next cursor.",
    "replay": "`replay`: the finished tournament's record.",
}
"""Action -> its successful answer, in words (the guide's request/reply table)."""
