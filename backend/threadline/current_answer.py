"""The answer being computed, for code far below the HTTP layer that has something to tell its user.

answers/turn.py sets `current_turn` for each answer's task; storage (storage/fallback.py), the graph and the MCP client
read it to warn the user, report a tool's progress, or add a model or tool call to the answer's trace.
This module imports nothing of the project's, so those
lower layers need not import the answer machinery above them.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from typing import Any, Protocol


class TurnContext(Protocol):
    """What a lower layer may know of, and say to, the answer it works for."""

    client_id: str
    conversation_id: str
    usage_by_call: list[tuple[str | None, Mapping[str, Any]]]  # a hosted agent's model calls' usage, by message id
    models_called: set[str]  # ... and the models they went to
    resuming: bool  # the answer goes on after the person answered what it waited for

    def warn(self, code: str, message: str) -> None:
        """Tell the client something degraded without ending the answer; each warning once per answer."""

    def status(self, text: str) -> None:
        """Say what the answer is doing (streamed in events mode only), e.g. summarizing a long conversation."""

    def model_called(self, started: float, messages: list[Any], response: Any, error: BaseException | None) -> None:
        """A model call ended, for the answer's trace; `started` is its `time.perf_counter()`."""

    def tool_called(self, tool_call_id: str, server: str, started: float) -> None:
        """An MCP tool call ended, for the answer's trace; `started` is its `time.perf_counter()`."""

    def used(self, message_id: str | None, usage: Mapping[str, Any]) -> None:
        """A hosted agent's model call finished with this usage."""

    def called_model(self, model: str) -> None:
        """A hosted agent's model call went to this model (`provider:name`)."""

    def provider_busy(self, retry_after: float) -> None:
        """The model provider answered 429: its client library waits `retry_after` seconds and asks again."""

    def declined_calls(self) -> set[str]:
        """The tool calls the person declined in answering this answer's approvals."""


current_turn: contextvars.ContextVar[TurnContext | None] = contextvars.ContextVar("current_turn", default=None)
