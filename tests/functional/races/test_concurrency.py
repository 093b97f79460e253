"""Concurrency at the service layer, interleaved deterministically (tests/functional/interleave.py):
both racers load before either saves; exactly one wins; the loser retries on fresh reads and
lands elsewhere, or gets a clear error. Final stored state is asserted (moto)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from shared.domain import matchmaking as mm
from shared.domain.errors import (
    AlreadyInPartyError,
    AlreadyPlayingError,
    PartyFullError,
    UnknownInviteError,
)
from shared.domain.matchmaking import LobbyStatus
from shared.services import matchmaking, parties, sessions
from shared.services.errors import ConflictError, NoSessionError, TryAgainError
from shared.services.model import PlayerStatus
from shared.services.outbox import Request
from tests.functional.interleave import interleaving, paused
from tests.functional.stored import set_rating


def _lobby_sizes(backend) -> dict[str, int]:
    return {i["lobby_id"]: len(i["seats"]) for i in backend.items() if i["pk"].startswith("LOBBY#")}


def _seat(backend, n: int):
    players = [backend.player(f"s{i}") for i in range(n)]
    for p in players:
        p.join("en")
    return players, players[0].last("lobby")["lobby_id"]


def test_two_joins_racing_for_the_last_seat(backend):
    seated, lobby_id = _seat(backend, 7)
    x, y = backend.player("x"), backend.player("y")
    deps, store = interleaving(backend.deps)

    jx = paused(store, "x", lambda: matchmaking.join(deps, Request(x.connection_id), x.id, "en"))
    jy = paused(store, "y", lambda: matchmaking.join(deps, Request(y.connection_id), y.id, "en"))
    jy.finish()  # y takes the 8th seat: the tournament starts
    jx.finish()  # x's save conflicts; its retry opens a new lobby

    assert jx.error is None
    assert jy.error is None
    assert [(label, outcome) for label, _, outcome in store.commits] == [
        ("y", "ok"),
        ("x", "ConflictError"),
        ("x", "ok"),
    ]
    full = backend.store.get_lobby(lobby_id)
    assert full.lobby.status is LobbyStatus.STARTED
    assert [s.player_id for s in full.lobby.seats] == [p.id for p in seated] + [y.id]
    tournament = backend.tournament(full.lobby.tournament_id).tournament
    assert {p.player_id for p in tournament.players} == {p.id for p in [*seated, y]}
    px = backend.store.get_player(x.id)
    assert px.status is PlayerStatus.QUEUED
    assert px.lobby_id != lobby_id
    assert [s.player_id for s in backend.store.get_lobby(px.lobby_id).lobby.seats] == [x.id]
    assert sorted(_lobby_sizes(backend).values()) == [1, 8]
    assert backend.store.get_player(y.id).status is PlayerStatus.PLAYING
    assert not x.all("round")
    assert [len(m["players"]) for m in x.all("lobby")] == [1]


def test_the_loser_of_a_race_gets_try_again_when_retries_run_out(backend):
    _, lobby_id = _seat(backend, 7)
    x, y = backend.player("x"), backend.player("y")
    deps, store = interleaving(dataclasses.replace(backend.deps, max_attempts=1))

    jx = paused(store, "x", lambda: matchmaking.join(deps, Request(x.connection_id), x.id, "en"))
    jy = paused(store, "y", lambda: matchmaking.join(deps, Request(y.connection_id), y.id, "en"))
    jy.finish()
    jx.finish()

    assert isinstance(jx.error, TryAgainError)
    assert jx.error.code == "try_again"
    assert backend.store.get_player(x.id).status is PlayerStatus.IDLE
    assert _lobby_sizes(backend) == {lobby_id: 8}


def test_join_racing_a_leave_takes_the_freed_seat_without_starting(backend):
    seated, lobby_id = _seat(backend, 7)
    leaver = seated[3]
    x = backend.player("x")
    deps, store = interleaving(backend.deps)

    jx = paused(
        store, "x", lambda: matchmaking.join(deps, Request(x.connection_id), x.id, "en")
    )  # would be the 8th
    matchmaking.leave(deps, Request(leaver.connection_id), leaver.id)
    jx.finish()

    assert jx.error is None
    lobby = backend.store.get_lobby(lobby_id)
    assert lobby.lobby.status is LobbyStatus.WAITING
    assert [s.player_id for s in lobby.lobby.seats] == [p.id for p in seated if p is not leaver] + [
        x.id
    ]
    assert backend.store.get_player(leaver.id).status is PlayerStatus.IDLE
    assert backend.store.get_player(x.id).lobby_id == lobby_id
    assert not any(i["pk"].startswith("TOURN#") for i in backend.items())
    assert [label for label, _, outcome in store.commits if outcome != "ok"] == ["x"]


def test_leave_racing_the_start_loses_with_a_clear_error(backend):
    seated, lobby_id = _seat(backend, 7)
    leaver = seated[3]
    x = backend.player("x")
    deps, store = interleaving(backend.deps)

    lv = paused(
        store, "leave", lambda: matchmaking.leave(deps, Request(leaver.connection_id), leaver.id)
    )
    matchmaking.join(
        deps, Request(x.connection_id), x.id, "en"
    )  # the 8th seat: started, the leaver is in it
    lv.finish()

    assert isinstance(lv.error, AlreadyPlayingError)  # told, not silently ignored
    lobby = backend.store.get_lobby(lobby_id)
    assert lobby.lobby.status is LobbyStatus.STARTED
    assert len(lobby.lobby.seats) == 8
    p = backend.store.get_player(leaver.id)
    assert (p.status, p.tournament_id) == (PlayerStatus.PLAYING, lobby.lobby.tournament_id)
    assert leaver.last("round")["tournament_id"] == lobby.lobby.tournament_id


def test_two_party_joins_racing_for_the_eighth_place(backend):
    members = [backend.player(f"m{i}") for i in range(7)]
    members[0].send("party_create")
    event = members[0].last("party")
    invite, party_id = event["invite"], event["party_id"]
    for m in members[1:]:
        m.send("party_join", invite=invite)
    x, y = backend.player("x"), backend.player("y")
    deps, store = interleaving(backend.deps)

    jx = paused(store, "x", lambda: parties.join(deps, Request(x.connection_id), x.id, invite))
    jy = paused(store, "y", lambda: parties.join(deps, Request(y.connection_id), y.id, invite))
    jx.finish()
    jy.finish()

    assert jx.error is None
    assert isinstance(jy.error, PartyFullError)
    rec = backend.store.get_party(party_id)
    assert rec.party.members == (*(m.id for m in members), x.id)
    assert backend.store.get_player(x.id).party_id == party_id
    assert backend.store.get_player(y.id).party_id is None
    assert [len(m["members"]) for m in x.all("party")] == [8]
    assert not y.all("party")


def test_solo_join_racing_a_party_join_of_the_same_player(backend):
    leader, p = backend.player("leader"), backend.player("p")
    leader.send("party_create")
    invite = leader.last("party")["invite"]
    deps, store = interleaving(backend.deps)

    solo = paused(
        store, "join", lambda: matchmaking.join(deps, Request(p.connection_id), p.id, "en")
    )
    parties.join(deps, Request(p.connection_id), p.id, invite)
    solo.finish()

    assert isinstance(solo.error, AlreadyInPartyError)
    me = backend.store.get_player(p.id)
    assert (me.status, me.lobby_id, me.party_id) == (PlayerStatus.IDLE, None, me.party_id)
    assert me.party_id is not None
    assert _lobby_sizes(backend) == {}


def test_party_start_racing_a_member_leaving_seats_only_the_members(backend):
    leader, a, b = (backend.player(n) for n in ("leader", "a", "b"))
    leader.send("party_create")
    invite = leader.last("party")["invite"]
    a.send("party_join", invite=invite)
    b.send("party_join", invite=invite)
    deps, store = interleaving(backend.deps)

    start = paused(
        store, "start", lambda: parties.start(deps, Request(leader.connection_id), leader.id, "en")
    )
    parties.leave(deps, Request(a.connection_id), a.id)
    start.finish()

    assert start.error is None
    (lobby_id, size), *rest = _lobby_sizes(backend).items()
    assert not rest
    assert size == 2
    seats = [s.player_id for s in backend.store.get_lobby(lobby_id).lobby.seats]
    assert seats == [leader.id, b.id]
    assert backend.store.get_player(a.id).status is PlayerStatus.IDLE
    assert backend.store.get_player(a.id).party_id is None


@pytest.mark.parametrize("first", ["join", "start"])
def test_party_start_racing_a_solo_join_never_overfills(backend, first):
    """A 2-member party starts while 6 solo players sit in a lobby and a 7th solo joins:
    whatever the order, no lobby ever holds more than 8 and nobody sits twice."""
    leader, member = backend.player("leader"), backend.player("member")
    leader.send("party_create")
    member.send("party_join", invite=leader.last("party")["invite"])
    solo = backend.player("solo")
    deps, store = interleaving(backend.deps)

    ops = {
        "join": lambda: matchmaking.join(deps, Request(solo.connection_id), solo.id, "en"),
        "start": lambda: parties.start(deps, Request(leader.connection_id), leader.id, "en"),
    }
    one = paused(store, first, ops[first])
    second = "start" if first == "join" else "join"
    two = paused(store, second, ops[second])
    two.finish()
    one.finish()

    assert one.error is None
    assert two.error is None
    sizes = _lobby_sizes(backend)
    assert max(sizes.values()) <= 8
    seated = [
        s["player_id"] for i in backend.items() if i["pk"].startswith("LOBBY#") for s in i["seats"]
    ]
    assert sorted(seated) == sorted([leader.id, member.id, solo.id])


class _LaggingIndex:
    """A store whose gsi_lobbies answers stay frozen at one moment (the index lags the
    table longer than a whole retry loop)."""

    def __init__(self, inner, frozen):
        self._inner = inner
        self._frozen = frozen

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def waiting_lobbies(self, language, rating):
        return [x for lang, x in self._frozen if lang == language and x.admits(rating)]


def _frozen(store, language="en", rating=1000):
    return [(language, x) for x in store.waiting_lobbies(language, rating)]


def test_join_succeeds_while_the_waiting_index_lags(backend):
    a = backend.player("a")
    a.join("en")
    lobby_id = a.last("lobby")["lobby_id"]
    frozen = _frozen(backend.store)  # the lobby with one seat
    b, x = backend.player("b"), backend.player("x")
    b.join("en")  # the table moves on; the index does not
    deps = dataclasses.replace(backend.deps, store=_LaggingIndex(backend.store, frozen))

    matchmaking.join(deps, Request(x.connection_id), x.id, "en")

    assert [s.player_id for s in backend.store.get_lobby(lobby_id).lobby.seats] == [
        a.id,
        b.id,
        x.id,
    ]
    assert backend.store.get_player(x.id).lobby_id == lobby_id


def test_join_skips_a_started_lobby_the_lagging_index_still_lists(backend):
    _, lobby_id = _seat(backend, 7)
    frozen = _frozen(backend.store)
    y, x = backend.player("y"), backend.player("x")
    y.join("en")  # 8th seat: started, but the frozen index still says waiting with 7
    deps = dataclasses.replace(backend.deps, store=_LaggingIndex(backend.store, frozen))

    matchmaking.join(deps, Request(x.connection_id), x.id, "en")

    px = backend.store.get_player(x.id)
    assert px.status is PlayerStatus.QUEUED
    assert px.lobby_id != lobby_id
    assert len(backend.store.get_lobby(lobby_id).lobby.seats) == 8


def test_join_racing_the_last_member_leaving_finds_no_party(backend):
    last, x = backend.player("last"), backend.player("x")
    last.send("party_create")
    event = last.last("party")
    invite, party_id = event["invite"], event["party_id"]
    deps, store = interleaving(backend.deps)

    jx = paused(
        store, "x", lambda: parties.join(deps, Request(x.connection_id), x.id, invite)
    )  # invite resolved
    parties.leave(
        deps, Request(last.connection_id), last.id
    )  # the party closes, its invite is deleted
    jx.finish()

    assert isinstance(jx.error, UnknownInviteError)
    assert backend.store.get_player(x.id).party_id is None
    assert backend.store.party_id_for_invite(invite) is None
    rec = backend.store.get_party(party_id)
    assert rec is None or x.id not in rec.party.members


def test_join_racing_its_own_disconnect_takes_no_seat(backend):
    p = backend.player("p")
    deps, store = interleaving(backend.deps)

    jp = paused(store, "join", lambda: matchmaking.join(deps, Request(p.connection_id), p.id, "en"))
    sessions.disconnect(deps, p.connection_id)  # the tab closed right after sending join
    jp.finish()

    assert isinstance(jp.error, NoSessionError)
    me = backend.store.get_player(p.id)
    assert (me.status, me.lobby_id, me.connected) == (PlayerStatus.IDLE, None, False)
    assert _lobby_sizes(backend) == {}  # no ghost seat that no deadline would ever free


def test_two_players_opening_lobbies_at_once_meet_in_one(backend):
    """Ruling 8 / matchmaking: two solo players who find no waiting lobby at the same moment
    must not each wait alone in a lobby of their own: both claim the language's opener, the
    loser re-reads it and sits down in the winner's lobby."""
    x, y = backend.player("x"), backend.player("y")
    deps, store = interleaving(backend.deps)

    jx = paused(store, "x", lambda: matchmaking.join(deps, Request(x.connection_id), x.id, "en"))
    jy = paused(store, "y", lambda: matchmaking.join(deps, Request(y.connection_id), y.id, "en"))
    jx.finish()
    jy.finish()

    assert jx.error is None
    assert jy.error is None
    px, py = backend.store.get_player(x.id), backend.store.get_player(y.id)
    assert px.lobby_id == py.lobby_id
    assert [s.player_id for s in backend.store.get_lobby(px.lobby_id).lobby.seats] == [x.id, y.id]
    assert sorted(_lobby_sizes(backend).values()) == [2]


class _LeastPreferredFirst(random.Random):
    """A scripted chance: a shuffle puts the least preferred lobby first; a lane draw takes
    the highest lane allowed."""

    def shuffle(self, x):  # type: ignore[override]
        x.sort(key=mm.preference, reverse=True)

    def randrange(self, start, stop=None, step=1):  # type: ignore[override]
        return (start if stop is None else stop) - 1


def _lobby_with(backend, n: int) -> tuple[list, str]:
    """A waiting lobby of ``n`` players at 1000, opened in a lane of its own (as contention
    leaves them), so the next join at 1000 has two lobbies to choose from."""
    players = [backend.player(f"l{n}-{i}") for i in range(n)]
    deps = dataclasses.replace(backend.deps, rng=_LeastPreferredFirst)
    lobby_id = None
    for p in players:
        if lobby_id is None:
            # a joiner on its OPEN_FROM_ATTEMPT-th try opens in a fresh lane
            tries = iter(range(matchmaking.OPEN_FROM_ATTEMPT - 1))
            flaky = _ConflictsFirst(backend.store, tries)
            matchmaking.join(
                dataclasses.replace(deps, store=flaky), Request(p.connection_id), p.id, "en"
            )
            lobby_id = backend.store.get_player(p.id).lobby_id
        else:
            matchmaking.join(deps, Request(p.connection_id), p.id, "en")
            assert backend.store.get_player(p.id).lobby_id == lobby_id
    return players, lobby_id


class _ConflictsFirst:
    """A store whose first commits (one per item of ``tries``) fail as if another writer had
    got there first."""

    def __init__(self, inner, tries):
        self._inner = inner
        self._tries = tries

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def commit(self, writes):
        if next(self._tries, None) is not None:
            raise ConflictError("conditional write failed (scripted)")
        self._inner.commit(writes)


def test_a_joiner_that_conflicts_spreads_to_another_lobby(backend):
    """Throughput: the first try takes the preferred lobby; after a conflict the
    retry picks among all admitting lobbies at random (here, scripted: the least preferred),
    instead of queueing on the same item again."""
    _, fuller = _seat(backend, 3)
    _, emptier = _lobby_with(backend, 1)
    x, y = backend.player("x"), backend.player("y")
    deps, store = interleaving(dataclasses.replace(backend.deps, rng=_LeastPreferredFirst))

    jx = paused(store, "x", lambda: matchmaking.join(deps, Request(x.connection_id), x.id, "en"))
    jy = paused(store, "y", lambda: matchmaking.join(deps, Request(y.connection_id), y.id, "en"))
    jy.finish()  # y takes the preferred (fuller) lobby's 4th seat
    jx.finish()  # x's save on it conflicts; its retry spreads to the other lobby

    assert jx.error is None
    assert jy.error is None
    assert [(label, outcome) for label, _, outcome in store.commits] == [
        ("y", "ok"),
        ("x", "ConflictError"),
        ("x", "ok"),
    ]
    assert backend.store.get_player(y.id).lobby_id == fuller
    assert backend.store.get_player(x.id).lobby_id == emptier
    assert _lobby_sizes(backend) == {fuller: 4, emptier: 2}


def test_seven_conflicts_never_split_a_burst_of_eight(backend):
    """A burst of 8 joiners costs any one of them at most 7 conflicts (each is another joiner's
    seat taken): after 7 the joiner still sits in the lobby that admits it, never in a lane of
    its own where it would wait forever (ruling 8; the every-language end-to-end test found
    it, with lanes opened after two conflicts)."""
    _, first = _seat(backend, 7)
    x = backend.player("x")
    deps = dataclasses.replace(backend.deps, rng=_LeastPreferredFirst)
    flaky = _ConflictsFirst(backend.store, iter(range(mm.LOBBY_SEATS - 1)))
    matchmaking.join(dataclasses.replace(deps, store=flaky), Request(x.connection_id), x.id, "en")
    assert backend.store.get_player(x.id).status is PlayerStatus.PLAYING
    assert backend.store.get_lobby(first).lobby.status is LobbyStatus.STARTED


def test_repeated_conflicts_open_a_lobby_in_another_lane(backend):
    """After ``OPEN_FROM_ATTEMPT - 1`` (8) conflicts a joiner stops contending for the
    existing lobbies and opens one in a random further lane; a later joiner that conflicts as
    often can meet it there."""
    _, first = _seat(backend, 2)
    x, y = backend.player("x"), backend.player("y")
    deps = dataclasses.replace(backend.deps, rng=_LeastPreferredFirst)

    def twice_conflicted(p):
        flaky = _ConflictsFirst(backend.store, iter(range(matchmaking.OPEN_FROM_ATTEMPT - 1)))
        matchmaking.join(
            dataclasses.replace(deps, store=flaky), Request(p.connection_id), p.id, "en"
        )

    twice_conflicted(x)
    px = backend.store.get_player(x.id)
    assert px.lobby_id != first  # a new lobby, though the first one admitted x
    (opener,) = backend.store.get_openers("en", 1, [5]).values()  # lane 1 of 0..1
    assert opener.lobby_id == px.lobby_id
    twice_conflicted(y)  # the same lane: sits in x's lobby
    assert backend.store.get_player(y.id).lobby_id == px.lobby_id
    assert _lobby_sizes(backend) == {first: 2, px.lobby_id: 2}


def _opener_streak(backend) -> int:
    opener = backend.store.get_openers("en", 0, [5])[5]
    # the lobby it opened carries the streak, for joiners contending for it to read
    assert backend.store.get_lobby(opener.lobby_id).streak == opener.streak
    return opener.streak


def test_openers_count_lobbies_opened_fast_in_a_row(backend):
    """The lane-0 opener of a bucket records how many lobbies it opened in a row,
    each within ``FAST_FILL_MS`` of the one before (the previous one filled that fast); a
    slower gap starts the count again."""
    backend.fill_lobby("en")
    assert _opener_streak(backend) == 0
    for expected in (1, 2, 3):
        backend.clock.advance(matchmaking.FAST_FILL_MS)
        backend.fill_lobby("en")
        assert _opener_streak(backend) == expected
    backend.clock.advance(matchmaking.FAST_FILL_MS + 1)
    backend.fill_lobby("en")
    assert _opener_streak(backend) == 0


def _mark_sustained(backend, lobby_id: str, streak: int = matchmaking.SUSTAINED_STREAK) -> None:
    """The lobby as sustained load leaves it: opened by an opener with a streak of fast
    openings."""
    rec = backend.store.get_lobby(lobby_id)
    rec.streak = streak
    backend.store.commit([rec])


def _conflicted(backend, p, conflicts: int) -> None:
    deps = dataclasses.replace(backend.deps, rng=_LeastPreferredFirst)
    flaky = _ConflictsFirst(backend.store, iter(range(conflicts)))
    matchmaking.join(dataclasses.replace(deps, store=flaky), Request(p.connection_id), p.id, "en")


def test_under_sustained_load_two_conflicts_open_a_lane(backend):
    """Throughput: when the bucket's lobbies have been filling within a second, one
    after another (``_sustained``), a joiner opens a lobby in a further lane after only 2
    conflicts instead of re-reading the index 8 times; the lobby it leaves short fills from
    the joiners still arriving."""
    _, first = _seat(backend, 2)
    _mark_sustained(backend, first)
    x = backend.player("x")
    _conflicted(backend, x, matchmaking.SUSTAINED_OPEN_FROM_ATTEMPT - 1)
    px = backend.store.get_player(x.id)
    assert px.lobby_id != first
    (opener,) = backend.store.get_openers("en", 1, [5]).values()  # lane 1 of 0..1
    assert opener.lobby_id == px.lobby_id
    assert _lobby_sizes(backend) == {first: 2, px.lobby_id: 1}
    # the lane's lobby carries the signal on, for joiners spreading to it
    assert backend.store.get_lobby(px.lobby_id).streak == matchmaking.SUSTAINED_STREAK


def test_a_stale_streak_does_not_open_lanes_early(backend):
    """A streak too short, or on a lobby opened more than ``SUSTAINED_FRESH_MS`` ago (a rush
    that ended), counts for nothing: 2 conflicts leave the joiner in the lobby that admits
    it."""
    _, first = _seat(backend, 2)
    _mark_sustained(backend, first, matchmaking.SUSTAINED_STREAK - 1)
    x = backend.player("x")
    _conflicted(backend, x, matchmaking.SUSTAINED_OPEN_FROM_ATTEMPT - 1)
    assert backend.store.get_player(x.id).lobby_id == first

    _mark_sustained(backend, first)
    backend.clock.advance(matchmaking.SUSTAINED_FRESH_MS + 1)
    y = backend.player("y")
    _conflicted(backend, y, matchmaking.SUSTAINED_OPEN_FROM_ATTEMPT - 1)
    assert backend.store.get_player(y.id).lobby_id == first
    assert _lobby_sizes(backend) == {first: 4}


class _CountingListings(_ConflictsFirst):
    """``_ConflictsFirst`` that also counts the waiting-lobby index reads."""

    listings = 0

    def waiting_lobbies(self, language, rating):
        self.listings += 1
        return self._inner.waiting_lobbies(language, rating)


def test_a_retry_re_reads_the_lobbies_it_listed_not_the_index(backend):
    """A retry after a conflict re-reads (GetItem) the lobbies its join listed;
    the index, whose partitions every join of a language shares, is read once."""
    _, first = _seat(backend, 2)
    x = backend.player("x")
    deps = dataclasses.replace(backend.deps, rng=_LeastPreferredFirst)
    store = _CountingListings(backend.store, iter(range(2)))
    matchmaking.join(dataclasses.replace(deps, store=store), Request(x.connection_id), x.id, "en")
    assert backend.store.get_player(x.id).lobby_id == first
    assert store.listings == 1


def test_a_retry_lists_again_once_the_lobbies_it_knew_are_taken(backend):
    """When every lobby a join listed stopped admitting the joiner (here: it started), the
    retry reads the index again and finds the lobby opened since."""
    _, first = _seat(backend, 7)
    x, y, z = backend.player("x"), backend.player("y"), backend.player("z")
    deps = dataclasses.replace(backend.deps, rng=_LeastPreferredFirst)

    class FillsFirst(_CountingListings):
        def commit(self, writes):
            if self.listings == 1 and next(self._tries, None) is not None:
                y.join("en")  # y takes the last seat: the tournament starts
                z.join("en")  # and z opens the next lobby
                raise ConflictError("conditional write failed (scripted)")
            self._inner.commit(writes)

    store = FillsFirst(backend.store, iter(range(1)))
    matchmaking.join(dataclasses.replace(deps, store=store), Request(x.connection_id), x.id, "en")
    assert backend.store.get_lobby(first).lobby.status is LobbyStatus.STARTED
    px = backend.store.get_player(x.id)
    assert px.lobby_id == backend.store.get_player(z.id).lobby_id != first
    assert store.listings == 2


def test_two_players_opening_at_once_meet_across_a_bucket_boundary(backend):
    """Rating 1199 (bucket 5) and 1201 (bucket 6) find no lobby at the same moment: each
    opening checks the neighbouring bucket's opener unchanged, so one commit conflicts and its
    retry sits in the other's lobby (ruling 8: within 200, they never wait apart)."""
    x, y = backend.player("x"), backend.player("y")
    set_rating(backend, x, 1199)
    set_rating(backend, y, 1201)
    deps, store = interleaving(backend.deps)

    jx = paused(store, "x", lambda: matchmaking.join(deps, Request(x.connection_id), x.id, "en"))
    jy = paused(store, "y", lambda: matchmaking.join(deps, Request(y.connection_id), y.id, "en"))
    jy.finish()
    jx.finish()

    assert jx.error is None
    assert jy.error is None
    assert [(label, outcome) for label, _, outcome in store.commits] == [
        ("y", "ok"),
        ("x", "ConflictError"),
        ("x", "ok"),
    ]
    px, py = backend.store.get_player(x.id), backend.store.get_player(y.id)
    assert px.lobby_id == py.lobby_id
    assert [s.player_id for s in backend.store.get_lobby(px.lobby_id).lobby.seats] == [y.id, x.id]
    assert sorted(_lobby_sizes(backend).values()) == [2]


def test_two_players_more_than_200_apart_opening_at_once_wait_apart(backend):
    x, y = backend.player("x"), backend.player("y")
    set_rating(backend, x, 1000)
    set_rating(backend, y, 1201)
    deps, store = interleaving(backend.deps)

    jx = paused(store, "x", lambda: matchmaking.join(deps, Request(x.connection_id), x.id, "en"))
    jy = paused(store, "y", lambda: matchmaking.join(deps, Request(y.connection_id), y.id, "en"))
    jy.finish()
    jx.finish()

    px, py = backend.store.get_player(x.id), backend.store.get_player(y.id)
    assert px.lobby_id != py.lobby_id
    assert sorted(_lobby_sizes(backend).values()) == [1, 1]
