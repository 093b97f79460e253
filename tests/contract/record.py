"""Tests support: records the protocol's conformance kit into ``shared/protocol/conformance/``.

The kit is for client authors: for each main scenario of the game (``SCENARIOS``), what every
WebSocket connection sent and received, in order, as JSON. The scenarios run through the real
``functions/`` handlers on the in-process harness (``infra.emulator.testing.Backend``: moto
DynamoDB, a manual clock, the deployed clock loop), so the recordings are what the server says.
Re-record after any protocol or behaviour change, and commit the result::

    .venv/bin/python -m tests.contract.record            # rewrite the kit (a few seconds)
    .venv/bin/python -m tests.contract.record --check    # exit 1 if it is out of date

``tests/contract/test_conformance.py`` re-records in memory and fails when the committed
files differ (``--check`` does the same), and validates every recorded message against the
AsyncAPI document's schema for its ``action`` / ``type``.

Deterministic: a fixed RNG seed (pairings, first movers, secret words, nicknames), counted ids
(``id0001``...), tokens and invites drawn from a seeded RNG (same shape as
``secrets.token_urlsafe(32)``), and the manual clock, which starts at
1_800_000_000_000 ms (2027-01-15T08:00:00Z) and moves only when a scenario moves it. So
re-recording the same code gives byte-identical files.

Output, one file per scenario (``<name>.json``)::

    {"scenario": "join", "description": "...", "protocol": 1,
     "connections": [
       {"connection": "conn001=", "player": "p0", "player_id": "id0001",
        "transcript": [
          {"seq": 1, "at_ms": 1800000000000, "event": "open"},
          {"seq": 2, "at_ms": 1800000000000, "from": "client", "message": {"action": "session"}},
          {"seq": 3, "at_ms": 1800000000000, "from": "server", "message": {"type": "session", ...}},
          {"seq": 9, "at_ms": 1800000010000, "event": "close", "by": "client"}]}]}

``seq`` orders entries across all connections of the scenario; ``at_ms`` is the server clock
(absolute UTC ms, like every ``*_ms`` deadline in the messages). ``event`` entries: ``open``
(the WebSocket connected), ``close`` ``by`` ``client`` (it went away) or ``server`` (the server
closed it, e.g. after ``session_replaced``). Plus ``README.md``, the index of the scenarios.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import json
import os
import random
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import pytest

from infra.emulator.testing import Backend, ScriptedPlayer, running_backend
from shared.protocol.framing import unpack
from shared.protocol.version import PROTOCOL_VERSION

__all__ = [
    "KIT_DIR",
    "RECORD_COMMAND",
    "SCENARIOS",
    "Tape",
    "check",
    "main",
    "record_all",
    "record_scenario",
]

KIT_DIR: Final = Path(__file__).resolve().parents[2] / "shared" / "protocol" / "conformance"
RECORD_COMMAND: Final = "python -m tests.contract.record"
SEED: Final = 7
LANGUAGE: Final = "en"

Scenario = Callable[[Backend], None]
"""A script over the harness: it connects players and plays; the tape records what crossed."""


# --------------------------------------------------------------------------- the tape
class Tape:
    """Everything that crossed any connection of one backend, in one global order.

    ``entries`` holds ``(connection_id, entry)``; an entry is a JSON-ready dict with ``seq``,
    ``at_ms`` and either ``from`` (``client`` / ``server``) + ``message``, or ``event``
    (``open`` / ``close``, with ``by`` for a close). Only messages a connection really got
    are taped: posts to a connection that is already gone are not.
    """

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.entries: list[tuple[str, dict[str, Any]]] = []

    def add(self, connection_id: str, **entry: Any) -> None:
        stamp = {"seq": len(self.entries) + 1, "at_ms": self.backend.clock.now}
        self.entries.append((connection_id, {**stamp, **entry}))

    def inbound(self, route: str, connection_id: str, body: str | None) -> None:
        """Tape what the client did: open, close, or a message (the frame's JSON)."""
        if route == "$connect":
            self.add(connection_id, event="open")
        elif route == "$disconnect":
            self.add(connection_id, event="close", by="client")
        else:
            self.add(connection_id, **{"from": "client", "message": json.loads(body or "null")})

    def transcripts(self) -> list[dict[str, Any]]:
        """One transcript per connection, in the order the connections opened; each names
        the player bound by the connection's ``session`` reply (null if none)."""
        by_connection: dict[str, list[dict[str, Any]]] = {}
        for connection_id, entry in self.entries:
            by_connection.setdefault(connection_id, []).append(entry)
        names = {p.id: p.name for p in self.backend.players}
        found = []
        for connection_id, entries in by_connection.items():
            player_id = next(
                (
                    m["player"]["id"]
                    for e in entries
                    if e.get("from") == "server"
                    for m in unpack(json.dumps(e["message"]))
                    if m["type"] == "session"
                ),
                None,
            )
            found.append(
                {
                    "connection": connection_id,
                    "player": names.get(player_id) if player_id else None,
                    "player_id": player_id,
                    "transcript": entries,
                }
            )
        return found


class _TapNotifier:
    """The ``Notifier`` port in front of the harness's ``RecordingNotifier``: tapes every
    message delivered and every connection the server closes, then passes the call on."""

    def __init__(self, inner: Any, tape: Tape) -> None:
        self._inner = inner
        self._tape = tape

    def send(self, messages: list[tuple[str, str]]) -> list[str]:
        for connection_id, text in messages:
            if connection_id not in self._inner.gone:
                self._tape.add(connection_id, **{"from": "server", "message": json.loads(text)})
        gone: list[str] = self._inner.send(messages)
        return gone

    def close(self, connection_id: str) -> None:
        if connection_id not in self._inner.gone:
            self._tape.add(connection_id, event="close", by="server")
        self._inner.close(connection_id)

    def __getattr__(self, name: str) -> Any:
        # Anything else the port gains (e.g. connection info) is the harness's, untaped.
        return getattr(self._inner, name)


def _seeded_secrets(seed: int) -> Callable[[], str]:
    """Tokens and invites like ``secrets.token_urlsafe(32)`` (43 characters), from a seed."""
    rng = random.Random(seed)
    return lambda: base64.urlsafe_b64encode(rng.randbytes(32)).rstrip(b"=").decode("ascii")


@contextmanager
def taped_backend(lexicon: Any = None) -> Iterator[tuple[Backend, Tape]]:
    """A fresh harness backend (moto, manual clock) whose connections are taped."""
    with (
        pytest.MonkeyPatch.context() as mp,
        contextmanager(running_backend)(mp, seed=SEED, lexicon=lexicon) as backend,
    ):
        tape = Tape(backend)
        invoke = backend.invoke

        def taped_invoke(
            route: str,
            connection_id: str,
            body: str | None = None,
            *,
            received_ms: int | None = None,
            source_ip: str = "127.0.0.1",
        ) -> Any:
            tape.inbound(route, connection_id, body)
            return invoke(route, connection_id, body, received_ms=received_ms, source_ip=source_ip)

        mp.setattr(backend, "invoke", taped_invoke)
        backend.deps = dataclasses.replace(
            backend.deps,
            notifier=_TapNotifier(backend.notifier, tape),
            secrets=_seeded_secrets(SEED),
        )
        yield backend, tape


# --------------------------------------------------------------------------- scenarios
def _connect(backend: Backend, name: str, *, request_id: str | None = None) -> ScriptedPlayer:
    """A new player: open a connection, send ``session`` without a token, keep the token."""
    player = backend.player(name, session=False)
    extra: dict[str, Any] = {"request_id": request_id} if request_id else {}
    player.send("session", **extra)
    reply = player.last("session")
    player.id, player.token = reply["player"]["id"], reply["token"]
    return player


def _lobby_of_eight(backend: Backend) -> list[ScriptedPlayer]:
    players = [_connect(backend, f"p{i}") for i in range(8)]
    for player in players:
        player.join(LANGUAGE)
    return players


def _by_id(backend: Backend, player_id: str) -> ScriptedPlayer:
    return next(p for p in backend.players if p.id == player_id)


def _solve_round(backend: Backend) -> None:
    """Every running duel is solved at once by the player to move."""
    for mover in backend.to_move():
        mover.solve()


def join(backend: Backend) -> None:
    """Eight players open a session each (the first with a `request_id`, echoed in the reply)
    and one pings; all join an English lobby, which starts when the 8th seat fills: every
    player gets `lobby` updates, `round` 1 (pairs, intro deadline, standings) and, when the
    intro ends, a `duel_start` for their own duel only (a player who spectates, ruling 7: out,
    holding the bye or done with the round's duel, gets one for every duel of the round)."""
    players = [_connect(backend, "p0", request_id="s-1")]
    players[0].send("ping", request_id="ping-1")
    players += [_connect(backend, f"p{i}") for i in range(1, 8)]
    players[0].send("join", language=LANGUAGE, request_id="j-1")
    for player in players[1:]:
        player.join(LANGUAGE)
    backend.end_intro()


def play(backend: Backend) -> None:
    """A whole tournament: in every duel the first mover guesses a wrong word, the other
    solves it. Shows `turn` (rows with tiles and marks), `duel_end` (result, winner, word),
    `standings`, `eliminated` (reason lives), `rating`, new `round`s with byes, and
    `tournament_end` to everyone."""
    players = _lobby_of_eight(backend)
    tournament_id = players[0].last("round")["tournament_id"]
    while not (tournament := backend.tournament(tournament_id).tournament).over:
        movers = backend.to_move()
        if not movers or backend.clock.now < tournament.intro_deadline_ms:
            backend.end_intro()
            continue
        mover = movers[0]
        if mover.current_duel().rows:
            mover.solve()
        else:
            mover.guess()


def skip(backend: Backend) -> None:
    """A turn times out. The first mover of one duel stays silent; at the deadline a guess of
    theirs arrives too late (`error` `turn_over`: judged by when the gateway received it);
    shortly after, the server skips the turn: `turn` with a `skipped` row and the opponent's
    new deadline. The opponent then guesses."""
    _lobby_of_eight(backend)
    backend.end_intro()
    mover = backend.to_move()[0]
    deadline = mover.current_duel().turn_deadline_ms
    backend.clock.advance_to(deadline)
    mover.guess()
    mover.time_out()
    _by_id(backend, mover.current_duel().next_player).guess()


def leave(backend: Backend) -> None:
    """A duelist leaves mid-tournament (ruling 3): `eliminated` (reason left), their duel ends
    with `duel_end` reason left (the opponent wins), `standings`. The other duels are solved;
    the round ends: the leaver's place is fixed (`rating`) and round 2 is paired without them."""
    _lobby_of_eight(backend)
    backend.end_intro()
    leaver = backend.to_move()[0]
    leaver.send("leave", request_id="l-1")
    _solve_round(backend)
    backend.end_intro()


def resume(backend: Backend) -> None:
    """A duelist's connection drops: the others get `player_status` disconnected with the
    reconnect deadline. 10 s later the player reconnects and sends `session` with the token:
    the reply has `resumed` true, a new `token` (tokens rotate: store it) and a `snapshot`
    (round, own duel, standings, duels to watch); the others get `player_status` connected.
    The player guesses on. Then the same player opens a second connection (another tab) with
    the newest token: the older one gets `error` `session_replaced` and the server closes it.
    Last, the player sends `sign_out_everywhere`: every earlier token is revoked, and the reply
    is `session` with a new token, on the same connection."""
    _lobby_of_eight(backend)
    backend.end_intro()
    dropped = backend.to_move()[0]
    dropped.disconnect()
    backend.clock.advance(10_000)
    dropped.resume()
    dropped.guess()
    backend.clock.advance(1_000)
    dropped.resume()
    dropped.send("sign_out_everywhere", request_id="out")


def party(backend: Backend) -> None:
    """A party: the leader sends `party_create` (the reply carries the invite); three friends
    `party_join` with it (every member gets `party`); one of them changes nickname (reply
    `player`), another leaves with `party_leave`. The leader removes the third with
    `party_remove` (who gets `party` status left, the others the new member list), then
    replaces the invite with `party_reset_invite` (every member gets the new one): a latecomer
    with the old invite gets `error` `unknown_invite`, then joins with the new one. The leader
    sends `party_start`: the party takes 3 seats of a new lobby (`lobby` with `party_id`,
    `party` status queued). Five solo players join; the lobby fills and round 1 starts."""
    leader = _connect(backend, "leader")
    friends = [_connect(backend, f"friend{i}") for i in (1, 2, 3)]
    leader.send("party_create", request_id="pc-1")
    invite = leader.last("party")["invite"]
    for friend in friends:
        friend.send("party_join", invite=invite)
    friends[0].send("nickname", nickname="Friend_One", request_id="n-1")
    friends[2].send("party_leave")
    leader.send("party_remove", player_id=friends[1].id, request_id="pr-1")
    leader.send("party_reset_invite", request_id="ri-1")
    late = _connect(backend, "late")
    late.send("party_join", invite=invite, request_id="pj-1")
    late.send("party_join", invite=leader.last("party")["invite"], request_id="pj-2")
    leader.send("party_start", language=LANGUAGE)
    for i in range(5):
        _connect(backend, f"solo{i}").join(LANGUAGE)


def refusals(backend: Backend) -> None:
    """Refused requests get an `error` to the sender only, with a stable `code` and the
    `request_id` echoed: a `join` before `session` (no_session), a `session` with an unknown
    token (invalid_token), an unknown game language (unknown_language), a guess on the
    opponent's turn (not_your_turn), of the wrong length (wrong_length) and not in the word
    list (not_in_word_list)."""
    stranger = backend.player("stranger", session=False)
    stranger.send("join", language=LANGUAGE, request_id="e-1")
    stranger.send("session", token="not-a-token", request_id="e-2")
    players = [_connect(backend, f"p{i}") for i in range(8)]
    players[0].send("join", language="xx", request_id="e-3")
    for player in players:
        player.join(LANGUAGE)
    backend.end_intro()
    mover = backend.to_move()[0]
    duel = mover.current_duel()
    waiting = _by_id(backend, duel.opponent_of(mover.id))
    waiting.send("guess", duel_id=duel.duel_id, word=mover.any_valid_word(), request_id="e-4")
    mover.send("guess", duel_id=duel.duel_id, word="ab", request_id="e-5")
    mover.send("guess", duel_id=duel.duel_id, word="q" * duel.length, request_id="e-6")


def progression(backend: Backend) -> None:
    """Profiles, leaderboards, history and replays (since 1.3; read-only): after a finished
    tournament (its record, history entries, statistics and board entries as the history
    function writes them, off the play path), a player opens their `profile` (rating chart
    points), the `leaderboard` by rating (top 100, their rank and the players around them) and
    the weekly one of English, their `history` a page at a time (`next_cursor` sent back as
    `cursor`; a forged cursor gets `error` `invalid_cursor`) and the `replay` of the
    tournament (every round, duel and row, the secrets revealed); a `replay` of an unknown
    tournament gets `error` `not_found`."""
    from shared.services.progression import week_of
    from tests.functional.progression import seed

    players = [_connect(backend, f"p{i}") for i in range(8)]
    put = seed.dynamo_put(backend.client, backend.table_name)
    names = {p.id: p.last("session")["player"]["nickname"] for p in players}
    changes = [25, 18, 11, 4, -4, -11, -18, -25]
    seats = [seed.Seat(p.id, names[p.id], n + 1, 1000, changes[n]) for n, p in enumerate(players)]
    now = backend.clock.now
    earlier = seed.eight_player_tournament(
        "t-earlier", seats[::-1], started_ms=now - 8_000_000, rows=4, rng=random.Random(1)
    )
    last = seed.eight_player_tournament(
        "t-last", seats, started_ms=now - 4_000_000, rows=3, rng=random.Random(2)
    )
    for t in (earlier, last):
        seed.put_tournament(put, t)
    for n, p in enumerate(players):
        seed.put_stats(put, p.id, [(LANGUAGE, 8 - n), (LANGUAGE, n + 1)], best=1000 + changes[n])
    seed.put_rating_board(
        put, [(p.id, names[p.id], 1000 + changes[n]) for n, p in enumerate(players)]
    )
    seed.put_weekly(
        put,
        LANGUAGE,
        week_of(now),
        [(p.id, names[p.id], changes[n]) for n, p in enumerate(players)],
        now,
    )
    me = players[3]
    me.send("profile", request_id="pr-1")
    me.send("leaderboard", board="rating", request_id="lb-1")
    me.send("leaderboard", board="weekly", language=LANGUAGE, request_id="lb-2")
    me.send("history", limit=1, request_id="h-1")
    me.send("history", limit=1, cursor=me.last("history")["next_cursor"], request_id="h-2")
    me.send("history", cursor="Zm9yZ2Vk", request_id="h-3")
    me.send("replay", tournament_id="t-last", request_id="rp-1")
    me.send("replay", tournament_id="t-unknown", request_id="rp-2")


SCENARIOS: Final[dict[str, Scenario]] = {
    "join": join,
    "play": play,
    "skip": skip,
    "leave": leave,
    "resume": resume,
    "party": party,
    "refusals": refusals,
    "progression": progression,
}
"""Scenario name (the file's stem) -> script, in the order the index lists them."""


# --------------------------------------------------------------------------- rendering
def _description(scenario: Scenario) -> str:
    return " ".join((scenario.__doc__ or "").split())


def render_recording(name: str, transcripts: list[dict[str, Any]]) -> str:
    """A scenario's file: indented JSON with one transcript entry per line (readable diffs)."""
    head = {
        "scenario": name,
        "description": _description(SCENARIOS[name]),
        "protocol": PROTOCOL_VERSION,
    }
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    lines.append('  "connections": [')
    for i, connection in enumerate(transcripts):
        lines.append("    {")
        for key in ("connection", "player", "player_id"):
            lines.append(f"      {json.dumps(key)}: {json.dumps(connection[key])},")
        lines.append('      "transcript": [')
        entries = connection["transcript"]
        for j, entry in enumerate(entries):
            comma = "," if j < len(entries) - 1 else ""
            lines.append(f"        {json.dumps(entry, ensure_ascii=False)}{comma}")
        lines.append("      ]")
        lines.append("    }" + ("," if i < len(transcripts) - 1 else ""))
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


def record_scenario(name: str, lexicon: Any = None) -> str:
    """Run one scenario on a fresh taped backend; its file's text."""
    with taped_backend(lexicon) as (backend, tape):
        SCENARIOS[name](backend)
        return render_recording(name, tape.transcripts())


def _index(recordings: dict[str, str]) -> str:
    lines = [
        "# Conformance kit: recorded message sequences",
        "",
        "Generated by `.venv/bin/python -m tests.contract.record` (do not edit by hand; "
        "see `tests/contract/record.py`).",
        "",
        "Each `<scenario>.json` holds, per WebSocket connection, everything the client sent "
        '(`"from": "client"`) and received (`"from": "server"`), in order, plus the connection\'s '
        "`open` and `close` events. `seq` orders entries across connections; `at_ms` is the "
        "server clock (absolute UTC ms, like every deadline). Every message validates against "
        "[`../asyncapi.json`](../asyncapi.json) (checked in CI). Ids, tokens, words and times "
        "are those of a seeded test run: compare shapes and sequences, not values.",
        "",
        "| scenario | connections | messages | what happens |",
        "| --- | --- | --- | --- |",
    ]
    for name, text in recordings.items():
        data = json.loads(text)
        messages = sum(1 for c in data["connections"] for e in c["transcript"] if "message" in e)
        lines.append(
            f"| [`{name}`]({name}.json) | {len(data['connections'])} | {messages} | "
            f"{data['description']} |"
        )
    return "\n".join(lines) + "\n"


def record_all() -> dict[str, str]:
    """Every file of the kit: file name -> text (the scenarios' JSON, then ``README.md``)."""
    from shared.adapters.lexicon import WordListLexicon

    lexicon = WordListLexicon()  # loaded once, shared by the scenarios
    recordings = {name: record_scenario(name, lexicon) for name in SCENARIOS}
    files = {f"{name}.json": text for name, text in recordings.items()}
    files["README.md"] = _index(recordings)
    return files


def check(directory: Path = KIT_DIR, files: dict[str, str] | None = None) -> list[str]:
    """The names of the files in ``directory`` that differ from a fresh recording (missing,
    changed, or stale leftovers); empty when the kit is up to date."""
    expected = record_all() if files is None else files
    present = {p.name for p in directory.glob("*") if p.is_file()} if directory.is_dir() else set()
    wrong = [
        name
        for name, text in expected.items()
        if name not in present or (directory / name).read_text(encoding="utf-8") != text
    ]
    return sorted(wrong + sorted(present - set(expected)))


def main(argv: list[str] | None = None) -> int:
    """CLI: write the kit into ``KIT_DIR`` (or ``--output``); ``--check`` only compares."""
    parser = argparse.ArgumentParser(prog=RECORD_COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the kit is out of date")
    parser.add_argument("--output", type=Path, default=KIT_DIR)
    args = parser.parse_args(argv)
    # The handlers log every refusal at INFO, print their metrics, and warn when they publish
    # none: noise here.
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    warnings.filterwarnings("ignore", "No application metrics to publish", UserWarning)
    directory: Path = args.output
    files = record_all()
    if args.check:
        wrong = check(directory, files)
        if wrong:
            print(f"out of date in {directory}: {', '.join(wrong)}; run: {RECORD_COMMAND}")
            return 1
        return 0
    directory.mkdir(parents=True, exist_ok=True)
    for stale in {p.name for p in directory.glob("*.json")} - set(files):
        (directory / stale).unlink()
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} files to {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
