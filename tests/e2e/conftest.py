"""End-to-end tests: report how long each e2e tournament took (the 13-language total first)."""

from __future__ import annotations

from typing import Any

from tests.e2e.support import TIMINGS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TIMINGS:
        return
    languages = {k: v for k, v in TIMINGS.items() if k.startswith("tournament ")}
    terminalreporter.section("e2e timings")
    if languages:
        terminalreporter.write_line(
            f"{len(languages)}-language tournaments: {sum(languages.values()):.1f}s in all"
        )
    for label, seconds in TIMINGS.items():
        terminalreporter.write_line(f"  {label}: {seconds:.1f}s")
