"""End to end in a browser: a reload at every phase of a tournament resumes the same screen.

The goal: "reload at each phase (lobby, intro, own turn, opponent's turn, spectating, after
elimination, after the end) -> same screen and a usable keyboard". One human seat in headless
Chromium joins a lobby, seven bots fill it, and the page is reloaded (``Page.reload``: the token
is in localStorage, so the new page sends ``session`` with it and applies the resumed snapshot)
at each phase in turn. What the page shows (DOM text: headings, board rows, whose turn, banners,
standings, the on-screen keyboard) is read just before and just after each reload and compared.
On the human's own turn, the resumed keyboard must carry the language's letters and a word typed
on it plus Enter must land on the board.

To catch the opponent's turn, the human's opponent (a bot driven in this process) is slowed down
for that one turn; everything else runs on short clocks. Needs Debian's ``chromium``
(``.ci/setup --full``); without it the test fails, it never skips.
"""

from __future__ import annotations

import asyncio
import random
import string
import time
from pathlib import Path
from typing import Any

import pytest

from infra.emulator import Emulator
from infra.players.bots import Bot, BotConfig
from infra.players.solver import DuelSolver
from tests.e2e.browser import BrowserMissingError, Page, chromium_page, find_chromium
from tests.e2e.support import TIMINGS, EmulatorThread

pytestmark = [pytest.mark.enable_socket, pytest.mark.e2e, pytest.mark.browser]

FAST = BotConfig(strength=1.0, think_ms=(50, 200))
SLOW = BotConfig(strength=1.0, think_ms=(3500, 3500))  # one opponent turn, to reload in
TURN_SECONDS = 15.0  # room for a reload, a resume and typing on 2 busy cores (CI)
INTRO_SECONDS = 2.5

# Everything the screen shows that a resume must restore, read from the DOM.
READ_SCREEN = """(() => {
  const q = (s) => document.querySelector(s);
  const all = (s) => [...document.querySelectorAll(s)];
  const text = (s) => { const el = q(s); return el ? el.textContent : null; };
  const rows = all('.board .brow:not(.input)').map((r) => {
    const tiles = [...r.querySelectorAll('.tile')];
    const me = r.classList.contains('me');
    if (tiles.length === 1 && tiles[0].classList.contains('skip')) return {skipped: true, me};
    const mark = (t) => ['correct', 'present', 'absent'].find((c) => t.classList.contains(c));
    return {me, tiles: tiles.map((t) => t.textContent), marks: tiles.map(mark)};
  });
  const input = q('.board .brow.input');
  const enter = q('#enter');
  return {
    screen: S.screen,
    lobby: text('#lobby-h'),
    lobbyPlayers: all('#app ul.plain li').map((li) => li.textContent),
    intro: text('#intro-h'),
    pairs: all('.overlay .pairs li').map((li) => li.textContent),
    round: text('#round-h'),
    who: (() => { const w = q('.duel-head .who'); if (!w) return null;
      const c = w.cloneNode(true); c.querySelectorAll('.hearts').forEach((x) => x.remove());
      return c.textContent; })(),  // names only: lives may change during a reload
    turn: text('.turn-note'),  // whose turn and "turn N of 6"
    turnMine: !!q('.turn-note.mine'),
    // The last duel's result, shown during the next round's intro (the intro's "last result"
    // line and, behind the intro, that duel's board with its result banner), is left out: the
    // previous round's duels are not in the tournament state, so a page reloaded during an intro
    // cannot show them again (a known gap of the web client). Every other
    // banner must survive a reload.
    banners: q('#intro-h') ? all('.card .banner:not(.last-result):not(.result)')
      .map((b) => b.textContent) : all('.card .banner').map((b) => b.textContent),
    rows,
    inputRow: !!input,
    length: input ? input.querySelectorAll('.tile').length : 0,
    typed: input ? input.getAttribute('aria-label') : null,
    letterKeys: all('.keyboard .key:not(.wide)').map((k) => k.textContent),
    keyboardEnabled: !!enter && !enter.disabled,
    standings: all('table.standings tbody tr').map((tr) =>
      [...tr.querySelectorAll('td')].slice(1, 2).map((td) => td.textContent).join('')
      + ' ' + ((tr.querySelector('.hearts') || {}).textContent || '')),
    standingsTables: all('table.standings').length,
    over: text('#st-h'),
    winner: all('#app .card > p.big').map((p) => p.textContent).join(' | '),
    join: !!q('#join'),
    again: !!q('#again'),
    app: q('#app').innerText,
  };
})()"""

ON_SCREEN_KEY = (
    "[...document.querySelectorAll('.keyboard .key')].find((b) => b.textContent === {!r})"
)

MY_TURN = (
    "(() => { const e = document.querySelector('#enter');"
    " return !!e && !e.disabled && !!document.querySelector('.board .brow.input')"
    " && !document.querySelector('.overlay'); })()"
)


def their_turn(opponent: Bot) -> str:
    """JavaScript: on screen, our live duel against ``opponent``, whose turn it is."""
    return (
        "(() => { const n = document.querySelector('.turn-note'); const d = S.duels[S.myDuel];"
        " return !!d && S.view === S.myDuel && !d.over"
        f" && d.next_player === {opponent.player_id!r}"
        " && !!n && !n.classList.contains('mine')"
        " && !!document.querySelector('.keyboard') && !document.querySelector('.overlay'); })()"
    )


async def slow_down_the_opponent(page: Page, bots: list[Bot]) -> Bot:
    """Slow the current opponent's next turn down (enough to reload in); the others play fast."""
    opponent_id = await page.eval("S.duels[S.myDuel].players.find((p) => p !== S.me.id)")
    opponent = next(b for b in bots if b.player_id == opponent_id)
    for bot in bots:
        bot.config = SLOW if bot is opponent else FAST
    return opponent


def own_rows(state: dict[str, Any]) -> int:
    return sum(1 for r in state["rows"] if r["me"])


ARTIFACTS = Path(__file__).parent / "artifacts"


async def shoot(page: Page, phase: str) -> None:
    """The resumed screen of ``phase``, for review (``tests/e2e/artifacts/``, git ignores it)."""
    ARTIFACTS.mkdir(exist_ok=True)
    slug = phase.replace(" ", "-").replace("'", "")
    await page.screenshot(ARTIFACTS / f"reload-{slug}.png")


async def reload(page: Page, ready: str, timeout: float = 20) -> dict[str, Any]:
    """Reload the page, wait until ``ready`` holds on the resumed page; what it shows."""
    await page.eval("window.__beforeReload = true")
    await page.call("Page.reload", ignoreCache=True)
    await page.wait_for("window.__beforeReload === undefined && typeof S === 'object'", timeout)
    await page.wait_for(f"S.open && S.me && ({ready})", timeout)
    state: dict[str, Any] = await page.eval(READ_SCREEN)
    return state


async def type_and_enter(page: Page, tiles: tuple[str, ...]) -> None:
    """First letter on the on-screen keyboard, the rest on the physical one, then Enter."""
    await page.click(ON_SCREEN_KEY.format(tiles[0]))
    for tile in tiles[1:]:
        await page.press(tile)
    await page.press("Enter")


def solver_for(state: dict[str, Any]) -> DuelSolver:
    solver = DuelSolver("en", state["length"])
    for row in state["rows"]:
        if "tiles" in row:
            solver.add_row(row["tiles"], row["marks"])
    return solver


def assert_same_standings(before: dict[str, Any], after: dict[str, Any]) -> None:
    """The same players; the bots' duels may have ended during the reload (a life lost, never
    one gained), the human's own line is unchanged."""

    def lives(state: dict[str, Any]) -> dict[str, int]:
        return {line.rsplit(" ", 1)[0]: line.count("♥") for line in state["standings"]}

    b, a = lives(before), lives(after)
    assert set(a) == set(b), (before["standings"], after["standings"])
    assert all(a[n] <= b[n] for n in b), (before["standings"], after["standings"])
    mine = [n for n in b if "(you)" in n]
    assert len(mine) == 1, before["standings"]
    assert a[mine[0]] == b[mine[0]], (before["standings"], after["standings"])


def assert_keyboard(state: dict[str, Any], enabled: bool) -> None:
    assert sorted(state["letterKeys"]) == list(string.ascii_lowercase), state["letterKeys"]
    assert state["keyboardEnabled"] is enabled, state


def test_a_reload_at_every_phase_resumes_the_same_screen_and_a_usable_keyboard(
    tmp_path: Path,
) -> None:
    try:
        find_chromium()
    except BrowserMissingError as exc:
        pytest.fail(str(exc))

    checked: list[str] = []

    async def scenario(emu: Emulator) -> dict[str, Any]:
        async with chromium_page(tmp_path) as page:
            me = await page.open_home(emu.url)

            # -- lobby -------------------------------------------------------------------------
            await page.join_lobby()
            before = await page.eval(READ_SCREEN)
            after = await reload(
                page, "S.screen === 'lobby' && !!document.querySelector('#lobby-h')"
            )
            assert after["lobby"] == before["lobby"]
            assert after["lobbyPlayers"] == before["lobbyPlayers"]
            assert await page.eval("S.me.id") == me, "the reload resumed the same player"
            checked.append("lobby")
            await shoot(page, checked[-1])

            bots = [Bot(emu.ws_url, "en", FAST, name=f"bot{i + 1}", seed=100 + i) for i in range(7)]
            tasks = [asyncio.create_task(bot.run(1)) for bot in bots]
            try:
                await play(page, me, bots, checked)
            finally:
                _, pending = await asyncio.wait(tasks, timeout=60)
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
            return {"exceptions": list(page.exceptions)}

    started = time.monotonic()
    with EmulatorThread(
        turn_seconds=TURN_SECONDS, intro_seconds=INTRO_SECONDS, reconnect_seconds=20
    ) as emu:
        out = asyncio.run(asyncio.wait_for(scenario(emu), 240))
    TIMINGS["browser reloads at every phase"] = time.monotonic() - started
    assert checked == [
        "lobby",
        "intro",
        "own turn",
        "opponent's turn",
        "after elimination",
        "spectating",
        "after the end",
        "home after the end",
    ]
    assert not out["exceptions"], f"uncaught JavaScript errors: {out['exceptions']}"


async def play(page: Page, me: str, bots: list[Bot], checked: list[str]) -> None:
    # -- intro: the round overlay with its pairs ---------------------------------------------
    # The intro is short (INTRO_SECONDS): if it ended during the reload, the resumed page rightly
    # shows the duels instead, and the next round's intro is tried.
    for _ in range(3):
        await page.wait_for("!!document.querySelector('#intro-h')", 60)
        before = await page.eval(READ_SCREEN)
        after = await reload(page, "S.screen === 'tournament' && !!S.round")
        if after["intro"] is not None or after["round"] != before["intro"]:
            break
    assert after["intro"] == before["intro"], (before, after)
    assert after["pairs"] == before["pairs"], (before, after)
    assert after["screen"] == "tournament"
    checked.append("intro")
    await shoot(page, checked[-1])

    # -- own turn: same board, a keyboard with the 26 letters that types and submits ---------
    # Words are "blind" (valid, chosen without the board's feedback): the human should lose.
    rng = random.Random(11)
    await page.wait_for(MY_TURN, 60)
    opponent = await slow_down_the_opponent(page, bots)
    before = await page.eval(READ_SCREEN)
    after = await reload(page, MY_TURN)
    for key in ("screen", "round", "who", "turn", "turnMine", "rows", "length"):
        assert after[key] == before[key], (key, before[key], after[key])
    assert_same_standings(before, after)
    assert after["turnMine"]
    assert_keyboard(after, enabled=True)
    word = DuelSolver("en", after["length"]).choose(0.0, rng)
    await type_and_enter(page, word)
    try:
        await page.wait_for(
            f"document.querySelectorAll('.board .brow.me:not(.input)').length > {own_rows(after)}",
            TURN_SECONDS,
        )
    except AssertionError:
        shown = await page.eval("document.querySelector('#message').textContent")
        raise AssertionError(
            f"the guess {''.join(word)!r} typed after the reload made no row; the page said"
            f" {shown!r} (seen: 'not_in_tournament', likely the old socket's $disconnect"
            " clearing the tournament's connection after the new socket had resumed)"
        ) from None
    state = await page.eval(READ_SCREEN)
    mine = [r for r in state["rows"] if r["me"]]
    assert mine[-1].get("tiles") == list(word), "the typed word is the new row"
    checked.append("own turn")
    await shoot(page, checked[-1])

    # -- opponent's turn: same board, whose turn, the keyboard shown but idle ----------------
    # Caught right after one of our guesses, with that opponent slowed down beforehand (if the
    # guess above ended the duel, the next duel's turn is used).
    deadline = time.monotonic() + 60
    while not await page.eval(their_turn(opponent)):
        assert time.monotonic() < deadline, "never saw the opponent's turn"
        if await page.eval(MY_TURN):
            opponent = await slow_down_the_opponent(page, bots)
            state = await page.eval(READ_SCREEN)
            await type_and_enter(page, DuelSolver("en", state["length"]).choose(0.0, rng))
            await page.wait_for(f"!({MY_TURN})", TURN_SECONDS)
        await asyncio.sleep(0.05)
    before = await page.eval(READ_SCREEN)
    after = await reload(page, their_turn(opponent))
    for key in ("screen", "round", "who", "turn", "turnMine", "rows"):
        assert after[key] == before[key], (key, before[key], after[key])
    assert_same_standings(before, after)
    assert not after["turnMine"]
    assert_keyboard(after, enabled=False)
    opponent.config = FAST
    checked.append("opponent's turn")
    await shoot(page, checked[-1])

    # -- lose on purpose: blind guesses until eliminated --------------------------------------
    deadline = time.monotonic() + 150
    last: tuple[Any, int] | None = None
    while not await page.eval("S.eliminated"):
        assert time.monotonic() < deadline, "the human was never eliminated"
        if await page.eval(MY_TURN):
            state = await page.eval(READ_SCREEN)
            key = (await page.eval("S.myDuel"), len(state["rows"]))
            if key != last and state["length"]:  # the board's length may not be drawn yet
                for _ in range(len(state["typed"] or "")):
                    await page.press("Backspace")
                blind = DuelSolver("en", state["length"]).choose(0.0, rng)
                await type_and_enter(page, blind)
                last = key
        await asyncio.sleep(0.05)

    # -- after elimination: the tournament screen, the "you are out" banner, the standings ---
    # The bots play fast: a round may end during a reload. That is the game moving on, not a
    # different screen, so the comparison is made on a reload that stayed within one round.
    # ``eliminated`` and the standings that show it can come in separate messages (the last
    # life went in one change, the standings of another change follow): the screen is read
    # once both have arrived, else "before" may still show the life being lost.
    await page.wait_for("S.standings.find((s) => s.player_id === S.me.id).eliminated", 30)
    for _ in range(3):
        before = await page.eval(READ_SCREEN)
        assert before["screen"] == "tournament", before
        after = await reload(page, "S.screen === 'tournament' && S.eliminated && !!S.round")
        if after["round"] == before["round"]:
            break
    assert after["round"] == before["round"], (before, after)
    assert after["banners"] == before["banners"], (before, after)
    assert_same_standings(before, after)
    assert await page.eval("S.standings.find((s) => s.player_id === S.me.id).eliminated")
    assert after["letterKeys"] == [], "no keyboard once out"
    checked.append("after elimination")
    await shoot(page, checked[-1])

    # -- spectating: a later round, watching a bots' duel ------------------------------------
    out_round = await page.eval("S.round.round")
    await page.wait_for(
        f"S.screen === 'end' || (S.round.round > {out_round} && serverNow() >= S.introUntil"
        " && !!document.querySelector('.duel-head .who'))",
        60,
    )
    assert await page.eval("S.screen") == "tournament", "a round is played after elimination"
    # The page redraws on a 250 ms tick: for up to one tick after the intro's deadline the DOM
    # still shows the intro and, behind it, the spectator's own last (lost) duel. Waiting for the
    # intro overlay to be gone from the DOM reads the spectated duel, not that final board.
    watching = (
        "S.screen === 'tournament' && !!S.round && serverNow() >= S.introUntil"
        " && !document.querySelector('#intro-h')"
        " && !!document.querySelector('.duel-head .who')"
    )
    for _ in range(3):
        await page.wait_for(watching, 30)
        before = await page.eval(READ_SCREEN)
        after = await reload(page, watching)
        if after["round"] == before["round"]:
            break
    assert after["round"] == before["round"], (before, after)
    assert after["who"] == before["who"], "watching the same duel"
    assert after["rows"][: len(before["rows"])] == before["rows"], "the board so far is kept"
    assert after["banners"] == before["banners"], (before, after)
    assert_same_standings(before, after)
    assert after["letterKeys"] == [], "a spectator has no keyboard"
    checked.append("spectating")
    await shoot(page, checked[-1])

    # -- after the end: the final standings once, then home -----------------------------------
    await page.wait_for("S.screen === 'end'", 120)
    before = await page.eval(READ_SCREEN)
    after = await reload(page, "S.screen === 'end'")
    for key in ("over", "winner", "banners", "standings"):
        assert after[key] == before[key], (key, before[key], after[key])
    assert "Tournament over" in after["app"]
    assert after["standingsTables"] == 1, "the final standings, once"
    assert len(after["standings"]) == 8
    assert after["again"]
    after = await reload(page, "S.screen === 'home' && !!document.querySelector('#join')")
    checked.append("after the end")
    await shoot(page, checked[-1])
    assert after["join"]
    assert after["standingsTables"] == 0
    checked.append("home after the end")
    await shoot(page, checked[-1])
