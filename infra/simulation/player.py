"""Simulation: one scripted player (``SimPlayer``): ``$connect``, ``session``, ``join``, a
``ping`` every ``PING_S`` once seated, and in a played tournament a guess from the solver
(strength ``STRENGTH``) after a think time in ``THINK_S``, or a timeout (``TIMEOUT_RATE``). What
it knows is the clients' one fold of the events, ``infra.players.state.ClientState``."""

from __future__ import annotations

import functools
import itertools
import json
import random
from typing import Any

from infra.players.state import ClientState, is_gateway_frame, retry_delay_ms, retry_in_time
from infra.simulation.aws import NET_S
from infra.simulation.world import World

LANGUAGE = "en"
THINK_S = (3.0, 15.0)
"""Think time before a guess, seconds (uniform)."""
TIMEOUT_RATE = 0.05
"""Share of turns let time out."""
STRENGTH = 0.6
"""The solver's strength (``infra.players.solver.DuelSolver.choose``)."""
PING_S = (15.0, 20.0)
"""Interval between pings once seated, seconds (uniform; ruling 14)."""
DRAIN_S = 30.0
"""After the arrival window, joins are followed this long (lobbies still filling)."""


class SimPlayer:
    """One scripted player (module docstring); ``run`` is its simulation run."""

    def __init__(self, run: World, n: int, rating: int) -> None:
        self.run = run
        self.n = n
        self.cid = f"c{n:07d}="
        self.source_ip = f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"
        """Each player connects from its own address (ruling 17 counts new players per source)."""
        self.rating = rating
        self.view = ClientState()
        """What the player knows, folded from every event (``infra.players.state``)."""
        self.state = "new"
        self.joined_at: float | None = None
        self.seated_at: float | None = None
        self.try_again = 0
        self.errors: list[str] = []
        self.duel: str | None = None
        """The duel the solver plays (one of a played tournament)."""
        self.solver: Any = None
        self.fed = 0
        """Rows of ``duel``'s board given to the solver so far."""
        self.turn_seq = 0
        self.rng = random.Random(run.rng.random())
        self.ids = itertools.count(1)
        self.retries = 0
        """Requests sent again after API Gateway answered with its own frame (ruling 18)."""
        self._attempts: dict[str, int] = {}

    @property
    def player_id(self) -> str | None:
        return self.view.player_id

    # ------------------------------------------------------------ sending
    def send(self, action: str, **fields: Any) -> None:
        self._send({"action": action, "request_id": f"{action[:2]}-{next(self.ids)}", **fields})

    def _send(self, message: dict[str, Any]) -> None:
        self.view.sent(message)
        self.run.send(self, str(message["action"]), json.dumps(message))

    def arrive(self) -> None:
        # the socket opens when ``$connect`` has answered 200: only then can ``session`` go
        self.run.connect(self, opened=lambda: self.send("session"))

    def join(self) -> None:
        if self.joined_at is None:
            self.joined_at = self.run.sim.now
        self.state = "joining"
        self.send("join", language=LANGUAGE)

    def _ping_loop(self) -> None:
        run = self.run
        if self.state == "queued" and run.sim.now > run.opts.window_s + DRAIN_S:
            return  # the joins phase is over: a player still waiting goes quiet
        if self.state in ("queued", "playing"):
            self.send("ping")
            self.run.sim.call_at(self.run.sim.now + self.rng.uniform(*PING_S), self._ping_loop)

    # ------------------------------------------------------------ receiving
    def receive(self, m: dict[str, Any]) -> None:
        if is_gateway_frame(m):
            self.view.apply(m)
            self._retry_unanswered()
            return
        self.view.apply(m)  # what the player knows first, then what it does about it
        kind = m.get("type")
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(m)

    def _retry_unanswered(self) -> None:
        """API Gateway answered one of our requests with its own frame (throttled, or failed)
        without saying which: each unanswered one is sent again, unchanged (same
        ``request_id``: applied once, ruling 18), after an exponential backoff with full
        jitter (``infra.players.state.retry_delay_ms``); a guess only inside its turn."""
        now_ms = self.run.sim.now_ms()
        for rid, message in list(self.view.unanswered.items()):
            attempt = self._attempts.get(rid, 0)
            delay = retry_delay_ms(attempt, self.rng)
            turn = self.view.my_turn
            deadline = turn[1] if message.get("action") == "guess" and turn else None
            if message.get("action") == "guess" and (
                turn is None or not retry_in_time(now_ms, delay, deadline)
            ):
                self.view.unanswered.pop(rid, None)  # the turn is over: the skip stands
                continue
            self._attempts[rid] = attempt + 1
            self.run.sim.call_at(
                self.run.sim.now + delay / 1000, functools.partial(self._resend, rid)
            )

    def _resend(self, rid: str) -> None:
        message = self.view.unanswered.get(rid)
        if message is not None:
            self.retries += 1
            self._send(message)

    def _on_session(self, m: dict[str, Any]) -> None:
        player_id = self.player_id
        if player_id is None or player_id in self.run.by_player:
            return
        self.run.by_player[player_id] = self
        if self.rating != 1000:
            self.run.set_rating(player_id, self.rating)
        self.run.sim.call_at(self.run.sim.now + self.run.lat(NET_S), self.join)

    def _on_lobby(self, m: dict[str, Any]) -> None:
        status = m["status"]
        if status == "waiting" and self.state == "joining":
            self.state = "queued"
            self.run.sim.call_at(self.run.sim.now + self.rng.uniform(*PING_S), self._ping_loop)
        elif status == "started" and self.seated_at is None:
            self.seated_at = self.run.sim.now
            self.run.seated(self, m)
            self.state = "playing" if self.run.played(self.view.tournament_id) else "done"

    def _on_error(self, m: dict[str, Any]) -> None:
        code = m.get("code")
        rid = str(m.get("request_id") or "")
        if code == "try_again" and rid.startswith("jo-"):
            self.try_again += 1
            self.run.try_again += 1
            self.run.sim.call_at(self.run.sim.now + self.rng.uniform(0.05, 0.3), self.join)
            return
        if code in ("not_in_word_list", "wrong_length", "invalid_letters"):
            return
        self.errors.append(str(code))
        self.run.error_codes[str(code)] += 1

    def _on_duel_start(self, m: dict[str, Any]) -> None:
        own = self.view.own_board
        if self.state != "playing" or own is None or own.duel_id != m["duel_id"]:
            return
        from infra.players.solver import DuelSolver

        self.duel, self.fed = own.duel_id, 0
        self.solver = DuelSolver(LANGUAGE, own.length or 0)
        self._plan_if_my_turn()

    def _on_turn(self, m: dict[str, Any]) -> None:
        if self.state != "playing" or m["duel_id"] != self.duel or self.solver is None:
            return
        own = self.view.boards[m["duel_id"]]
        for row in own.rows[self.fed :]:
            if not row.skipped and row.tiles and row.marks:
                self.solver.add_row(row.tiles, row.marks)
        self.fed = len(own.rows)
        self._plan_if_my_turn()

    def _plan_if_my_turn(self) -> None:
        turn = self.view.my_turn
        if turn is not None and turn[0] == self.duel:
            self._plan(self.duel)

    def _on_duel_end(self, m: dict[str, Any]) -> None:
        if m["duel_id"] == self.duel:
            self.duel, self.solver = None, None
            self.turn_seq += 1

    def _on_tournament_end(self, m: dict[str, Any]) -> None:
        if self.state == "playing" and self.view.end is not None:
            self.state = "done"
            self.run.ended.add(self.view.end.tournament_id)

    def _plan(self, duel_id: str) -> None:
        self.turn_seq += 1
        seq = self.turn_seq
        if self.rng.random() < TIMEOUT_RATE:
            return
        think = self.rng.uniform(*THINK_S)
        self.run.sim.call_at(self.run.sim.now + think, lambda: self._guess(duel_id, seq))

    def _guess(self, duel_id: str, seq: int) -> None:
        if self.duel != duel_id or self.turn_seq != seq or self.solver is None:
            return  # the turn moved on (a skip) or the duel ended
        tiles = self.solver.choose(STRENGTH, self.rng)
        self.send("guess", duel_id=duel_id, word="".join(tiles))
