"""Protocol clients: the one fold of server messages into what a client knows, ``ClientState``.

Every Python client folds the server's messages with it: the bots (``infra.players.bots``), the
load simulation's players (``infra.simulation.player``) and the tests' reference client
(``tests.client_state``: a resumed screen must equal a live one, ruling 15). Pure: no sockets,
no clock, no randomness; stdlib only. What a screen shows: ``Screen``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "RETRY_BASE_MS",
    "RETRY_CAP_MS",
    "RETRY_SAFETY_MS",
    "Board",
    "BoardView",
    "ClientState",
    "EndView",
    "LanguageView",
    "LobbyView",
    "Msg",
    "OutView",
    "PartyView",
    "PlayerView",
    "ResultView",
    "RoundView",
    "RowView",
    "Screen",
    "StandingView",
    "is_gateway_frame",
    "retry_delay_ms",
    "retry_in_time",
]

Msg = dict[str, Any]

RETRY_BASE_MS = 100
"""First retry of a request API Gateway answered with its own frame: within 0-100 ms."""
RETRY_CAP_MS = 2_000
"""Retries back off exponentially (full jitter) up to this ceiling."""
RETRY_SAFETY_MS = 300
"""A guess is retried only while it would still reach the gateway this long before the turn's
deadline (network and clock skew)."""


def is_gateway_frame(m: Msg) -> bool:
    """A frame API Gateway itself sent (no ``type``: ``{"message": "Too Many Requests" |
    "Internal server error" | ..., "connectionId", "requestId"}``): the message it answers was
    not processed, or its outcome is unknown (ruling 18). It names none of our request ids."""
    return "type" not in m


def retry_delay_ms(attempt: int, rng: random.Random) -> float:
    """How long to wait before retry ``attempt`` (0 = the first) of a request answered by a
    gateway frame: exponential backoff with full jitter, uniform in ``[0, min(RETRY_CAP_MS,
    RETRY_BASE_MS * 2**attempt)]``. Retries reuse the request's ``request_id``: the server
    applies it once and answers a repeat with the first outcome (ruling 18)."""
    return rng.uniform(0, min(RETRY_CAP_MS, RETRY_BASE_MS * 2**attempt))


def retry_in_time(now_ms: float, delay_ms: float, deadline_ms: float | None) -> bool:
    """Whether a retry sent ``delay_ms`` from ``now_ms`` still lands inside the turn
    (``RETRY_SAFETY_MS`` before ``deadline_ms``; None: no deadline, always)."""
    return deadline_ms is None or now_ms + delay_ms < deadline_ms - RETRY_SAFETY_MS


# ------------------------------------------------------------------------------ the screen
@dataclass(frozen=True)
class RowView:
    player: str
    word: str | None
    tiles: tuple[str, ...] | None
    marks: tuple[str, ...] | None
    skipped: bool

    def as_message(self) -> Msg:
        """The row as the protocol writes it (``Row``: lists, every key present)."""
        return {
            "player": self.player,
            "word": self.word,
            "tiles": list(self.tiles) if self.tiles is not None else None,
            "marks": list(self.marks) if self.marks is not None else None,
            "skipped": self.skipped,
        }


@dataclass(frozen=True)
class BoardView:
    duel_id: str
    players: tuple[str, ...]
    length: int | None
    rows: tuple[RowView, ...]
    next_player: str | None
    deadline_ms: int | None
    over: bool
    result: str | None
    winner: str | None
    word: str | None
    display: str | None
    incomplete: bool


@dataclass(frozen=True)
class StandingView:
    player_id: str
    nickname: str
    lives: int
    eliminated: bool
    left: bool
    place: int | None
    rating_change: int | None


@dataclass(frozen=True)
class LanguageView:
    code: str
    alphabet: tuple[str, ...]
    keyboard: tuple[tuple[str, ...], ...]
    multi_letter_tiles: tuple[str, ...]


@dataclass(frozen=True)
class PlayerView:
    id: str
    nickname: str
    rating: int


@dataclass(frozen=True)
class LobbyView:
    lobby_id: str
    language: str
    seats: tuple[PlayerView, ...]
    party_id: str | None


@dataclass(frozen=True)
class RoundView:
    tournament_id: str
    number: int
    pairs: tuple[tuple[str, tuple[str, ...]], ...]
    bye: str | None
    intro_deadline_ms: int


@dataclass(frozen=True)
class OutView:
    tournament_id: str
    round: int
    left: bool


@dataclass(frozen=True)
class ResultView:
    tournament_id: str
    place: int
    change: int
    rating: int
    previous: int | None


@dataclass(frozen=True)
class EndView:
    tournament_id: str
    places: tuple[StandingView, ...]
    winners: tuple[str, ...]


@dataclass(frozen=True)
class PartyView:
    party_id: str
    invite: str | None
    leader: str | None
    members: tuple[PlayerView, ...]
    status: str


@dataclass(frozen=True)
class Screen:
    """What one client's screen shows: equal for two clients that show the same screen.

    Times are UTC ms. A board shows once its duel started or ended (a duel only paired shows in
    ``round``).
    """

    phase: str
    """``idle`` | ``lobby`` | ``intro`` (the round's pairs; duels not started) | ``duel`` (own duel
    running) | ``spectating`` (alive; bye or own duel over, ruling 7) | ``eliminated`` (out:
    lives gone, or left) | ``ended`` (final standings, until the player moves on)."""
    me: PlayerView | None
    """Id, nickname, rating."""
    language: LanguageView | None
    """Code, alphabet, keyboard, multi-letter tiles (from ``lobby`` live, from
    ``snapshot.language`` on resume)."""
    lobby: LobbyView | None
    """The lobby's seats."""
    round: RoundView | None
    """Number, pairs, bye, intro deadline."""
    own_board: BoardView | None
    """My duel of the round: rows with marks, whose turn, turn deadline, result, the secret only
    once over."""
    boards: tuple[BoardView, ...]
    """The other visible boards, as ``own_board``."""
    standings: tuple[StandingView, ...] | None
    """Lives, eliminated, left, place, rating change; by player id."""
    offline: tuple[tuple[str, int | None], ...]
    """The other players of the lobby or tournament shown who are disconnected and not out by
    leaving, with their reconnect deadline when known."""
    out: OutView | None
    """Own elimination: round, and whether by leaving."""
    result: ResultView | None
    """Own ``rating``: place, change, previous and new rating."""
    end: EndView | None
    """Final places and winners."""
    party: PartyView | None


# ------------------------------------------------------------------------------ the fold
@dataclass
class Board:
    """One duel's board as the client knows it (``BoardView`` is its frozen view)."""

    duel_id: str
    players: tuple[str, ...]
    length: int | None
    rows: list[RowView] = field(default_factory=list)
    next_player: str | None = None
    deadline_ms: int | None = None
    over: bool = False
    result: str | None = None
    winner: str | None = None
    word: str | None = None
    display: str | None = None
    incomplete: bool = False
    reason: str | None = None
    """Why it ended, from a live ``duel_end`` (a board sent whole does not say; not shown)."""

    @property
    def visible(self) -> bool:
        """Started (someone is to move, or rows were played) or ended."""
        return self.over or self.next_player is not None or bool(self.rows)

    def view(self) -> BoardView:
        return BoardView(
            duel_id=self.duel_id,
            players=self.players,
            length=self.length,
            rows=tuple(self.rows),
            next_player=self.next_player,
            deadline_ms=self.deadline_ms,
            over=self.over,
            result=self.result,
            winner=self.winner,
            word=self.word,
            display=self.display,
            incomplete=self.incomplete,
        )


def _row(m: Msg) -> RowView:
    return RowView(
        player=m.get("player") or "",
        word=m.get("word"),
        tiles=tuple(m["tiles"]) if m.get("tiles") is not None else None,
        marks=tuple(m["marks"]) if m.get("marks") is not None else None,
        skipped=bool(m.get("skipped")),
    )


def _standing(m: Msg) -> StandingView:
    return StandingView(
        player_id=m["player_id"],
        nickname=m.get("nickname") or "",
        lives=m.get("lives") or 0,
        eliminated=bool(m.get("eliminated")),
        left=bool(m.get("left")),
        place=m.get("place"),
        rating_change=m.get("rating_change"),
    )


def _player(m: Msg) -> PlayerView:
    return PlayerView(id=m["id"], nickname=m.get("nickname") or "", rating=m.get("rating") or 0)


def _language(code: str, alphabet: list[str], keyboard: list[list[str]]) -> LanguageView:
    return LanguageView(
        code=code,
        alphabet=tuple(alphabet),
        keyboard=tuple(tuple(r) for r in keyboard),
        multi_letter_tiles=tuple(a for a in alphabet if len(a) > 1),
    )


class ClientState:
    """What a client knows, folded from the server's messages and nothing else.

    Messages are plain dicts, as ``shared.protocol.framing.unpack`` reads them.
    ``apply(message)`` folds the live stream (a ``batch`` in order); ``from_snapshot(session)``
    starts a client that knows only its token and resumes (ruling 15). It keeps the session
    ``token`` across resumes and answers ``player_id``, ``own_board``, ``my_turn`` (duel and
    deadline when I am to move), ``bye``, ``eliminated``, ``place``; ``screen`` is the frozen
    ``Screen``. Fields a message lacks read as empty. ``turn`` rows are numbered 1..12: a row
    already on the board is not applied twice, a row that skips a number marks the board
    ``incomplete`` (it then differs from any complete board).
    """

    def __init__(self) -> None:
        self.token: str | None = None
        """The session token: the latest ``session`` that carried one (every reply does: tokens
        rotate at each resume, ruling 11)."""
        self.unanswered: dict[str, Msg] = {}
        """Requests sent (``sent``) that no server message has answered yet, by
        ``request_id``: what to send again, unchanged, after a gateway frame."""
        self.gateway_frames = 0
        """API Gateway's own frames received (``is_gateway_frame``): throttled or failed."""
        self._reset()

    def sent(self, message: Msg) -> None:
        """A request went out: remember it until an answer carries its ``request_id`` (a
        ``ping`` is answered by the gateway and never retried: not kept)."""
        rid = message.get("request_id")
        if isinstance(rid, str) and rid and message.get("action") != "ping":
            self.unanswered[rid] = message

    def _reset(self) -> None:
        self.me: PlayerView | None = None
        self.party: PartyView | None = None
        self.lobby: LobbyView | None = None
        self.language: LanguageView | None = None
        self.tournament_id: str | None = None
        self.round: RoundView | None = None
        self.started = False
        self.boards: dict[str, Board] = {}
        self.standings: dict[str, StandingView] | None = None
        self.connected: dict[str, bool] = {}
        self.deadlines: dict[str, int | None] = {}
        self.out: OutView | None = None
        self.result: ResultView | None = None
        self.end: EndView | None = None

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_snapshot(cls, session: Msg) -> ClientState:
        """The state of a client that knows nothing but what this resumed ``session`` says."""
        if session.get("type") != "session" or session.get("resumed") is not True:
            raise ValueError(f"not a resumed session: {session.get('type')}")
        state = cls()
        state.apply(session)
        return state

    @classmethod
    def from_messages(cls, messages: list[Msg]) -> ClientState:
        state = cls()
        for m in messages:
            state.apply(m)
        return state

    # ---------------------------------------------------------------- folding
    def apply(self, m: Msg) -> list[Msg]:
        """Fold one server message in; the events it carried, in order (a ``batch``'s events,
        else the message itself). Unknown types are ignored, as a client of an older version
        ignores newer ones; a frame without ``type`` is API Gateway's (``is_gateway_frame``):
        counted, folded into nothing, its request left ``unanswered`` for a retry."""
        if is_gateway_frame(m):
            self.gateway_frames += 1  # not processed, or unknown: the sender retries
            return []
        self.unanswered.pop(str(m.get("request_id") or ""), None)
        events = list(m.get("events") or []) if m.get("type") == "batch" else [m]
        for event in events:
            self.unanswered.pop(str(event.get("request_id") or ""), None)
            handler = getattr(self, "_on_" + str(event.get("type")), None)
            if handler is not None:
                handler(event)
        return events

    def _on_session(self, m: Msg) -> None:
        if m.get("token"):
            self.token = m["token"]
        if m.get("resumed"):
            # a resume redraws everything from the snapshot
            self._reset()
            self.me = _player(m["player"])
            self._load_snapshot(m.get("snapshot") or {})
        else:
            self.me = _player(m["player"])

    def _load_snapshot(self, snap: Msg) -> None:
        """Each part is what the latest message of its kind said: fold them in that order."""
        if snap.get("party") is not None:
            self._on_party(snap["party"])
        if snap.get("lobby") is not None:
            self._on_lobby(snap["lobby"])
        if snap.get("language") is not None:
            lang = snap["language"]
            self.language = LanguageView(
                code=lang["code"],
                alphabet=tuple(lang.get("alphabet") or ()),
                keyboard=tuple(tuple(r) for r in lang.get("keyboard") or ()),
                multi_letter_tiles=tuple(lang.get("multi_letter_tiles") or ()),
            )
        if snap.get("round") is not None:
            self._on_round(snap["round"])
        if snap.get("standings") is not None:
            self._on_standings(snap["standings"])
        for b in [snap.get("duel"), *(snap.get("spectating") or [])]:
            if b is not None:
                self._load_board(b)
        self.started = any(b.next_player is not None or b.rows for b in self.boards.values())
        for status in snap.get("statuses") or []:
            self._on_player_status(status)
        if snap.get("eliminated") is not None:
            self.tournament_id = snap["eliminated"]["tournament_id"]
            self._on_eliminated(snap["eliminated"])
        if snap.get("rating") is not None:
            self._on_rating(snap["rating"])
        if snap.get("tournament_end") is not None:
            self._on_tournament_end(snap["tournament_end"])

    def _load_board(self, b: Msg) -> None:
        self.boards[b["duel_id"]] = Board(
            duel_id=b["duel_id"],
            players=tuple(b.get("players") or ()),
            length=b.get("length"),
            rows=[_row(r) for r in b.get("rows") or []],
            next_player=b.get("next_player"),
            deadline_ms=b.get("deadline_ms"),
            over=bool(b.get("over")),
            result=b.get("result"),
            winner=b.get("winner"),
            word=b.get("word"),
            display=b.get("display"),
        )

    def _on_player(self, m: Msg) -> None:
        self.me = _player(m["player"])

    def _on_party(self, m: Msg) -> None:
        if m.get("status") == "left" or m.get("party_id") is None:
            self.party = None
            return
        self.party = PartyView(
            party_id=m["party_id"],
            invite=m.get("invite"),
            leader=m.get("leader"),
            members=tuple(_player(p) for p in m.get("members") or []),
            status=m["status"],
        )

    def _on_lobby(self, m: Msg) -> None:
        status = m.get("status")
        if status != "left":
            self.language = _language(
                m.get("language") or "", m.get("alphabet") or [], m.get("keyboard") or []
            )
        if status == "waiting":
            self.round = None
            self.started = False
            self.boards = {}
            self.standings = None
            self.tournament_id = None
            self.out = self.result = self.end = None
            players = m.get("players") or []
            self.lobby = LobbyView(
                lobby_id=m["lobby_id"],
                language=m.get("language") or "",
                seats=tuple(_player(p) for p in players),
                party_id=m.get("party_id"),
            )
            seated = {p["id"] for p in players}
            self.connected = {k: v for k, v in self.connected.items() if k in seated}
            self.deadlines = {k: v for k, v in self.deadlines.items() if k in seated}
        elif status == "started":
            self.lobby = None
            self.tournament_id = m.get("tournament_id")
        else:  # left
            self.lobby = None
            self.language = None
            self.connected.clear()
            self.deadlines.clear()

    def _on_round(self, m: Msg) -> None:
        if m["tournament_id"] != self.tournament_id:
            self.tournament_id = m["tournament_id"]
            self.out = self.result = self.end = None
        self.lobby = None
        self.round = RoundView(
            tournament_id=m["tournament_id"],
            number=m["round"],
            pairs=tuple((p["duel_id"], tuple(p["players"])) for p in m.get("pairs") or []),
            bye=m.get("bye"),
            intro_deadline_ms=m.get("intro_deadline_ms") or 0,
        )
        self.started = False
        self.boards = {}
        self._standings(m.get("standings") or [])

    def _standings(self, rows: list[Msg]) -> None:
        self.standings = {r["player_id"]: _standing(r) for r in rows}
        for r in rows:
            self._connection(r["player_id"], bool(r.get("connected", True)), keep_deadline=True)

    def _connection(
        self, player_id: str, connected: bool, deadline: int | None = None, *, keep_deadline: bool
    ) -> None:
        if self.me is not None and player_id == self.me.id:
            return
        self.connected[player_id] = connected
        if connected:
            self.deadlines.pop(player_id, None)
        elif not keep_deadline:
            self.deadlines[player_id] = deadline
        else:
            self.deadlines.setdefault(player_id, None)

    def _on_standings(self, m: Msg) -> None:
        self._standings(m.get("players") or [])

    def _on_duel_start(self, m: Msg) -> None:
        b = self.boards.get(m["duel_id"])
        if b is None:
            b = self.boards[m["duel_id"]] = Board(
                m["duel_id"], tuple(m.get("players") or ()), m.get("length")
            )
        b.length = m.get("length")
        if not b.rows and not b.over:
            b.next_player = m.get("next_player")
            b.deadline_ms = m.get("deadline_ms")
        self.started = True

    def _on_turn(self, m: Msg) -> None:
        self.started = True
        b = self.boards.get(m["duel_id"])
        if b is None:
            pair = dict(self.round.pairs if self.round else ()).get(m["duel_id"], ())
            b = self.boards[m["duel_id"]] = Board(m["duel_id"], pair, None, incomplete=True)
        if m["turn"] <= len(b.rows):
            return  # already on the board (a board sent whole holds it)
        if m["turn"] > len(b.rows) + 1:
            b.incomplete = True
        b.rows.append(_row(m["row"]))
        if not b.over:
            b.next_player = m.get("next_player")
            b.deadline_ms = m.get("deadline_ms")

    def _on_duel_end(self, m: Msg) -> None:
        b = self.boards.get(m["duel_id"])
        if b is None:
            pair = dict(self.round.pairs if self.round else ()).get(m["duel_id"], ())
            b = self.boards[m["duel_id"]] = Board(
                m["duel_id"], pair, self._length(m.get("word") or "")
            )
        b.over = True
        b.result = m.get("result")
        b.winner = m.get("winner")
        b.word = m.get("word")
        b.display = m.get("display")
        b.reason = m.get("reason")
        b.next_player = None
        b.deadline_ms = None
        for whole in m.get("spectating") or []:
            self._load_board(whole)
            if whole.get("next_player") is not None:
                self.started = True

    def _length(self, word: str) -> int:
        """Tiles in ``word``, split left to right, a multi-letter tile first (the language's
        rule, as ``snapshot.language`` / ``LanguageInfo`` describes it)."""
        multi = self.language.multi_letter_tiles if self.language else ()
        n = i = 0
        while i < len(word):
            step = next((len(t) for t in multi if word.startswith(t, i)), 1)
            i += step
            n += 1
        return n

    def _on_eliminated(self, m: Msg) -> None:
        pid = m["player_id"]
        left = m.get("reason") != "lives"
        if self.standings is not None and pid in self.standings:
            row = self.standings[pid]
            self.standings[pid] = StandingView(
                row.player_id, row.nickname, 0, True, left, row.place, row.rating_change
            )
        if self.me is not None and pid == self.me.id:
            self.out = OutView(tournament_id=m["tournament_id"], round=m["round"], left=left)
            if left:
                # a leaver receives no more of the tournament's messages: nothing to redraw
                self._leave_tournament_view()

    def _on_rating(self, m: Msg) -> None:
        self.result = ResultView(
            tournament_id=m["tournament_id"],
            place=m["place"],
            change=m.get("change") or 0,
            rating=m["rating"],
            previous=m.get("previous"),
        )
        if self.me is not None:
            self.me = PlayerView(self.me.id, self.me.nickname, m["rating"])

    def _on_tournament_end(self, m: Msg) -> None:
        self._leave_tournament_view()
        self.tournament_id = m["tournament_id"]
        self.out = None
        self.language = None
        places = (_standing(s) for s in m.get("places") or [])
        self.end = EndView(
            tournament_id=m["tournament_id"],
            places=tuple(sorted(places, key=lambda s: s.player_id)),
            winners=tuple(m.get("winners") or ()),
        )

    def _on_player_status(self, m: Msg) -> None:
        connected = m.get("status") == "connected"
        deadline = m.get("reconnect_deadline_ms")
        self._connection(m["player_id"], connected, deadline, keep_deadline=False)

    def _leave_tournament_view(self) -> None:
        self.round = None
        self.started = False
        self.boards = {}
        self.standings = None
        self.connected.clear()
        self.deadlines.clear()

    # ---------------------------------------------------------------- a player's questions
    @property
    def player_id(self) -> str | None:
        return self.me.id if self.me else None

    @property
    def own_board(self) -> Board | None:
        """My duel of the round (paired, running or over), if I have one."""
        me = self.player_id
        return next((b for b in self.boards.values() if me in b.players), None)

    @property
    def my_turn(self) -> tuple[str, int] | None:
        """``(duel_id, deadline_ms)`` while my duel runs and I am to move, else None."""
        b = self.own_board
        if b is None or b.over or b.next_player != self.player_id or b.deadline_ms is None:
            return None
        return b.duel_id, b.deadline_ms

    @property
    def bye(self) -> bool:
        """This round sits me out (ruling 7)."""
        me = self.player_id
        return me is not None and self.round is not None and self.round.bye == me

    @property
    def eliminated(self) -> bool:
        return self.out is not None

    @property
    def place(self) -> int | None:
        """My final place: from my ``rating`` once fixed, else from ``tournament_end``."""
        if self.result is not None:
            return self.result.place
        if self.end is not None:
            mine = next((s for s in self.end.places if s.player_id == self.player_id), None)
            return mine.place if mine else None
        return None

    # ---------------------------------------------------------------- the screen
    @property
    def phase(self) -> str:
        if self.end is not None:
            return "ended"
        if self.out is not None:
            return "eliminated"
        if self.round is not None:
            if not self.started:
                return "intro"
            own = self.own_board
            if own is not None and not own.over and own.visible:
                return "duel"
            return "spectating"
        if self.lobby is not None:
            return "lobby"
        return "idle"

    @property
    def screen(self) -> Screen:
        me = self.player_id
        visible = [b for b in self.boards.values() if b.visible]
        own = next((b.view() for b in visible if me in b.players), None)
        others = tuple(sorted((b.view() for b in visible if me not in b.players), key=_by_id))
        standings = (
            tuple(sorted(self.standings.values(), key=lambda s: s.player_id))
            if self.standings is not None
            else None
        )
        shown: set[str] = set()
        if self.lobby is not None:
            shown = {s.id for s in self.lobby.seats}
        elif self.standings is not None:
            shown = {pid for pid, s in self.standings.items() if not s.left}
        offline = tuple(
            sorted(
                (pid, self.deadlines.get(pid))
                for pid, up in self.connected.items()
                if not up and pid in shown and pid != me
            )
        )
        return Screen(
            phase=self.phase,
            me=self.me,
            language=self.language,
            lobby=self.lobby,
            round=self.round,
            own_board=own,
            boards=others,
            standings=standings,
            offline=offline,
            out=self.out,
            result=self.result,
            end=self.end,
            party=self.party,
        )


def _by_id(b: BoardView) -> str:
    return b.duel_id
