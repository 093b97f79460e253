"""End to end in a browser: a human seat in headless Chromium plays a bot lobby to the end.

The web client served by the emulator is driven like a person would: the Play button, letters
typed on the physical keyboard and on the on-screen one, the on-screen Enter. Words come from
the bots' solver fed with the board as the page renders it (tiles and their colours), so every
guess is consistent with the feedback. On a 1366x768 desktop. Each round intro must show the
last duel's result, with that duel's final board and result still behind it. The final screen
must show the place and rating change, matching what the server stored, and the standings best
place first; axe-core finds no serious or critical violation there. Screenshots of the first
turn and the final screen go to ``tests/e2e/artifacts/`` (git ignores it).

Needs Debian's ``chromium`` and axe-core (``.ci/setup --full``); without them the test fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from infra.emulator import Emulator
from infra.players.bots import BotConfig, BotResult, play_tournament
from infra.players.solver import DuelSolver
from tests.e2e.browser import BrowserMissingError, Page, chromium_page, find_chromium
from tests.e2e.support import EmulatorThread, check_final_standings, rating_records

pytestmark = [pytest.mark.enable_socket, pytest.mark.e2e, pytest.mark.browser]

ARTIFACTS = Path(__file__).parent / "artifacts"
AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"

# What the page shows, read from the DOM (S.myDuel only to tell one duel from the next).
READ_PAGE = """(() => {
  const q = (s) => document.querySelector(s);
  const enter = q('#enter');
  const input = q('.board .brow.input');
  const rows = [...document.querySelectorAll('.board .brow:not(.input)')].map((r) => {
    const tiles = [...r.querySelectorAll('.tile')];
    const me = r.classList.contains('me');
    if (tiles.length === 1 && tiles[0].classList.contains('skip')) return {skipped: true, me};
    const mark = (t) => ['correct', 'present', 'absent'].find((c) => t.classList.contains(c));
    return {me, tiles: tiles.map((t) => t.textContent), marks: tiles.map(mark)};
  });
  const last = q('.overlay .last-result');
  return {end: !!q('#again'), myTurn: !!enter && !enter.disabled, duel: S.myDuel,
    lastResult: last && last.textContent,
    boardResult: last && (q('#app .card .banner.result') || {}).textContent,
    length: input ? input.querySelectorAll('.tile').length : 0,
    typed: input ? input.getAttribute('aria-label') : null, rows};
})()"""

ON_SCREEN_KEY = (
    "[...document.querySelectorAll('.keyboard .key')].find((b) => b.textContent === {!r})"
)

PLACE_LINE = re.compile(r"Place (\d+) · rating ([+-]?\d+) → (\d+)")


class HumanAtTheKeyboard:
    """Plays the page: reads the board, picks a consistent word, types it, presses Enter."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.rng = random.Random(7)
        self.last: tuple[Any, int] | None = None
        self.last_tiles: tuple[str, ...] = ()
        self.sent_at = 0.0
        self.rejected: set[tuple[str, ...]] = set()
        self.guesses = 0
        self.own_rows_seen = 0
        self.intro_results: set[tuple[str, str | None]] = set()
        self.shot: Path | None = None

    async def play_until_the_end(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = await self.page.eval(READ_PAGE)
            if state["end"]:
                return
            if state["lastResult"]:  # a round intro: the last duel's result and final board stay
                self.intro_results.add((state["lastResult"], state["boardResult"]))
            self.own_rows_seen = max(
                self.own_rows_seen, sum(1 for r in state["rows"] if r["me"] and "tiles" in r)
            )
            if state["myTurn"] and state["length"]:
                await self.maybe_move(state)
            await asyncio.sleep(0.05)
        raise AssertionError("the browser never reached the end screen")

    async def maybe_move(self, state: dict[str, Any]) -> None:
        key = (state["duel"], len(state["rows"]))
        if key == self.last:
            if time.monotonic() - self.sent_at < 1.5:
                return  # our guess is on its way
            self.rejected.add(self.last_tiles)  # no new row: the word was refused; try another
        solver = DuelSolver("en", state["length"])
        for row in state["rows"]:
            if "tiles" in row:
                solver.add_row(row["tiles"], row["marks"])
        solver.rejected |= self.rejected
        tiles = solver.choose(1.0, self.rng)
        await self.type_word(tiles, state)
        await self.page.click("document.querySelector('#enter')")
        self.last, self.last_tiles, self.sent_at = key, tiles, time.monotonic()
        self.guesses += 1
        if self.guesses == 1:  # the desktop screen in play, for review
            self.shot = await self.page.screenshot(ARTIFACTS / "desktop-turn.png")

    async def type_word(self, tiles: tuple[str, ...], state: dict[str, Any]) -> None:
        for _ in range(len(state["typed"] or "")):
            await self.page.press("Backspace")
        # First letter on the on-screen keyboard, the rest on the physical one.
        await self.page.click(ON_SCREEN_KEY.format(tiles[0]))
        for tile in tiles[1:]:
            await self.page.press(tile)


def test_a_human_in_the_browser_plays_a_bot_lobby_to_the_final_screen(tmp_path: Path) -> None:
    try:
        find_chromium()
    except BrowserMissingError as exc:
        pytest.fail(str(exc))

    ARTIFACTS.mkdir(exist_ok=True)

    async def scenario(emu: Emulator) -> dict[str, Any]:
        async with chromium_page(tmp_path) as page:
            await page.viewport(1366, 768, phone=False)
            me = await page.open_home(emu.url)
            await page.join_lobby()
            bots = asyncio.create_task(
                play_tournament(
                    emu.ws_url,
                    7,
                    "en",
                    config=BotConfig(strength=0.9, think_ms=(50, 250)),
                    seed=21,
                    timeout=180,
                )
            )
            human = HumanAtTheKeyboard(page)
            try:
                await human.play_until_the_end(timeout=180)
            finally:
                results: list[BotResult] = await bots
            end_text = await page.eval("document.querySelector('#app').innerText")
            standings_rows = await page.eval(
                "document.querySelectorAll('table.standings tbody tr').length"
            )
            shown_places = await page.eval(
                "[...document.querySelectorAll('table.standings tbody tr td:first-child')]"
                ".map((td) => Number(td.textContent))"
            )
            # Let a toast still on screen (e.g. "You are out") fade, for a readable picture.
            with contextlib.suppress(AssertionError):
                await page.wait_for(
                    "!document.querySelector('#message').classList.contains('show')", 8
                )
            shot = await page.screenshot(tmp_path / "desktop-final.png")
            violations = (
                await page.axe(AXE) if AXE.exists() else [{"impact": "serious", "id": "no axe"}]
            )
            return {
                "axe": [v for v in violations if v["impact"] in ("serious", "critical")],
                "me": me,
                "results": results,
                "human": human,
                "end_text": end_text,
                "standings_rows": standings_rows,
                "places": shown_places,
                "shot": shot,
                "exceptions": list(page.exceptions),
            }

    with EmulatorThread(turn_seconds=3, intro_seconds=1.0, reconnect_seconds=10) as emu:
        out = asyncio.run(asyncio.wait_for(scenario(emu), 300))
        shot: Path = out["shot"]
        print(f"\nbrowser screenshot: {shot} ({shot.stat().st_size} bytes)")
        if shot.stat().st_size < 300_000:
            ARTIFACTS.mkdir(exist_ok=True)
            shutil.copy(shot, ARTIFACTS / shot.name)
            print(f"copied to {ARTIFACTS / shot.name}")

        results, me = out["results"], out["me"]
        assert all(r.finished for r in results), [(r.name, r.last_state) for r in results]
        ends = [r.tournament_end for r in results if r.tournament_end is not None]
        places = check_final_standings(ends, {r.player_id for r in results} | {me})
        mine = next(s for s in places if s["player_id"] == me)

        human: HumanAtTheKeyboard = out["human"]
        assert human.guesses >= 1, "the human typed at least one guess"
        assert human.own_rows_seen >= 1, "a typed guess appeared on the board"
        # The final board of your duel stays, with its result, through the next intro.
        assert human.intro_results, "no round intro showed the last duel's result"
        for intro_line, board_line in human.intro_results:
            assert intro_line == board_line, (intro_line, board_line)

        assert "Tournament over" in out["end_text"]
        shown = PLACE_LINE.search(out["end_text"])
        assert shown, f"the final screen shows no place: {out['end_text']!r}"
        place, change, rating = (int(g) for g in shown.groups())
        assert place == mine["place"]
        assert change == mine["rating_change"]
        ratings, _ = rating_records(emu, ends[0]["tournament_id"])
        assert rating == ratings[me]["rating_after"]
        assert out["standings_rows"] == 8
        assert out["places"] == sorted(out["places"]), "final standings: best place first"
        assert shot.stat().st_size > 0
        assert not out["exceptions"], f"uncaught JavaScript errors: {out['exceptions']}"
        assert not out["axe"], f"axe-core on the final screen: {out['axe']}"
