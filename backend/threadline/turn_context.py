"""The answer being computed, for code far below the HTTP layer that has something to tell its user.

turns.py sets `current_turn` for each answer's task; storage (fallback.py) and the MCP client read it to
warn the user or report a tool's progress. This module imports nothing of the project's, so those
lower layers need not import the answer machinery above them.
"""

from __future__ import annotations

import contextvars
from typing import Protocol


class TurnContext(Protocol):
    """What a lower layer may know of, and say to, the answer it works for."""

    client_id: str
    conversation_id: str

    def warn(self, code: str, message: str) -> None:
        """Tell the client something degraded without ending the answer; each warning once per answer."""

    def progress(self, tool_call_id: str, progress: float, total: float | None, message: str | None) -> None:
        """Progress from a running tool: it counts as the answer being alive."""


current_turn: contextvars.ContextVar[TurnContext | None] = contextvars.ContextVar("current_turn", default=None)
