"""``--bots N`` in every language: a pool per language a player joins (``BotPools``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from infra.emulator.cli import build_parser, emulator_from_args
from infra.players import bots as bots_module
from infra.players.bots import BotPools
from shared.domain.languages import LANGUAGE_CODES


def test_a_join_in_a_new_language_starts_its_pool_once(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[tuple[str, int, str, str]] = []

    async def fake_pool(url: str, n: int, **kw: Any) -> None:
        started.append((url, n, kw["language"], kw["name_prefix"]))
        await asyncio.Event().wait()

    monkeypatch.setattr(bots_module, "run_bot_pool", fake_pool)

    async def scenario() -> list[str]:
        pools = BotPools("ws://x/ws", 7)
        runner = asyncio.create_task(pools.run())
        await asyncio.sleep(0)
        pools.observe("join", json.dumps({"action": "join", "language": "ru"}))
        pools.observe("join", json.dumps({"action": "join", "language": "ru"}))  # once
        pools.observe("party_start", json.dumps({"action": "party_start", "language": "uz"}))
        pools.observe("join", json.dumps({"action": "join", "language": "xx"}))  # no language
        pools.observe("guess", json.dumps({"action": "guess", "language": "de"}))  # not a join
        pools.observe("join", "not json")
        pools.observe("join", None)
        await asyncio.sleep(0)
        languages = pools.languages
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        return languages

    assert asyncio.run(scenario()) == ["en", "ru", "uz"]
    assert started == [
        ("ws://x/ws", 7, "en", "bot"),
        ("ws://x/ws", 7, "ru", "bot-ru-"),
        ("ws://x/ws", 7, "uz", "bot-uz-"),
    ]


def test_bots_language_option() -> None:
    assert build_parser().parse_args([]).bots_language == ("en",)
    args = build_parser().parse_args(["--bots", "7", "--bots-language", "ru, uz"])
    assert emulator_from_args(args).bots_languages == ("ru", "uz")
    assert build_parser().parse_args(["--bots-language", "all"]).bots_language == LANGUAGE_CODES
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--bots-language", "xx"])
    with pytest.raises(ValueError, match="not game languages"):
        BotPools("ws://x/ws", 1, languages=("xx",))


def test_a_party_start_brings_bots_for_the_partys_lobby(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37: a party opens a lobby of its own (ruling 8) while the pool's bots wait in
    theirs, so without more bots a party's lobby never filled on the local runtime. A
    ``party_start`` brings 7 bots for one tournament; a solo ``join`` brings none."""
    monkeypatch.setattr(bots_module, "run_bot_pool", _idle_pool)
    fillers: list[tuple[int, str]] = []

    async def fake_tournament(url: str, players: int, language: str, **kw: Any) -> list[Any]:
        fillers.append((players, language))
        return []

    monkeypatch.setattr(bots_module, "play_tournament", fake_tournament)

    async def scenario() -> None:
        pools = BotPools("ws://x/ws", 7)
        runner = asyncio.create_task(pools.run())
        await asyncio.sleep(0)
        pools.observe("join", json.dumps({"action": "join", "language": "en"}))
        pools.observe("party_start", json.dumps({"action": "party_start", "language": "nl"}))
        pools.observe("party_start", json.dumps({"action": "party_start", "language": "xx"}))
        await asyncio.sleep(0.01)
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)

    asyncio.run(scenario())
    assert fillers == [(7, "nl")]


async def _idle_pool(url: str, n: int, **kw: Any) -> None:
    await asyncio.Event().wait()
