"""Service layer: the outbox — what a change pushes, schedules and closes once it is committed
(never before: nothing is sent for a change that was not saved) — and the inbound request a
reply answers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from shared.protocol.framing import dump_event, frames
from shared.protocol.outbound import LobbyEvent, OutboundEvent
from shared.services.ports import Clock, Notifier, Timer


@dataclass(frozen=True)
class Request:
    """The inbound WebSocket message being handled.

    ``connection_id``: API Gateway's; ``request_id``: the client's id for the message, echoed
    in the first message pushed back to that connection (the client guide: "Every inbound message
    may carry request_id, echoed in the reply"); ``received_ms``: when API Gateway received it
    (``requestContext.requestTimeEpoch``, UTC ms; None: now); ``closed_ms``: when the
    connection closed, for a message received before its close and run after ``$disconnect``
    (``presence.sender``; None: open): applied, but its reply cannot be delivered."""

    connection_id: str
    request_id: str | None = None
    received_ms: int | None = None
    closed_ms: int | None = None


Gone = tuple[str, ...]
"""Connection ids a push found gone (HTTP 410): the entrypoint starts their disconnect flow."""


@dataclass
class Outbox:
    """Messages, timers and connection closes to apply after a commit.

    ``reply_to``: the request being answered — the first message queued for its connection
    carries its ``request_id`` (set on the event before it is serialised).

    After ``number``, every tournament event queued for a numbered connection carries that
    player's next ``seq`` (RULINGS.md, "Event sequence numbers")."""

    reply_to: Request | None = None
    messages: list[tuple[str, str]] = field(default_factory=list)
    timers: list[Timer] = field(default_factory=list)
    closes: list[str] = field(default_factory=list)
    """Connections to close after the messages (a replaced session's, a silent player's)."""
    _replied: bool = field(default=False, init=False, repr=False)
    _seqs: dict[str, int] | None = field(default=None, init=False, repr=False)
    _players: dict[str, str] = field(default_factory=dict, init=False, repr=False)

    def number(self, seqs: dict[str, int], players: dict[str, str]) -> None:
        """Number the tournament events queued from now on: ``players`` maps a connection to
        its player, ``seqs`` a player to the last ``seq`` they received (updated in place, so
        the caller's write saves it)."""
        self._seqs = seqs
        self._players = players

    def add(self, connections: Iterable[str | None], event: OutboundEvent) -> None:
        """Queue ``event`` once for each distinct connection (None entries are skipped)."""
        text: str | None = None
        numbered = (
            self._seqs is not None
            and getattr(event, "tournament_id", None) is not None
            and not isinstance(event, LobbyEvent)
        )
        for cid in dict.fromkeys(connections):
            if not cid:
                continue
            seq: int | None = None
            pid = self._players.get(cid) if numbered else None
            if pid is not None and self._seqs is not None:
                seq = self._seqs[pid] = self._seqs.get(pid, 0) + 1
            request = self.reply_to
            if request is not None and not self._replied and cid == request.connection_id:
                self._replied = True  # one reply per request
                if event.request_id is None and request.request_id is not None:
                    reply = replace(event, request_id=request.request_id, seq=seq or event.seq)
                    self.messages.append((cid, dump_event(reply)))
                    continue
            if text is None:
                text = dump_event(event)
            if seq is not None:
                self.messages.append((cid, _numbered(text, event, seq)))
                continue
            self.messages.append((cid, text))

    def posts(self) -> list[tuple[str, str]]:
        """The messages as posted: one per connection (its events in order, as one ``batch``
        when there are several; ``frames``), connections in the order first addressed."""
        by_connection: dict[str, list[str]] = {}
        for cid, text in self.messages:
            by_connection.setdefault(cid, []).append(text)
        return [(cid, f) for cid, texts in by_connection.items() for f in frames(texts)]

    def flush(self, clock: Clock, notifier: Notifier) -> Gone:
        """Schedule the timers, push the messages (one post per connection: ``posts``), close
        the connections; empty the box. Returns the connections found gone."""
        for timer in self.timers:
            clock.schedule(timer)
        gone = notifier.send(self.posts()) if self.messages else []
        for cid in dict.fromkeys(self.closes):
            notifier.close(cid)
        self.messages = []
        self.timers = []
        self.closes = []
        return tuple(gone)


_UNNUMBERED = '{"request_id":null,"seq":null,'


def _numbered(text: str, event: OutboundEvent, seq: int) -> str:
    """``event`` (dumped as ``text``) with ``seq``: its leading keys replaced when they are the
    unnumbered ones (the common case: one ``json.dumps`` per event however many recipients),
    else dumped anew."""
    if text.startswith(_UNNUMBERED):
        return f'{{"request_id":null,"seq":{seq},' + text[len(_UNNUMBERED) :]
    return dump_event(replace(event, seq=seq))
