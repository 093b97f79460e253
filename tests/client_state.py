"""Test support: the reference client — the screen a client derives from the server's messages.

The fold is the clients' own, ``infra.players.state.ClientState`` (its docstring says what a
screen shows); ``ScreenState`` adds ``seen``, the types of the messages applied, for failure
messages. ``ScreenState.from_snapshot(session)`` is a client that knows only its token and
resumes; ``screen`` is the frozen, comparable ``Screen`` it shows.
"""

from __future__ import annotations

from infra.players.state import ClientState, Msg, Screen

__all__ = ["Screen", "ScreenState"]


class ScreenState(ClientState):
    """A client's state, folded from the server's messages, with the types it saw."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []
        """Types of the messages applied, in order (for failure messages)."""

    def apply(self, m: Msg) -> list[Msg]:
        self.seen.append(m["type"])
        return super().apply(m)
