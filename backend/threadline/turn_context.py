"""The answer being computed, for code far below the HTTP layer that works for it.

answers/turn.py sets `current_turn` for each answer's task. What the layers below read or fill in is data: who
asks and where, the tool calls the person declined, the model calls' usage and models (agent/model_calls.py), and
the answer's trace (observability/trace.py), to which the model-call handler and the MCP client add their calls
directly, a call down the layers. Three notices still call the answer itself, being live and rare: storage's
warning that a conversation is kept in memory (storage/fallback.py), the "summarizing" status (agent/graph.py)
and a provider's 429 (agent/models.py). This module imports nothing of the project's, so those lower layers need
not import the answer machinery above them.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from typing import Any, Protocol


class CallTrace(Protocol):
    """The answer's trace (observability/trace.py's recorder), as the calls made for the answer add to it."""

    def model_called(self, started: float, messages: list[Any], response: Any, error: BaseException | None) -> None:
        """A model call ended; `started` is its `time.perf_counter()`, `error` set when it failed or was stopped."""

    def tool_called(self, tool_call_id: str, server: str, started: float) -> None:
        """An MCP tool call ended; `started` is its `time.perf_counter()`."""


class TurnContext(Protocol):
    """What a lower layer may know of, fill in, and (for three notices) say to the answer it works for."""

    client_id: str
    conversation_id: str
    resuming: bool  # the answer goes on after the person answered what it waited for
    declined: set[str]  # the tool calls the person declined in answering this answer's approvals
    usage_by_call: list[tuple[str | None, Mapping[str, Any]]]  # every model call's usage, by message id
    models_called: set[str]  # ... and the models they went to (`provider:name`)

    @property
    def trace(self) -> CallTrace:
        """Where the answer's model and tool calls add themselves."""

    def warn(self, code: str, message: str) -> None:
        """Tell the client something degraded without ending the answer; each warning once per answer."""

    def status(self, text: str) -> None:
        """Say what the answer is doing (streamed in events mode only), e.g. summarizing a long conversation."""

    def provider_busy(self, retry_after: float) -> None:
        """The model provider answered 429: its client library waits `retry_after` seconds and asks again."""


current_turn: contextvars.ContextVar[TurnContext | None] = contextvars.ContextVar("current_turn", default=None)
