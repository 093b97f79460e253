"""End to end in a browser: after a tournament, a player looks back at it (issue 38, item 6).

A human seat in headless Chromium on a phone (390x844, touch) plays a bot lobby to the end
(the same human as ``test_browser_plays_a_tournament.py``: the bots' solver fed with the board
the page shows). The history is written off the play path, from the table's stream, so every
check below waits for it to appear ("eventually") and never for a fixed time. Then, on the
phone, through the page's own controls:

* The end screen links to the replay; the link opens the replay of that tournament: the places
  as on the end screen, the secret word shown, rows stepped with the arrow keys (right/left a
  row, down/up a duel, Page Down a round, End the whole duel) and with the buttons; "Export
  JSON" downloads the record as a ``.json`` file whose content is the record shown; a reload
  keeps the replay on screen (the view's address).
* The profile shows the rating chart with the new point (the last point is the rating after
  this tournament) and its table alternative, in the page for screen readers, with the same
  points; the toggle shows the table.
* The rating leaderboard and the weekly one of the tournament's language highlight the
  player's own line (``aria-current``) with the rating / points the server stored.
* The history list shows the tournament (place of 8) and its link opens its replay.

On each new screen the page never scrolls sideways and axe-core finds no serious or critical
violation; no uncaught JavaScript error. Screenshots go to ``tests/e2e/artifacts/``.

Needs Debian's ``chromium`` and axe-core (``.ci/setup --full``); without them the test fails.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from infra.emulator import Emulator
from infra.players.bots import BotConfig, BotResult, play_tournament
from tests.e2e.browser import BrowserMissingError, Page, chromium_page, find_chromium
from tests.e2e.support import EmulatorThread, check_final_standings, rating_records
from tests.e2e.test_browser_plays_a_tournament import HumanAtTheKeyboard

pytestmark = [pytest.mark.enable_socket, pytest.mark.e2e, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
ARTIFACTS = Path(__file__).parent / "artifacts"
HISTORY_WAIT = 90.0
"""Seconds the history (written from the stream, eventually) may take to show."""

# The replay as the page shows it, from the DOM only.
READ_REPLAY = """(() => {
  const q = (s) => document.querySelector(s);
  const rows = [...document.querySelectorAll('.replay-view .board .brow')].map((r) => {
    const tiles = [...r.querySelectorAll('.tile')];
    if (tiles.length === 1 && tiles[0].classList.contains('skip')) return {skipped: true};
    const mark = (t) => ['correct', 'present', 'absent'].find((c) => t.classList.contains(c));
    return {tiles: tiles.map((t) => t.textContent), marks: tiles.map(mark)};
  });
  return {round: q('#rp-round') && q('#rp-round').textContent,
    position: q('#rp-pos') && q('#rp-pos').textContent,
    secret: q('#rp-secret') && q('#rp-secret').textContent,
    duel: q('#rp-duel') && q('#rp-duel').textContent,
    places: [...document.querySelectorAll('#replay-places tbody tr')].map((tr) =>
      Number(tr.querySelector('td').textContent)),
    rows};
})()"""

# The replay's record as the page holds it (what the server answered), for the expectations.
RECORD = "P.replay"

NO_SIDEWAYS_SCROLL = "document.documentElement.scrollWidth <= window.innerWidth"

ME_ROW = """((table) => {
  const rows = [...document.querySelectorAll(table + ' tbody tr[aria-current="true"]')];
  return rows.map((tr) => ({player: tr.dataset.player, cells: [...tr.querySelectorAll('td')]
    .map((td) => td.textContent), me: tr.classList.contains('me')}));
})"""


async def press_key(page: Page, key: str, code: int) -> None:
    """A non-printable key (arrows, Page Down, End) pressed and released."""
    await page.call(
        "Input.dispatchKeyEvent", type="rawKeyDown", key=key, code=key, windowsVirtualKeyCode=code
    )
    await page.call("Input.dispatchKeyEvent", type="keyUp", key=key, code=key)


async def until_shown(page: Page, ready: str, timeout: float = HISTORY_WAIT) -> None:
    """Wait for ``ready``; while the view shows an error (e.g. the record is not written yet),
    press its "Try again" button, as a person would."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await page.eval(ready):
        if loop.time() > deadline:
            state = await page.eval("JSON.stringify({screen: S.screen, error: P.error})")
            raise AssertionError(f"timed out waiting for {ready} ({state})")
        if await page.eval("!!document.querySelector('#view-retry')"):
            await page.click("document.querySelector('#view-retry')")
        await asyncio.sleep(1)


async def refresh_until(page: Page, ready: str, timeout: float = HISTORY_WAIT) -> None:
    """Press the view's Refresh button until ``ready`` holds: the data is written eventually."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await page.eval(ready):
        if loop.time() > deadline:
            state = await page.eval("JSON.stringify({screen: S.screen, error: P.error})")
            raise AssertionError(f"timed out waiting for {ready} ({state})")
        await page.wait_for("!P.loading", 15)
        if await page.eval(ready):
            return
        await asyncio.sleep(0.5)
        await page.click("document.querySelector('#view-refresh, #view-retry')")
        await asyncio.sleep(0.25)


async def check_screen(page: Page, name: str, seen: dict[str, Any]) -> None:
    """No sideways scroll, axe-core clean (serious/critical), a screenshot."""
    assert await page.eval(NO_SIDEWAYS_SCROLL), f"{name}: the page scrolls sideways"
    violations = await page.axe(AXE) if AXE.exists() else [{"impact": "serious", "id": "no axe"}]
    seen["axe"][name] = [v for v in violations if v["impact"] in ("serious", "critical")]
    await page.screenshot(ARTIFACTS / f"progression-{name}.png")


def test_after_a_tournament_the_phone_shows_replay_profile_boards_and_history(
    tmp_path: Path,
) -> None:
    try:
        find_chromium()
    except BrowserMissingError as exc:
        pytest.fail(str(exc))
    ARTIFACTS.mkdir(exist_ok=True)

    async def scenario(emu: Emulator) -> dict[str, Any]:
        seen: dict[str, Any] = {"axe": {}}
        async with chromium_page(tmp_path) as page:
            await page.viewport(390, 844, phone=True)
            me = await page.open_home(emu.url)
            await page.join_lobby()
            bots = asyncio.create_task(
                play_tournament(
                    emu.ws_url,
                    7,
                    "en",
                    config=BotConfig(strength=0.9, think_ms=(50, 250)),
                    seed=38,
                    timeout=180,
                )
            )
            human = HumanAtTheKeyboard(page)
            try:
                await human.play_until_the_end(timeout=180)
            finally:
                results: list[BotResult] = await bots
            seen |= {"me": me, "results": results}
            seen["end"] = await page.eval("S.end")
            tid = seen["end"]["tournament_id"]

            # -- the end screen's link opens this tournament's replay -------------------------
            assert await page.eval("!!document.querySelector('#replay-link')")
            await page.click("document.querySelector('#replay-link')")
            await until_shown(page, "!!document.querySelector('#rp-pos')")
            assert await page.eval("location.hash") == f"#replay/{tid}"
            record = await page.eval(RECORD)
            seen["record"] = record
            seen["replay first"] = await page.eval(READ_REPLAY)
            await check_screen(page, "replay", seen)

            # keyboard: focus on the page (not a field), then the keys step through the record
            await page.eval("document.activeElement && document.activeElement.blur()")
            steps: list[tuple[str, dict[str, Any]]] = []
            for key, code in (
                ("ArrowRight", 39),
                ("ArrowRight", 39),
                ("ArrowLeft", 37),
                ("End", 35),
                ("ArrowDown", 40),
                ("ArrowUp", 38),
                ("PageDown", 34),
            ):
                await press_key(page, key, code)
                steps.append((key, await page.eval(READ_REPLAY)))
            seen["replay keys"] = steps
            # and the buttons
            await page.click("document.querySelector('#rp-next')")
            seen["replay button"] = await page.eval(READ_REPLAY)

            # Export JSON: the download's name and content (the anchor's click is recorded)
            await page.eval(
                "window.__downloads = []; HTMLAnchorElement.prototype.click = function () {"
                " window.__downloads.push({name: this.download, href: this.href}); }; true"
            )
            await page.click("document.querySelector('#export-json')")
            download = await page.wait_for("window.__downloads[0]", 10)
            text = await page.eval(f"fetch({download['href']!r}).then((r) => r.text())")
            seen["download"] = {"name": download["name"], "record": json.loads(text)}

            # a reload keeps the replay (its address), loaded once the session is back
            await page.eval("window.__before_reload = true")
            await page.call("Page.reload")
            await asyncio.sleep(1)
            await until_shown(
                page, "!window.__before_reload && !!document.querySelector('#rp-pos')"
            )
            seen["replay reloaded"] = await page.eval("[S.screen, P.replay.tournament_id]")

            # -- the profile: the chart's new point and its table ------------------------------
            await page.click("document.querySelector('#nav-profile')")
            has_point = (
                "!!(P.profile && P.profile.rating_history.some((x) => x.tournament_id === "
                f"{tid!r}) && document.querySelector('#rating-chart'))"
            )
            await refresh_until(page, has_point)
            seen["profile"] = await page.eval("P.profile")
            seen["chart"] = await page.eval(
                """(() => {
                  const svg = document.querySelector('#rating-chart');
                  const box = svg.getBoundingClientRect();
                  const wrap = document.querySelector('#rating-table').parentElement;
                  return {
                    label: svg.getAttribute('aria-label'), role: svg.getAttribute('role'),
                    width: box.width, height: box.height, viewport: window.innerWidth,
                    points: [...svg.querySelectorAll('circle.point')].map((c) =>
                      Number(c.dataset.rating)),
                    last: Number(svg.querySelector('circle.point.last').dataset.rating),
                    axisLabels: [...svg.querySelectorAll('text')].map((t) => t.textContent),
                    tableRows: [...document.querySelectorAll('#rating-table tbody tr')].map(
                      (tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
                    tableHidden: wrap.classList.contains('sr-only'),
                    stat: document.querySelector('[data-stat="stat_rating"]').textContent,
                  };
                })()"""
            )
            await page.click("document.querySelector('#chart-table-toggle')")
            seen["table shown"] = await page.eval(
                "({expanded: document.querySelector('#chart-table-toggle')"
                ".getAttribute('aria-expanded'), hidden: document.querySelector('#rating-table')"
                ".parentElement.classList.contains('sr-only'), height: document.querySelector("
                "'#rating-table').getBoundingClientRect().height})"
            )
            await check_screen(page, "profile", seen)

            # -- the rating leaderboard: my line highlighted ----------------------------------
            await page.click("document.querySelector('#nav-leaderboard')")
            await refresh_until(
                page, "!!(P.leaderboard && P.leaderboard.board === 'rating' && P.leaderboard.me)"
            )
            seen["rating board"] = await page.eval("P.leaderboard")
            seen["rating rows"] = await page.eval(
                f"[...{ME_ROW}('#board-around'), ...{ME_ROW}('#board-top')]"
            )
            await check_screen(page, "leaderboard-rating", seen)

            # -- the weekly leaderboard of the tournament's language --------------------------
            await page.click("document.querySelector('#board-weekly')")
            await refresh_until(
                page,
                "!!(P.leaderboard && P.leaderboard.board === 'weekly' && P.leaderboard.me"
                " && P.leaderboard.me.rank)",
            )
            seen["weekly board"] = await page.eval("P.leaderboard")
            seen["weekly rows"] = await page.eval(f"{ME_ROW}('#board-top')")
            seen["weekly picker"] = await page.eval("document.querySelector('#board-lang').value")
            await check_screen(page, "leaderboard-weekly", seen)

            # -- the history list, and its link to the replay ---------------------------------
            await page.click("document.querySelector('#nav-history')")
            entry = f"document.querySelector('#games li[data-key=\"g-{tid}\"]')"
            await refresh_until(page, f"!!{entry}")
            seen["history entry"] = await page.eval(f"{entry}.innerText")
            await check_screen(page, "history", seen)
            await page.click(f"{entry}.querySelector('a.replay-link')")
            await until_shown(page, "!!document.querySelector('#rp-pos')")
            seen["history replay"] = await page.eval("[location.hash, P.replay.tournament_id]")

        seen["exceptions"] = list(page.exceptions)
        return seen

    with EmulatorThread(turn_seconds=3, intro_seconds=1.0, reconnect_seconds=10) as emu:
        seen = asyncio.run(asyncio.wait_for(scenario(emu), 420))
        me: str = seen["me"]
        results: list[BotResult] = seen["results"]
        ends = [r.tournament_end for r in results if r.tournament_end is not None]
        places = check_final_standings(ends, {str(r.player_id) for r in results} | {me})
        tid = ends[0]["tournament_id"]
        assert seen["end"]["tournament_id"] == tid
        ratings, profiles = rating_records(emu, tid)

    mine = ratings[me]
    place_of = {s["player_id"]: s["place"] for s in places}

    # the replay: the tournament played, its places, the secret, the keys and buttons
    record = seen["record"]
    assert record["format"] == "wordle-tournament-record"
    assert record["tournament_id"] == tid
    assert {p["player_id"]: p["place"] for p in record["players"]} == place_of
    first = seen["replay first"]
    duel = record["rounds"][0]["duels"][0]
    assert first["places"] == sorted(place_of.values()), "the record's places, best first"
    assert duel["word"].upper() in first["secret"], "the secret word is shown"
    assert first["rows"] == [], "the replay starts before the first row"
    keys = dict(enumerate(seen["replay keys"]))

    def shown(row: dict[str, Any]) -> dict[str, Any]:
        if row["skipped"]:
            return {"skipped": True}
        return {"tiles": row["tiles"], "marks": row["marks"]}

    rows = [shown(r) for r in duel["rows"]]
    assert keys[0][1]["rows"] == rows[:1], "ArrowRight shows the first row"
    # ArrowRight again: the second row (past the last row: the next duel, from its start)
    assert keys[1][1]["rows"] == (rows[:2] if len(rows) > 1 else []), "ArrowRight again"
    assert keys[2][1]["rows"] == rows[:1], "ArrowLeft steps back"
    assert keys[3][1]["rows"] == rows, "End shows the whole duel"
    assert f"{len(rows)} of {len(rows)}" in keys[3][1]["position"]
    second = record["rounds"][0]["duels"][1]
    assert second["word"].upper() in keys[4][1]["secret"], "ArrowDown: the next duel"
    assert keys[4][1]["rows"] == []
    assert keys[5][1]["secret"] == keys[3][1]["secret"], "ArrowUp: back to the first duel"
    assert keys[6][1]["round"].startswith("Round 2"), "Page Down: the next round"
    after_button = seen["replay button"]
    next_duel = record["rounds"][1]["duels"][0]
    assert after_button["rows"] == [shown(r) for r in next_duel["rows"][:1]], "Next row button"

    assert seen["replay reloaded"] == ["replay", tid], "a reload keeps the replay"
    download = seen["download"]
    assert download["name"] == f"wordle-tournament-{tid}.json"
    assert download["record"] == record, "the export is the record shown"

    # the profile: the new point on the chart and in its table
    profile = seen["profile"]
    point = next(x for x in profile["rating_history"] if x["tournament_id"] == tid)
    assert (point["rating_before"], point["rating_after"], point["place"]) == (
        mine["rating_before"],
        mine["rating_after"],
        mine["place"],
    )
    chart = seen["chart"]
    assert chart["role"] == "img", "the chart is an image to assistive technology"
    assert chart["label"], "the chart has a text label"
    assert chart["width"] <= chart["viewport"], chart
    assert chart["height"] > 100, chart
    assert chart["last"] == mine["rating_after"] == profiles[me], "the last point: this one"
    assert chart["points"] == [profile["rating_history"][0]["rating_before"]] + [
        x["rating_after"] for x in profile["rating_history"]
    ]
    assert "Rating" in chart["axisLabels"], "the rating axis is labelled"
    assert chart["tableHidden"], "the table is in the page for screen readers, visually hidden"
    newest = chart["tableRows"][0]
    assert str(mine["rating_before"]) in newest, newest
    assert str(mine["rating_after"]) in newest, newest
    assert len(chart["tableRows"]) == len(profile["rating_history"])
    assert chart["stat"] == str(profiles[me])
    table = seen["table shown"]
    assert table["expanded"] == "true", table
    assert not table["hidden"], table
    assert table["height"] > 0, table

    # the leaderboards: my line highlighted with what the server stored
    board = seen["rating board"]
    assert board["me"]["player_id"] == me
    assert board["me"]["score"] == profiles[me]
    assert seen["rating rows"], "my line is highlighted on the rating board"
    for row in seen["rating rows"]:
        assert row["player"] == me
        assert row["me"]
        assert row["cells"][0] == str(board["me"]["rank"])
        assert row["cells"][2] == str(profiles[me])
    weekly = seen["weekly board"]
    assert weekly["language"] == "en"
    assert seen["weekly picker"] == "en"
    assert weekly["me"]["player_id"] == me
    assert weekly["me"]["score"] == mine["rating_after"] - mine["rating_before"]
    assert [r["player"] for r in seen["weekly rows"]] == [me], "my weekly line highlighted"
    assert seen["weekly rows"][0]["cells"][2] == str(weekly["me"]["score"])

    # the history list and its replay link
    assert f"Place {mine['place']} of 8" in seen["history entry"], seen["history entry"]
    assert seen["history replay"] == [f"#replay/{tid}", tid]

    assert not seen["exceptions"], f"uncaught JavaScript errors: {seen['exceptions']}"
    for name, violations in seen["axe"].items():
        assert not violations, f"axe-core on the {name} screen: {violations}"
