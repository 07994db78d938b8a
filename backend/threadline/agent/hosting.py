"""A team's own agent inside threadline's conversation graph: input → agent → respond.

threadline's `input` and `respond` nodes keep what every conversation keeps whichever agent answers
(the question with its id, the answer's record, usage and suggestions); `agent` runs the team's compiled
graph as a subgraph on the conversation's messages, with threadline's `AgentContext` as runtime context, or the
object of the graph's own `context_schema` (agent/own_context.py).
As a subgraph it is checkpointed with the conversation, shares the conversation graph's store (`runtime.store`:
a user's memories across conversations), its interrupts pause the conversation, and
everything it streams (tokens, tool results, `get_stream_writer()` events) reaches the answer.
"""

from __future__ import annotations

import time
from typing import Any, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk, LLMResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from threadline.agent.attachments import FileReader, restored
from threadline.agent.context import AgentContext
from threadline.agent.graph import ChatState, Graph, closing_update, input_node
from threadline.agent.loading import AgentGraph
from threadline.agent.own_context import CURRENT, OwnContext
from threadline.agent.suggestions import Suggester
from threadline.agent.transcript import after_run, agent_input
from threadline.conversations.approvals import is_denied
from threadline.conversations.state import AnswerRecord, Usage
from threadline.current_answer import TurnContext, current_turn
from threadline.events import plain

STRUCTURED = "structured_response"  # create_agent's state key for a `response_format` agent's typed answer


class HostedState(ChatState, total=False):
    agent_state: dict[str, Any]  # the agent's own state keys besides `messages`, kept from answer to answer
    agent_messages: list[AnyMessage] | None  # the agent's own messages, while they differ from the transcript
    agent_messages_until: str | None  # ... and the id of the last transcript message they cover
    agent_input: dict[str, Any]  # the chat body's `input` of the message being answered (agent/own_input.py)


def host_graph(
    agent: AgentGraph,
    own_context: OwnContext | None,
    checkpointer: BaseCheckpointSaver[Any],
    store: BaseStore,
    suggester: Suggester | None,
    files: FileReader,
) -> Graph:
    """Compile threadline's graph around `agent`; node names match the built-in graph's, so a stop, a rollback
    or a recovery edits either conversation alike (conversations/closing.py)."""

    async def run_agent(state: HostedState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        carried = state.get("agent_state") or {}
        memory = agent_input(state["messages"], state.get("agent_messages"), state.get("agent_messages_until"))
        given = await files.readable(memory)  # attachments as content blocks, for its model
        calls = ModelCalls(current_turn.get())
        config = _with_model_calls(get_config(), calls)
        ours = runtime.context
        context = own_context.build(ours.request_context, ours.visitor_id) if own_context else ours
        threadline_context = CURRENT.set(ours)  # what threadline_context() gives the agent's code
        try:
            own_input = state.get("agent_input") or {}
            # Checkpointed when it ends or stops to ask ("exit"), not step by step: the transcript is this graph's,
            # and a stopped or killed run is closed from it (conversations/closing.py), so its own steps in
            # between were never read back; a run that asks resumes from what it saved (6 fewer checkpoints).
            result = await agent.ainvoke(
                {**carried, **own_input, "messages": given}, config, context=context, durability="exit"
            )
        except GraphBubbleUp:
            raise  # an interrupt, or a Command for a parent graph: LangGraph's control flow
        except Exception as error:
            if calls.failed(error):
                raise  # the model call failed: the provider's failure, classified as one
            raise AgentFailed(f"{type(error).__name__} in the agent's own code") from error
        finally:
            CURRENT.reset(threadline_context)
        # Messages with attachments go back to holding references only; calls the person declined stay declined.
        declined = turn.declined_calls() if (turn := current_turn.get()) is not None else set()
        kept = [_marked(message, declined) for message in restored(result.get("messages", []), memory)]
        update = after_run(given, kept, state["messages"])
        return update | {"agent_state": {k: v for k, v in result.items() if k != "messages"}}

    async def respond(state: HostedState) -> dict[str, Any]:
        return _answer_record(await closing_update(state["messages"], [], suggester), state)

    builder = StateGraph(HostedState, context_schema=AgentContext)
    builder.add_node("input", take_input)
    builder.add_node("agent", run_agent)
    builder.add_node("respond", respond)
    builder.add_edge(START, "input")
    builder.add_edge("input", "agent")
    builder.add_edge("agent", "respond")
    builder.add_edge("respond", END)
    return cast(Graph, builder.compile(checkpointer=checkpointer, store=store))


async def take_input(state: HostedState) -> dict[str, Any]:
    """The built-in input node, and the chat body's `input` kept for the agent's whole answer (resumes too)."""
    request = state["request"]
    return await input_node(state) | {"agent_input": request.get("input", {}) if request else {}}


def _answer_record(update: dict[str, Any], state: HostedState) -> dict[str, Any]:
    """The respond node's record of a hosted agent's answer: every call counted, its structured response kept."""
    if (turn := current_turn.get()) is not None:
        for record in update["turns"].values():
            _count_every_call(record, turn, state["messages"])
    structured = (state.get("agent_state") or {}).get(STRUCTURED)  # this run's only: create_agent omits it
    if structured is not None:  # from its input, so a run that made none has none
        for record in update["turns"].values():
            record["structured_response"] = plain(structured)
    return update


def _count_every_call(record: AnswerRecord, turn: TurnContext, transcript: list[AnyMessage]) -> None:
    """The answer's usage counts the model calls whose messages the transcript does not hold (internal calls, a
    sub-agent's), and its model names the models actually called."""
    kept = {message.id for message in transcript}
    usage = record.get("usage") or Usage(input_tokens=0, output_tokens=0, total_tokens=0)
    for message_id, used in turn.usage_by_call:
        if message_id not in kept:
            for key in ("input_tokens", "output_tokens", "total_tokens"):
                usage[key] += used.get(key, 0)
    record["usage"] = usage
    if turn.models_called:
        record["model"] = ", ".join(sorted(turn.models_called))


def _marked(message: BaseMessage, declined: set[str]) -> BaseMessage:
    """A tool result for a call the person declined (HumanInTheLoopMiddleware's `reject`), marked as the
    built-in graph marks one: the history shows it declined, as the live stream did."""
    if not isinstance(message, ToolMessage) or message.tool_call_id not in declined or is_denied(message):
        return message
    reason = message.text
    return message.model_copy(update={"artifact": {"denied": True, "approval_id": None, "reason": reason}})


class AgentFailed(Exception):
    """The team's agent raised an exception of its own (not a model call's failure): the answer ends with
    AGENT_ERROR, the exception it was raised from is in the log and the trace."""


def _with_model_calls(config: RunnableConfig, calls: ModelCalls) -> RunnableConfig:
    """The agent's model calls go to the answer's trace, as the built-in graph's do."""
    callbacks = config.get("callbacks")
    if not isinstance(callbacks, BaseCallbackManager):
        return config
    callbacks = callbacks.copy()
    callbacks.add_handler(calls, inherit=True)
    return {**config, "callbacks": callbacks}


class ModelCalls(BaseCallbackHandler):
    """Reports each chat model call (but the `nostream` ones, as the suggestion call) to the answer's trace.
    Synchronous and inline: LangChain calls every handler for every token, and an async one costs a task each."""

    run_inline = True

    def __init__(self, turn: Any) -> None:
        self.turn = turn  # None outside an answer (the agent's calls are then only watched for failures)
        self.calls: dict[UUID, tuple[float, list[BaseMessage]]] = {}
        self.errors: list[BaseException] = []  # what model calls raised, to tell them from the agent's own errors
        self.internal: set[UUID] = set()  # structured-output calls: what they stream is not the answer's text

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
        about = kwargs.get("metadata") or {}
        if self.turn is not None and about.get("ls_model_name"):  # which model this call went to
            self.turn.called_model(f"{about.get('ls_provider') or 'model'}:{about['ls_model_name']}")
        if (kwargs.get("options") or {}).get("ls_structured_output_format"):  # its JSON is parsed, not prose
            self.internal.add(run_id)

    def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        if run_id not in self.internal or self.turn is None:  # every token of every call passes here
            return
        if message_id := getattr(getattr(chunk, "message", None), "id", None):
            self.turn.hide_message(message_id)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self.internal.discard(run_id)
        generation = response.generations[0][0] if response.generations and response.generations[0] else None
        message = getattr(generation, "message", None)
        if self.turn is not None and isinstance(message, AIMessage) and message.usage_metadata:
            self.turn.used(message.id, message.usage_metadata)  # every call, the hidden and a sub-agent's too
        if (call := self.calls.pop(run_id, None)) is not None and self.turn is not None:
            self.turn.model_called(*call, message if isinstance(message, AIMessage) else None, None)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.errors.append(error)
        if (call := self.calls.pop(run_id, None)) is not None and self.turn is not None:
            self.turn.model_called(*call, None, error)
