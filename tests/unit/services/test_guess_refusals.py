"""Unit: a ``guess`` refused before it reaches a duel — a forged or malformed duel id, a
connection the tournament does not hold, another duel's id — each told as the rules page's
error, and a connection without a session told ``no_session`` first; on the fakes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from shared.domain.errors import NotInDuelError, NotInTournamentError, NotInWordListError
from shared.services import duels, matchmaking, sessions
from shared.services.deps import Deps
from shared.services.errors import NoSessionError
from shared.services.outbox import Request
from shared.services.presence import player_for_connection
from tests.fakes import fake_deps, new_player, sent_of, stored_player


def _started(deps: Deps) -> tuple[list[tuple[str, str]], Any]:
    """8 players seated and the intro over: ([(connection, player)], the tournament)."""
    seated = []
    for i in range(8):
        pid = new_player(deps, f"c{i}")
        matchmaking.join(deps, Request(f"c{i}"), pid, "en")
        seated.append((f"c{i}", pid))
    deps.clock.advance_to(deps.clock.next_due())  # type: ignore[attr-defined]  # intro ends
    rec = deps.store.get_tournament(stored_player(deps, seated[0][1]).tournament_id or "")
    assert rec is not None
    return seated, rec.tournament


def _word(deps: Deps, duel: Any) -> str:
    return next(w for w in sorted(deps.lexicon.allowed("en", duel.length)) if w != duel.word)


def test_a_guess_in_a_duel_of_no_tournament_is_no_such_duel() -> None:
    deps = fake_deps()
    pid = new_player(deps, "c")
    for forged in ("ghost.1.1", "not-a-duel-id"):
        with pytest.raises(NotInDuelError, match=r"^no such duel$"):
            duels.guess(deps, Request("c"), forged, "crane")
    assert player_for_connection(deps, "c").player_id == pid


def test_a_guess_from_a_connection_without_a_session_is_no_session_first() -> None:
    deps = fake_deps()
    _, t = _started(deps)
    sessions.connect(deps, "bare")
    for duel_id in ("ghost.1.1", "bad", t.duels[0].duel_id):
        with pytest.raises(NoSessionError):
            duels.guess(deps, Request("bare"), duel_id, "crane")


def test_a_player_outside_the_tournament_is_told_so() -> None:
    deps = fake_deps()
    _, t = _started(deps)
    new_player(deps, "outsider")
    with pytest.raises(NotInTournamentError, match=r"^you are not playing in this tournament$"):
        duels.guess(deps, Request("outsider"), t.duels[0].duel_id, "crane")


def test_a_duelist_guessing_in_another_duel_is_not_in_that_duel() -> None:
    deps = fake_deps()
    seated, t = _started(deps)
    mine, other = t.duels[0], t.duels[1]
    cid = next(c for c, p in seated if p == mine.next_player)
    with pytest.raises(NotInDuelError, match=r"^this is not your duel$"):
        duels.guess(deps, Request(cid), other.duel_id, _word(deps, other))
    after = deps.store.get_tournament(t.tournament_id)
    assert after is not None
    assert after.tournament.duel(other.duel_id).rows == ()


def test_a_guess_whose_push_finds_the_opponent_gone_disconnects_the_opponent() -> None:
    deps = fake_deps()
    seated, t = _started(deps)
    duel = t.duels[0]
    cid = next(c for c, p in seated if p == duel.next_player)
    opponent = duel.opponent_of(duel.next_player)
    gone = next(c for c, p in seated if p == opponent)
    deps.notifier.gone.add(gone)  # type: ignore[attr-defined]
    duels.guess(deps, Request(cid), duel.duel_id, _word(deps, duel))
    assert stored_player(deps, opponent).connected is False
    assert sent_of(deps, cid, "turn")


class _CountingLexicon:
    """The deps' lexicon, counting what a guess asks of it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.asked: list[str] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        def counted(*args: Any) -> Any:
            self.asked.append(name)
            return method(*args)

        return counted


@pytest.mark.parametrize("word", ["valid", "zzzzz"], ids=["played", "not_in_the_word_list"])
def test_a_guess_reads_the_lexicon_once_and_the_domain_judges_the_word(word: str) -> None:
    """The services hand the domain the language's allowed words as one value, read once per
    decision; the domain never calls back to ask whether a word is allowed."""
    deps = fake_deps()
    seated, t = _started(deps)
    duel = t.duels[0]
    cid = next(c for c, p in seated if p == duel.next_player)
    raw = _word(deps, duel) if word == "valid" else "z" * duel.length
    counting = _CountingLexicon(deps.lexicon)
    deps = dataclasses.replace(deps, lexicon=counting)
    if word == "valid":
        duels.guess(deps, Request(cid), duel.duel_id, raw)
    else:
        with pytest.raises(NotInWordListError, match=r"^not in the word list$"):
            duels.guess(deps, Request(cid), duel.duel_id, raw)
    assert counting.asked.count("allowed_words") == 1
    assert "allowed" not in counting.asked
