"""End to end in a browser: no nickname pushes the duel page wider than a phone (ruling 16).

A human on a 390x844 phone joins an English lobby; seven raw WebSocket players take the other
seats, each renamed through the server to the widest or most awkward name it still accepts
(fullwidth letters, 20 broad omegas, Arabic ligatures and right-to-left text, stacked Hindi
marks, cuneiform). On the first turn the page must be no wider than the screen, with the turn
clock and every heart on it. Then the names the server now refuses (20 x U+FDFA, Zalgo text,
Hangul fillers, a right-to-left override) are written into the page's state and drawn again:
the same must hold. A screenshot goes to ``tests/e2e/artifacts/`` (git ignores it).

Needs Debian's ``chromium``; without it the test fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from infra.emulator import Emulator
from tests.e2e.browser import BrowserMissingError, chromium_page, find_chromium
from tests.e2e.support import EmulatorThread

pytestmark = [pytest.mark.enable_socket, pytest.mark.e2e, pytest.mark.browser]

ARTIFACTS = Path(__file__).parent / "artifacts"
PHONE_WIDTH = 390

ACCEPTED = (
    "ＷＷＷＷＷＷＷＷＷＷ",  # fullwidth: 20 columns
    "\ua64c" * 20,  # CYRILLIC CAPITAL LETTER BROAD OMEGA
    "\ua66e" * 20,  # CYRILLIC LETTER MULTIOCULAR O
    "\ufdf2" * 4,  # ARABIC LIGATURE ALLAH ISOLATED FORM: 4 columns each
    "محمدمحمدمحمدمحمدمحمد",  # right to left
    "ज़िंदगी ज़िंदगी",  # three marks on a letter
    "𒀀𒀁𒀂𒀃𒀄𒀅",  # cuneiform: 3 columns each
)
REFUSED = (
    "\ufdfa" * 20,  # the name that made a duel page 1,412 px wide
    "Z" + "".join(chr(0x0300 + i) for i in range(19)) + "algo",
    "\u3164" * 3,
    "\u202egnol yrev a si eman siht" * 2,
    "𝗳𝘂𝗰𝗸 you",
    "W" * 60,
    "\ua9c1" * 20,  # JAVANESE LEFT RERENGGAN
)

FIRST_TURN = "!!document.querySelector('.duel-head .timer')"

LAYOUT = """(() => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, width: r.width, height: r.height}; };
  const all = (s) => [...document.querySelectorAll(s)].map(box);
  return {
    pageWidth: document.documentElement.scrollWidth,
    bodyWidth: document.body.scrollWidth,
    timer: all('.duel-head .timer'),
    hearts: all('.duel-head .hearts'),
    nicks: all('.nick').length,
  };
})()"""

INJECT = """((names) => {
  const ids = Object.keys(S.names).filter((id) => id !== S.me.id);
  ids.forEach((id, i) => { S.names[id] = names[i % names.length]; });
  render();
  return ids.length;
})(NAMES)"""


async def _seat(url: str, nickname: str, stack: contextlib.AsyncExitStack) -> None:
    """A raw player: a session, renamed to ``nickname`` (the server must accept it), joined."""
    ws: ClientConnection = await stack.enter_async_context(connect(url))

    async def reply(kind: str) -> dict[str, Any]:
        while True:
            m = json.loads(await ws.recv())
            if m.get("type") in (kind, "error"):
                assert m["type"] == kind, (nickname, m)
                return m

    await ws.send(json.dumps({"action": "session"}))
    await reply("session")
    await ws.send(json.dumps({"action": "nickname", "nickname": nickname}))
    assert (await reply("player"))["player"]["nickname"] == nickname
    await ws.send(json.dumps({"action": "join", "language": "en"}))

    async def drain() -> None:
        with contextlib.suppress(Exception):
            async for _ in ws:
                pass

    task = asyncio.create_task(drain())
    stack.callback(task.cancel)


def _check(layout: dict[str, Any], label: str) -> None:
    assert layout["pageWidth"] <= PHONE_WIDTH, (label, layout)
    assert layout["bodyWidth"] <= PHONE_WIDTH, (label, layout)
    assert layout["timer"], (label, layout)
    assert layout["hearts"], (label, layout)
    for item in (*layout["timer"], *layout["hearts"]):
        assert min(item["width"], item["height"]) > 0, (label, layout)
        assert 0 <= item["left"] < item["right"] <= PHONE_WIDTH, (label, layout)


def test_hostile_nicknames_never_push_the_duel_page_off_a_phone_screen(tmp_path: Path) -> None:
    try:
        find_chromium()
    except BrowserMissingError as exc:
        pytest.fail(str(exc))

    async def scenario(emu: Emulator) -> dict[str, Any]:
        async with chromium_page(tmp_path) as page, contextlib.AsyncExitStack() as seats:
            await page.viewport(PHONE_WIDTH, 844, phone=True)
            await page.open_home(emu.url)
            await page.join_lobby()
            for name in ACCEPTED:
                await _seat(emu.ws_url, name, seats)
            await page.wait_for(FIRST_TURN, 60)
            served = await page.eval(LAYOUT)
            shown = await page.eval("Object.values(S.names)")
            injected = await page.eval(INJECT.replace("NAMES", json.dumps(REFUSED)))
            await page.wait_for(FIRST_TURN, 10)
            hostile = await page.eval(LAYOUT)
            shot = await page.screenshot(tmp_path / "phone-hostile-names.png")
            return {
                "served": served,
                "shown": shown,
                "injected": injected,
                "hostile": hostile,
                "shot": shot,
                "exceptions": list(page.exceptions),
            }

    with EmulatorThread(turn_seconds=30, intro_seconds=1.0, reconnect_seconds=30) as emu:
        out = asyncio.run(asyncio.wait_for(scenario(emu), 180))
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(out["shot"], ARTIFACTS / out["shot"].name)

    assert set(ACCEPTED) <= set(out["shown"]), "the server's names reached the page"
    _check(out["served"], "names the server accepts")
    assert out["injected"] == 7
    _check(out["hostile"], "names the server refuses, injected")
    assert out["hostile"]["nicks"] >= 2
    assert not out["exceptions"], out["exceptions"]
