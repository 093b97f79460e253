"""Benchmarks: the stored tournament item at its worst (every guess reads and writes it), its
size in capacity units, and the codec's CPU time.

The worst case is built on purpose, not played: 8 players (20-character Cyrillic nicknames,
every one disconnected with a reconnect deadline, rated and placed, one or two byes each), 4
duels of 12 rows of 6-letter words whose letters are drawn at random from the Russian alphabet
(2 UTF-8 bytes each, and random letters compress worse than real words), three rounds of used
secrets and previous pairs, production id lengths: 16-hex-digit player, tournament and party
ids, 16-character API Gateway connection ids. Capacity units follow DynamoDB's rules (``units``).
"""

from __future__ import annotations

import random
import string
import time
from dataclasses import dataclass

from infra.benchmarks import units
from infra.benchmarks.schema1 import tournament_to_json
from shared.adapters.dynamo import tournament_document
from shared.adapters.dynamo.store import to_av
from shared.domain.duel import Duel, DuelId, DuelResult, EndReason, Row
from shared.domain.scoring import score
from shared.domain.tournament import Phase, PlayerState, Tournament
from shared.services.model import TournamentRecord

RUSSIAN = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"
_BASE64 = string.ascii_letters + string.digits + "+/"
T0_MS = 1_796_000_000_000
"""A start time in 2026 (13-digit epoch ms, as production writes)."""


def _hex(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(16))


def _word(rng: random.Random, length: int = 6) -> str:
    return "".join(rng.choice(RUSSIAN) for _ in range(length))


def worst_record(seed: int = 16) -> TournamentRecord:
    """The largest tournament record the game can hold (see the module docstring), with the
    last duel's rows still running (no result) and the other three just over."""
    rng = random.Random(seed)
    tid = _hex(rng)
    players = tuple(
        PlayerState(
            player_id=_hex(rng),
            nickname="".join(rng.choice(RUSSIAN) for _ in range(20)),
            rating=rng.randint(1000, 2400),
            lives=rng.randint(1, 3),
            byes=1 + i % 2,  # not drawn: the rng's draws (words, ids) stay those of before
            rating_change=rng.randint(-40, 40),
            place=None,
            connected=False,
            reconnect_deadline_ms=T0_MS + rng.randint(60_000, 600_000),
        )
        for i in range(8)
    )
    ids = [p.player_id for p in players]
    round_no = 3
    started = T0_MS + 400_000
    duels = []
    for i in range(4):
        a, b = ids[2 * i], ids[2 * i + 1]
        secret = _word(rng)
        at = started + 6_000
        rows = []
        for n in range(12):
            at += rng.randint(1_500, 29_999)
            guess = _word(rng)
            tiles = tuple(guess)
            rows.append(
                Row(
                    player=(a, b)[n % 2],
                    word=guess,
                    tiles=tiles,
                    marks=score(tiles, tuple(secret)),
                    at_ms=at,
                )
            )
        over = i < 3
        duels.append(
            Duel(
                duel_id=str(DuelId(tid, round_no, i + 1)),
                players=(a, b),
                first=a,
                word=secret,
                answer=tuple(secret),
                starts_ms=started + 6_000,
                turn_deadline_ms=at + 30_000,
                rows=tuple(rows),
                result=DuelResult.DRAW if over else None,
                winner=None,
                reason=EndReason.TURNS_USED if over else None,
                ended_ms=at if over else None,
            )
        )
    tournament = Tournament(
        tournament_id=tid,
        language="ru",
        players=players,
        round_no=round_no,
        phase=Phase.PLAYING,
        intro_deadline_ms=started + 6_000,
        duels=tuple(duels),
        bye=None,
        previous_pairs=frozenset(frozenset(rng.sample(ids, 2)) for _ in range(4)),
        previous_bye=None,
        used_words=frozenset(_word(rng) for _ in range(12)),
        started_ms=T0_MS,
    )
    return TournamentRecord(
        tournament=tournament,
        connections={pid: "".join(rng.choice(_BASE64) for _ in range(15)) + "=" for pid in ids},
        party_ids={pid: _hex(rng) for pid in ids[:4]},
        version=400,
    )


def item_size(record: TournamentRecord) -> int:
    """Bytes of the record's item by DynamoDB's rules (as ``DynamoStore`` writes it)."""
    return units.item_size(to_av(tournament_document.tournament_to_item(record, T0_MS)))


@dataclass
class ItemResult:
    size_bytes: int
    wru: int
    rru: float
    json_bytes: int
    """The same facts as schema-1 JSON (named fields, plain text): the layout before."""
    schema1_size_bytes: int
    encode_us: float
    decode_us: float


def measure(seed: int = 16, repeat: int = 2_000) -> ItemResult:
    """Size and capacity units of the worst item; codec CPU per encode and decode (µs, the
    median of ``repeat`` process-time samples of 10 calls each)."""
    record = worst_record(seed)
    size = item_size(record)
    before = {
        **to_av(tournament_document.tournament_to_item(record, T0_MS)),
        "state": {"S": tournament_to_json(record.tournament)},
        "connections": to_av({"m": dict(record.connections)})["m"],
        "party_ids": to_av({"m": dict(record.party_ids)})["m"],
    }
    blob = tournament_document.tournament_to_state(record)

    def per_call(fn: object) -> float:
        samples = []
        for _ in range(max(1, repeat // 10)):
            t0 = time.process_time_ns()
            for _ in range(10):
                fn()  # type: ignore[operator]
            samples.append((time.process_time_ns() - t0) / 10 / 1_000)
        samples.sort()
        return samples[len(samples) // 2]

    return ItemResult(
        size_bytes=size,
        wru=units.write_units(size),
        rru=units.read_units(size, consistent=True),
        json_bytes=len(tournament_to_json(record.tournament).encode("utf-8")),
        schema1_size_bytes=units.item_size(before),
        encode_us=per_call(lambda: tournament_document.tournament_to_state(record)),
        decode_us=per_call(lambda: tournament_document.tournament_from_state(blob)),
    )
