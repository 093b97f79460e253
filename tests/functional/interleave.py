"""Deterministic interleaving of use cases for concurrency tests.

``PausingStore`` wraps a real store. A use case started with ``paused(...)`` runs in its own
thread until its first ``commit``, where it stops *after every load and decision and before
the save*; the test then runs other use cases to completion (or pauses them too) and releases
the paused ones in the order it chooses. Only one thread ever runs at a time, so the order of
every read and write is fixed by the test, not by the scheduler.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import Any

_TIMEOUT = 30.0


class PausingStore:
    """A store proxy whose ``commit`` can stop the calling thread once (see module doc).
    ``commits`` records (label, writes' types, outcome) of every commit, in order."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._gates: dict[int, tuple[threading.Event, threading.Event]] = {}
        self._labels: dict[int, str] = {}
        self.commits: list[tuple[str, list[str], str]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def commit(self, writes: Sequence[Any]) -> None:
        me = threading.get_ident()
        gate = self._gates.pop(me, None)
        if gate is not None:
            reached, release = gate
            reached.set()
            if not release.wait(_TIMEOUT):
                raise TimeoutError("never released")
        label = self._labels.get(me, "main")
        kinds = [type(w).__name__ for w in writes]
        try:
            self._inner.commit(writes)
        except Exception as err:
            self.commits.append((label, kinds, type(err).__name__))
            raise
        self.commits.append((label, kinds, "ok"))


class Paused:
    """A use case running in a thread, stopped at its first commit (``paused``)."""

    def __init__(self, store: PausingStore, label: str, fn: Callable[[], Any]) -> None:
        self.label = label
        self._store = store
        self._fn = fn
        self._reached = threading.Event()
        self._release = threading.Event()
        self._done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=label, daemon=True)

    def _run(self) -> None:
        me = threading.get_ident()
        self._store._labels[me] = self.label
        self._store._gates[me] = (self._reached, self._release)
        try:
            self.result = self._fn()
        except BaseException as err:
            self.error = err
        finally:
            self._store._gates.pop(me, None)
            self._done.set()
            self._reached.set()  # never reached a commit: do not keep the test waiting

    def start(self) -> Paused:
        self._thread.start()
        assert self._reached.wait(_TIMEOUT), f"{self.label} never got to its commit"
        assert not self._done.is_set(), f"{self.label} ended before committing: {self.error!r}"
        return self

    def finish(self) -> Paused:
        """Let it save (and retry, unpaused, if the save conflicts); wait until it is done."""
        self._release.set()
        assert self._done.wait(_TIMEOUT), f"{self.label} did not finish"
        self._thread.join(_TIMEOUT)
        return self


def interleaving(deps: Any) -> tuple[Any, PausingStore]:
    """A copy of ``deps`` whose store is a ``PausingStore`` over the real one."""
    store = PausingStore(deps.store)
    return dataclasses.replace(deps, store=store), store


def paused(store: PausingStore, label: str, fn: Callable[[], Any]) -> Paused:
    """Start ``fn`` in a thread and return once it waits at its first commit."""
    return Paused(store, label, fn).start()
