"""A team's own agent inside threadline's conversation graph: input → agent → respond.

threadline's `input` and `respond` nodes keep what every conversation keeps whichever agent answers
(the question with its id, the answer's record, usage and suggestions); `agent` runs the team's compiled
graph as a subgraph on the conversation's messages, with threadline's `AgentContext` as runtime context.
As a subgraph it is checkpointed with the conversation, its interrupts pause the conversation, and
everything it streams (tokens, tool results, `get_stream_writer()` events) reaches the answer.
"""

from __future__ import annotations

import time
from typing import Any, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from threadline.agent.attachments import FileReader, restored
from threadline.agent.context import AgentContext
from threadline.agent.graph import ChatState, Graph, closing_update, input_node
from threadline.agent.loading import AgentGraph
from threadline.agent.suggestions import Suggester
from threadline.current_answer import current_turn


class HostedState(ChatState, total=False):
    agent_state: dict[str, Any]  # the agent's own state keys besides `messages`, kept from answer to answer


def host_graph(
    agent: AgentGraph, checkpointer: BaseCheckpointSaver[Any], suggester: Suggester | None, files: FileReader
) -> Graph:
    """Compile threadline's graph around `agent`; node names match the built-in graph's, so a stop, a rollback
    or a recovery edits either conversation alike (conversations/closing.py)."""

    async def run_agent(state: HostedState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        carried = state.get("agent_state") or {}
        given = await files.readable(state["messages"])  # attachments as content blocks, for its model
        config = _with_model_calls(get_config())
        result = await agent.ainvoke({**carried, "messages": given}, config, context=runtime.context)
        # The agent's messages replace the conversation's: it may have changed or removed earlier ones
        # (SummarizationMiddleware does). Messages with attachments go back to holding references only.
        messages = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *restored(result.get("messages", []), state["messages"])]
        return {"messages": messages, "agent_state": {k: v for k, v in result.items() if k != "messages"}}

    async def respond(state: HostedState) -> dict[str, Any]:
        return await closing_update(state["messages"], [], suggester)

    builder = StateGraph(HostedState, context_schema=AgentContext)
    builder.add_node("input", input_node)
    builder.add_node("agent", run_agent)
    builder.add_node("respond", respond)
    builder.add_edge(START, "input")
    builder.add_edge("input", "agent")
    builder.add_edge("agent", "respond")
    builder.add_edge("respond", END)
    return cast(Graph, builder.compile(checkpointer=checkpointer))


def _with_model_calls(config: RunnableConfig) -> RunnableConfig:
    """The agent's model calls go to the answer's trace, as the built-in graph's do."""
    turn = current_turn.get()
    callbacks = config.get("callbacks")
    if turn is None or not isinstance(callbacks, BaseCallbackManager):
        return config
    callbacks = callbacks.copy()
    callbacks.add_handler(ModelCalls(turn), inherit=True)
    return {**config, "callbacks": callbacks}


class ModelCalls(BaseCallbackHandler):
    """Reports each chat model call (but the `nostream` ones, as the suggestion call) to the answer's trace.
    Synchronous and inline: LangChain calls every handler for every token, and an async one costs a task each."""

    run_inline = True

    def __init__(self, turn: Any) -> None:
        self.turn = turn
        self.calls: dict[UUID, tuple[float, list[BaseMessage]]] = {}

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        if "nostream" not in (tags or ()):
            self.calls[run_id] = (time.perf_counter(), messages[0] if messages else [])

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        if (call := self.calls.pop(run_id, None)) is not None:
            generation = response.generations[0][0] if response.generations and response.generations[0] else None
            message = getattr(generation, "message", None)
            self.turn.model_called(*call, message if isinstance(message, AIMessage) else None, None)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        if (call := self.calls.pop(run_id, None)) is not None:
            self.turn.model_called(*call, None, error)
