"""Test support for the tournament engine tests: fast peeks into moto and a tournament driver.

Peeks read moto's in-process DynamoDB directly (no botocore round trip, no moto response
serialisation), so the tests' own bookkeeping costs nothing next to the handlers' calls —
and never counts as one of them. Everything that changes state still goes through the real
handlers (``backend.invoke`` / ``ScriptedPlayer.send``) or the services.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shared.adapters.dynamo import records, schema, tournament_document
from shared.adapters.dynamo.store import from_av
from shared.domain.duel import Duel
from shared.domain.rating import rating_change
from shared.services.model import Player, TournamentRecord

TABLE = "wordle-tournament"


# ------------------------------------------------------------------------------ peeks
def _table() -> Any:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].get_table(TABLE)


def peek_item(key: dict[str, str]) -> dict[str, Any] | None:
    """The stored item under ``key`` (``pk``/``sk``) as plain Python values, or None."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    item = _table().get_item(DynamoType({"S": key["pk"]}), DynamoType({"S": key["sk"]}))
    if item is None:
        return None
    # moto's JSON form carries a Binary as base64 text (as the wire does, and botocore decodes
    # it) or, for some writes, as the raw bytes
    attributes = {
        name: {"B": base64.b64decode(av["B"]) if isinstance(av["B"], str) else av["B"]}
        if "B" in av
        else av
        for name, av in item.to_json()["Attributes"].items()
    }
    return from_av(attributes)


def peek(tournament_id: str) -> TournamentRecord:
    item = peek_item(schema.tournament_key(tournament_id))
    assert item is not None, f"no tournament {tournament_id}"
    return tournament_document.tournament_from_item(item)


def peek_raw(tournament_id: str) -> dict[str, Any]:
    item = peek_item(schema.tournament_key(tournament_id))
    assert item is not None
    return item


def peek_player(player_id: str) -> Player:
    item = peek_item(schema.player_key(player_id))
    assert item is not None, f"no player {player_id}"
    return records.player_from_item(item)


def peek_rating(player_id: str, tournament_id: str) -> dict[str, Any] | None:
    return peek_item(schema.rating_key(player_id, tournament_id))


def rating_items(player_id: str) -> list[dict[str, Any]]:
    """Every ``RATING#`` item of a player (a test-only walk over moto's partition)."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    part = _table().items.get(DynamoType({"S": schema.player_key(player_id)["pk"]}), {})
    out = []
    for item in part.values():
        plain = from_av(item.to_json()["Attributes"])
        if str(plain["sk"]).startswith("RATING#"):
            out.append(plain)
    return out


# ------------------------------------------------------------------------------ words
_WORDS: dict[tuple[str, int], list[str]] = {}


def valid_words(backend: Any, language: str, length: int) -> list[str]:
    key = (language, length)
    if key not in _WORDS:
        _WORDS[key] = sorted(backend.deps.lexicon.allowed(language, length))
    return _WORDS[key]


def wrong_word(backend: Any, language: str, duel: Duel, salt: int = 0) -> str:
    """A valid guess of the duel's length that is not its secret (and shares few letters)."""
    words = valid_words(backend, language, duel.length)
    for i in range(len(words)):
        w = words[(salt * 7919 + i * 31) % len(words)]
        if w != duel.word:
            return w
    raise AssertionError("no wrong word")


# ------------------------------------------------------------------------------ driver
Action = str
"""What the mover does: "solve", "wrong" (a valid wrong guess) or "skip" (let the clock run)."""
Policy = Callable[["Game", Duel, str], Action]


@dataclass
class Game:
    """A started tournament and its scripted players, driven turn by turn."""

    backend: Any
    players: list[Any]
    tid: str
    by_id: dict[str, Any] = field(default_factory=dict)
    turns: int = 0

    @classmethod
    def start(cls, backend: Any, language: str = "en") -> Game:
        players = backend.fill_lobby(language)
        tid = players[0].last("round")["tournament_id"]
        return cls(backend, players, tid, {p.id: p for p in players})

    @property
    def rec(self) -> TournamentRecord:
        return peek(self.tid)

    @property
    def t(self) -> Any:
        return self.rec.tournament

    def end_intro(self) -> None:
        t = self.t
        if t.phase.value == "intro":  # the loop's Wait ends on the whole second
            self.backend.clock.advance_to(-(-t.intro_deadline_ms // 1000) * 1000)

    def open_duels(self) -> list[Duel]:
        return [d for d in self.t.duels if not d.over]

    def act(self, duel: Duel, action: Action) -> None:
        mover = duel.next_player
        assert mover is not None
        p = self.by_id[mover]
        if action == "skip" or self.backend.clock.now >= duel.turn_deadline_ms:
            # too late to guess (``turn_over``): the clock applies the skip a grace later
            self.backend.pass_deadline(duel.turn_deadline_ms)
        elif action == "solve":
            p.send("guess", duel_id=duel.duel_id, word=duel.word)
        else:
            word = wrong_word(self.backend, self.t.language, duel, self.turns)
            p.send("guess", duel_id=duel.duel_id, word=word)
        self.turns += 1

    def play_round(self, policy: Policy) -> None:
        """From the intro to the end of the current round (or the tournament)."""
        self.end_intro()
        round_no = self.t.round_no
        while True:
            t = self.t
            if t.over or t.round_no != round_no:
                return
            if t.phase.value == "intro":
                return
            duels = [d for d in t.duels if not d.over]
            duel = min(duels, key=lambda d: (d.turn_deadline_ms, d.duel_id))
            self.act(duel, policy(self, duel, duel.next_player or ""))

    def play(self, policy: Policy, max_rounds: int = 40) -> None:
        for _ in range(max_rounds):
            if self.t.over:
                return
            self.play_round(policy)
        raise AssertionError("the tournament did not end")


def solve_on(row: int) -> Policy:
    """Guess wrong until the board holds ``row - 1`` rows, then solve."""

    def policy(game: Game, duel: Duel, mover: str) -> Action:
        return "solve" if len(duel.rows) + 1 >= row else "wrong"

    return policy


def always(action: Action) -> Policy:
    return lambda game, duel, mover: action


# ------------------------------------------------------------------------------ checks
def messages(player: Any) -> list[dict[str, Any]]:
    """Every message the player received on any of their connections."""
    cids = [*getattr(player, "old_connections", []), player.connection_id]
    return [m for cid in cids for m in player.backend.notifier.sent[cid]]


def resume(player: Any) -> None:
    """``ScriptedPlayer.resume`` that remembers the old connection (for ``messages``)."""
    old = getattr(player, "old_connections", [])
    player.old_connections = [*old, player.connection_id]
    player.resume()


def expected_changes(t: Any) -> dict[str, int]:
    """Ruling 1 recomputed from the final places and the start snapshot."""
    ratings = [p.rating for p in t.players]
    places = [p.place for p in t.players]
    return {p.player_id: rating_change(i, ratings, places) for i, p in enumerate(t.players)}


def check_final(game: Game, *, initial: dict[str, int] | None = None) -> dict[str, Any]:
    """The invariants every finished tournament must satisfy; returns the final event.

    - every place is fixed, places are standard competition ranking of out rounds (ruling 2),
      leavers below the others of their round (ruling 3);
    - each player's rating change matches ruling 1 on the snapshot; exactly one ``RATING#``
      item per player for this tournament; the profile's rating = snapshot + change;
    - every connected player received the same ``tournament_end``; each player's ``rating``
      messages: exactly one, matching the stored item; ``standings`` places agree.
    """
    rec = game.rec
    t = rec.tournament
    assert t.over
    assert all(p.place is not None for p in t.players)
    # ruling 2: place = 1 + players that outlasted you (alive longer), leavers below
    for p in t.players:
        later = [q for q in t.players if _outlasted(q, p)]
        assert p.place == 1 + len(later), (p, later)
    changes = expected_changes(t)
    end = None
    for p in t.players:
        assert p.rating_change == changes[p.player_id], p
        item = peek_rating(p.player_id, game.tid)
        assert item is not None, p.player_id
        assert item["place"] == p.place
        assert item["change"] == p.rating_change
        assert item["rating_before"] == p.rating
        assert item["rating_after"] == p.rating + p.rating_change
        assert [i["sk"] for i in rating_items(p.player_id)] == [f"RATING#{game.tid}"]
        profile = peek_player(p.player_id)
        before = initial[p.player_id] if initial else p.rating
        assert profile.rating == before + p.rating_change
        assert profile.status.value == "idle"
        scripted = game.by_id[p.player_id]
        got = [m for m in messages(scripted) if m["type"] == "rating"]
        reachable = scripted.connection_id not in game.backend.notifier.gone
        assert len(got) == (1 if reachable else 0), (p.player_id, got)
        for m in got:
            assert m["tournament_id"] == game.tid
            assert m["place"] == p.place
            assert m["change"] == p.rating_change
            assert m["rating"] == p.rating + p.rating_change
    ends = []
    for p in t.players:
        mine = [m for m in messages(game.by_id[p.player_id]) if m["type"] == "tournament_end"]
        assert len(mine) <= 1
        if rec.connections.get(p.player_id):
            assert len(mine) == 1, p.player_id
        ends += mine
    assert ends, "nobody received tournament_end"
    end = {**ends[0], "seq": None}
    assert all({**e, "seq": None} == end for e in ends)  # each in its player's own numbering
    final = {s["player_id"]: s for s in end["places"]}
    for p in t.players:
        assert final[p.player_id]["place"] == p.place
        assert final[p.player_id]["rating_change"] == p.rating_change
        assert final[p.player_id]["lives"] == p.lives
    assert sorted(end["winners"]) == sorted(p.player_id for p in t.players if p.place == 1)
    assert [s["place"] for s in end["places"]] == sorted(s["place"] for s in end["places"])
    return end


def _outlasted(q: Any, p: Any) -> bool:
    """q finished strictly above p (ruling 2, with ruling 3 for leavers)."""
    if q.player_id == p.player_id:
        return False
    if q.out_round is None:  # a winner (or one of several) outlasts anyone who went out
        return p.out_round is not None
    if p.out_round is None:
        return False
    if q.out_round != p.out_round:
        return q.out_round > p.out_round
    return p.left and not q.left


def check_messages(game: Game) -> None:
    """Every message each connection received is well-formed and tells one consistent story:
    the protocol model accepts it; no ``error`` (unless the test expects one); ``turn`` rows
    arrive in order per duel without gaps; ``duel_end`` once per duel per recipient."""
    from shared.protocol.outbound import parse_outbound

    for p in game.players:
        seen: dict[str, int] = {}
        ended: set[str] = set()
        for m in messages(p):
            parse_outbound(json.dumps(m))
            if m["type"] == "turn":
                last = seen.get(m["duel_id"], 0)
                assert m["turn"] > last, (p.name, m)
                seen[m["duel_id"]] = m["turn"]
                assert m["duel_id"] not in ended
            elif m["type"] == "duel_end":
                assert m["duel_id"] not in ended, (p.name, m)
                ended.add(m["duel_id"])


# ------------------------------------------------------------------------------ interleaving
class Interleaver:
    """Deterministic races at the service layer.

    ``run(first, second)``: ``first`` runs until its first tournament commit — it has loaded
    the item and decided — then ``second`` runs to completion, then ``first``'s commit goes on
    (and, on a version conflict, ``first`` re-reads and re-decides like in production).
    The store proxy is installed in the shared ``Deps`` the real handlers use.
    """

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.inner = backend.deps.store
        self.pending: Callable[[], Any] | None = None
        self.commits: list[bool] = []  # True per committed tournament write, False on conflict

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def commit(self, writes: Any) -> None:
        from shared.services.errors import ConflictError

        is_tournament = any(isinstance(w, TournamentRecord) for w in writes)
        if self.pending is not None and is_tournament:
            second, self.pending = self.pending, None
            second()
        try:
            self.inner.commit(writes)
        except ConflictError:
            if is_tournament:
                self.commits.append(False)
            raise
        if is_tournament:
            self.commits.append(True)

    def run(self, first: Callable[[], Any], second: Callable[[], Any]) -> None:
        deps = self.backend.deps
        self.backend.deps = dataclasses.replace(deps, store=self)
        self.pending = second
        try:
            first()
        finally:
            self.backend.deps = deps
        assert self.pending is None, "the first use case never reached its commit"


class AwsCalls:
    """Counts the DynamoDB operations the backend's client makes (botocore event hook)."""

    def __init__(self, backend: Any) -> None:
        self.calls: list[str] = []
        backend.client.meta.events.register("before-call.dynamodb", self._record)

    def _record(self, model: Any, **_: Any) -> None:
        self.calls.append(model.name)

    def __enter__(self) -> list[str]:
        self.calls.clear()
        return self.calls

    def __exit__(self, *exc: object) -> None:
        return None
