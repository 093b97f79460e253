"""Protocol layer: one realistic example of every inbound action and outbound event.

Used as the ``examples`` of the AsyncAPI document and by the tests (every example must validate
against its model). Plain JSON values, so importing this module costs nothing.
"""

from __future__ import annotations

from typing import Any, Final

_T0: Final = 1_767_225_600_000  # 2026-01-01T00:00:00Z in ms: deadlines are absolute UTC ms

_ANA: Final = {"id": "p-ana", "nickname": "Ana", "rating": 1012}
_BOB: Final = {"id": "p-bob", "nickname": "bob_42", "rating": 988}


def _standing(
    player_id: str, nickname: str, lives: int, *, place: int | None = None
) -> dict[str, Any]:
    return {
        "player_id": player_id,
        "nickname": nickname,
        "lives": lives,
        "eliminated": lives == 0,
        "left": False,
        "connected": True,
        "place": place,
        "rating_change": None,
    }


_STANDINGS: Final = [_standing("p-ana", "Ana", 3), _standing("p-bob", "bob_42", 2)]

_ROW: Final = {
    "player": "p-ana",
    "word": "crane",
    "tiles": ["c", "r", "a", "n", "e"],
    "marks": ["absent", "present", "correct", "absent", "absent"],
    "skipped": False,
}
_SKIP: Final = {"player": "p-bob", "word": None, "tiles": None, "marks": None, "skipped": True}

_LANGUAGE: Final = {
    "code": "en",
    "name": "English",
    "native_name": "English",
    "alphabet": list("abcdefghijklmnopqrstuvwxyz"),
    "keyboard": [list("qwertyuiop"), list("asdfghjkl"), list("zxcvbnm")],
    "direction": "ltr",
    "multi_letter_tiles": [],
}

_LOBBY: Final = {
    "type": "lobby",
    "request_id": "r-2",
    "lobby_id": "l-7",
    "language": "en",
    "seats": 8,
    "players": [_ANA, _BOB],
    "party_id": None,
    "status": "waiting",
    "tournament_id": None,
    "alphabet": list("abcdefghijklmnopqrstuvwxyz"),
    "keyboard": [list("qwertyuiop"), list("asdfghjkl"), list("zxcvbnm")],
    "language_info": _LANGUAGE,
}

_ROUND: Final = {
    "type": "round",
    "request_id": None,
    "tournament_id": "t-1",
    "round": 1,
    "pairs": [{"duel_id": "d-1", "players": ["p-ana", "p-bob"]}],
    "bye": None,
    "intro_deadline_ms": _T0 + 6_000,
    "standings": _STANDINGS,
}

_STANDINGS_EVENT: Final = {
    "type": "standings",
    "request_id": None,
    "tournament_id": "t-1",
    "round": 1,
    "players": _STANDINGS,
}

_PARTY: Final = {
    "type": "party",
    "request_id": "r-5",
    "party_id": "y-3",
    "invite": "Zq8xW2mB7kP4",
    "leader": "p-ana",
    "members": [_ANA, _BOB],
    "status": "open",
}

_BOARD: Final = {
    "duel_id": "d-1",
    "players": ["p-ana", "p-bob"],
    "length": 5,
    "rows": [_ROW, _SKIP],
    "next_player": "p-ana",
    "deadline_ms": _T0 + 66_000,
    "over": False,
    "result": None,
    "winner": None,
    "word": None,
    "display": None,
}


INBOUND_EXAMPLES: Final[dict[str, dict[str, Any]]] = {
    "session": {
        "action": "session",
        "request_id": "r-1",
        "token": "c2VjcmV0LXRva2Vu",
        "protocol": "1.1",
    },
    "join": {"action": "join", "request_id": "r-2", "language": "en"},
    "leave": {"action": "leave", "request_id": "r-3"},
    "guess": {"action": "guess", "request_id": "r-4", "duel_id": "d-1", "word": "crane"},
    "nickname": {"action": "nickname", "nickname": "Ana"},
    "party_create": {"action": "party_create", "request_id": "r-5"},
    "party_join": {"action": "party_join", "invite": "Zq8xW2mB7kP4"},
    "party_leave": {"action": "party_leave"},
    "party_start": {"action": "party_start", "language": "nl"},
    "party_remove": {"action": "party_remove", "request_id": "r-6", "player_id": "p-bob"},
    "party_reset_invite": {"action": "party_reset_invite", "request_id": "r-7"},
    "ping": {"action": "ping", "request_id": "r-9"},
    "sign_out_everywhere": {"action": "sign_out_everywhere", "request_id": "r-10"},
    "profile": {"action": "profile", "request_id": "r-11", "player_id": "p-bob"},
    "leaderboard": {
        "action": "leaderboard",
        "request_id": "r-12",
        "board": "weekly",
        "language": "en",
        "week": "current",
    },
    "history": {"action": "history", "request_id": "r-13", "limit": 20},
    "replay": {"action": "replay", "request_id": "r-14", "tournament_id": "t-1"},
}
"""One example per inbound action, keyed by action."""

OUTBOUND_EXAMPLES: Final[dict[str, dict[str, Any]]] = {
    "session": {
        "type": "session",
        "request_id": "r-1",
        "player": _ANA,
        "token": "bmV4dC1zZWNyZXQtdG9rZW4",
        "resumed": True,
        "protocol": 1,
        "protocol_version": "1.3",
        "protocol_min": "1.0",
        "ping_interval_ms": 20_000,
        "heartbeat_timeout_ms": 60_000,
        "reconnect_window_ms": 60_000,
        "snapshot": {
            "language": _LANGUAGE,
            "lobby": None,
            "round": _ROUND,
            "duel": _BOARD,
            "standings": _STANDINGS_EVENT,
            "party": None,
            "spectating": [],
            "statuses": [],
            "eliminated": None,
            "rating": None,
            "tournament_end": None,
        },
    },
    "player": {"type": "player", "request_id": None, "player": _ANA},
    "lobby": _LOBBY,
    "round": _ROUND,
    "duel_start": {
        "type": "duel_start",
        "request_id": None,
        "tournament_id": "t-1",
        "round": 1,
        "duel_id": "d-1",
        "players": ["p-ana", "p-bob"],
        "opponent": "p-bob",
        "length": 5,
        "first": "p-ana",
        "turn": 1,
        "next_player": "p-ana",
        "deadline_ms": _T0 + 36_000,
        "remaining_ms": 30_000,
    },
    "turn": {
        "type": "turn",
        "request_id": "r-4",
        "tournament_id": "t-1",
        "duel_id": "d-1",
        "turn": 1,
        "row": _ROW,
        "next_player": "p-bob",
        "deadline_ms": _T0 + 51_000,
        "remaining_ms": 30_000,
    },
    "duel_end": {
        "type": "duel_end",
        "request_id": None,
        "tournament_id": "t-1",
        "duel_id": "d-1",
        "result": "win",
        "winner": "p-ana",
        "reason": "solved",
        "word": "slate",
        "display": None,
        "spectating": [],
    },
    "standings": _STANDINGS_EVENT,
    "eliminated": {
        "type": "eliminated",
        "request_id": None,
        "tournament_id": "t-1",
        "round": 3,
        "player_id": "p-bob",
        "reason": "lives",
    },
    "rating": {
        "type": "rating",
        "request_id": None,
        "tournament_id": "t-1",
        "place": 2,
        "change": 18,
        "rating": 1030,
        "previous": 1012,
    },
    "tournament_end": {
        "type": "tournament_end",
        "request_id": None,
        "tournament_id": "t-1",
        "places": [_standing("p-ana", "Ana", 1, place=1), _standing("p-bob", "bob_42", 0, place=2)],
        "winners": ["p-ana"],
    },
    "party": _PARTY,
    "player_status": {
        "type": "player_status",
        "request_id": None,
        "tournament_id": "t-1",
        "lobby_id": None,
        "player_id": "p-bob",
        "status": "disconnected",
        "reconnect_deadline_ms": _T0 + 60_000,
    },
    "pong": {"type": "pong", "request_id": "r-9", "server_time_ms": _T0},
    "error": {
        "type": "error",
        "request_id": "r-4",
        "code": "not_your_turn",
        "message": "It is your opponent's turn.",
        "retry_after_ms": None,
    },
}
"""One example per outbound event type, keyed by type (every key present, as dumped)."""


def _with_seq(example: dict[str, Any], seq: int | None) -> dict[str, Any]:
    """``example`` with its ``seq`` (since 1.2), right after ``request_id`` as dumped."""
    out: dict[str, Any] = {}
    for key, value in example.items():
        out[key] = value
        if key == "request_id":
            out["seq"] = seq
    return out


# Ana's events of one tournament, numbered in the order they could reach her; the rest null.
_SEQ: Final = {
    "round": 1,
    "duel_start": 2,
    "turn": 3,
    "duel_end": 4,
    "standings": 5,
    "player_status": 6,
    "eliminated": 7,
    "rating": 8,
    "tournament_end": 9,
}
for _type, _example in list(OUTBOUND_EXAMPLES.items()):
    OUTBOUND_EXAMPLES[_type] = _with_seq(_example, _SEQ.get(_type))
_SNAPSHOT = OUTBOUND_EXAMPLES["session"]["snapshot"]
_SNAPSHOT["round"] = _with_seq(_ROUND, None)  # a snapshot's parts are not numbered
_SNAPSHOT["standings"] = _with_seq(_STANDINGS_EVENT, None)
_SNAPSHOT["seq"] = 5

_POINT: Final = {
    "tournament_id": "t-1",
    "ended_ms": _T0 + 732_000,
    "language": "en",
    "place": 2,
    "rating_before": 1012,
    "rating_after": 1030,
}
_RECORD_ROWS: Final = [
    {
        **{k: v for k, v in _ROW.items() if k != "player"},
        "player_id": "p-ana",
        "at_ms": _T0 + 9_000,
    },
    {
        **{k: v for k, v in _SKIP.items() if k != "player"},
        "player_id": "p-bob",
        "at_ms": _T0 + 41_000,
    },
    {
        "player_id": "p-ana",
        "word": "slate",
        "tiles": list("slate"),
        "marks": ["correct"] * 5,
        "skipped": False,
        "at_ms": _T0 + 50_000,
    },
]
OUTBOUND_EXAMPLES["profile"] = {
    "type": "profile",
    "request_id": "r-11",
    "seq": None,
    "player": {
        "player_id": "p-ana",
        "nickname": "Ana",
        "rating": 1030,
        "tournaments": 1,
        "wins": 0,
        "podiums": 1,
        "average_place": 2.0,
        "best_rating": 1030,
        "languages": [{"language": "en", "tournaments": 1, "average_place": 2.0}],
        "rating_history": [_POINT],
    },
}
OUTBOUND_EXAMPLES["leaderboard"] = {
    "type": "leaderboard",
    "request_id": "r-12",
    "seq": None,
    "board": "weekly",
    "language": "en",
    "week": "2025-12-29",
    "entries": [
        {"rank": 1, "player_id": "p-bob", "nickname": "bob_42", "score": 40},
        {"rank": 2, "player_id": "p-ana", "nickname": "Ana", "score": 18},
    ],
    "me": {"rank": 2, "player_id": "p-ana", "nickname": "Ana", "score": 18},
    "around": [],
}
OUTBOUND_EXAMPLES["history"] = {
    "type": "history",
    "request_id": "r-13",
    "seq": None,
    "player_id": "p-ana",
    "tournaments": [
        {
            **_POINT,
            "players": 8,
            "opponents": [{"player_id": "p-bob", "nickname": "bob_42"}],
        }
    ],
    "next_cursor": None,
}
OUTBOUND_EXAMPLES["replay"] = {
    "type": "replay",
    "request_id": "r-14",
    "seq": None,
    "record": {
        "format": "wordle-tournament-record",
        "version": 1,
        "tournament_id": "t-1",
        "language": "en",
        "started_ms": _T0,
        "ended_ms": _T0 + 732_000,
        "players": [
            {
                "player_id": "p-ana",
                "nickname": "Ana",
                "place": 1,
                "rating_before": 1012,
                "rating_change": 18,
                "rating_after": 1030,
            },
            {
                "player_id": "p-bob",
                "nickname": "bob_42",
                "place": 2,
                "rating_before": 988,
                "rating_change": -18,
                "rating_after": 970,
            },
        ],
        "rounds": [
            {
                "round_no": 1,
                "bye": None,
                "duels": [
                    {
                        "duel_id": "d-1",
                        "players": ["p-ana", "p-bob"],
                        "first": "p-ana",
                        "word": "slate",
                        "length": 5,
                        "result": "win",
                        "winner": "p-ana",
                        "reason": "solved",
                        "rows": _RECORD_ROWS,
                    }
                ],
            }
        ],
    },
}

OUTBOUND_EXAMPLES["batch"] = {
    "type": "batch",
    "request_id": None,
    "seq": None,
    "events": [OUTBOUND_EXAMPLES["duel_end"], OUTBOUND_EXAMPLES["standings"]],
}
