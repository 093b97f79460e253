"""Domain layer: the tournament aggregate — rounds, duels, byes, lives, places, ratings.

The rules page ("Tournament", "Lives and elimination", "Byes", "Leaving and disconnects") and
rulings 2–5 of RULINGS.md. The tournament, with its current round's duels, is one consistency
boundary: every transition takes the current time (UTC ms) and returns a new ``Tournament`` plus
the past-tense events it caused. Randomness (pairing, secrets, first movers) comes from the
``Dealer`` passed in.

Time model: ``expire(now_ms)`` applies every deadline due at or before ``now_ms`` in time order
(intro end, then turn timeouts as skips); a guess is only valid after that. Reconnect deadlines
live with the player (services), and arrive here as ``leave(..., reason="timeout")``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Literal, Protocol

from shared.domain.duel import Duel, DuelId, DuelResult, EndReason
from shared.domain.errors import (
    AlreadyEliminatedError,
    DomainError,
    DuelNotStartedError,
    DuelOverError,
    NotInDuelError,
    NotInTournamentError,
    PausedError,
    TournamentOverError,
)
from shared.domain.events import (
    ConnectionChanged,
    DuelEnded,
    DuelStarted,
    Event,
    Placed,
    PlayerEliminated,
    RoundEnded,
    RoundStarted,
    TournamentEnded,
    TurnPlayed,
)
from shared.domain.rating import rating_change

if TYPE_CHECKING:  # a value handed in; its module (and the language table) load with the guess
    from shared.domain.words import AllowedWords

PLAYERS = 8
"""Players per tournament (rules page)."""
LIVES = 3
"""Lives per player at the start (rules page)."""
WORD_LENGTHS = (4, 5, 6)
"""Secret lengths, drawn uniformly per duel (ruling 5)."""


class Phase(StrEnum):
    """Where the tournament is."""

    INTRO = "intro"  # the round's pairs are shown; duels start at intro_deadline_ms
    PLAYING = "playing"  # the round's duels are running
    OVER = "over"  # every place is fixed


class SecretSource(Protocol):
    """The language's answer lists (``wordlists``), seen by the domain as plain data."""

    def answers(self, length: int) -> Sequence[str]:
        """Sorted play forms of the given length in tiles."""
        ...

    def tiles(self, word: str) -> tuple[str, ...]:
        """The tiles of a play form."""
        ...


@dataclass(frozen=True, slots=True)
class Dealer:
    """What a transition may need to open the next round: randomness, words and the clocks."""

    rng: random.Random
    words: SecretSource
    turn_ms: int = 30_000
    """Turn clock (rules page: 30 s)."""
    intro_ms: int = 6_000
    """Round intro (rules page: 6 s)."""
    skip_grace_ms: int = 0
    """How long after a turn deadline its skip becomes due (ms; RULINGS.md, Clocks): a guess
    the gateway received before the deadline may still be in flight, and lands first. The
    intro deadline has no grace (nothing races it)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a player's action came to (python-chess's ``Outcome`` style: a value, not an
    exception): the ``tournament`` after it, its ``events`` in order, and the ``refusal`` when
    the action itself was refused — the tournament may still have moved on then (deadlines
    that were due, applied first), and those events are to be committed all the same."""

    tournament: Tournament
    events: tuple[Event, ...]
    refusal: DomainError | None = None


@dataclass(frozen=True, slots=True)
class Entrant:
    """A lobby seat becoming a tournament player."""

    player_id: str
    nickname: str
    rating: int
    connected: bool = True
    reconnect_deadline_ms: int | None = None


@dataclass(frozen=True, slots=True)
class PlayerState:
    """One player's standing in the tournament."""

    player_id: str
    nickname: str
    rating: int
    """Rating snapshot taken at the start (ruling 1)."""
    lives: int = LIVES
    byes: int = 0
    """Byes had in this tournament, the current round's included (ruling 4: the next bye goes
    to an eligible player with the fewest)."""
    out_round: int | None = None
    """The round in which the player went out (lives or leaving), None while alive."""
    left: bool = False
    """Went out by leaving or by missing the reconnect deadline (ruling 3)."""
    timed_out: bool = False
    """Of those, went out by missing the reconnect deadline (rulings 3, 9 and 14)."""
    place: int | None = None
    """Fixed when the player's round ends, or at the end for the winner (ruling 2)."""
    rating_change: int | None = None
    """Applied together with ``place``."""
    connected: bool = True
    reconnect_deadline_ms: int | None = None

    @property
    def alive(self) -> bool:
        """Still in the tournament."""
        return self.out_round is None


@dataclass(frozen=True, slots=True)
class ClosedRound:
    """A round just closed, as it ended: its number, its duels with every row, its bye. Kept
    by the round-closing write for the history function (RULINGS.md, design notes,
    "Progression: history")."""

    round_no: int
    duels: tuple[Duel, ...]
    bye: str | None = None


@dataclass(frozen=True, slots=True)
class Tournament:
    """An 8-player tournament and its current round."""

    tournament_id: str
    language: str
    players: tuple[PlayerState, ...]
    round_no: int = 0
    phase: Phase = Phase.INTRO
    intro_deadline_ms: int = 0
    duels: tuple[Duel, ...] = ()
    """The current round's duels."""
    bye: str | None = None
    """The current round's bye."""
    previous_pairs: frozenset[frozenset[str]] = field(default_factory=frozenset)
    previous_bye: str | None = None
    used_words: frozenset[str] = field(default_factory=frozenset)
    """Every secret drawn so far: each duel of a tournament gets a different one (ruling 5)."""
    started_ms: int = 0
    ended_ms: int | None = None
    paused_ms: int | None = None
    """When operators paused the game for this tournament (UTC ms), None while it runs: no
    deadline applies and no move is taken until ``resume`` shifts every deadline by the
    pause's length (RULINGS.md, design notes, "Kill switch")."""
    closed: ClosedRound | None = None
    """The round the last round change closed (set when ``_open_round`` replaces the duels),
    until a later transition starts the next round's duels (the intro's end); None before
    that and after. The last round of a finished tournament is simply ``duels``."""

    # ---------------------------------------------------------------- construction and views
    @classmethod
    def start(
        cls,
        tournament_id: str,
        language: str,
        entrants: Sequence[Entrant],
        now_ms: int,
        dealer: Dealer,
    ) -> tuple[Tournament, list[Event]]:
        """Start with the lobby's entrants (normally 8; ruling 9 keeps disconnected seats).

        Returns the tournament in round 1's intro and its ``RoundStarted`` event.
        Raises ValueError for fewer than 2 entrants or duplicate ids.
        """
        ids = [e.player_id for e in entrants]
        if len(ids) < 2 or len(set(ids)) != len(ids):
            raise ValueError("a tournament needs at least two distinct players")
        players = tuple(
            PlayerState(
                player_id=e.player_id,
                nickname=e.nickname,
                rating=e.rating,
                connected=e.connected,
                reconnect_deadline_ms=e.reconnect_deadline_ms,
            )
            for e in entrants
        )
        t = cls(tournament_id=tournament_id, language=language, players=players, started_ms=now_ms)
        events: list[Event] = []
        t = t._open_round(now_ms, dealer, events)
        return t, events

    @property
    def over(self) -> bool:
        return self.phase is Phase.OVER

    @property
    def alive(self) -> tuple[PlayerState, ...]:
        return tuple(p for p in self.players if p.alive)

    def player(self, player_id: str) -> PlayerState:
        """The player's state. Raises NotInTournamentError."""
        for p in self.players:
            if p.player_id == player_id:
                return p
        raise NotInTournamentError(f"player is not in tournament {self.tournament_id}")

    def duel(self, duel_id: str) -> Duel:
        """A duel of the current round. Raises NotInDuelError for another id."""
        for d in self.duels:
            if d.duel_id == duel_id:
                return d
        raise NotInDuelError("no such duel in the current round")

    def duel_of(self, player_id: str) -> Duel | None:
        """The player's duel in the current round (None for the bye or when out)."""
        for d in self.duels:
            if player_id in d.players:
                return d
        return None

    def is_spectator(self, player_id: str) -> bool:
        """Ruling 7: out, holding the bye, or done with this round's duel."""
        p = self.player(player_id)
        if not p.alive or self.over:
            return True
        d = self.duel_of(player_id)
        return d is None or d.over

    def next_deadline(self) -> int | None:
        """The earliest pending deadline (UTC ms): the intro's, else the earliest turn
        deadline of a running duel; None when nothing is pending."""
        if self.over:
            return None
        if self.phase is Phase.INTRO:
            return self.intro_deadline_ms
        pending = [d.turn_deadline_ms for d in self.duels if not d.over]
        return min(pending) if pending else None

    def next_due(self, skip_grace_ms: int = 0) -> int | None:
        """The earliest time (UTC ms) at which ``expire`` would change something: the intro
        deadline, or the earliest turn deadline plus ``skip_grace_ms``; None when nothing is
        pending. The round's clock waits until then (RULINGS.md, Clocks)."""
        if self.paused_ms is not None:
            return None  # the round's clock loop ends; ``resume`` starts a new one
        due = self.next_deadline()
        if due is None or self.phase is Phase.INTRO:
            return due
        return due + skip_grace_ms

    # ---------------------------------------------------------------- the kill switch
    def pause(self, now_ms: int) -> Tournament:
        """Stop the tournament's clock at ``now_ms``: until ``resume``, ``expire`` applies
        nothing, ``next_due`` is None, and a move (``play``, ``leave``) is refused with
        ``PausedError``. Already paused, or over: ``self``."""
        if self.over or self.paused_ms is not None:
            return self
        return replace(self, paused_ms=now_ms)

    def resume(self, now_ms: int) -> Tournament:
        """Restart the clock at ``now_ms``: every pending deadline (the intro's, each running
        duel's turn and start, each player's reconnect deadline) moves later by the pause's
        length ``now_ms - paused_ms``, so no turn is skipped for time nobody could play. Not
        paused: ``self``."""
        if self.paused_ms is None:
            return self
        shift = max(0, now_ms - self.paused_ms)
        return replace(
            self,
            paused_ms=None,
            intro_deadline_ms=self.intro_deadline_ms + shift
            if self.phase is Phase.INTRO
            else self.intro_deadline_ms,
            duels=tuple(
                d
                if d.over
                else replace(
                    d,
                    starts_ms=d.starts_ms + shift if self.phase is Phase.INTRO else d.starts_ms,
                    turn_deadline_ms=d.turn_deadline_ms + shift,
                )
                for d in self.duels
            ),
            players=tuple(
                p
                if p.reconnect_deadline_ms is None
                else replace(p, reconnect_deadline_ms=p.reconnect_deadline_ms + shift)
                for p in self.players
            ),
        )

    # ---------------------------------------------------------------- transitions
    def expire(self, now_ms: int, dealer: Dealer) -> tuple[Tournament, list[Event]]:
        """Apply every deadline due at or before ``now_ms``, earliest first.

        The intro deadline starts the round's duels; a turn deadline is a skip (rules page:
        "If your time runs out, the turn is skipped"), due ``dealer.skip_grace_ms`` after the
        deadline itself; the skip's row and the next turn still start at the deadline, so the
        grace never shifts the clock. Nothing due: returns ``self`` and [].
        """
        t = self
        events: list[Event] = []
        while True:
            due = t.next_due(dealer.skip_grace_ms)
            if due is None or due > now_ms:
                return t, events
            if t.phase is Phase.INTRO:
                # the intro's end clears the closed round, unless this very transition closed
                # it (a late call): then the write that stores it still carries it
                fresh = t.closed if t.closed is not self.closed else None
                t = replace(t._start_duels(events), closed=fresh)
                continue
            # the duel whose turn deadline is earliest (ties: board order)
            duel = min((d for d in t.duels if not d.over), key=lambda d: d.turn_deadline_ms)
            after = duel.skip(dealer.turn_ms)
            t = t._after_turn(duel, after, events, dealer)

    def play(
        self,
        player_id: str,
        duel_id: str,
        raw: str,
        words: AllowedWords,
        *,
        received_ms: int,
        now_ms: int,
        dealer: Dealer,
        request_id: str | None = None,
    ) -> Outcome:
        """A duelist's typed guess ``raw``, received at ``received_ms`` (by API Gateway) and handled
        at ``now_ms`` (ruling 5): first applies the deadlines due by ``received_ms +
        dealer.skip_grace_ms`` (at most ``now_ms``), then checks once, most telling first (the
        order: ``shared/domain/RULINGS.md``, Design notes, "Tournament rules"), the word against
        ``words``; the next turn's deadline starts at ``now_ms``. Returns an ``Outcome``: refused,
        the refusal with the deadlines applied (``tournament`` is ``self`` if none); else the new
        state and every event. Never raises a refusal.
        """
        if self.paused_ms is not None:
            return Outcome(self, (), PausedError())
        received = min(received_ms, now_ms)
        t, events = self.expire(min(now_ms, received + dealer.skip_grace_ms), dealer)
        try:
            duel = t._duel_to_play(player_id, duel_id)
            after = duel.play(
                player_id,
                raw,
                words,
                received_ms=received,
                now_ms=now_ms,
                turn_ms=dealer.turn_ms,
                request_id=request_id,
            )
        except DomainError as refusal:
            return Outcome(t, tuple(events), refusal)
        t2 = t._after_turn(duel, after, events, dealer)
        return Outcome(t2, tuple(events))

    def guess(
        self,
        player_id: str,
        duel_id: str,
        word: str,
        tiles: tuple[str, ...],
        now_ms: int,
        dealer: Dealer,
    ) -> tuple[Tournament, list[Event]]:
        """Play a guess already checked against the word list, received and applied at
        ``now_ms`` (``play``, for callers that checked the word themselves): what was due by
        then is applied first, and its events come first.

        Raises the refusal of ``play``; the tournament is then unchanged only if nothing was
        due (call ``expire(now_ms)`` first to keep the two apart, as the simulations do).
        """
        t, events = self.expire(now_ms, dealer)
        duel = t._duel_to_play(player_id, duel_id)
        after = duel.guess(player_id, word, tiles, now_ms, dealer.turn_ms)
        t2 = t._after_turn(duel, after, events, dealer)
        return t2, events

    def _duel_to_play(self, player_id: str, duel_id: str) -> Duel:
        """The duel ``player_id`` means to play in, or the tournament's refusal (``play``)."""
        if self.over:
            raise TournamentOverError("the tournament is over")
        if not self.player(player_id).alive:
            raise AlreadyEliminatedError("you are out of this tournament")
        try:
            duel = self.duel(duel_id)
        except NotInDuelError:
            # a duel of this tournament's earlier round (one's own, kept on screen after the
            # round moved on): it is over, whoever played it
            earlier = DuelId.parse(duel_id)
            if (
                earlier.tournament_id == self.tournament_id
                and 1 <= earlier.round_no < self.round_no
            ):
                raise DuelOverError("that duel ended in an earlier round") from None
            raise
        if self.phase is Phase.INTRO and player_id in duel.players:
            raise DuelNotStartedError("the round intro is still running")
        return duel

    def leave(
        self,
        player_id: str,
        now_ms: int,
        dealer: Dealer,
        *,
        reason: Literal["left", "timeout"] = "left",
    ) -> tuple[Tournament, list[Event]]:
        """The player leaves (or missed the reconnect deadline: ``reason="timeout"``).

        Ruling 3: eliminated at once; the current duel is lost (the opponent wins it, even
        during the intro); a leaver holding the bye simply goes out; leavers of a round share
        one place below the others out in that round. A player already out, or a tournament
        already over, is unchanged (returns ``self`` and []). Raises PausedError while paused.
        """
        p = self.player(player_id)
        if self.paused_ms is not None and not self.over and p.alive:
            raise PausedError()
        if self.over or not p.alive:
            return self, []
        events: list[Event] = []
        t = self._replace_player(
            replace(
                p,
                lives=0,
                out_round=self.round_no,
                left=True,
                timed_out=reason == "timeout",
                connected=p.connected,
            )
        )
        events.append(PlayerEliminated(player_id, self.round_no, reason))
        duel = t.duel_of(player_id)
        if duel is not None and not duel.over:
            why = EndReason.TIMEOUT if reason == "timeout" else EndReason.LEFT
            after = duel.forfeit(player_id, now_ms, why)
            t = t._with_duel(after)
            events.append(_duel_ended(after))
        if t._round_complete():
            t = t._close_round(now_ms, dealer, events)
        return t, events

    def set_connected(
        self, player_id: str, connected: bool, reconnect_deadline_ms: int | None = None
    ) -> tuple[Tournament, list[Event]]:
        """Record a dropped or restored connection (ruling 9). No change: ``self`` and []."""
        p = self.player(player_id)
        deadline = None if connected else reconnect_deadline_ms
        if p.connected == connected and p.reconnect_deadline_ms == deadline:
            return self, []
        t = self._replace_player(replace(p, connected=connected, reconnect_deadline_ms=deadline))
        return t, [ConnectionChanged(player_id, connected, deadline)]

    # ---------------------------------------------------------------- internals
    def _replace_player(self, new: PlayerState) -> Tournament:
        return replace(
            self,
            players=tuple(new if p.player_id == new.player_id else p for p in self.players),
        )

    def _with_duel(self, new: Duel) -> Tournament:
        return replace(
            self, duels=tuple(new if d.duel_id == new.duel_id else d for d in self.duels)
        )

    def _round_complete(self) -> bool:
        return self.phase is not Phase.OVER and all(d.over for d in self.duels)

    def _after_turn(
        self, before: Duel, after: Duel, events: list[Event], dealer: Dealer
    ) -> Tournament:
        t = self._with_duel(after)
        row = after.rows[-1]
        events.append(
            TurnPlayed(
                duel_id=after.duel_id,
                turn=len(after.rows),
                row=row,
                next_player=after.next_player,
                deadline_ms=None if after.over else after.turn_deadline_ms,
            )
        )
        if not after.over:
            return t
        events.append(_duel_ended(after))
        t = t._apply_duel_result(after, events)
        if t._round_complete():
            assert after.ended_ms is not None
            t = t._close_round(after.ended_ms, dealer, events)
        return t

    def _apply_duel_result(self, duel: Duel, events: list[Event]) -> Tournament:
        """Lives: a loss costs 1, a draw costs both 1, a win nothing (rules page)."""
        losers: list[str] = []
        if duel.result is DuelResult.DRAW:
            losers = list(duel.players)
        elif duel.loser is not None:
            losers = [duel.loser]
        t = self
        for pid in losers:
            p = t.player(pid)
            if not p.alive:
                continue  # a leaver already went out
            lives = p.lives - 1
            out = self.round_no if lives == 0 else None
            t = t._replace_player(replace(p, lives=lives, out_round=out))
            if lives == 0:
                events.append(PlayerEliminated(pid, self.round_no, "lives"))
        return t

    def _start_duels(self, events: list[Event]) -> Tournament:
        for d in self.duels:
            if not d.over:
                nxt = d.next_player
                assert nxt is not None
                events.append(DuelStarted(d.duel_id, d.players, nxt, d.length, d.turn_deadline_ms))
        return replace(self, phase=Phase.PLAYING, closed=None)

    def _close_round(self, at_ms: int, dealer: Dealer, events: list[Event]) -> Tournament:
        """Ruling 2 and 3: places for those out this round, ratings, then next round or end."""
        out_now = [p for p in self.players if p.out_round == self.round_no and p.place is None]
        alive_after = len(self.alive)
        stayed = [p for p in out_now if not p.left]
        place_stayed = alive_after + 1
        place_left = alive_after + len(stayed) + 1
        places = {p.player_id: (place_left if p.left else place_stayed) for p in out_now}
        t, placed = self._fix_places(places)
        events.append(RoundEnded(self.round_no, placed))
        if alive_after <= 1:
            winners: dict[str, int] = {p.player_id: 1 for p in t.alive}
            t, _ = t._fix_places(winners)
            t = replace(t, phase=Phase.OVER, ended_ms=at_ms)
            everyone = sorted(
                (
                    Placed(
                        p.player_id,
                        p.place or 0,
                        p.rating_change or 0,
                        p.rating + (p.rating_change or 0),
                    )
                    for p in t.players
                ),
                key=lambda x: (x.place, x.player_id),
            )
            winner_ids = tuple(x.player_id for x in everyone if x.place == 1)
            events.append(TournamentEnded(tuple(everyone), winner_ids))
            return t
        return t._open_round(at_ms, dealer, events)

    def _fix_places(self, places: dict[str, int]) -> tuple[Tournament, tuple[Placed, ...]]:
        """Fix the given places and compute each one's rating change (ruling 1).

        Players still alive and not in ``places`` finish above everyone placed now, so for
        the comparison they count as place 1 — only the order matters (see rating_change).
        """
        ratings = [p.rating for p in self.players]
        vector = [
            places.get(p.player_id, p.place if p.place is not None else 1) for p in self.players
        ]
        t = self
        result: list[Placed] = []
        for i, p in enumerate(self.players):
            if p.player_id not in places:
                continue
            change = rating_change(i, ratings, vector)
            t = t._replace_player(replace(p, place=places[p.player_id], rating_change=change))
            result.append(Placed(p.player_id, places[p.player_id], change, p.rating + change))
        result.sort(key=lambda x: (x.place, x.player_id))
        return t, tuple(result)

    def _open_round(self, at_ms: int, dealer: Dealer, events: list[Event]) -> Tournament:
        # imported by the first round opened: most decisions (a turn, a skip, a disconnect)
        # never pair
        from shared.domain.pairing import pair_round

        alive_ids = [p.player_id for p in self.alive]
        pairing = pair_round(
            alive_ids,
            self.previous_pairs,
            self.previous_bye,
            dealer.rng,
            byes={p.player_id: p.byes for p in self.alive},
        )
        t = self
        if pairing.bye is not None:
            holder = t.player(pairing.bye)
            t = t._replace_player(replace(holder, byes=holder.byes + 1))
        round_no = self.round_no + 1
        intro_deadline = at_ms + dealer.intro_ms
        used = set(self.used_words)
        duels: list[Duel] = []
        for i, (a, b) in enumerate(pairing.pairs, start=1):
            word = _draw_secret(dealer, used)
            used.add(word)
            first = dealer.rng.choice((a, b))
            duels.append(
                Duel(
                    duel_id=str(DuelId(self.tournament_id, round_no, i)),
                    players=(a, b),
                    first=first,
                    word=word,
                    answer=dealer.words.tiles(word),
                    starts_ms=intro_deadline,
                    turn_deadline_ms=intro_deadline + dealer.turn_ms,
                )
            )
        events.append(
            RoundStarted(
                round_no=round_no,
                pairs=tuple((d.duel_id, d.players[0], d.players[1]) for d in duels),
                bye=pairing.bye,
                intro_deadline_ms=intro_deadline,
            )
        )
        return replace(
            t,
            round_no=round_no,
            phase=Phase.INTRO,
            intro_deadline_ms=intro_deadline,
            duels=tuple(duels),
            bye=pairing.bye,
            previous_pairs=frozenset(frozenset(p) for p in pairing.pairs),
            previous_bye=pairing.bye,
            used_words=frozenset(used),
            closed=ClosedRound(self.round_no, self.duels, self.bye) if self.duels else None,
        )


def _draw_secret(dealer: Dealer, used: Iterable[str]) -> str:
    """Ruling 5: length 4/5/6 uniformly, then a word of that length not used before."""
    taken = set(used)
    length = dealer.rng.choice(WORD_LENGTHS)
    pool = [w for w in dealer.words.answers(length) if w not in taken]
    if not pool:  # a tiny test list ran dry at this length: take another length
        for other in WORD_LENGTHS:
            pool = [w for w in dealer.words.answers(other) if w not in taken]
            if pool:
                break
    if not pool:
        raise DuelOverError("no unused secret word left")
    return dealer.rng.choice(pool)


def _duel_ended(duel: Duel) -> DuelEnded:
    assert duel.result is not None
    assert duel.reason is not None
    return DuelEnded(duel.duel_id, duel.players, duel.result, duel.winner, duel.reason, duel.word)
