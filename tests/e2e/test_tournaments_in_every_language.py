"""End to end, every game language: 8 bots play a whole tournament over real WebSockets.

One emulator (short clocks, on its own thread) serves the 13 tournaments one after another, each
in its own language's lobby; the bots play from a worker process. For each: every bot sees the
same final standings, the places are a standard competition ranking, and the rating items in
DynamoDB match each bot's ``rating`` message.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import pytest

from infra.emulator import Emulator
from infra.players.bots import BotConfig, BotResult
from tests.e2e.support import (
    TIMINGS,
    EmulatorThread,
    bot_process,
    check_final_standings,
    check_rating_items,
    play_tournament_blocking,
)

pytestmark = [pytest.mark.enable_socket, pytest.mark.e2e]

LANGUAGES = ["en", "id", "de", "es", "fr", "it", "nl", "uz", "pl", "pt", "kk", "ru", "uk"]

FAST_STRONG = BotConfig(strength=1.0, think_ms=(0, 10))
"""Strong solvers that answer at once: short duels, few rounds."""


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with EmulatorThread(turn_seconds=2, intro_seconds=0.1, reconnect_seconds=10) as emu:
        yield emu


@pytest.fixture(scope="module")
def bots() -> Iterator[ProcessPoolExecutor]:
    with bot_process() as pool:
        yield pool


def play(emu: Emulator, bots: ProcessPoolExecutor, language: str, seed: int) -> list[BotResult]:
    started = time.monotonic()
    results: list[BotResult] = bots.submit(
        play_tournament_blocking,
        emu.ws_url,
        8,
        language,
        config=FAST_STRONG,
        seed=seed,
        timeout=150,
        name_prefix=f"{language}-bot",
    ).result(timeout=240)
    TIMINGS[f"tournament {language}"] = time.monotonic() - started
    return results


@pytest.mark.parametrize("language", LANGUAGES)
def test_eight_bots_finish_a_tournament_with_agreed_standings_and_stored_ratings(
    emulator: Emulator, bots: ProcessPoolExecutor, language: str
) -> None:
    results = play(emulator, bots, language, seed=LANGUAGES.index(language))

    unfinished = [(r.name, r.last_state, r.events) for r in results if not r.finished]
    assert not unfinished, f"bots still playing at the timeout: {unfinished}"
    missing = [r.name for r in results if r.tournament_end is None or r.rating is None]
    assert not missing, f"no tournament_end or rating event for {missing}"
    assert all(r.duels for r in results), "every bot played at least one duel"

    player_ids = {r.player_id for r in results if r.player_id is not None}
    assert len(player_ids) == 8
    ends = [r.tournament_end for r in results if r.tournament_end is not None]
    places = check_final_standings(ends, player_ids)
    tournament_id = ends[0]["tournament_id"]

    by_player = {s["player_id"]: s for s in places}
    for r in results:
        assert r.rating is not None
        assert r.rating["place"] == by_player[r.player_id]["place"]
        assert r.rating["change"] == by_player[r.player_id]["rating_change"]
        assert r.rating["rating"] == r.rating_before + r.rating["change"]

    # Fresh players all start at 1000, so the change depends on the place only: the same for a
    # shared place, and the better the place, the larger the change.
    assert {r.rating_before for r in results} == {1000}
    change_by_place: dict[int, set[int]] = {}
    for s in places:
        change_by_place.setdefault(s["place"], set()).add(s["rating_change"])
    assert all(len(changes) == 1 for changes in change_by_place.values()), change_by_place
    ordered = [next(iter(change_by_place[p])) for p in sorted(change_by_place)]
    assert ordered == sorted(ordered, reverse=True)
    assert len(set(ordered)) == len(ordered)

    check_rating_items(
        emulator,
        tournament_id,
        {r.player_id: r.rating for r in results if r.rating and r.player_id},
        places,
    )
