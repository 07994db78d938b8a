"""The turn (the answer in flight), for code far below the HTTP layer that works for it.

answers/turn.py sets `current_turn` for each turn's task. What the layers below read or fill in is data: who asks
and where, the tool calls the person declined, the model calls' usage and models (agent/model_calls.py), and the
turn's trace (observability/trace.py), to which the model-call handler and the MCP client add their calls
directly, a call down the layers. What a node has to say while it runs (the "summarizing" status, a provider's
429) goes the LangGraph way, through the run's stream writer (`tell_the_turn`), which the turn reads with the
rest of the run's stream. One notice still calls the turn itself: storage's warning that a conversation is kept
in memory while the database is down (storage/fallback.py), which comes from LangGraph's checkpoint writes,
outside any node. This module imports nothing of the project's, so those lower layers need not import the answer
machinery above them.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from langgraph.config import get_stream_writer


@dataclass(frozen=True)
class ProviderBusy:
    """A model provider answered 429: its client library waits `retry_after` seconds and asks again, which is the
    provider's doing, not the agent's silence."""

    retry_after: float


def tell_the_turn(notice: object) -> None:
    """Send a notice (a canonical `Status` event, or `ProviderBusy`) to the turn through the run's stream writer;
    outside a graph run, where no turn listens, nothing."""
    try:
        write = get_stream_writer()
    except RuntimeError:  # not inside a run
        return
    write(notice)


class CallTrace(Protocol):
    """The answer's trace (observability/trace.py's recorder), as the calls made for the answer add to it."""

    def model_called(self, started: float, messages: list[Any], response: Any, error: BaseException | None) -> None:
        """A model call ended; `started` is its `time.perf_counter()`, `error` set when it failed or was stopped."""

    def tool_called(self, tool_call_id: str, server: str, started: float) -> None:
        """An MCP tool call ended; `started` is its `time.perf_counter()`."""


class TurnContext(Protocol):
    """What a lower layer may know of and fill in for the turn it works for, and storage's one warning to it."""

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


current_turn: contextvars.ContextVar[TurnContext | None] = contextvars.ContextVar("current_turn", default=None)
