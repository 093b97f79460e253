"""Engine: ruling 6 — no secret word in any outbound message before its duel's ``duel_end``,
and none in the log output at INFO.

A whole tournament is played (guesses, solves, skips, a disconnect with a resume snapshot, a
leaver); then every raw text the notifier pushed, in push order, is scanned for every duel's
secret (as a JSON string and as its tile list) until that duel's ``duel_end``. Guess rows of
*other* duels are masked (a player may type a word that happens to be another duel's secret;
that is their guess, not a leak); the solving row of the duel itself ends it.
"""

from __future__ import annotations

import json
import logging
import zlib
from typing import Any

from tests.functional.driver import Game, peek_raw, resume, solve_on, valid_words


def _mask_rows(value: Any, keep_duel: str, current_duel: str | None = None) -> Any:
    """Drop the guess words/tiles of rows that belong to another duel than ``keep_duel``."""
    if isinstance(value, dict):
        duel = value.get("duel_id", current_duel)
        out = {}
        for k, v in value.items():
            if k == "row" and duel != keep_duel:
                continue
            if k == "rows" and duel != keep_duel:
                continue
            out[k] = _mask_rows(v, keep_duel, duel)
        return out
    if isinstance(value, list):
        return [_mask_rows(v, keep_duel, current_duel) for v in value]
    return value


def _needles(word: str, tiles: tuple[str, ...]) -> list[str]:
    compact = json.dumps(list(tiles), ensure_ascii=False, separators=(",", ":"))
    return [
        json.dumps(word, ensure_ascii=False),
        json.dumps(list(tiles), ensure_ascii=False),
        compact,
    ]


def test_no_secret_before_its_duel_end_in_any_message_or_info_log(backend, capfd, caplog):
    caplog.set_level(logging.INFO)
    game = Game.start(backend)
    # a disconnect and a resume (snapshot), a leaver, skips, wrong guesses and solves
    game.end_intro()
    first = game.t.duels[0]
    away = game.by_id[first.players[0]]
    away.disconnect()
    game.act(game.t.duel(first.duel_id), "skip")
    resume(away)
    game.by_id[game.t.duels[1].players[1]].send("leave")

    def policy(g: Game, duel: Any, mover: str) -> str:
        if (len(duel.rows) + g.turns) % 5 == 4:
            return "skip"
        return solve_on(4)(g, duel, mover)

    game.play(policy)
    # every duel's secret, from its duel_end
    language = backend.deps.lexicon.language(game.t.language)
    secrets: dict[str, str] = {}
    for _, m in backend.notifier.events:
        if m["type"] == "duel_end":
            secrets[m["duel_id"]] = m["word"]
    assert len(secrets) >= 8
    ended: set[str] = set()
    for cid, m in backend.notifier.events:
        if m["type"] == "duel_end":
            ended.add(m["duel_id"])
            continue
        if m["type"] == "turn" and m["next_player"] is None:
            ended.add(m["duel_id"])  # the solving (or 12th) row: the duel is over with it
        for duel_id, word in secrets.items():
            if duel_id in ended:
                continue
            masked = json.dumps(_mask_rows(m, duel_id), ensure_ascii=False, separators=(", ", ": "))
            for needle in _needles(word, language.tiles(word)):
                assert needle not in masked, (duel_id, cid, m["type"], m)
    # logs at INFO: Powertools writes JSON lines to stdout, stdlib loggers go to caplog
    out, err = capfd.readouterr()
    logs = out + err + "\n".join(r.getMessage() + str(r.__dict__) for r in caplog.records)
    assert "refused" in logs or "TimerLateMs" in logs  # the capture did see log output
    for word in secrets.values():
        for needle in _needles(word, language.tiles(word)):
            assert needle not in logs
            assert needle.replace('"', "'") not in logs
    # and the stored state (which holds the secrets) was never logged whole
    stored = bytes(peek_raw(game.tid)["state"].value)  # schema 2: zlib-compressed JSON
    assert zlib.decompress(stored).decode("utf-8")[:40] not in logs
    assert valid_words(backend, game.t.language, 5)  # the lexicon is the real one
