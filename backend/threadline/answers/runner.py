"""run_graph(): one graph run turned into the canonical event stream (answers/turn.py frames and owns it).

LangGraph's `messages` stream mode gives model tokens and finished tool results; `updates` says when
a node is done, which is when a model call's text and tool inputs are complete; `custom` carries what an
agent's nodes send with `get_stream_writer()`. The `messages` mode is read by its own LangGraph handler,
attached here with a function that shows each token as the model makes it (`MessagesAsTheyCome`).
Every agent is read one way, by what its nodes stream and
return, not by their names: the built-in agent's (`create_agent`, agent/graph.py) and a hosted agent's,
which streams from its own namespace (agent/hosting.py), may call a model, return tool results or write data;
every model call is seen by one callback handler (agent/model_calls.py).
Only threadline's own input node is known by name; the turn's end is known by the record a node writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any, Protocol
from uuid import UUID

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGenerationChunk, LLMResult
from langchain_core.runnables import RunnableConfig
from langgraph.constants import TAG_HIDDEN
from langgraph.pregel._messages import StreamMessagesHandler, _state_values, graph_namespace
from langgraph.types import Command, StreamMode

from threadline import events as ev
from threadline.agent.browser_tools import BROWSER_TOOLS
from threadline.agent.context import AgentContext
from threadline.agent.graph import Graph, TurnRequest
from threadline.agent.model_calls import INTERNAL_CALL, ModelCalls
from threadline.answers.translator import INPUT, MARKS, HiddenCall, NodeStarted, SameCall, TurnTranslator
from threadline.conversations.approvals import NOT_INTERACTIVE, ApprovalResponse, check
from threadline.turn_context import current_turn

STREAM_MODES: list[StreamMode] = ["updates", "custom"]  # and `messages`, read by MessagesAsTheyCome
# Model calls internal to an agent (LangChain's middleware marks them, INTERNAL_CALL; `nostream` tags): never the
# answer's text.
HIDDEN_TAGS = frozenset({"nostream", "langsmith:nostream"})
ID = attrgetter("id")  # a message's id, read in C
HOSTED_AGENT = "agent:"  # the checkpoint namespace of a hosted agent's run (agent/hosting.py's `agent` node)


class Tracing(Protocol):
    """What a run is traced with (observability/answers.py's AnswerWatch): LangChain callbacks and run metadata."""

    callbacks: list[Any]
    metadata: dict[str, str]


MessagesItem = tuple[tuple[str, ...], str, tuple[Any, dict[str, Any]]]  # (namespace, "messages", (message, metadata))


def mark_seen(seen: set[Any], value: Any) -> None:
    """What LangGraph's `on_chain_start` does with one of a node's input values: a message's id, or the ids of the
    messages a list holds, go into `seen` (so that a node returning them does not stream them again)."""
    if isinstance(value, BaseMessage):
        if value.id is not None:
            seen.add(value.id)
    elif isinstance(value, Sequence) and not isinstance(value, str):
        if all(issubclass(kind, BaseMessage) for kind in set(map(type, value))):  # (pydantic's isinstance is slow)
            seen.update(map(ID, value))  # in C; a message without an id adds None, taken out after
            seen.discard(None)
            return
        for item in value:
            if isinstance(item, BaseMessage) and item.id is not None:
                seen.add(item.id)


class CallsAsTheyEnd(StreamMessagesHandler):
    """LangGraph's handler for the `messages` stream mode, which also tells the answer, in the stream's order, when a
    hidden call (`nostream` tags, LangChain's internal-call mark) ends with its message, when a call that streamed
    under several message ids ends with the one id its message has, and when a hosted agent's node starts; and
    notes the tokens of a call LangGraph does not stream (`nostream`) as the agent's work."""

    def __init__(self, take: Callable[[MessagesItem], None], translator: TurnTranslator) -> None:
        super().__init__(take, subgraphs=True)
        self.translator = translator
        self.hidden_runs: dict[UUID, bool] = {}  # the hidden calls running, and whether each is internal
        self.ids: dict[UUID, set[str | None]] = {}  # the message ids each streaming call used

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        about = kwargs.get("metadata") or {}
        if not HIDDEN_TAGS.isdisjoint(kwargs.get("tags") or ()) or INTERNAL_CALL in about:
            self.hidden_runs[run_id] = INTERNAL_CALL in about
        return super().on_chat_model_start(serialized, messages, run_id=run_id, **kwargs)

    def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """LangGraph's own, inlined, with the ids of the messages a node is given marked as seen in C: a node's
        input is the whole conversation, and marking them one by one was a long conversation's dearest step."""
        about = metadata or {}
        if (node := about.get("langgraph_node")) and kwargs.get("name") == node:
            namespace = about.get("langgraph_checkpoint_ns", "")
            if namespace.count("|") == 1 and namespace.startswith(HOSTED_AGENT):  # a hosted agent's own node
                self.stream(((), MARKS, (NodeStarted(node), {})))
        if metadata and kwargs.get("name") == metadata.get("langgraph_node") and (not tags or TAG_HIDDEN not in tags):
            ns = graph_namespace(metadata)
            if not self.subgraphs and len(ns) > 0 and ns != self.parent_ns:
                return
            self.metadata[run_id] = (ns, metadata)
            for value in _state_values(inputs):
                mark_seen(self.seen, value)

    def on_llm_new_token(self, token: Any, *, run_id: UUID, chunk: Any = None, **kwargs: Any) -> None:
        """LangGraph's own, inlined (the path of every token), noting each call's message ids."""
        if (meta := self.metadata.get(run_id)) is None:  # a hidden call's token: the agent's work all the same
            self.translator.last_work = time.monotonic()
            return
        if not isinstance(chunk, ChatGenerationChunk):
            return
        message = chunk.message
        if (ids := self.ids.get(run_id)) is None:
            self.ids[run_id] = {message.id}
        elif message.id not in ids:
            ids.add(message.id)
        self._emit(meta, message)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> Any:
        ids = self.ids.pop(run_id, None)
        hidden = self.hidden_runs.pop(run_id, None)
        generation = response.generations[0][0] if response.generations and response.generations[0] else None
        message = getattr(generation, "message", None)
        if isinstance(message, AIMessage) and message.id is not None:
            if ids is not None and len(ids) > 1:
                self.stream(((), MARKS, (SameCall(frozenset(i for i in ids if i), message.id), {})))
            if hidden is not None:
                self.stream(((), MARKS, (HiddenCall(message, hidden), {})))
        return super().on_llm_end(response, run_id=run_id, **kwargs)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Any:
        self.ids.pop(run_id, None)
        self.hidden_runs.pop(run_id, None)
        return super().on_llm_error(error, run_id=run_id, **kwargs)


class MessagesAsTheyCome:
    """LangGraph's handler for the `messages` stream mode (every model call's tokens and the messages nodes return,
    from any agent, subgraphs included), attached with a function that translates each and shows its events at once.
    Asked for as a stream mode, LangGraph passes each token through its stream's queue: a trip through the event
    loop and a task's wake-up per token (docs/performance.md prices it). A whole message (a tool's result, a
    node's own message, a model call that did not stream) is made when its node ends, after what the node wrote
    with `get_stream_writer()`, which comes through the run's stream: it is held until the run's stream says the
    node is done (`flush`), so the answer shows them in the order they were made."""

    def __init__(self, translator: TurnTranslator, show: Callable[[ev.Event], None]) -> None:
        self.translator = translator
        self.show = show
        self.held: list[MessagesItem] = []
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()

    def handler(self) -> StreamMessagesHandler:
        """LangGraph's handler, for the run's callbacks. Not kept here: it holds `_take`, and a reference back
        would make the answer a cycle, which only the rare full garbage collection frees."""
        handler = CallsAsTheyEnd(self._take, self.translator)
        handler.raise_error = True  # a translation that fails fails the answer, as it did from the stream
        return handler

    def flush(self) -> None:
        """Show the whole messages held so far."""
        held, self.held = self.held, []
        for item in held:
            self._show(item)

    def _take(self, item: MessagesItem) -> None:
        if threading.get_ident() != self.loop_thread:  # a synchronous node's, from LangGraph's worker thread
            self.loop.call_soon_threadsafe(self._from_thread, item)
        elif isinstance(item[2][0], AIMessageChunk) or item[1] == MARKS:
            # A token, or a mark (a node's status is shown as the node starts, not when it ends): at once, after
            # what came before it.
            if self.held:
                self.flush()
            self._show(item)
        else:
            self.held.append(item)

    def _from_thread(self, item: MessagesItem) -> None:
        with contextlib.suppress(asyncio.CancelledError):  # the answer stopped meanwhile: its run is ending
            self._take(item)

    def _show(self, item: MessagesItem) -> None:
        namespace, mode, (message, metadata) = item
        translator = self.translator
        if translator.stopped:
            raise asyncio.CancelledError
        if mode == MARKS:
            self._mark(message)
            return
        if translator.inside_a_node(namespace) or internal(message, metadata, translator):
            translator.last_work = time.monotonic()  # not shown, but the agent's work
            return
        # A named create_agent's calls say who speaks (LangChain's `lc_agent_name`) before its message has a name:
        # a stop mid-call keeps it.
        translator.speaking = metadata.get("lc_agent_name") or ""
        for event in translator.message(message, metadata.get("langgraph_node", ""), namespace):
            self.show(event)

    def _mark(self, mark: SameCall | HiddenCall | NodeStarted) -> None:
        if isinstance(mark, SameCall):
            self.translator.same_call(mark)
        elif isinstance(mark, HiddenCall):
            self.translator.hide(mark)
        else:
            for event in self.translator.node_started(mark.node):
                self.show(event)


def internal(message: Any, metadata: Mapping[str, Any], translator: TurnTranslator) -> bool:
    """A message of a model call internal to the agent (LangChain's internal-call metadata, a `nostream` or
    `langsmith:nostream` tag, a structured-output call), or a result of such a call's tool call."""
    if isinstance(message, ToolMessage):
        return message.tool_call_id in translator.unsaid_calls
    return (
        INTERNAL_CALL in metadata
        or not HIDDEN_TAGS.isdisjoint(metadata.get("tags") or ())
        or (isinstance(message, AIMessage) and (message.id in translator.hidden or message.id in translator.unsaid))
    )


def run_input(request: TurnRequest) -> Any:
    """What the graph is given: the new turn, or, for a turn that goes on, the person's answers to what it waited
    for, with the agent's questions they answered kept with the turn's record (shown where they were asked,
    conversations/history.py)."""
    if request.resume is None:
        return {"request": request.graph_input()}
    if not request.replied:
        return Command(resume=request.resume)
    update = {"turns": {request.user_message_id: {"replied": list(request.replied)}}}
    return Command(resume=request.resume, update=update)


def _take_in(request: TurnRequest, translator: TurnTranslator, config: RunnableConfig) -> None:
    """What the turn brings besides its input: the translator learns the page's tools, the calls the person
    declined and whether it may ask; the page's tools go to the agent's BrowserTools middleware in the run's config,
    for this run only (no checkpoint keeps them)."""
    translator.browser_tools = frozenset(tool["name"] for tool in request.browser_tools)
    if request.browser_tools:
        config["configurable"][BROWSER_TOOLS] = list(request.browser_tools)
    translator.declined.clear()  # the same set the answer's context hands the agent (turn_context.py)
    translator.declined.update(request.declined)
    translator.interactive = request.interactive


async def run_graph(
    graph: Graph,
    conversation: RunnableConfig,
    request: TurnRequest,
    translator: TurnTranslator,
    show: Callable[[ev.Event], None],
    tracing: Tracing | None = None,
    context: AgentContext | None = None,
) -> None:
    """Run the graph for one turn in the conversation `conversation` names (its thread's config) and hand what the
    answer shows to `show`, between `start` and `finish`; `tracing`'s callbacks and metadata go to LangChain's run
    config (to Langfuse, say), `context` to every node as LangGraph runtime context. A wire that cannot ask the
    person declines what a hosted agent asks them to approve, and the agent goes on."""
    calls = ModelCalls(current_turn.get())
    messages = MessagesAsTheyCome(translator, show)
    config = conversation | {
        "callbacks": [*(tracing.callbacks if tracing else ()), calls, messages.handler()],
        "metadata": tracing.metadata if tracing else {},
    }
    _take_in(request, translator, config)
    given: Any = run_input(request)
    try:
        while given is not None:
            stream: AsyncIterator[Any] = graph.astream(
                given, config, stream_mode=STREAM_MODES, subgraphs=True, context=context
            )
            async for namespace, mode, payload in stream:
                if translator.stopped:
                    raise asyncio.CancelledError
                batch: list[ev.Event]
                if mode == "updates":
                    if namespace or not INPUT.issuperset(payload):  # the agent's step, not threadline's input
                        translator.last_work = time.monotonic()
                    messages.flush()
                    if translator.inside_a_node(namespace):
                        continue
                    batch = [
                        event
                        for node, update in payload.items()
                        for event in translator.update(node, update, namespace)
                    ]
                else:
                    batch = translator.custom(payload)
                for event in batch:
                    show(event)
            messages.flush()
            given, waiting = None, translator.waiting
            if waiting and not translator.interactive:
                declined = ApprovalResponse(approved=False, reason=NOT_INTERACTIVE)
                translator.declined |= {item.tool_call_id for item in waiting}
                translator.waiting = []
                responses = {item.approval_id: (item.tool_call_id, declined) for item in waiting}
                given = Command(resume=check(waiting, responses))
    except BaseException as error:
        calls.abandoned(error)
        raise
