"""End to end in a browser: the web client pings, and reconnects and resumes after the server
closed its socket (API Gateway's idle timeout and 2-hour cap, shortened to seconds here).

The page's ping period is shortened through ``window.WT_PING_MS`` (set before the page's
scripts run); everything else is the page as served. Needs Debian's ``chromium``
(``.ci/setup --full``); without it the tests fail, they never skip.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from infra.emulator import Emulator
from tests.e2e.browser import BrowserMissingError, Page, chromium_page, find_chromium
from tests.e2e.support import EmulatorThread

pytestmark = [pytest.mark.enable_socket, pytest.mark.e2e, pytest.mark.browser]

IN_LOBBY = "!!document.querySelector('#lobby-h')"


def browse(
    tmp_path: Path,
    emu: Emulator,
    ping_ms: int,
    steps: Callable[[Page], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    """Open the web client with ``ping_ms``, start a session, join a lobby, run ``steps``."""
    try:
        find_chromium()
    except BrowserMissingError as exc:
        pytest.fail(str(exc))

    async def scenario() -> dict[str, Any]:
        async with chromium_page(tmp_path) as page:
            await page.call(
                "Page.addScriptToEvaluateOnNewDocument", source=f"window.WT_PING_MS = {ping_ms};"
            )
            me = await page.open_home(emu.url)
            await page.join_lobby(IN_LOBBY)
            out = await steps(page)
            out["me"] = me
            out["exceptions"] = list(page.exceptions)
            return out

    return asyncio.run(asyncio.wait_for(scenario(), 120))


def test_the_page_pings_so_the_idle_timeout_never_closes_it(tmp_path: Path) -> None:
    async def steps(page: Page) -> dict[str, Any]:
        await asyncio.sleep(4.5)  # 3 idle timeouts (1.5 s) without anything else to say
        return {
            "connects": await page.eval("S.connects"),
            "open": await page.eval("S.open"),
            "in_lobby": await page.eval(IN_LOBBY),
        }

    with EmulatorThread(idle_timeout_seconds=1.5, watchdog_seconds=None) as emu:
        out = browse(tmp_path, emu, 250, steps)
    assert out["connects"] == 1
    assert out["open"]
    assert out["in_lobby"]
    assert not out["exceptions"], out["exceptions"]


def test_the_page_reconnects_and_resumes_after_the_server_closes_it(tmp_path: Path) -> None:
    async def steps(page: Page) -> dict[str, Any]:
        await page.wait_for("S.connects >= 3 && S.open", timeout=30)
        await page.wait_for(IN_LOBBY)
        return {
            "me_after": await page.eval("S.me && S.me.id"),
            "screen": await page.eval("S.screen"),
        }

    with EmulatorThread(max_connection_seconds=1.5, watchdog_seconds=None) as emu:
        out = browse(tmp_path, emu, 250, steps)
    assert out["me_after"] == out["me"], "the resumed session is the same player"
    assert out["screen"] == "lobby", "the resume restored the lobby seat"
    assert not out["exceptions"], out["exceptions"]


def test_a_page_that_hears_no_pong_gives_up_the_socket_and_resumes(tmp_path: Path) -> None:
    """The server stops answering (a half-open TCP connection looks like this to a browser)."""
    holder: dict[str, Any] = {}

    async def steps(page: Page) -> dict[str, Any]:
        emu: Emulator = holder["emu"]
        # ping is the gateway's own MOCK route (ruling 14): swap it for a route that answers
        # nothing, then put the mock back
        real_ping = emu.gateway.mock_routes.pop("ping")
        emu.gateway.routes["ping"] = lambda event, context: {"statusCode": 200}  # no pong
        await page.wait_for("S.connects >= 2", timeout=30)
        del emu.gateway.routes["ping"]
        emu.gateway.mock_routes["ping"] = real_ping
        await page.wait_for("S.open")
        await page.wait_for(IN_LOBBY)
        return {"me_after": await page.eval("S.me && S.me.id")}

    with EmulatorThread(watchdog_seconds=None) as emu:
        holder["emu"] = emu
        out = browse(tmp_path, emu, 250, steps)
    assert out["me_after"] == out["me"]
    assert not out["exceptions"], out["exceptions"]
