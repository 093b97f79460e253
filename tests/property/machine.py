"""The randomized-concurrency model: 8 players driven through the service
layer in random orders, with the invariants checked after every step.

Rules: join, guess (the secret, a wrong word, an invalid word, someone else's duel), leave,
disconnect (also a socket found gone on push), resume (also with the old socket still open),
party create / join / leave / start, time passing (every timer due fires, in order), a timer
fired again (stale or duplicate), the watchdog, the last action delivered twice, and a *race*:
one action stopped after its reads and decision, just before its save, while another runs
to completion, then released (``tests/functional/interleave.py``: the loser's conditional save
fails, it re-reads and re-decides).

Invariants (after every step):

- lives are in 0..3, and a duel's rows alternate between its two players, at most 12 (one
  outcome per turn);
- no connection ever receives one duel's turn row twice, a round's ``round`` twice, a
  tournament's ``tournament_end`` or ``rating`` twice (a round is closed once);
- every player's rating is 1000 plus the sum of their rating history, one history item per
  (player, tournament), and a finished tournament rated all 8 (ratings applied exactly once);
- no player is in two places: seated in at most one waiting lobby, alive in at most one running
  tournament, and their status says where;
- no secret in any pushed message before its duel is over (other duels' guess rows masked: a
  player may type a word that is another duel's secret);
- nothing but a refusal with a stable code ever escapes a use case.

The same machine runs on the ``InMemoryStore`` fake (fast, for the bulk of the steps; it is
contract-tested against moto in ``tests/contract/test_store_contract.py``) and on moto.
"""

from __future__ import annotations

import base64
import itertools
import random
import threading
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from functions import apply_deadlines
from infra.emulator.testing import ManualClock, RecordingNotifier
from shared.domain.errors import DomainError
from shared.domain.matchmaking import LobbyStatus
from shared.domain.rating import INITIAL_RATING
from shared.protocol.errors import ErrorCode
from shared.services import deadlines as clock_service
from shared.services import duels, matchmaking, parties, sessions
from shared.services.deps import Deps, Timing
from shared.services.errors import TryAgainError
from shared.services.model import LobbyRecord, PlayerStatus
from shared.services.outbox import Request
from shared.services.presence import player_for_connection
from tests.functional.interleave import PausingStore

N = 8
_LEXICON: Any = None


def lexicon() -> Any:
    global _LEXICON
    if _LEXICON is None:
        from shared.adapters.lexicon import WordListLexicon

        _LEXICON = WordListLexicon()
    return _LEXICON


_WORDS: dict[int, list[str]] = {}


def words(length: int) -> list[str]:
    if length not in _WORDS:
        _WORDS[length] = sorted(lexicon().allowed("en", length))
    return _WORDS[length]


def _mask_rows(value: Any, keep_duel: str, current: str | None = None) -> Any:
    """Drop the guess rows of every duel but ``keep_duel`` (see the module doc)."""
    if isinstance(value, dict):
        duel = value.get("duel_id", current)
        return {
            k: _mask_rows(v, keep_duel, duel)
            for k, v in value.items()
            if not (k in ("row", "rows") and duel != keep_duel)
        }
    if isinstance(value, list):
        return [_mask_rows(v, keep_duel, current) for v in value]
    return value


def _values(value: Any) -> list[str]:
    """Every string value in a message (not the keys: a secret may be the word "rating"),
    with string lists (tiles) also joined."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _values(v)]
    if isinstance(value, list):
        flat = [s for v in value for s in _values(v)]
        if value and all(isinstance(v, str) for v in value):
            flat.append("".join(value))
        return flat
    return [value] if isinstance(value, str) else []


class _Race:
    """Run ``fn`` in a thread until it reaches its first commit (or ends without one)."""

    def __init__(self, store: PausingStore, label: str, fn: Callable[[], Any]) -> None:
        self.store, self.fn, self.label = store, fn, label
        self.reached, self.release, self.done = (threading.Event() for _ in range(3))
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = threading.get_ident()
        self.store._labels[me] = self.label
        self.store._gates[me] = (self.reached, self.release)
        try:
            self.fn()
        except BaseException as err:
            self.error = err
        finally:
            self.store._gates.pop(me, None)
            self.done.set()
            self.reached.set()

    def start(self) -> _Race:
        self.thread.start()
        assert self.reached.wait(30)
        return self

    def finish(self) -> None:
        self.release.set()
        assert self.done.wait(30)
        self.thread.join(30)


class Hardening(RuleBasedStateMachine):
    """See the module docstring. Subclasses choose the store (``make_store``)."""

    def make_store(self) -> Any:
        raise NotImplementedError

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random(0)
        self.clock = ManualClock()
        self.notifier = RecordingNotifier()
        self.inner = self.make_store()
        self.store = PausingStore(self.inner)
        ids = itertools.count(1)
        self.deps = Deps(
            store=self.store,
            notifier=self.notifier,
            clock=self.clock,
            lexicon=lexicon(),
            timing=Timing(30_000, 6_000, 60_000),
            rng=lambda: random.Random(self.rng.random()),
            ids=lambda: f"i{next(ids):05d}",
            secrets=lambda: base64.urlsafe_b64encode(self.rng.randbytes(32)).decode()[:43],
            sleep=lambda s: None,
        )
        # the clock function's logic, without the Lambda wrapper: state -> next state
        self.clock.fire = lambda state: apply_deadlines.handle(state, self.deps)
        self.conn: list[str] = []
        self.ids: list[str] = []
        self.tokens: list[str] = []
        self.sockets = itertools.count(1)
        self.checked = 0
        self.last: Callable[[], None] | None = None
        self.refusals: Counter[str] = Counter()
        for i in range(N):
            cid = self._socket()
            sessions.connect(self.deps, cid)
            sessions.session(self.deps, Request(cid), None)
            session = self.notifier.sent[cid][-1]
            self.conn.append(cid)
            self.ids.append(session["player"]["id"])
            self.tokens.append(session["token"])
            assert session["type"] == "session", i

    def _socket(self) -> str:
        return f"ws{next(self.sockets):05d}="

    # -------------------------------------------------------------- running actions
    def _call(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except DomainError as err:
            code = err.code
            if isinstance(err, TryAgainError):
                raise AssertionError("try_again without contention") from err
            self.refusals[code] += 1
            STATS["refused:" + code] += 1
            assert code in ErrorCode.__members__.values(), code
            assert code != "internal_error"

    def _do(self, fn: Callable[[], None]) -> None:
        self.last = fn
        self._call(fn)

    def _for_player(self, i: int, fn: Callable[[Request, str], None]) -> Callable[[], None]:
        cid = self.conn[i]

        def action() -> None:
            player = player_for_connection(self.deps, cid)  # the handlers' check
            fn(Request(cid), player.player_id)

        return action

    def _duel_of(self, i: int) -> Any:
        p = self.inner.get_player(self.ids[i])
        if p is None or p.tournament_id is None:
            return None, None
        rec = self.inner.get_tournament(p.tournament_id)
        if rec is None:
            return None, None
        return rec.tournament, rec.tournament.duel_of(self.ids[i])

    def _guess(self, i: int, kind: int) -> Callable[[], None] | None:
        t, duel = self._duel_of(i)
        if duel is None:
            return None
        cid = self.conn[i]
        duel_id = duel.duel_id
        if kind == 0:
            word = duel.word
        elif kind == 1:
            pool = words(duel.length)
            word = pool[self.rng.randrange(len(pool))]
        elif kind == 2:
            word = "q" * duel.length  # not in the word list
        elif kind == 3:
            word = "xy"  # wrong length
        else:  # someone else's duel
            others = [d for d in t.duels if d.duel_id != duel_id]
            if not others:
                return None
            duel_id = others[kind % len(others)].duel_id
            word = words(5)[0]

        def action() -> None:
            duels.guess(self.deps, Request(cid), duel_id, word)

        return action

    # -------------------------------------------------------------- rules
    @initialize(start=st.sampled_from([True, True, True, False]))
    def maybe_start(self, start: bool) -> None:
        """Most runs begin with a full lobby (8 random joins rarely line up by chance)."""
        if start:
            self.everyone_joins()

    @rule()
    def everyone_joins(self) -> None:
        for i in range(N):
            self._call(
                self._for_player(i, lambda req, pid: matchmaking.join(self.deps, req, pid, "en"))
            )

    @rule(i=st.integers(0, N - 1))
    def join(self, i: int) -> None:
        self._do(self._for_player(i, lambda req, pid: matchmaking.join(self.deps, req, pid, "en")))

    @rule(i=st.integers(0, N - 1), kind=st.integers(0, 5))
    def guess(self, i: int, kind: int) -> None:
        action = self._guess(i, kind)
        if action is not None:
            self._do(action)

    @rule(solve=st.booleans())
    def everyone_moves(self, solve: bool) -> None:
        """Every player whose turn it is guesses (the secret, or a wrong word)."""
        if self.clock.next_due() is not None:
            self.clock.now = max(self.clock.now, self._intro_end())
        for i in range(N):
            _, duel = self._duel_of(i)
            if duel is not None and not duel.over and duel.next_player == self.ids[i]:
                action = self._guess(i, 0 if solve else 1)
                if action is not None:
                    self._call(action)

    def _intro_end(self) -> int:
        ends = []
        for rec in self._tournaments():
            if rec is not None and not rec.tournament.over:
                ends.append(rec.tournament.intro_deadline_ms)
        return max(ends, default=0)

    @rule(i=st.integers(0, N - 1))
    def leave(self, i: int) -> None:
        self._do(self._for_player(i, lambda req, pid: matchmaking.leave(self.deps, req, pid)))

    @rule(i=st.integers(0, N - 1), silently=st.booleans())
    def disconnect(self, i: int, silently: bool) -> None:
        cid = self.conn[i]
        self.notifier.gone.add(cid)
        if not silently:  # else: no $disconnect; a later push finds the socket gone
            self._do(lambda: sessions.disconnect(self.deps, cid))

    @rule(i=st.integers(0, N - 1))
    def resume(self, i: int) -> None:
        cid = self._socket()
        self.conn[i] = cid
        token = self.tokens[i]

        def action() -> None:
            sessions.connect(self.deps, cid)
            sessions.session(self.deps, Request(cid), token)

        self._do(action)

    @rule(i=st.integers(0, N - 1))
    def party_create(self, i: int) -> None:
        self._do(self._for_player(i, lambda req, pid: parties.create(self.deps, req, pid)))

    @rule(i=st.integers(0, N - 1), j=st.integers(0, N - 1))
    def party_join(self, i: int, j: int) -> None:
        leader = self.inner.get_player(self.ids[j])
        rec = self.inner.get_party(leader.party_id) if leader and leader.party_id else None
        invite = rec.party.invite if rec else "A" * 43
        self._do(self._for_player(i, lambda req, pid: parties.join(self.deps, req, pid, invite)))

    @rule(i=st.integers(0, N - 1))
    def party_leave(self, i: int) -> None:
        self._do(self._for_player(i, lambda req, pid: parties.leave(self.deps, req, pid)))

    @rule(i=st.integers(0, N - 1))
    def party_start(self, i: int) -> None:
        self._do(self._for_player(i, lambda req, pid: parties.start(self.deps, req, pid, "en")))

    @rule(ms=st.sampled_from([0, 1_000, 6_000, 15_000, 30_000, 61_000]))
    def time_passes(self, ms: int) -> None:
        self._call(lambda: self.clock.advance(ms))

    @rule()
    def next_deadline(self) -> None:
        due = self.clock.next_due()
        if due is not None:
            self._call(lambda: self.clock.advance_to(due))

    @precondition(lambda self: bool(self.clock.fired))
    @rule(k=st.integers(0, 10_000))
    def timer_fires_again(self, k: int) -> None:
        timer = self.clock.fired[k % len(self.clock.fired)]
        self._call(lambda: clock_service.fire_round(self.deps, timer))

    @rule()
    def watchdog(self) -> None:
        self._call(lambda: clock_service.watchdog(self.deps, 5_000))

    @precondition(lambda self: self.last is not None)
    @rule()
    def delivered_twice(self) -> None:
        assert self.last is not None
        self._call(self.last)

    @rule(
        first=st.tuples(st.integers(0, 5), st.integers(0, N - 1), st.integers(0, 5)),
        second=st.tuples(st.integers(0, 5), st.integers(0, N - 1), st.integers(0, 5)),
    )
    def race(self, first: tuple[int, int, int], second: tuple[int, int, int]) -> None:
        """``first`` stops just before its save; ``second`` runs to the end; then ``first``
        saves (conflicting if they touched the same items) and, if so, re-reads and retries."""
        a, b = self._racer(*first), self._racer(*second)
        if a is None or b is None:
            return
        paused = _Race(self.store, "first", a).start()
        self._call(b)
        paused.finish()
        if paused.error is not None:
            err = paused.error
            if not isinstance(err, DomainError) or err.code == "internal_error":
                raise err
            if isinstance(err, TryAgainError):
                raise AssertionError("one conflict must not exhaust the retries") from err

    def _racer(self, what: int, i: int, arg: int) -> Callable[[], None] | None:
        if what == 0:
            return self._guess(i, arg % 2)  # the secret or a wrong word
        if what == 1:
            return self._for_player(i, lambda req, pid: matchmaking.leave(self.deps, req, pid))
        if what == 2:
            cid = self.conn[i]
            self.notifier.gone.add(cid)
            return lambda: sessions.disconnect(self.deps, cid)
        if what == 3:
            cid, token = self._socket(), self.tokens[i]
            self.conn[i] = cid

            def resume() -> None:
                sessions.connect(self.deps, cid)
                sessions.session(self.deps, Request(cid), token)

            return resume
        if what == 4:
            due = self.clock.next_due()
            pending = self.clock.pending()
            if due is None or not pending:
                return None
            self.clock.now = max(self.clock.now, due)
            return lambda: clock_service.fire_round(self.deps, pending[0])
        return self._for_player(i, lambda req, pid: matchmaking.join(self.deps, req, pid, "en"))

    # -------------------------------------------------------------- invariants
    def _tournaments(self) -> list[Any]:
        return [self.inner.get_tournament(tid) for tid in self._tournament_ids()]

    def _tournament_ids(self) -> list[str]:
        found = set()
        for pid in self.ids:
            p = self.inner.get_player(pid)
            if p is not None and p.tournament_id:
                found.add(p.tournament_id)
        found |= self.seen_tournaments
        return sorted(found)

    @property
    def seen_over(self) -> set[tuple[str, str]]:
        if not hasattr(self, "_over"):
            self._over: set[tuple[str, str]] = set()
        return self._over

    @property
    def seen_tournaments(self) -> set[str]:
        if not hasattr(self, "_seen"):
            self._seen: set[str] = set()
        return self._seen

    @invariant()
    def lives_and_rows(self) -> None:
        STATS["steps"] += 1
        for rec in self._tournaments():
            if rec is None:
                continue
            t = rec.tournament
            if t.tournament_id not in self.seen_tournaments:
                STATS["tournaments"] += 1
            if t.over and ("over", t.tournament_id) not in self.seen_over:
                self.seen_over.add(("over", t.tournament_id))
                STATS["tournaments_over"] += 1
            STATS["rows"] += sum(len(d.rows) for d in t.duels)
            self.seen_tournaments.add(t.tournament_id)
            for p in t.players:
                assert 0 <= p.lives <= 3, p
            for d in t.duels:
                assert len(d.rows) <= 12
                other = d.opponent_of(d.first)
                for k, row in enumerate(d.rows):
                    assert row.player == (d.first if k % 2 == 0 else other), (d.duel_id, k)

    @invariant()
    def messages_once_and_no_secret_leaked(self) -> None:
        new = self.notifier.events[self.checked :]
        self.checked = len(self.notifier.events)
        if not hasattr(self, "_once"):
            self._once: set[tuple[Any, ...]] = set()
        open_duels = {
            d.duel_id: d.word
            for rec in self._tournaments()
            if rec is not None
            for d in rec.tournament.duels
            if not d.over
        }
        for cid, m in new:
            key: tuple[Any, ...] | None = None
            if m["type"] == "turn":
                key = (cid, "turn", m["duel_id"], m["turn"])
            elif m["type"] == "round":
                key = (cid, "round", m["tournament_id"], m["round"])
            elif m["type"] in ("tournament_end", "rating"):
                key = (cid, m["type"], m["tournament_id"])
            elif m["type"] == "duel_end":
                key = (cid, "duel_end", m["duel_id"])
            if key is not None:
                assert key not in self._once, f"delivered twice: {key}"
                self._once.add(key)
            for duel_id, word in open_duels.items():
                for value in _values(_mask_rows(m, duel_id)):
                    assert value != word, (duel_id, m)
                    assert word not in value.split(), (duel_id, m)

    @invariant()
    def ratings_once(self) -> None:
        history: dict[str, int] = defaultdict(int)
        for (pid, _tid), applied in self.inner_ratings().items():
            history[pid] += applied
        for pid in self.ids:
            p = self.inner.get_player(pid)
            assert p is not None
            assert p.rating == INITIAL_RATING + history[pid], (pid, p.rating, history[pid])
        for rec in self._tournaments():
            if rec is not None and rec.tournament.over:
                rated = {
                    pid for pid, tid in self.inner_ratings() if tid == rec.tournament.tournament_id
                }
                assert rated == {p.player_id for p in rec.tournament.players}

    def inner_ratings(self) -> dict[tuple[str, str], int]:
        raise NotImplementedError

    def inner_waiting(self) -> list[LobbyRecord]:
        """Every waiting lobby in the store (a test inspection, not a port method)."""
        raise NotImplementedError

    @invariant()
    def one_place_per_player(self) -> None:
        seated: dict[str, list[str]] = defaultdict(list)
        for rec in self.inner_waiting():
            assert len(rec.lobby.seats) <= 8
            for s in rec.lobby.seats:
                seated[s.player_id].append(rec.lobby.lobby_id)
        alive: dict[str, list[str]] = defaultdict(list)
        for rec in self._tournaments():
            if rec is None or rec.tournament.over:
                continue
            for ps in rec.tournament.players:
                if ps.alive:
                    alive[ps.player_id].append(rec.tournament.tournament_id)
        for pid in self.ids:
            p = self.inner.get_player(pid)
            assert len(seated[pid]) <= 1, (pid, seated[pid])
            assert len(alive[pid]) <= 1, (pid, alive[pid])
            assert not (seated[pid] and alive[pid]), pid
            if p.status is PlayerStatus.QUEUED:
                assert seated[pid] == [p.lobby_id], (pid, p.lobby_id, seated[pid])
            else:
                assert not seated[pid], (pid, p.status, seated[pid])
            if alive[pid]:
                assert p.status is PlayerStatus.PLAYING, (pid, p.status)
                assert p.tournament_id == alive[pid][0]
            if p.status is PlayerStatus.PLAYING:
                assert (pid, p.tournament_id) not in self.inner_ratings()
        for rec in self.inner_waiting():
            assert rec.lobby.status is LobbyStatus.WAITING


STATS: Counter[str] = Counter()
"""Across runs: steps taken, tournaments seen, rows played (the tests print and check them)."""
