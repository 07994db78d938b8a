"""Every model call of an answer, whichever agent makes it, seen one way: as LangChain callbacks.

answers/runner.py adds a `ModelCalls` handler to each graph run; it adds each call to the answer's trace, notes the
model it went to and its usage (turn_context.py), marks a structured-output call as internal (LangChain's own
mark), and remembers which errors were a model call's, so the agent's own failures can be told from the provider's.
"""

from __future__ import annotations

import time
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableConfig

from threadline.conversations.state import TURN_ENDS
from threadline.turn_context import TurnContext

INTERNAL_CALL = "lc_internal_call"  # LangChain's metadata key for a model call internal to an agent
# Where each provider's LangChain model says why a call ended; a streamed call of theirs without it was cut off (a
# proxy or the provider closed the stream cleanly mid-answer), however whole it looks.
FINISH_KEYS = {
    "openai": ("finish_reason", "status"),
    "deepseek": ("finish_reason",),  # langchain-deepseek, which threadline uses for OpenAI-compatible servers
    "anthropic": ("stop_reason",),
    "google_genai": ("finish_reason",),
}


class CutOff(ConnectionError):
    """A provider's stream ended without saying why: the answer is not complete."""


def model_calls_of(config: RunnableConfig) -> ModelCalls | None:
    """The run's handler, from inside a node."""
    callbacks = config.get("callbacks")
    handlers = callbacks.handlers if isinstance(callbacks, BaseCallbackManager) else callbacks or []
    return next((handler for handler in handlers if isinstance(handler, ModelCalls)), None)


class ModelCalls(BaseCallbackHandler):
    """Reports each chat model call (but the `nostream` ones, as the suggestion call) to the answer's trace.
    Synchronous and inline: LangChain calls every handler for every token, and an async one costs a task each."""

    run_inline = True
    raise_error = True  # a call cut off (CutOff) fails the answer as a broken connection would

    def __init__(self, turn: TurnContext | None) -> None:
        self.turn = turn  # None outside an answer (the agent's calls are then only watched for failures)
        self.calls: dict[UUID, tuple[float, list[BaseMessage]]] = {}
        self.errors: list[BaseException] = []  # what model calls raised, to tell them from the agent's own errors
        self.ignored: set[UUID] = set()
        self.finish_keys: dict[UUID, tuple[str, ...]] = {}  # the calls of providers that say why they ended

    def failed(self, error: BaseException) -> bool:
        """Whether `error` is, or was raised from, a model call's failure."""
        link: BaseException | None = error
        for _ in range(20):
            if link is None:
                return False
            if any(link is known for known in self.errors):
                return True
            link = link.__cause__ or link.__context__
        return False

    def abandoned(self, error: BaseException) -> None:
        """The run ended by `error` while these calls streamed (a stop cancels a call without telling LangChain's
        callbacks): each goes to the trace with it."""
        for started, messages in self.calls.values():
            if self.turn is not None:
                self.turn.trace.model_called(started, messages, None, error)
        self.calls.clear()

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        about = kwargs.get("metadata") or {}
        if about.get("langgraph_node") in TURN_ENDS and "|" not in about.get("langgraph_checkpoint_ns", "|"):
            self.ignored.add(run_id)  # threadline's own call for suggestions, made after the agent: not the agent's
            return
        if "nostream" not in (tags or ()):
            self.calls[run_id] = (time.perf_counter(), messages[0] if messages else [])
        if (keys := FINISH_KEYS.get(about.get("ls_provider", ""))) is not None:
            self.finish_keys[run_id] = keys
        if self.turn is not None and about.get("ls_model_name"):  # which model this call went to
            self.turn.models_called.add(f"{about.get('ls_provider') or 'model'}:{about['ls_model_name']}")
        if (kwargs.get("options") or {}).get("ls_structured_output_format"):  # its JSON is parsed, not prose
            # LangChain's own mark for an internal call, on the metadata LangGraph streams this call's tokens with
            # (the same dict every handler is given): the answer leaves them out, with no handler run per token.
            about[INTERNAL_CALL] = True

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        if run_id in self.ignored:
            self.ignored.discard(run_id)
            return
        generation = response.generations[0][0] if response.generations and response.generations[0] else None
        message = getattr(generation, "message", None)
        keys = self.finish_keys.pop(run_id, ())
        if keys and isinstance(message, AIMessage) and not any(message.response_metadata.get(k) for k in keys):
            cut = CutOff("the model's stream ended without a finish reason: the answer was cut off")
            self.on_llm_error(cut, run_id=run_id)
            raise cut
        if self.turn is not None and isinstance(message, AIMessage) and message.usage_metadata:
            self.turn.usage_by_call.append((message.id, message.usage_metadata))  # every call, hidden ones too
        if (call := self.calls.pop(run_id, None)) is not None and self.turn is not None:
            self.turn.trace.model_called(*call, message if isinstance(message, AIMessage) else None, None)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.errors.append(error)
        self.finish_keys.pop(run_id, None)
        self.ignored.discard(run_id)
        if (call := self.calls.pop(run_id, None)) is not None and self.turn is not None:
            self.turn.trace.model_called(*call, None, error)
