"""Each answer as a Langfuse trace, through the official SDK's LangChain callback handler.

The handler sees the graph run as LangChain callbacks: a generation per model call (model, input
messages, output, token usage) and a span per tool call. The Langfuse trace id is the answer's own
`trace_id`, its session the conversation and its user the visitor. The SDK sends from a background
thread with a bounded queue, on a tracer provider of its own, so Langfuse being unreachable never
touches a chat; it is off (no handler at all) unless both keys are set.
"""

from __future__ import annotations

from typing import Any

from langfuse import Langfuse
from langfuse.langchain import CallbackHandler
from opentelemetry.sdk.trace import TracerProvider


class LangfuseCallbacks:
    def __init__(self, public_key: str, secret_key: str, host: str) -> None:
        self.public_key = public_key
        self.client = Langfuse(
            public_key=public_key, secret_key=secret_key, base_url=host, tracer_provider=TracerProvider()
        )

    def for_answer(self, trace_id: str, conversation_id: str, client_id: str) -> tuple[list[Any], dict[str, str]]:
        """The callbacks and run metadata that make one graph run one Langfuse trace."""
        handler = CallbackHandler(public_key=self.public_key, trace_context={"trace_id": trace_id})
        return [handler], {"langfuse_session_id": conversation_id, "langfuse_user_id": client_id}

    def close(self) -> None:
        """Send what is queued before the process ends."""
        self.client.shutdown()
