"""Flows: a rating farm (ruling 17) replayed through the real handlers on moto — one farmer in
a party with 7 throw-away players who leave in the intro, again and again — is stopped at the
identity limit or flagged, and the operator command (``infra.operations.void_ratings``) takes
its gains back; an honest party of new friends who play is rated by the rules and not flagged.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator

import pytest

from infra.emulator.testing import Backend, running_backend
from infra.operations.void_ratings import VoidRefusedError, main, void_ratings
from shared.adapters.dynamo import schema
from shared.runtime.settings import Settings
from tests.functional.driver import Game, check_final, solve_on

FARMS = 30
FRESH_MS = round(Settings().fresh_player_seconds * 1000)


class Counts:
    def __init__(self) -> None:
        self.seen: list[tuple[str, float]] = []

    def __call__(self, name: str, value: float) -> None:
        self.seen.append((name, value))

    def total(self, name: str) -> float:
        return sum(v for n, v in self.seen if n == name)


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    """The harness with the deployed limit on new players per source."""
    yield from running_backend(
        monkeypatch, new_players_per_source=Settings().new_players_per_source
    )


def _rating(backend: Backend, player_id: str) -> int:
    return int(backend.item(schema.player_key(player_id))["rating"])


def _farmer(backend: Backend, source_ip: str = "198.51.100.1"):
    farmer = backend.player("farmer", source_ip=source_ip)
    backend.clock.advance(FRESH_MS + 60_000)  # an account of some standing
    return farmer


def _farm_once(backend: Backend, farmer, n: int, source_ip: str) -> str | None:
    """One farm: 7 throw-away players join the farmer's party, the party starts, they leave in
    the intro. Returns the tournament id, or None when a throw-away was refused."""
    farmer.send("party_create")
    invite = farmer.last("party")["invite"]
    helpers = []
    for i in range(7):
        helper = backend.player(f"throwaway{n}.{i}", session=False, source_ip=source_ip)
        helper.send("session")
        if helper.errors:
            assert helper.errors == ["too_many_new_players"]
            farmer.send("party_leave")
            return None
        helper.id = helper.last("session")["player"]["id"]
        helper.send("party_join", invite=invite)
        helpers.append(helper)
    farmer.send("party_start", language="en")
    tid = farmer.last("round")["tournament_id"]
    for helper in helpers:
        helper.send("leave")
    assert backend.tournament(tid).tournament.over
    farmer.send("party_leave")
    backend.clock.advance(1_000)
    return str(tid)


def test_the_farm_from_one_address_stops_at_the_limit_and_its_gain_is_voided(deployed):
    farmer = _farmer(deployed)
    tournaments = []
    for n in range(FARMS):
        tid = _farm_once(deployed, farmer, n, "198.51.100.1")
        if tid is None:
            break
        tournaments.append(tid)

    # the farmer and 7 throw-aways, then 2 more: the 11th new player of the hour is refused
    assert len(tournaments) == 1
    assert _rating(deployed, farmer.id) > 1000
    assert deployed.tournament(tournaments[0]).flagged
    void_ratings(deployed.client, deployed.table_name, tournaments[0])
    assert _rating(deployed, farmer.id) == 1000


@pytest.mark.slow  # 30 farms, 240 players through the handlers: a minute or more
def test_the_farm_from_many_addresses_is_flagged_every_time_and_voided_to_no_gain(backend, caplog):
    counts = Counts()
    backend.deps = dataclasses.replace(backend.deps, metrics=counts)
    farmer = _farmer(backend)

    with caplog.at_level(logging.WARNING):
        tournaments = [_farm_once(backend, farmer, n, f"203.0.113.{n}") for n in range(FARMS)]

    assert None not in tournaments
    farmed = _rating(backend, farmer.id)
    assert farmed == 1355  # as measured live: 1000 -> 1355 in 30 farms
    assert counts.total("FlaggedTournaments") == FARMS
    flagged_lines = [r for r in caplog.records if "tournament flagged" in r.getMessage()]
    assert len(flagged_lines) == FARMS
    assert {r.tournament_id for r in flagged_lines} == set(tournaments)
    throwaways = {
        p.player_id for tid in tournaments for p in backend.tournament(tid).tournament.players
    } - {farmer.id}
    assert len(throwaways) == 7 * FARMS

    for tid in tournaments:
        assert tid is not None
        report = void_ratings(backend.client, backend.table_name, tid)
        assert farmer.id in report.voided

    assert _rating(backend, farmer.id) == 1000
    assert all(_rating(backend, pid) == 1000 for pid in throwaways)


def test_an_honest_party_of_new_friends_who_play_is_rated_by_the_rules_and_not_flagged(
    backend,
):
    counts = Counts()
    backend.deps = dataclasses.replace(backend.deps, metrics=counts)
    friends = [backend.player(f"friend{i}") for i in range(8)]  # all created just now
    friends[0].send("party_create")
    invite = friends[0].last("party")["invite"]
    for f in friends[1:]:
        f.send("party_join", invite=invite)
    friends[0].send("party_start", language="en")
    tid = friends[0].last("round")["tournament_id"]
    game = Game(backend, friends, tid, {p.id: p for p in friends})
    assert game.rec.fresh == frozenset(p.id for p in friends)

    game.play(solve_on(3))

    check_final(game)  # ruling 1's changes, applied once each
    assert not game.rec.flagged
    assert counts.total("FlaggedTournaments") == 0
    with pytest.raises(VoidRefusedError, match="not flagged"):
        void_ratings(backend.client, backend.table_name, tid)


def _flagged(backend: Backend) -> tuple[str, dict[str, int]]:
    farmer = _farmer(backend)
    tid = _farm_once(backend, farmer, 0, "203.0.113.1")
    assert tid is not None
    players = backend.tournament(tid).tournament.players
    return tid, {p.player_id: _rating(backend, p.player_id) for p in players}


def test_voiding_restores_each_player_by_exactly_their_change_once(backend):
    tid, after = _flagged(backend)
    changes = {pid: int(backend.item(schema.rating_key(pid, tid))["change"]) for pid in after}
    assert any(changes.values())

    first = void_ratings(backend.client, backend.table_name, tid)
    restored = {pid: _rating(backend, pid) for pid in after}
    table = backend.snapshot()
    second = void_ratings(backend.client, backend.table_name, tid)

    assert first.voided == changes
    assert restored == {pid: after[pid] - changes[pid] for pid in after}
    assert second.voided == {}
    assert sorted(second.already) == sorted(after)
    assert backend.snapshot() == table  # the second run changed nothing
    assert all("voided_ms" in backend.item(schema.rating_key(pid, tid)) for pid in after)


def test_a_dry_run_changes_nothing(backend):
    tid, _ = _flagged(backend)
    table = backend.snapshot()

    report = void_ratings(backend.client, backend.table_name, tid, dry_run=True)

    assert len(report.voided) == 8
    assert backend.snapshot() == table


def test_an_unflagged_or_running_tournament_is_refused_unless_forced(backend):
    game = Game.start(backend)  # eight solo players: not fresh-and-gone, still running
    with pytest.raises(VoidRefusedError, match="still running"):
        void_ratings(backend.client, backend.table_name, game.tid, force=True)
    game.play(solve_on(2))
    table = backend.snapshot()
    with pytest.raises(VoidRefusedError, match="not flagged"):
        void_ratings(backend.client, backend.table_name, game.tid)
    assert backend.snapshot() == table
    assert main(["--table", backend.table_name, "--region", "us-east-1", game.tid]) == 2
    assert main(["--table", backend.table_name, "--region", "us-east-1", "nope"]) == 2

    forced = void_ratings(backend.client, backend.table_name, game.tid, force=True)

    assert len(forced.voided) == 8
    assert all(_rating(backend, p.id) == 1000 for p in game.players)


def test_the_command_line_voids_a_flagged_tournament(backend, capsys):
    tid, _ = _flagged(backend)

    assert main(["--table", backend.table_name, "--region", "us-east-1", tid]) == 0

    assert "voided 8 changes" in capsys.readouterr().out
