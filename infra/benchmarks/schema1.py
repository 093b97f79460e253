"""Benchmarks: the tournament document's schema-1 writer, the layout before schema 2.

``tournament_to_json`` returns the aggregate as schema-1 JSON text; production writes only
schema 2 and still reads schema 1 (``shared.adapters.dynamo.tournament_document``). Kept to
measure schema 2 against (``items``) and to test the migration from schema 1."""

from __future__ import annotations

import json
from typing import Any

from shared.domain.duel import Duel, Row
from shared.domain.tournament import Tournament


def _row_to(r: Row) -> dict[str, Any]:
    d: dict[str, Any] = {"p": r.player, "at": r.at_ms}
    if r.word is not None:
        d["w"] = r.word
        d["t"] = list(r.tiles or ())
        d["m"] = "".join(m.value[0] for m in r.marks or ())
    return d


def _duel_to(x: Duel) -> dict[str, Any]:
    return {
        "id": x.duel_id,
        "players": list(x.players),
        "first": x.first,
        "word": x.word,
        "answer": list(x.answer),
        "starts": x.starts_ms,
        "deadline": x.turn_deadline_ms,
        "rows": [_row_to(r) for r in x.rows],
        "result": x.result.value if x.result else None,
        "winner": x.winner,
        "reason": x.reason.value if x.reason else None,
        "ended": x.ended_ms,
    }


def tournament_to_json(t: Tournament) -> str:
    """The aggregate as schema-1 JSON (named fields; it holds the secrets: never log it).
    New items are written as schema 2 (``tournament_document.tournament_to_state``)."""
    doc = {
        "schema": 1,
        "id": t.tournament_id,
        "language": t.language,
        "players": [
            {
                "id": p.player_id,
                "nick": p.nickname,
                "rating": p.rating,
                "lives": p.lives,
                "out": p.out_round,
                "left": p.left,
                **({"timeout": True} if p.timed_out else {}),
                "place": p.place,
                "change": p.rating_change,
                "conn": p.connected,
                "rdl": p.reconnect_deadline_ms,
            }
            for p in t.players
        ],
        "round": t.round_no,
        "phase": t.phase.value,
        "intro": t.intro_deadline_ms,
        "duels": [_duel_to(d) for d in t.duels],
        "bye": t.bye,
        "prev_pairs": sorted(sorted(p) for p in t.previous_pairs),
        "prev_bye": t.previous_bye,
        "used": sorted(t.used_words),
        "started": t.started_ms,
        "ended": t.ended_ms,
    }
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
