"""End-to-end test support: Debian's headless Chromium driven over the DevTools protocol.

No WebDriver, no browser download: the test starts ``/usr/bin/chromium`` (``.ci/setup --full``
installs it with apt) with a fresh profile and ``--remote-debugging-port=0``, reads the port
Chromium picked from ``DevToolsActivePort`` and speaks CDP over a WebSocket to the page.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser")

HEADLESS_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--lang=en-US",
    "--window-size=420,900",
)


class BrowserMissingError(RuntimeError):
    """Chromium is not installed."""


def find_chromium() -> str:
    for candidate in CHROMIUM_CANDIDATES:
        path = shutil.which(candidate)
        if path:
            return path
    raise BrowserMissingError(
        "Chromium not found (looked for /usr/bin/chromium, chromium, chromium-browser). "
        "Install Debian's browser: `apt-get install -y chromium chromium-driver` "
        "(`.ci/setup --full` does it); the browser test never downloads one."
    )


class Page:
    """One page target over CDP: ``call`` a method, ``eval`` JavaScript, click, type, shoot."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.exceptions: list[str] = []
        """Uncaught JavaScript exceptions on the page (``Runtime.exceptionThrown``)."""
        self.console: list[str] = []
        self.port = 0
        """The browser's DevTools port (for :func:`page_in_new_context`)."""
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for raw in self.ws:
                m = json.loads(raw)
                if "id" in m:
                    fut = self._pending.pop(m["id"], None)
                    if fut is not None and not fut.done():
                        fut.set_result(m)
                elif m.get("method") == "Runtime.exceptionThrown":
                    details = m["params"]["exceptionDetails"]
                    text = details.get("exception", {}).get("description") or details.get("text")
                    self.exceptions.append(str(text))
                elif m.get("method") == "Runtime.consoleAPICalled":
                    args = m["params"].get("args", [])
                    self.console.append(" ".join(str(a.get("value", "")) for a in args))
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(ConnectionError("DevTools connection closed"))

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        msg_id = next(self._ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        await self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        reply = await asyncio.wait_for(fut, 30)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    async def eval(self, expression: str) -> Any:
        result = await self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait_for(self, expression: str, timeout: float = 20) -> Any:
        """Poll ``expression`` until it is truthy; its value."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = await self.eval(expression)
            if value:
                return value
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {expression}")
            await asyncio.sleep(0.05)

    async def click(self, element_js: str, between: str | None = None) -> None:
        """A real mouse click at the centre of the element ``element_js`` evaluates to;
        ``between``: JavaScript run between the button's press and release."""
        box = await self.eval(
            f"(() => {{ const el = {element_js}; if (!el) return null;"
            " el.scrollIntoView({block: 'center'}); const r = el.getBoundingClientRect();"
            " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()"
        )
        if box is None:
            raise AssertionError(f"nothing to click: {element_js}")
        for kind in ("mousePressed", "mouseReleased"):
            if kind == "mouseReleased" and between is not None:
                await self.eval(between)
            await self.call(
                "Input.dispatchMouseEvent",
                type=kind,
                x=box["x"],
                y=box["y"],
                button="left",
                clickCount=1,
            )

    async def press(self, key: str) -> None:
        """A physical key press (``keydown`` with ``key``; text for printable keys)."""
        down: dict[str, Any] = {"type": "keyDown", "key": key}
        if len(key) == 1:
            down["text"] = key
        elif key == "Backspace":
            down |= {"code": "Backspace", "windowsVirtualKeyCode": 8}
        elif key == "Enter":
            down |= {"code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"}
        elif key == "Tab":
            down |= {"code": "Tab", "windowsVirtualKeyCode": 9}
        await self.call("Input.dispatchKeyEvent", **down)
        await self.call("Input.dispatchKeyEvent", type="keyUp", key=key)

    async def open_home(self, url: str) -> str:
        """Open the web client at ``url`` and wait until its session is open and Join can be
        pressed; the player id the page was given. The page's first steps in every test."""
        await self.call("Page.navigate", url=url)
        await self.wait_for(
            "(() => { const b = document.querySelector('#join'); return !!b && !b.disabled; })()"
        )
        me = await self.eval("S.me && S.me.id")
        assert me, "the page opened a session"
        return str(me)

    async def join_lobby(self, in_lobby: str = "!!document.querySelector('#lobby-h')") -> None:
        """Press Join once and wait until the lobby shows (``in_lobby``). One press is enough:
        Join is enabled only once the session reply arrived, and the page patches its DOM in
        place, so a server message between mouse down and up no longer swaps the button away
        (the cause of the old "first press shows no lobby" flake)."""
        await self.click("document.querySelector('#join')")
        await self.wait_for(in_lobby, 60)

    async def viewport(self, width: int, height: int, *, phone: bool) -> None:
        """Emulate a screen: a phone (touch, mobile) or a desktop of ``width`` x ``height``."""
        await self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=phone,
        )
        await self.call("Emulation.setTouchEmulationEnabled", enabled=phone, maxTouchPoints=5)

    async def offline(self, offline: bool) -> None:
        """Cut the page off the network (new connections fail) or bring it back."""
        await self.call("Network.enable")
        await self.call(
            "Network.emulateNetworkConditions",
            offline=offline,
            latency=0,
            downloadThroughput=-1,
            uploadThroughput=-1,
        )

    async def axe(self, source: Path) -> list[dict[str, Any]]:
        """Run axe-core (``source``: its ``axe.min.js``) on the page; its violations, each as
        id, impact and the first few failing elements."""
        await self.eval(source.read_text(encoding="utf-8") + ";true")
        found: list[dict[str, Any]] = await self.eval(
            "axe.run(document, {resultTypes: ['violations']}).then((r) => r.violations.map((v) =>"
            " ({id: v.id, impact: v.impact, help: v.help,"
            " nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' '))})))"
        )
        return found

    async def screenshot(self, path: Path) -> Path:
        data = await self.call("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(data["data"]))
        return path


@contextlib.asynccontextmanager
async def chromium_page(profile_dir: Path) -> AsyncIterator[Page]:
    """Start headless Chromium with a fresh profile in ``profile_dir``; yield its page."""
    binary = find_chromium()
    log = (profile_dir / "chromium.log").open("wb")
    process = subprocess.Popen(
        [
            binary,
            *HEADLESS_FLAGS,
            f"--user-data-dir={profile_dir / 'profile'}",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "about:blank",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        port_file = profile_dir / "profile" / "DevToolsActivePort"
        for _ in range(300):
            if port_file.exists() and port_file.read_text().strip():
                break
            if process.poll() is not None:
                raise RuntimeError(
                    f"chromium exited with {process.returncode}; see {profile_dir}/chromium.log"
                )
            await asyncio.sleep(0.1)
        else:
            raise RuntimeError(f"chromium did not open DevTools; see {profile_dir}/chromium.log")
        port = int(port_file.read_text().split()[0])
        targets = await asyncio.to_thread(_json, f"http://127.0.0.1:{port}/json/list")
        page_url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        async with connect(page_url, max_size=2**26) as ws:
            page = Page(ws)
            page.port = port
            await page.call("Page.enable")
            await page.call("Runtime.enable")
            yield page
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@contextlib.asynccontextmanager
async def page_in_new_context(first: Page) -> AsyncIterator[Page]:
    """A second page in the browser of ``first``, in a browser context of its own (its own
    storage and cookies: another person on another device)."""
    version = await asyncio.to_thread(_json, f"http://127.0.0.1:{first.port}/json/version")
    async with connect(version["webSocketDebuggerUrl"], max_size=2**26) as browser_ws:
        browser = Page(browser_ws)
        context = (await browser.call("Target.createBrowserContext"))["browserContextId"]
        target = await browser.call(
            "Target.createTarget", url="about:blank", browserContextId=context
        )
        url = f"ws://127.0.0.1:{first.port}/devtools/page/{target['targetId']}"
        try:
            async with connect(url, max_size=2**26) as ws:
                page = Page(ws)
                page.port = first.port
                await page.call("Page.enable")
                await page.call("Runtime.enable")
                yield page
        finally:
            with contextlib.suppress(Exception):
                await browser.call("Target.disposeBrowserContext", browserContextId=context)


def _json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)
