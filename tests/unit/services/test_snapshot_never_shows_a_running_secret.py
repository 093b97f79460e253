"""Unit: the resume snapshot (``shared.services.snapshot``) never holds the secret of a duel
that is still running (ruling 6), whoever resumes and whenever.

Random tournaments in several game languages (Uzbek with its multi-letter tiles among them) are
driven through the domain — wrong guesses, solves, skips as time passes, leavers — and saved in
the in-memory store after every transition. After each one, every player's snapshot is built
and searched for each running duel's secret, as a JSON string and as its tile list. Guesses
never use a secret of the tournament except to solve, so any hit is a leak, not a coincidence.
Boards are also checked in shape: no word, display, result or winner before the duel is over.
"""

from __future__ import annotations

import functools
import itertools
import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.adapters.lexicon import WordListLexicon
from shared.adapters.memory import InMemoryStore
from shared.domain.tournament import Entrant, Tournament
from shared.protocol.framing import dump_event
from shared.services.deps import Deps, Timing
from shared.services.model import Player, PlayerStatus, TournamentRecord
from shared.services.snapshot import snapshot
from tests.fakes import ManualClock, RecordingNotifier

_LEXICON = WordListLexicon()
T0 = 1_800_000_000_000


def _deps(seed: int) -> Deps:
    rng = random.Random(seed)
    ids = itertools.count(1)
    return Deps(
        store=InMemoryStore(),
        notifier=RecordingNotifier(),
        clock=ManualClock(),
        lexicon=_LEXICON,
        timing=Timing(30_000, 6_000, 60_000, 1_000),
        rng=lambda: random.Random(rng.random()),
        ids=lambda: f"id{next(ids):04d}",
    )


def _start(deps: Deps, language: str) -> tuple[Tournament, list[str]]:
    pids = [f"p{i}" for i in range(8)]
    players = [
        Player(pid, f"Player {i}", 1000, T0, PlayerStatus.PLAYING, tournament_id="t1")
        for i, pid in enumerate(pids)
    ]
    entrants = [Entrant(p.player_id, p.nickname, p.rating) for p in players]
    t, _ = Tournament.start("t1", language, entrants, T0, deps.dealer(language))
    deps.store.commit([*players, TournamentRecord(t, {pid: f"c-{pid}" for pid in pids})])
    return t, pids


def _save(deps: Deps, t: Tournament) -> None:
    rec = deps.store.get_tournament(t.tournament_id)
    assert rec is not None
    rec.tournament = t
    deps.store.commit([rec])


@functools.cache
def _allowed(language: str, length: int) -> tuple[str, ...]:
    return tuple(sorted(_LEXICON.allowed(language, length)))


def _wrong_word(rng: random.Random, t: Tournament, length: int) -> str:
    """An allowed word that is no secret of this tournament so far."""
    while True:
        word = rng.choice(_allowed(t.language, length))
        if word not in t.used_words:
            return word


def _strings(value: Any) -> list[str]:
    """Every string of a JSON value, and every list of strings joined (a word as tiles)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        joined = ["".join(value)] if value and all(isinstance(v, str) for v in value) else []
        return joined + [s for v in value for s in _strings(v)]
    return []


def _boards(snap: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in [snap["duel"], *snap["spectating"]] if b is not None]


def _check(deps: Deps, t: Tournament, pids: list[str]) -> int:
    running = {d.duel_id: d.word for d in t.duels if not d.over}
    for pid in pids:
        player = deps.store.get_player(pid)
        assert player is not None
        snap = json.loads(dump_event(snapshot(deps, player)))
        leaked = set(running.values()) & set(_strings(snap))
        assert not leaked, f"{pid} sees the secret of a running duel"
        for b in _boards(snap):
            if not b["over"]:
                assert (b["word"], b["display"], b["result"], b["winner"]) == (None,) * 4
    return len(running)


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    language=st.sampled_from(["en", "uz", "de", "ru", "fr"]),
)
def test_no_snapshot_holds_the_secret_of_a_running_duel(seed: int, language: str) -> None:
    deps = _deps(seed)
    rng = random.Random(seed)
    t, pids = _start(deps, language)
    now = T0
    checked = 0
    for _ in range(400):
        if t.over:
            break
        dealer = deps.dealer(language)
        t, _ = t.expire(now, dealer)
        # duels whose turn may still be played now (a turn past its deadline waits, within
        # the skip grace, for its skip: a guess then is refused turn_over)
        running = [d for d in t.duels if not d.over and d.turn_deadline_ms > now]
        roll = rng.random()
        if t.phase.value == "intro" or not running or roll < 0.2:
            now = t.next_due(dealer.skip_grace_ms) or now
            t, _ = t.expire(now, dealer)
        elif roll < 0.23:
            t, _ = t.leave(rng.choice([p.player_id for p in t.alive]), now, dealer)
        else:
            d = rng.choice(running)
            mover = d.next_player
            assert mover is not None
            word = d.word if roll < 0.35 else _wrong_word(rng, t, d.length)
            lang = _LEXICON.language(language)
            t, _ = t.guess(mover, d.duel_id, word, lang.tiles(word), now, dealer)
        _save(deps, t)
        checked += _check(deps, t, pids)
    assert t.over
    assert checked > 0
