"""End-to-end test support: the emulator in its own thread, a hand-driven WebSocket player, and
the checks every e2e tournament shares (final standings, ranking, rating items in DynamoDB).

Why a thread for the emulator: the bots' solver is synchronous CPU work; sharing one event loop
with the gateway would stall every socket of the emulator while a bot narrows its candidates.
With the emulator on its own loop, tests drive bots and hand-driven players from theirs (or run
bots in a worker process, :func:`bot_process`), and one emulator can serve several tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import multiprocessing
import random
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ProcessPoolExecutor
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from infra.emulator import Emulator
from infra.players.bots import BotConfig, BotResult, play_tournament
from infra.players.solver import DuelSolver
from infra.players.state import Board, ClientState
from shared.protocol.framing import unpack
from shared.protocol.limits import PING_INTERVAL_SECONDS

Message = dict[str, Any]

TIMINGS: dict[str, float] = {}
"""Wall-clock seconds per e2e tournament, by label; printed in the terminal summary."""

INVALID_GUESS_CODES = frozenset({"not_in_word_list", "wrong_length", "invalid_letters"})


# -- the emulator on a background event loop ---------------------------------------------------


class EmulatorThread:
    """An :class:`Emulator` started and served on a daemon thread's event loop.

    ``with EmulatorThread(turn_seconds=1.5) as emu: ...`` yields the running Emulator; its
    ``ws_url``, ``url`` and ``dynamodb_client()`` are safe to use from the test's thread.
    """

    def __init__(self, **settings: Any) -> None:
        self.settings = {"port": 0, **settings}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="emulator", daemon=True)
        self.emulator: Emulator | None = None

    def __enter__(self) -> Emulator:
        self._thread.start()
        self.emulator = Emulator(**self.settings)
        self._run(self.emulator.start(), timeout=60)
        return self.emulator

    def __exit__(self, *exc: object) -> None:
        try:
            if self.emulator is not None:
                self._run(self.emulator.stop(), timeout=60)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
            self._loop.close()

    def _run(self, coro: Coroutine[Any, Any, Any], timeout: float) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)


# -- bots in their own process ------------------------------------------------------------


FAST_STRONG = BotConfig(strength=1.0, think_ms=(0, 10))
"""Bots that play the solver's best word at once: scenarios finish fast."""


def bot_pool(emu: Emulator, n: int, seed: int) -> asyncio.Task[list[BotResult]]:
    """``n`` fast, strong bots joining an English lobby and playing to the end (150 s cap)."""
    return asyncio.create_task(
        play_tournament(emu.ws_url, n, "en", config=FAST_STRONG, seed=seed, timeout=150)
    )


def run_scenario(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run one scenario on a fresh event loop, bounded at 240 s."""
    return asyncio.run(asyncio.wait_for(coro, 240))


def bot_process() -> ProcessPoolExecutor:
    """One worker process for bots (spawned: the emulator's threads are never forked).

    The bots' solver is CPU work; in a process of their own the bots use the second core
    instead of competing with the emulator for one interpreter (~20% faster on 2 cores).
    """
    return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))


def play_tournament_blocking(url: str, players: int, language: str, **kwargs: Any) -> Any:
    """:func:`play_tournament` run to completion (for :func:`bot_process`)."""
    return asyncio.run(play_tournament(url, players, language, **kwargs))


# -- a hand-driven player -------------------------------------------------------------------


class WsPlayer:
    """One player on a real WebSocket, driven step by step by a test.

    Every message received is kept in :attr:`log` (all connections, in order); :meth:`expect`
    waits for the next message matching a predicate. Every message consumed is folded into
    :attr:`view` (the clients' one fold, ``ClientState``); our duel and its rows come from it.
    :meth:`play` plays duels with the bots' solver until a condition holds, so a scenario only
    scripts the interesting moment.
    """

    def __init__(
        self,
        url: str,
        name: str,
        language: str = "en",
        seed: int = 0,
        ping_every: float = PING_INTERVAL_SECONDS,
    ) -> None:
        self.url = url
        self.ping_every = ping_every
        """Seconds between ``ping`` messages (a conformant client: within 20 s)."""
        self.close_code: int | None = None
        """The close code of the last connection, once the server or the network closed it."""
        self.name = name
        self.language = language
        self.rng = random.Random(seed)
        self.ws: ClientConnection | None = None
        self.token: str | None = None
        self.id: str | None = None
        self.log: list[Message] = []
        self._queue: asyncio.Queue[Message | None] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
        self._ids = itertools.count(1)
        self.view = ClientState()
        """What this client knows: every message consumed (by :meth:`expect`) folded in."""
        self.solver: DuelSolver | None = None
        """The solver of our running duel, fed its rows from :attr:`view`; None between duels."""
        self._solving: tuple[str, int] | None = None  # (duel id, rows fed) of the solver
        self._pending_guess: str | None = None
        self._tiles: tuple[str, ...] = ()
        self._pinger: asyncio.Task[None] | None = None
        self.silent = False
        """Stop sending ``ping`` (the socket stays open): a silently dropped client."""

    # connection -----------------------------------------------------------------------------

    async def connect(self, timeout: float = 20) -> Message:
        """Open a socket and send ``session`` (with the token once we have one); the reply."""
        self.ws = await connect(self.url, open_timeout=15, max_size=2**20)
        self.close_code = None
        self._queue = asyncio.Queue()
        self._reader = asyncio.create_task(self._read(self.ws))
        self._pinger = asyncio.create_task(self._ping(self.ws))
        request_id = await self.send("session", token=self.token)
        session = await self.expect(
            lambda m: m["type"] == "session" and m["request_id"] == request_id, timeout
        )
        self.token = session.get("token") or self.token
        self.id = session["player"]["id"]
        return session

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                for message in unpack(raw):
                    self.log.append(message)
                    self._queue.put_nowait(message)
        except ConnectionClosed:
            pass
        finally:
            self.close_code = ws.close_code if ws.close_code is not None else 1006
            self._queue.put_nowait(None)

    async def _ping(self, ws: ClientConnection) -> None:
        """A conformant client's keep-alive: ``ping`` well within the interval (ruling 14)."""
        with contextlib.suppress(ConnectionClosed):
            while True:
                await asyncio.sleep(self.ping_every)
                if not self.silent:
                    await ws.send(json.dumps({"action": "ping"}))

    async def drop(self) -> None:
        """Close the socket (as a lost connection looks to the server: a ``$disconnect``)."""
        if self._pinger is not None:
            self._pinger.cancel()
            self._pinger = None
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await self._reader
        self.ws, self._reader = None, None

    async def send(self, action: str, **fields: Any) -> str:
        assert self.ws is not None, f"{self.name} is not connected"
        request_id = f"{self.name}-{action}-{next(self._ids)}"
        body = {"action": action, "request_id": request_id}
        body |= {k: v for k, v in fields.items() if v is not None}
        await self.ws.send(json.dumps(body, ensure_ascii=False))
        return request_id

    async def expect(self, predicate: Callable[[Message], bool], timeout: float = 30) -> Message:
        """The next message (after those already consumed) that satisfies ``predicate``."""

        async def wait() -> Message:
            while True:
                message = await self._queue.get()
                if message is None:
                    raise ConnectionError(f"{self.name}: the connection closed while waiting")
                self.observe(message)
                if predicate(message):
                    return message

        try:
            return await asyncio.wait_for(wait(), timeout)
        except TimeoutError:
            recent = [m.get("type") for m in self.log[-15:]]
            raise AssertionError(
                f"{self.name}: no expected message in {timeout}s; got {recent}"
            ) from None

    def seen(self, kind: str) -> list[Message]:
        return [m for m in self.log if m["type"] == kind]

    # playing -------------------------------------------------------------------------------

    async def join(self) -> Message:
        request_id = await self.send("join", language=self.language)
        reply = await self.expect(lambda m: m["request_id"] == request_id)
        assert reply["type"] == "lobby", f"{self.name}: join refused: {reply}"
        return reply

    @property
    def duel(self) -> Board | None:
        """Our running duel's board in :attr:`view` (started, not over), else None."""
        board = self.view.own_board
        if board is None or board.over or board.length is None:
            return None
        return board

    @property
    def duel_id(self) -> str | None:
        """The id of our running duel, else None."""
        board = self.duel
        return board.duel_id if board is not None else None

    @property
    def rows(self) -> list[Message]:
        """Our running duel's rows as the protocol writes them (empty between duels)."""
        board = self.duel
        return [row.as_message() for row in board.rows] if board is not None else []

    async def guess(self) -> None:
        """Play the solver's best word in the current duel."""
        assert self.solver is not None
        assert self.duel_id is not None
        self._tiles = self.solver.choose(1.0, self.rng)
        word = "".join(self._tiles)
        self._pending_guess = await self.send("guess", duel_id=self.duel_id, word=word)

    async def play(self, until: Callable[[Message], bool], timeout: float = 120) -> Message:
        """Play every duel of ours (best solver word, at once) until ``until(message)``.

        ``until`` sees each message after the duel state took it in but before we react, so a
        scenario can stop exactly when, say, it is our turn, and do something else instead.
        """

        async def loop() -> Message:
            while True:
                m = await self.expect(lambda _: True, timeout)
                if until(m):
                    return m
                await self.react(m)

        return await asyncio.wait_for(loop(), timeout)

    def observe(self, m: Message) -> None:
        """Fold ``m`` into :attr:`view` and feed our running duel's new rows to the solver."""
        self.view.apply(m)
        board = self.duel
        if board is None:
            self.solver, self._solving = None, None
            return
        if self._solving is None or self._solving[0] != board.duel_id:
            self.solver = DuelSolver(self.language, board.length or 0)
            self._solving = (board.duel_id, 0)
        assert self.solver is not None
        fed = self._solving[1]
        for row in board.rows[fed:]:
            if not row.skipped and row.tiles is not None and row.marks is not None:
                self.solver.add_row(row.tiles, row.marks)
        self._solving = (board.duel_id, max(fed, len(board.rows)))

    async def react(self, m: Message) -> None:
        """Guess whenever it is our turn; pick another word if the server refused one."""
        kind = m["type"]
        if kind in ("duel_start", "turn") and m["duel_id"] == self.duel_id:
            if m["next_player"] == self.id:
                await self.guess()
        elif (
            kind == "error"
            and m["request_id"] == self._pending_guess
            and m["code"] in INVALID_GUESS_CODES
            and self.solver is not None
        ):
            self.solver.rejected.add(self._tiles)
            await self.guess()

    async def resume_from(self, session: Message) -> None:
        """Pick the game up again from a resumed session (:meth:`connect` folded its snapshot):
        guess at once when it is our turn in our duel."""
        assert self.view.player_id == session["player"]["id"], "the session was not folded"
        board = self.duel
        if board is not None and board.next_player == self.id:
            await self.guess()


# -- shared checks ---------------------------------------------------------------------------


def is_standard_competition_ranking(places: list[int]) -> bool:
    """1224 ranking: each place is 1 + the number of players placed strictly better."""
    return bool(places) and all(p == 1 + sum(q < p for q in places) for p in places)


def check_final_standings(ends: list[Message], player_ids: set[str]) -> list[Message]:
    """Every client's ``tournament_end`` agrees, covers exactly ``player_ids``, ranks validly.

    Returns the agreed ``places`` list.
    """
    assert ends, "nobody saw the tournament end"
    assert len({e["tournament_id"] for e in ends}) == 1, "clients saw different tournaments"
    for end in ends[1:]:
        assert end["places"] == ends[0]["places"], "clients disagree on the final standings"
        assert end["winners"] == ends[0]["winners"], "clients disagree on the winners"
    places: list[Message] = ends[0]["places"]
    assert {s["player_id"] for s in places} == player_ids
    assert len(places) == len(player_ids), "a player appears twice in the standings"
    numbers = [s["place"] for s in places]
    assert numbers == sorted(numbers), f"standings not best place first: {numbers}"
    assert is_standard_competition_ranking(numbers), f"not a valid ranking: {numbers}"
    assert sorted(ends[0]["winners"]) == sorted(s["player_id"] for s in places if s["place"] == 1)
    return places


_DESERIALIZE = TypeDeserializer().deserialize


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    out = {k: _DESERIALIZE(v) for k, v in item.items()}
    return {k: int(v) if isinstance(v, Decimal) and v == int(v) else v for k, v in out.items()}


def scan_items(emu: Emulator) -> Iterator[dict[str, Any]]:
    """Every item of the table as plain values (a Scan: fine in tests, never in the product)."""
    client = emu.dynamodb_client()
    kwargs: dict[str, Any] = {"TableName": emu.table_name}
    while True:
        page = client.scan(**kwargs)
        for item in page["Items"]:
            yield _plain(item)
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def rating_records(emu: Emulator, tournament_id: str) -> tuple[dict[str, Any], dict[str, int]]:
    """(rating items of the tournament by player id, PROFILE rating by player id)."""
    ratings: dict[str, Any] = {}
    profiles: dict[str, int] = {}
    for item in scan_items(emu):
        if not item["pk"].startswith("PLAYER#"):
            continue
        player_id = item["pk"].removeprefix("PLAYER#")
        if item["sk"] == f"RATING#{tournament_id}":
            ratings[player_id] = item
        elif item["sk"] == "PROFILE":
            profiles[player_id] = int(item["rating"])
    return ratings, profiles


def check_rating_items(
    emu: Emulator, tournament_id: str, messages: dict[str, Message], places: list[Message]
) -> None:
    """The stored rating items match each player's ``rating`` message and the standings."""
    ratings, profiles = rating_records(emu, tournament_id)
    by_player = {s["player_id"]: s for s in places}
    assert set(ratings) == set(by_player), "a rating item per player of the tournament"
    for player_id, item in ratings.items():
        standing = by_player[player_id]
        assert item["place"] == standing["place"], (player_id, item, standing)
        assert item["change"] == standing["rating_change"], (player_id, item, standing)
        assert item["rating_after"] == item["rating_before"] + item["change"]
        assert profiles[player_id] == item["rating_after"], "PROFILE rating is the new rating"
        message = messages.get(player_id)
        if message is not None:
            assert message["tournament_id"] == tournament_id
            assert (message["place"], message["change"], message["rating"]) == (
                item["place"],
                item["change"],
                item["rating_after"],
            ), (player_id, message, item)
