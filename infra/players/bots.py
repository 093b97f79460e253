"""Protocol clients: bot players that speak only the public protocol over real WebSockets.

Run bots against any deployment (the local emulator or AWS)::

    python -m infra.players.bots --url ws://127.0.0.1:8000/ws --players 8 --language en \
        [--strength 0..1] [--think-ms MIN MAX] [--timeout-rate p] [--invalid-rate p] \
        [--leave-rate p] [--disconnect-rate p] [--games N] [--seed S]

Each bot opens a session, joins a lobby and plays every duel with :mod:`infra.players.solver`,
thinking ``think_ms`` capped by the turn deadline, misbehaving at the rates of ``BotConfig``.
It pings when idle (ruling 14), resumes with its token after any close, and folds what it knows
with :class:`infra.players.state.ClientState`. Library entry points: :func:`play_tournament`
(one tournament, for tests and benchmarks) and :func:`run_bot_pool` (keeps lobbies filled;
``python -m infra.emulator --bots N``). Liveness details: ``shared/domain/RULINGS.md``, design
notes, "How a bot stays connected".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import itertools
import json
import logging
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from infra.players.solver import DuelSolver
from infra.players.state import (
    Board,
    ClientState,
    is_gateway_frame,
    retry_delay_ms,
    retry_in_time,
)
from shared.domain.languages import LANGUAGE_CODES
from shared.domain.matchmaking import LOBBY_SEATS
from shared.protocol.framing import unpack
from shared.protocol.limits import PING_INTERVAL_SECONDS

__all__ = [
    "Bot",
    "BotConfig",
    "BotResult",
    "DuelRecord",
    "main",
    "play_tournament",
    "run_bot_pool",
]

log = logging.getLogger("bots")

INVALID_GUESS_CODES = frozenset({"not_in_word_list", "wrong_length", "invalid_letters"})
"""Refusals that leave the turn running: pick another word (ruling 5)."""

_SAFETY_MS = 250
"""Send a guess at least this long before the turn deadline (network, handler latency)."""

PING_EVERY_SECONDS = PING_INTERVAL_SECONDS
"""A bot pings after this long without sending anything (20 s, what clients promise: ruling 14;
the server's heartbeat timeout is 60 s)."""

SESSION_RETRIES = 5
"""How many times a bot sends ``session`` again on one connection after ``internal_error`` or
``try_again`` (the protocol guide: a session that was not set up is asked for again)."""


@dataclass(frozen=True)
class BotConfig:
    """How one bot plays. Rates are probabilities in [0, 1]; times in milliseconds."""

    strength: float = 0.9
    """Probability of playing the solver's best candidate (else a random consistent or valid
    word)."""
    think_ms: tuple[int, int] = (300, 1500)
    """Think time per turn, drawn uniformly from [min, max] ms, capped by the deadline."""
    timeout_rate: float = 0.0
    """Per turn: play nothing and let the turn clock skip the turn."""
    invalid_rate: float = 0.0
    """Per turn: first send a word that is not in the list (the turn keeps running)."""
    leave_rate: float = 0.0
    """Per duel: send ``leave`` at the duel's first turn (eliminated, ruling 3)."""
    disconnect_rate: float = 0.0
    """Per turn: drop the socket, reconnect with the token and resume from the ``session``
    snapshot (ruling 9)."""
    reconnect_pause_ms: tuple[int, int] = (200, 1000)
    """How long a disconnected bot stays away before resuming (well under 60 s)."""
    leave_wait_s: float = 120.0
    """After leaving, wait at most this long for the ``rating`` event (sent at round end)."""
    ping_every_s: float = PING_EVERY_SECONDS
    """Seconds without a sent message after which a ``ping`` goes (the first goes at connect)."""


@dataclass
class DuelRecord:
    """One duel the bot played."""

    duel_id: str
    round: int | None
    length: int
    opponent: str | None
    rows: list[dict[str, Any]] = field(default_factory=list)
    result: str | None = None
    """``win``, ``loss`` or ``draw`` from the bot's point of view; None if never seen ending."""
    reason: str | None = None
    word: str | None = None


@dataclass
class BotResult:
    """What one bot saw of one tournament (raw event dicts as received)."""

    name: str
    player_id: str | None = None
    nickname: str | None = None
    rating_before: int | None = None
    tournament_id: str | None = None
    tournament_end: dict[str, Any] | None = None
    rating: dict[str, Any] | None = None
    standings: dict[str, Any] | None = None
    """The last ``standings`` event."""
    eliminated: dict[str, Any] | None = None
    left: bool = False
    duels: list[DuelRecord] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    """Every ``error`` event, deliberate invalid guesses included."""
    resumes: int = 0
    events: int = 0
    finished: bool = True
    """False when :func:`play_tournament` stopped the bot at its timeout."""
    last_state: str | None = None
    """For an unfinished bot: idle, queued or playing when it was stopped."""

    @property
    def place(self) -> int | None:
        return self.rating["place"] if self.rating else None


class Bot:
    """One scripted player. ``await bot.run(games)`` returns one :class:`BotResult` per game."""

    def __init__(
        self,
        url: str,
        language: str = "en",
        config: BotConfig | None = None,
        *,
        name: str = "bot",
        seed: int | None = None,
        join: bool = True,
    ) -> None:
        self.url = url
        self.language = language
        self.config = config or BotConfig()
        self.name = name
        self.rng = random.Random(seed)
        self.join = join
        self.view = ClientState()
        """What the bot knows, folded from every server message (``infra.players.state``)."""
        self.offset_ms = 0.0
        """Server clock minus local clock, from ping/pong."""
        self.results: list[BotResult] = []
        self.current: BotResult | None = None
        self.state = "idle"
        """idle -> queued -> playing -> (done: result appended, idle again)."""
        self.games_left: int | None = 0
        """Tournaments still to play; None: forever."""
        self._dropping = False
        self._ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[dict[str, Any] | None]] = {}
        self._duel: DuelRecord | None = None
        self._solver: DuelSolver | None = None
        self._leave_this_duel = False
        self._move_task: asyncio.Task[None] | None = None
        self._ping_sent: dict[str, float] = {}
        self._sent_at = 0.0
        """When this bot last sent a message (``time.monotonic``): pings fill the gaps."""
        self._session_retries = 0
        """``session`` messages sent again on this connection since the last one that succeeded
        (at most ``SESSION_RETRIES``)."""
        self._finished = asyncio.Event()
        self._leave_deadline: float | None = None
        self.connections = 0
        """WebSocket connections opened so far (resumes after server closes included)."""
        self.retries = 0
        """Requests sent again, unchanged, after API Gateway answered with its own frame."""
        self._retrying: set[str] = set()
        self.server_closes = 0
        """Connections that ended without the bot hanging up (idle/duration limits, drops)."""
        self._sessions = 0

    @property
    def token(self) -> str | None:
        """The newest session token: the fold keeps each ``session`` reply's, and every resume
        gets a new one (tokens rotate, ruling 11; the one before works only for a short
        grace)."""
        return self.view.token

    @token.setter
    def token(self, token: str | None) -> None:
        self.view.token = token

    @property
    def player_id(self) -> str | None:
        return self.view.player_id

    @property
    def nickname(self) -> str | None:
        return self.view.me.nickname if self.view.me else None

    @property
    def rating(self) -> int | None:
        return self.view.me.rating if self.view.me else None

    # -- running -----------------------------------------------------------------------------

    async def run(self, games: int = 1) -> list[BotResult]:
        """Play ``games`` tournaments (0: forever), reconnecting when told to or dropped."""
        self.games_left = games if games > 0 else None
        failures = 0
        while not self._done():
            self._dropping = False
            sessions = self._sessions
            try:
                await self._connection()
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError) as exc:
                if self._done():
                    break
                if self._sessions > sessions:  # it worked until the server went away
                    failures = 0
                    self.server_closes += 1
                failures += 1
                if failures > 8:
                    raise
                log.warning("%s: connection lost (%s); resuming", self.name, exc)
                await asyncio.sleep(min(0.2 * 2**failures, 5))
                continue
            if self._dropping:  # we hung up on purpose: stay away a little, then resume
                failures = 0
                await asyncio.sleep(self.rng.uniform(*self.config.reconnect_pause_ms) / 1000)
            elif not self._done():
                # closed by the server: API Gateway's idle timeout or 2-hour cap (1001), ...
                if self._sessions > sessions:
                    failures = 0
                    self.server_closes += 1
                failures += 1
                if failures > 8:
                    raise ConnectionError(f"{self.url} keeps closing the connection")
                log.info("%s: the server closed the connection; resuming", self.name)
                await asyncio.sleep(min(0.2 * 2**failures, 5))
        return self.results

    def _done(self) -> bool:
        return self.games_left == 0 and self.state == "idle"

    async def _connection(self) -> None:
        # ping_interval: the library's control frames only detect a dead TCP connection on our
        # side; API Gateway does not count them as activity, hence the ``ping`` messages.
        async with connect(self.url, open_timeout=15, max_size=2**20, ping_interval=20) as ws:
            self._ws = ws
            self.connections += 1
            pinger: asyncio.Task[None] | None = None
            try:
                await self._send({"action": "session", "token": self.token})
                await self._ping()
                pinger = asyncio.create_task(self._keep_pinging())
                async for raw in ws:
                    for message in unpack(raw):  # one event, or a change's batch of them
                        await self._handle(message)
                    if self._done():
                        return
            finally:
                if pinger is not None:
                    pinger.cancel()
                self._ws = None
                self._cancel_move()
                for fut in self._pending.values():
                    if not fut.done():
                        fut.cancel()
                self._pending.clear()
                self._ping_sent.clear()

    async def _keep_pinging(self) -> None:
        """``ping`` whenever nothing was sent for ``ping_every_s``, while the connection lasts
        (ruling 14: a message at least every 20 s; any message will do)."""
        with contextlib.suppress(ConnectionClosed):
            while True:
                wait = self._sent_at + self.config.ping_every_s - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                    continue
                await self._ping()

    async def _send(self, message: dict[str, Any]) -> str:
        request_id = message.get("request_id") or f"{message['action'][:2]}-{next(self._ids)}"
        message = {k: v for k, v in message.items() if v is not None} | {"request_id": request_id}
        if self._ws is None:
            raise ConnectionClosed(None, None)
        self.view.sent(message)
        await self._ws.send(json.dumps(message, ensure_ascii=False))
        self._sent_at = time.monotonic()
        return request_id

    async def _ping(self) -> None:
        request_id = await self._send({"action": "ping"})
        self._ping_sent[request_id] = time.time() * 1000

    def server_now_ms(self) -> float:
        return time.time() * 1000 + self.offset_ms

    # -- events ------------------------------------------------------------------------------

    async def _handle(self, m: dict[str, Any]) -> None:
        if is_gateway_frame(m):
            self._on_gateway_frame(m)
            return
        kind = m.get("type")
        if self.current is not None:
            self.current.events += 1
        try:
            self.view.apply(m)  # what the bot knows first, then what it does about it
        except (KeyError, TypeError, ValueError, AttributeError):
            log.exception("%s: cannot fold %s event: %.300s", self.name, kind, m)
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            try:
                await handler(m)
            except (KeyError, TypeError, ValueError, StopIteration):
                # A malformed or unexpected event must not kill the bot: report it, play on.
                log.exception("%s: cannot handle %s event: %.300s", self.name, kind, m)
        self._check_leave_wait()

    def _on_gateway_frame(self, m: dict[str, Any]) -> None:
        """API Gateway's own frame (throttled, or a failed integration): one of our requests
        was not processed or has an unknown outcome, and the frame does not say which (ruling
        18). Each unanswered request is sent again, unchanged (same ``request_id``: applied
        once), with backoff and jitter; a guess within its turn (``_guess``)."""
        self.view.apply(m)
        log.info("%s: API Gateway answered %.200s", self.name, m)
        for fut in self._pending.values():
            if not fut.done():
                fut.set_result(m)  # ``_guess`` retries it inside the turn
        for rid, message in list(self.view.unanswered.items()):
            if rid in self._pending or rid in self._retrying:
                continue
            self._retrying.add(rid)
            task = asyncio.create_task(self._retry(rid, message))
            task.add_done_callback(functools.partial(self._retried, rid))

    def _retried(self, rid: str, _task: asyncio.Task[None]) -> None:
        self._retrying.discard(rid)

    async def _retry(self, rid: str, message: dict[str, Any], attempts: int = 6) -> None:
        """Send ``message`` again until a server message answers ``rid`` (``attempts`` at
        most, exponential backoff with full jitter: ``infra.players.state.retry_delay_ms``)."""
        for attempt in range(attempts):
            await asyncio.sleep(retry_delay_ms(attempt, self.rng) / 1000)
            if rid not in self.view.unanswered or self._ws is None:
                return
            self.retries += 1
            with contextlib.suppress(ConnectionClosed):
                await self._send(message)

    async def _on_session(self, m: dict[str, Any]) -> None:
        self._sessions += 1
        self._session_retries = 0
        if m.get("resumed"):
            if self.current is not None:
                self.current.resumes += 1
            log.info("%s %s: resumed", self.name, self.nickname)
            await self._apply_snapshot(m.get("snapshot") or {})
        else:
            log.info("%s: session as %s (rating %s)", self.name, self.nickname, self.rating)
        if self.state == "idle" and self.join and not self._done():
            await self._join()

    async def _join(self) -> None:
        self.current = BotResult(
            name=self.name,
            player_id=self.player_id,
            nickname=self.nickname,
            rating_before=self.rating,
        )
        self.state = "queued"
        await self._send({"action": "join", "language": self.language})

    async def _apply_snapshot(self, snap: dict[str, Any]) -> None:
        view = self.view  # the snapshot, folded
        if self.current is not None:  # the result keeps the events as received
            if snap.get("standings"):
                self.current.standings = snap["standings"]
            if snap.get("eliminated") and snap["eliminated"].get("player_id") == self.player_id:
                self.current.eliminated = snap["eliminated"]
            if snap.get("rating"):
                self.current.rating = snap["rating"]
        if view.end is not None and self.state in ("playing", "queued"):
            # it ended while we were away: the resume shows the end once (ruling 15)
            if self.current is not None:
                self.current.tournament_end = snap["tournament_end"]
            log.info("%s %s: the tournament ended while away", self.name, self.nickname)
            self._finish()
            return
        if view.result is not None and self.current is not None and self.current.left:
            self._finish()  # left, and the place is fixed: what _on_rating would have done
            return
        if view.lobby is not None:
            self.state = "queued"
            return
        if view.round is not None:
            self.state = "playing"
            if self.current is not None:
                self.current.tournament_id = view.round.tournament_id
            own = view.own_board
            if own is not None and not own.over:
                self._start_duel(own, next(p for p in own.players if p != self.player_id))
                self._sync_rows(own)
                self._move_if_my_turn()
            return
        if self.state == "queued":
            # The seat was released while we were away (ruling 9): queue again, same game.
            log.info("%s %s: no longer queued; joining again", self.name, self.nickname)
            self.state = "idle"
            self.current = None
        elif self.state == "playing":
            # The tournament ended (or we were dropped from it) while we were away.
            log.info("%s %s: nothing to resume", self.name, self.nickname)
            self._finish()

    async def _on_pong(self, m: dict[str, Any]) -> None:
        sent = self._ping_sent.pop(m.get("request_id") or "", None)
        if sent is None and not m.get("request_id") and self._ping_sent:
            # a pong without the request id (API Gateway answers pings in order): the oldest
            sent = self._ping_sent.pop(next(iter(self._ping_sent)))
        if sent is not None:
            now = time.time() * 1000
            self.offset_ms = m["server_time_ms"] - (sent + now) / 2

    async def _on_lobby(self, m: dict[str, Any]) -> None:
        status = m.get("status")
        if status == "waiting" and self.state in ("idle", "queued"):
            self.state = "queued"
        elif status == "started":
            self.state = "playing"
            if self.current is not None:
                self.current.tournament_id = self.view.tournament_id
            log.info("%s %s: tournament %s started", self.name, self.nickname, m["tournament_id"])

    async def _on_round(self, m: dict[str, Any]) -> None:
        self.state = "playing"
        if self.current is not None:
            self.current.tournament_id = self.view.tournament_id
            self.current.standings = {"players": m["standings"], "round": m["round"]}
        if self.view.bye:
            log.info("%s %s: round %s bye", self.name, self.nickname, m["round"])

    async def _on_duel_start(self, m: dict[str, Any]) -> None:
        own = self.view.boards.get(m["duel_id"])
        if own is None or self.player_id not in own.players:
            return  # spectating another duel
        opponent = m.get("opponent") or next(p for p in own.players if p != self.player_id)
        self._start_duel(own, opponent)
        self._leave_this_duel = self.rng.random() < self.config.leave_rate
        self._move_if_my_turn()

    def _start_duel(self, own: Board, opponent: str | None) -> None:
        if self._duel is not None and self._duel.duel_id == own.duel_id:
            return
        rnd = self.view.round.number if self.view.round else None
        self._duel = DuelRecord(
            duel_id=own.duel_id, round=rnd, length=own.length or 0, opponent=opponent
        )
        self._solver = DuelSolver(self.language, own.length or 0)
        if self.current is not None:
            self.current.duels.append(self._duel)

    def _sync_rows(self, own: Board) -> None:
        """Record the board's rows the duel record lacks, and give the solver the scored ones."""
        if self._duel is None or self._solver is None:
            return
        for row in own.rows[len(self._duel.rows) :]:
            self._duel.rows.append(row.as_message())
            if not row.skipped and row.tiles and row.marks:
                self._solver.add_row(row.tiles, row.marks)

    def _move_if_my_turn(self) -> None:
        turn = self.view.my_turn
        if turn is not None and self._duel is not None and turn[0] == self._duel.duel_id:
            self._schedule_move(*turn)

    async def _on_turn(self, m: dict[str, Any]) -> None:
        if self._duel is None or m["duel_id"] != self._duel.duel_id:
            return
        self._cancel_move()
        own = self.view.boards.get(m["duel_id"])
        if own is not None:
            self._sync_rows(own)
        self._move_if_my_turn()

    async def _on_duel_end(self, m: dict[str, Any]) -> None:
        if self._duel is None or m["duel_id"] != self._duel.duel_id:
            return
        self._cancel_move()
        duel, own = self._duel, self.view.boards[m["duel_id"]]
        duel.reason, duel.word = own.reason, own.display or own.word
        if own.result == "draw":
            duel.result = "draw"
        else:
            duel.result = "win" if own.winner == self.player_id else "loss"
        log.info(
            "%s %s: duel %s %s (%s, %d rows, word %s)",
            self.name,
            self.nickname,
            duel.round,
            duel.result,
            duel.reason,
            len(duel.rows),
            duel.word,
        )
        self._duel, self._solver = None, None

    async def _on_standings(self, m: dict[str, Any]) -> None:
        if self.current is not None:
            self.current.standings = m

    async def _on_eliminated(self, m: dict[str, Any]) -> None:
        if m["player_id"] != self.player_id:
            return
        if self.current is not None:
            self.current.eliminated = m
        log.info(
            "%s %s: eliminated in round %s (%s)", self.name, self.nickname, m["round"], m["reason"]
        )

    async def _on_rating(self, m: dict[str, Any]) -> None:
        if self.current is not None:
            self.current.rating = m
        log.info(
            "%s %s: place %s, rating %+d -> %s",
            self.name,
            self.nickname,
            m["place"],
            m["change"],
            m["rating"],
        )
        if self.current is not None and self.current.left:
            self._finish()

    async def _on_tournament_end(self, m: dict[str, Any]) -> None:
        if self.current is not None:
            self.current.tournament_end = m
        self._finish()
        if self.join and not self._done():
            await asyncio.sleep(self.rng.uniform(0.2, 1.0))
            await self._join()

    async def _on_error(self, m: dict[str, Any]) -> None:
        if self.current is not None:
            self.current.errors.append(m)
        fut = self._pending.pop(m.get("request_id") or "", None)
        if fut is not None and not fut.done():
            fut.set_result(m)
            return
        code = m.get("code")
        if code in ("already_queued", "already_playing"):
            return  # a join after a resume: we are where we wanted to be
        request_id = str(m.get("request_id") or "")
        if code == "session_bound" and self._ws is not None:
            # this connection already belongs to a player (a retried session whose first
            # reply was lost): a new connection resumes with the token, or starts over
            self._dropping = True
            await self._ws.close()
            return
        if code in ("internal_error", "try_again") and request_id.startswith("se-"):
            # the session was not set up: send it again, as the protocol guide tells clients
            # to, a few times before giving up on this connection
            self._session_retries += 1
            if self._session_retries <= SESSION_RETRIES and self._ws is not None:
                await asyncio.sleep(self.rng.uniform(0.1, 0.5))
                if self._ws is not None:
                    await self._send({"action": "session", "token": self.token})
                return
        if code == "try_again" and request_id.startswith("jo-"):
            # the server lost a race for a lobby seat too often: ask again, like a client would
            await asyncio.sleep(self.rng.uniform(0.05, 0.3))
            if self.state == "queued" and self._ws is not None:
                await self._send({"action": "join", "language": self.language})
            return
        log.warning("%s %s: error %s: %s", self.name, self.nickname, code, m.get("message"))

    def _finish(self) -> None:
        self._cancel_move()
        if self.current is not None:
            self.results.append(self.current)
            self.current = None
        self._duel, self._solver = None, None
        self._leave_deadline = None
        self.state = "idle"
        if self.games_left:
            self.games_left -= 1

    def _check_leave_wait(self) -> None:
        if self._leave_deadline is not None and time.monotonic() > self._leave_deadline:
            log.info("%s %s: no rating after leaving; giving up", self.name, self.nickname)
            self._finish()

    # -- moves -------------------------------------------------------------------------------

    def _cancel_move(self) -> None:
        task, self._move_task = self._move_task, None
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()

    def _schedule_move(self, duel_id: str, deadline_ms: int) -> None:
        self._cancel_move()
        self._move_task = asyncio.create_task(self._move(duel_id, deadline_ms))
        self._move_task.add_done_callback(self._move_done)

    def _move_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None and not isinstance(exc, ConnectionClosed):
            log.error("%s: move failed: %r", self.name, exc)

    async def _move(self, duel_id: str, deadline_ms: int) -> None:
        cfg, rng = self.config, self.rng
        if self._leave_this_duel:
            self._leave_this_duel = False
            await self._leave()
            return
        if rng.random() < cfg.disconnect_rate:
            log.info("%s %s: disconnecting on purpose", self.name, self.nickname)
            self._dropping = True
            if self._ws is not None:
                await self._ws.close()
            return
        if rng.random() < cfg.timeout_rate:
            log.info("%s %s: letting the turn time out", self.name, self.nickname)
            return
        think = self.think_ms()
        budget = deadline_ms - self.server_now_ms() - _SAFETY_MS
        await asyncio.sleep(max(0.0, min(think, budget)) / 1000)
        if rng.random() < cfg.invalid_rate and self._solver is not None:
            word = "".join(self._solver.invalid_word(rng))
            await self._guess(duel_id, word, deadline_ms)
        for _ in range(8):
            solver = self._solver
            if solver is None or self._duel is None or self._duel.duel_id != duel_id:
                return
            tiles = solver.choose(cfg.strength, rng)
            reply = await self._guess(duel_id, "".join(tiles), deadline_ms)
            if reply is None or reply.get("code") not in INVALID_GUESS_CODES:
                return
            solver.rejected.add(tiles)  # our list and the server's differ: try another

    def think_ms(self) -> float:
        """This turn's think time in ms (before the deadline caps it): uniform over
        ``config.think_ms``; a subclass may draw it from another distribution."""
        return self.rng.uniform(*self.config.think_ms)

    async def _guess(self, duel_id: str, word: str, deadline_ms: int) -> dict[str, Any] | None:
        """Send a guess; the error reply if refused, None if played (or no reply in time). A
        guess API Gateway answered with its own frame is sent again, same ``request_id``,
        with backoff and jitter while the retry still lands inside the turn (ruling 18)."""
        request_id = f"g-{next(self._ids)}"
        message = {"action": "guess", "duel_id": duel_id, "word": word, "request_id": request_id}
        attempt = 0
        try:
            while True:
                loop = asyncio.get_running_loop()
                fut: asyncio.Future[dict[str, Any] | None] = loop.create_future()
                self._pending[request_id] = fut
                await self._send(message)
                wait = max(0.5, (deadline_ms - self.server_now_ms()) / 1000 + 1)
                try:
                    # A played guess answers with a turn event, which cancels this task; a
                    # refusal answers with an error carrying our request_id.
                    reply = await asyncio.wait_for(fut, wait)
                except TimeoutError:
                    return None
                if reply is None or not is_gateway_frame(reply):
                    return reply
                delay = retry_delay_ms(attempt, self.rng)
                attempt += 1
                if not retry_in_time(self.server_now_ms(), delay, deadline_ms):
                    return None  # past the turn: the skip stands
                self.retries += 1
                await asyncio.sleep(delay / 1000)
        finally:
            self._pending.pop(request_id, None)

    async def _leave(self) -> None:
        log.info("%s %s: leaving the tournament", self.name, self.nickname)
        if self.current is not None:
            self.current.left = True
        self._leave_deadline = time.monotonic() + self.config.leave_wait_s
        await self._send({"action": "leave"})


# -- library entry points ---------------------------------------------------------------------


def _configs(players: int | Sequence[BotConfig], base: BotConfig) -> list[BotConfig]:
    return [base] * players if isinstance(players, int) else list(players)


async def play_tournament(
    url: str,
    players: int | Sequence[BotConfig] = 8,
    language: str = "en",
    *,
    config: BotConfig | None = None,
    seed: int | None = None,
    timeout: float | None = None,
    name_prefix: str = "bot",
) -> list[BotResult]:
    """Run ``players`` bots (or one per config) for one tournament; one result per bot, in order.

    The bots join at once, so on a quiet deployment they fill one lobby together. ``config``
    (default: strength 0.9, think 0–50 ms) applies when ``players`` is a count. ``timeout``
    seconds bounds the whole run: bots still playing then are stopped and their results come
    back with ``finished`` False (what they saw so far). Each result holds the bot's last
    ``standings``, its ``rating`` and ``tournament_end`` events as received.
    """
    base = config or BotConfig(think_ms=(0, 50))
    rng = random.Random(seed)
    bots = [
        Bot(url, language, cfg, name=f"{name_prefix}{i + 1}", seed=rng.randrange(2**32))
        for i, cfg in enumerate(_configs(players, base))
    ]
    tasks = [asyncio.create_task(bot.run(1)) for bot in bots]
    done, pending = await asyncio.wait(tasks, timeout=timeout)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    results = []
    for bot, task in zip(bots, tasks, strict=True):
        if task in done and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
        if bot.results:
            results.append(bot.results[0])
        else:  # timed out: what it saw so far, marked unfinished
            partial = bot.current or BotResult(name=bot.name, player_id=bot.player_id)
            partial.finished = False
            partial.last_state = bot.state
            results.append(partial)
    return results


async def run_bot_pool(
    url: str,
    n: int,
    *,
    language: str = "en",
    config: BotConfig | None = None,
    seed: int | None = None,
    name_prefix: str = "bot",
) -> None:
    """Keep ``n`` bots in lobbies of ``language`` forever: each re-joins after its tournament.

    For ``python -m infra.emulator --bots N``; runs until cancelled. A bot whose connection keeps
    failing is restarted after a pause, so the pool survives a restarting server.
    """
    base = config or BotConfig()
    rng = random.Random(seed)

    async def keep(i: int) -> None:
        name = f"{name_prefix}{i + 1}"
        while True:
            bot = Bot(url, language, base, name=name, seed=rng.randrange(2**32))
            try:
                await bot.run(0)
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError) as exc:
                log.warning("%s: giving up on this connection (%s); new bot in 5 s", name, exc)
            await asyncio.sleep(5)

    await asyncio.sleep(0.2)  # let the server finish starting
    log.info("bot pool: %d bots in %s lobbies at %s", n, language, url)
    async with asyncio.TaskGroup() as group:
        for i in range(n):
            group.create_task(keep(i))


class BotPools:
    """Bots for ``--bots N``: ``n`` bots in lobbies of every language a human joins.

    A pool (:func:`run_bot_pool`) runs for each of ``languages`` from the start (English by
    default), and one more is started the first time anybody sends ``join`` or ``party_start``
    in another game language (:meth:`observe`, which the emulator registers as a gateway message
    observer), so any of the game languages can be played locally against bots. A
    ``party_start`` also brings bots for one tournament to fill the party's own lobby
    (:meth:`fill_party_lobby`). The bots' own joins name languages that already have a pool.
    :meth:`run` runs until cancelled, then stops every pool and those bots.
    """

    def __init__(
        self,
        url: str,
        n: int,
        *,
        languages: Sequence[str] = ("en",),
        config: BotConfig | None = None,
        seed: int | None = None,
    ) -> None:
        unknown = [code for code in languages if code not in LANGUAGE_CODES]
        if unknown:
            raise ValueError(f"not game languages: {', '.join(unknown)}")
        self.url = url
        self.n = n
        self.initial = tuple(languages)
        self.config = config
        self._rng = random.Random(seed)
        self._pools: dict[str, asyncio.Task[None]] = {}
        self._extra: set[asyncio.Task[Any]] = set()
        """The bots brought for parties' lobbies (``fill_party_lobby``), while they play."""
        self._fillers = 0

    @property
    def languages(self) -> list[str]:
        """The languages with a pool running, in the order they started."""
        return list(self._pools)

    def ensure(self, language: str) -> bool:
        """Start a pool for ``language`` unless one runs (or it is no game language); whether
        one was started. Call it on the event loop the bots should run on."""
        if language in self._pools or language not in LANGUAGE_CODES:
            return False
        prefix = "bot" if language == "en" else f"bot-{language}-"
        self._pools[language] = asyncio.get_running_loop().create_task(
            run_bot_pool(
                self.url,
                self.n,
                language=language,
                config=self.config,
                seed=self._rng.randrange(2**32),
                name_prefix=prefix,
            ),
            name=f"bot-pool-{language}",
        )
        return True

    def fill_party_lobby(self, language: str) -> bool:
        """Start ``LOBBY_SEATS - 1`` bots that play one tournament in ``language``: a party's
        ``party_start`` opens a lobby of its own when the pool's waiting lobby has too few free
        seats for the whole party, and the pool's bots already sit in theirs. The extra bots take
        the free seats of both (a joiner sits in a waiting lobby that has room), so the party's
        lobby fills like any other. Whether they were started."""
        if language not in LANGUAGE_CODES:
            return False
        self._fillers += 1
        task = asyncio.get_running_loop().create_task(
            play_tournament(
                self.url,
                LOBBY_SEATS - 1,
                language,
                config=self.config,
                seed=self._rng.randrange(2**32),
                name_prefix=f"party-bot{self._fillers}-",
            ),
            name=f"party-bots-{language}-{self._fillers}",
        )
        self._extra.add(task)
        task.add_done_callback(self._extra.discard)
        return True

    def observe(self, route: str, body: str | None) -> None:
        """A client message reached the gateway: a ``join`` or ``party_start`` in a language
        without bots starts a pool for it; a ``party_start`` also brings bots for the party's
        lobby (``fill_party_lobby``)."""
        if route not in ("join", "party_start") or not body:
            return
        try:
            message = json.loads(body)
        except ValueError:
            return
        language = message.get("language") if isinstance(message, dict) else None
        if not isinstance(language, str):
            return
        if self.ensure(language):
            log.info(
                "bot pool: a player joined in %s; %d bots keep its lobbies filled", language, self.n
            )
        if route == "party_start" and self.fill_party_lobby(language):
            log.info("bot pool: a party started in %s; bots fill its lobby", language)

    async def run(self) -> None:
        for language in self.initial:
            self.ensure(language)
        try:
            await asyncio.Event().wait()
        finally:
            pools = [*self._pools.values(), *self._extra]
            for task in pools:
                task.cancel()
            await asyncio.gather(*pools, return_exceptions=True)


# -- command line ------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m infra.players.bots",
        description="Bot players for Wordle Tournament, over the public WebSocket protocol.",
    )
    p.add_argument(
        "--url",
        default="ws://127.0.0.1:8000/ws",
        help="WebSocket API URL: the local runtime's ws://HOST:PORT/ws or a deployed stage's "
        "wss:// URL (default ws://127.0.0.1:8000/ws)",
    )
    p.add_argument("--players", type=int, default=8, help="number of bots (default 8)")
    p.add_argument(
        "--language", default="en", help="game language code, e.g. en, nl, de (default en)"
    )
    p.add_argument(
        "--strength",
        type=float,
        default=0.9,
        help="0..1: the chance of playing the solver's best word each turn, else a weaker "
        "valid one (default 0.9)",
    )
    p.add_argument(
        "--think-ms",
        type=int,
        nargs=2,
        default=(300, 1500),
        metavar=("MIN", "MAX"),
        help="think time per turn, drawn uniformly in ms and capped by the turn deadline "
        "(default 300 1500)",
    )
    p.add_argument(
        "--timeout-rate",
        type=float,
        default=0.0,
        help="0..1 per turn: play nothing and let the turn clock skip it (default 0)",
    )
    p.add_argument(
        "--invalid-rate",
        type=float,
        default=0.0,
        help="0..1 per turn: first send a word that is not in the list (default 0)",
    )
    p.add_argument(
        "--leave-rate",
        type=float,
        default=0.0,
        help="0..1 per duel: leave the tournament at the duel's first turn (default 0)",
    )
    p.add_argument(
        "--disconnect-rate",
        type=float,
        default=0.0,
        help="0..1 per turn: drop the socket, reconnect and resume with the token (default 0)",
    )
    p.add_argument(
        "--games", type=int, default=1, help="tournaments per bot (0 = forever; default 1)"
    )
    p.add_argument("--seed", type=int, help="random seed, for a repeatable run")
    p.add_argument("--verbose", "-v", action="store_true", help="debug logging")
    return p


async def _run_cli(args: argparse.Namespace) -> list[list[BotResult]]:
    config = BotConfig(
        strength=args.strength,
        think_ms=(args.think_ms[0], args.think_ms[1]),
        timeout_rate=args.timeout_rate,
        invalid_rate=args.invalid_rate,
        leave_rate=args.leave_rate,
        disconnect_rate=args.disconnect_rate,
    )
    rng = random.Random(args.seed)
    bots = [
        Bot(args.url, args.language, config, name=f"bot{i + 1}", seed=rng.randrange(2**32))
        for i in range(args.players)
    ]
    return list(await asyncio.gather(*(b.run(args.games) for b in bots)))


def _summary(all_results: list[list[BotResult]]) -> str:
    lines = []
    for results in all_results:
        for r in results:
            rating = r.rating or {}
            wins = sum(d.result == "win" for d in r.duels)
            lines.append(
                f"{r.name:>6} {r.nickname or '?':<20} place {rating.get('place', '-')!s:>2} "
                f"rating {rating.get('change', 0):+d} -> {rating.get('rating', '?')}  "
                f"duels {wins}/{len(r.duels)} won"
                + ("  (left)" if r.left else "")
                + ("" if r.tournament_end else "  [no tournament_end]")
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(message)s",
        datefmt="%H:%M:%S",
    )
    try:
        results = asyncio.run(_run_cli(args))
    except KeyboardInterrupt:
        return 130
    except (OSError, InvalidHandshake, InvalidURI) as exc:
        print(f"cannot reach {args.url}: {exc}", file=sys.stderr)
        return 1
    print(_summary(results))
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
