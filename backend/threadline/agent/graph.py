"""The conversation graph: input → process ⇄ approve → tools → respond, checkpointed per conversation.

`process` is one model call that decides whether tools are needed; `approve` waits for the person's
approval of the calls that need it (conversations/approvals.py); `tools` runs them and injects the results; `respond`
closes the turn (and answers plainly when the model-call budget ran out), with suggestions for what comes
next when the profile wants them (agent/suggestions.py).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Annotated, Any, NotRequired, TypedDict, cast

import msgspec
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph, add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.base import BaseStore
from langgraph.types import Command, Send, interrupt

from threadline.agent.attachments import FileReader
from threadline.agent.compression import Compressor, ContextState
from threadline.agent.suggestions import Suggester
from threadline.conversations.approvals import NOT_INTERACTIVE, SUPERSEDED, ApprovalResponse, ask, denial, waits
from threadline.conversations.state import (
    AnswerRecord,
    FileRef,
    clean_message,
    last_user_index,
    merge_records,
    question,
    unanswered_calls,
    usage_since,
)
from threadline.conversations.versions import Fork, answer_key, branch, merge_forks
from threadline.current_answer import current_turn
from threadline.events import timestamp

Graph = CompiledStateGraph[Any, Any, Any, Any]  # the compiled conversation graph (ChatState in and out)
LIMIT_TOOL_RESULT = "Not run: this answer reached its limit of model calls."
UNPARSED_ARGUMENTS = "Not run: the arguments of this call are not valid JSON."
SUMMARIZING = "Summarizing earlier messages…"


class TurnRequest(TypedDict):
    """One new turn, given as graph input and consumed by the input node."""

    user_message_id: str
    text: str
    regenerate: bool
    assistant_message_id: str
    model: str
    created_at: str
    trace_id: str
    profile: str
    comparison_id: NotRequired[str]  # when this answer is one of an A/B comparison's two
    interactive: NotRequired[bool]  # False: the wire cannot ask for approval, so such calls are declined
    resume: NotRequired[dict[str, Any]]  # resume the turn: the person's answers, by the interrupt they answer
    declined: NotRequired[list[str]]  # the tool calls among them that the person declined
    files: NotRequired[list[FileRef]]  # the new message's attachments, by reference
    edit: NotRequired[bool]  # the message replaces the user message by its id, which is kept as a version
    input: NotRequired[dict[str, Any]]  # the chat body's `input`, for a hosted agent's own input keys


class ChatState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    turns: Annotated[dict[str, AnswerRecord], merge_records]  # by user message id; the name old checkpoints use
    model_calls: int
    request: TurnRequest | None
    context: ContextState | None  # the summary the model sees instead of the older turns (agent/compression.py)
    interactive: bool  # whether this turn may wait for the person's approval of a tool call
    versions: Annotated[dict[str, Fork], merge_forks]  # edits' and regenerations' versions not shown


@dataclass(frozen=True)
class GraphOptions:
    """How a profile's graph answers: its prompt, its budget of model calls, its context window, which
    tools wait for a person's approval, and who suggests what comes next."""

    system_prompt: str
    max_model_calls: int
    context_limit: int | None = None
    require_approval: Sequence[str] = ()
    auto_approve: Sequence[str] = ()
    suggester: Suggester | None = None
    files: FileReader = field(default_factory=FileReader)  # attached files, for the model calls


@dataclass(frozen=True)
class Agent:
    """What the nodes answer with, fixed when the graph is compiled."""

    model: Runnable[Any, BaseMessage]  # the chat model, with the tools bound
    system: SystemMessage
    asking: frozenset[str]  # the tools whose calls wait for approval
    max_model_calls: int
    compressor: Compressor | None
    suggester: Suggester | None
    files: FileReader


def build_graph(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    checkpointer: BaseCheckpointSaver[Any],
    options: GraphOptions,
    store: BaseStore | None = None,
) -> Graph:
    """Compile the graph once at start-up; each conversation is a thread of the checkpointer."""
    agent = Agent(
        model=model.bind_tools(tools) if tools else model,
        system=SystemMessage(content=options.system_prompt),
        asking=frozenset(tool.name for tool in tools if waits(tool, options.require_approval, options.auto_approve)),
        max_model_calls=options.max_model_calls,
        compressor=Compressor(model, options.context_limit) if options.context_limit else None,
        suggester=options.suggester,
        files=options.files,
    )
    # Every node is `async def`: LangGraph would run a plain function in a worker thread.
    builder = StateGraph(ChatState)
    builder.add_node("input", input_node)
    builder.add_node("process", partial(process, agent=agent))
    builder.add_node("approve", partial(approve, agent=agent), destinations=("tools", "process"))
    builder.add_node("tools", ToolNode(tools, handle_tool_errors=True))
    builder.add_node("respond", partial(respond, agent=agent))
    builder.add_edge(START, "input")
    builder.add_edge("input", "process")
    builder.add_conditional_edges(
        "process", partial(after_process, agent=agent), ["process", "approve", "tools", "respond"]
    )
    builder.add_edge("tools", "process")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=checkpointer, store=store)


def tool_calls_of(state: ChatState) -> list[ToolCall]:
    last = state["messages"][-1]
    return last.tool_calls if isinstance(last, AIMessage) else []


async def input_node(state: ChatState) -> dict[str, Any]:
    """The new question (or, to regenerate, its question again) enters the conversation with its record. An
    edit or a regenerated answer keeps what it replaces as a version (conversations/versions.py)."""
    request = state["request"]
    assert request is not None, "every run starts with a request"
    messages = state.get("messages", [])
    update: list[BaseMessage] = []
    records: dict[str, AnswerRecord | None] = {}
    forks: dict[str, Fork | None] = {}
    if not request["regenerate"] and (unanswered := unanswered_calls(messages)):
        declined, superseded = _decline_waiting(messages, unanswered)
        update, messages, records = list(declined), [*messages, *declined], dict(superseded)
    user_id = request["user_message_id"]
    if request["regenerate"] or request.get("edit"):
        key = answer_key(user_id) if request["regenerate"] else user_id
        known = merge_records(state.get("turns", {}), records)
        change = branch(messages, known, state.get("versions") or {}, key)
        assert change is not None, "the route branches only at a question of the conversation"
        update = [*update, *change["messages"]]
        records, forks = records | change["turns"], change["versions"]
    if request["regenerate"]:
        turn = AnswerRecord()  # the reducer keeps the question's time
    else:
        if not request.get("edit"):
            user_id = _fresh_id(user_id, messages, state.get("turns", {}))
        update.append(question(request["text"], user_id, request.get("files", [])))
        turn = AnswerRecord(user_created_at=request["created_at"])
    turn |= AnswerRecord(
        assistant_id=request["assistant_message_id"],
        created_at=request["created_at"],
        model=request["model"],
        trace_id=request["trace_id"],
        profile=request["profile"],
    )
    if request.get("comparison_id"):
        turn["comparison_id"] = request["comparison_id"]
    return {
        "messages": update,
        "turns": records | {user_id: turn},
        "versions": forks,
        "model_calls": 0,
        "request": None,
        "interactive": request.get("interactive", True),
    }


def _decline_waiting(
    messages: Sequence[AnyMessage], unanswered: list[ToolCall]
) -> tuple[list[ToolMessage], dict[str, AnswerRecord]]:
    """An approval left waiting: a new message declines it, and the answer that waited is marked superseded."""
    start = last_user_index(messages) or 0
    record = AnswerRecord(finished_at=timestamp(), finish_reason="other", interrupted="superseded")
    return [denial(call, None, SUPERSEDED) for call in unanswered], {messages[start].id or "": record}


def _fresh_id(user_id: str, messages: Sequence[AnyMessage], turns: dict[str, AnswerRecord]) -> str:
    """add_messages would overwrite an earlier message with this id, and an answer's id would be shown twice:
    a reused id gets a suffix of its own."""
    answers = (record.get("assistant_id") for record in turns.values())
    if any(message.id == user_id for message in messages) or user_id in answers:
        return f"{user_id}-{uuid.uuid4().hex[:8]}"
    return user_id


async def process(state: ChatState, config: RunnableConfig, *, agent: Agent) -> dict[str, Any]:
    """One model call, which decides whether tools are needed; the prompt is compressed when it grows long."""
    turn = current_turn.get()
    update: dict[str, Any] = {}
    messages: list[BaseMessage] = [agent.system, *state["messages"]]
    if agent.compressor is not None:
        context = state.get("context")
        messages, kept = await agent.compressor.prompt(
            agent.system, state["messages"], context, lambda: turn.status(SUMMARIZING) if turn else None
        )
        if kept != context:
            update["context"] = kept
    started = time.perf_counter()
    try:
        response = await agent.model.ainvoke(await agent.files.readable(messages), config)
    except BaseException as error:  # a failed or stopped call is part of the trace too
        if turn is not None:
            turn.model_called(started, messages, None, error)
        raise
    response = clean_message(cast(AIMessage, response))
    if turn is not None:
        turn.model_called(started, messages, response, None)
    # A call whose arguments are not even JSON gets an error result at once, so the model can try again
    # (and the provider, which wants a result for every call it sees, accepts the next request).
    unparsed = [
        ToolMessage(content=UNPARSED_ARGUMENTS, tool_call_id=call["id"], name=call["name"] or "", status="error")
        for call in response.invalid_tool_calls
        if call["id"]
    ]
    calls = state.get("model_calls", 0) + 1
    return update | {"messages": [response, *unparsed], "model_calls": calls}


async def after_process(state: ChatState, *, agent: Agent) -> str:
    calls = tool_calls_of(state)
    if isinstance(state["messages"][-1], ToolMessage) and state["model_calls"] < agent.max_model_calls:
        return "process"  # the model's call could not be read: it is told so, and tries again
    if not calls or state["model_calls"] >= agent.max_model_calls:
        return "respond"
    return "approve" if any(call["name"] in agent.asking for call in calls) else "tools"


async def approve(state: ChatState, *, agent: Agent) -> Command[Any]:
    """Run the calls that need no approval; stop for those that do, until the person answers. Resumed,
    `interrupt` returns their responses: approved calls run, declined ones get a result saying so."""
    calls = tool_calls_of(state)
    waiting = [call for call in calls if call["name"] in agent.asking]
    if not waiting:
        return Command(goto="tools")
    if state.get("interactive", True):
        responses: dict[str, ApprovalResponse] = interrupt(ask(waiting))
    else:
        responses = {call["id"] or "": ApprovalResponse(approved=False, reason=NOT_INTERACTIVE) for call in waiting}
    declined = []
    for call in waiting:
        response = responses.get(call["id"] or "") or ApprovalResponse(approved=False)
        if not response["approved"]:
            declined.append(denial(call, response.get("approval_id"), response.get("reason")))
    declined_ids = {message.tool_call_id for message in declined}
    running = [call for call in calls if call["id"] not in declined_ids]
    goto: Any = Send("tools", [call | {"type": "tool_call"} for call in running]) if running else "process"
    return Command(update={"messages": declined}, goto=goto)


async def respond(state: ChatState, *, agent: Agent) -> dict[str, Any]:
    """Close the turn with its record (and a plain answer when the model-call budget ran out), and the
    suggestions for what comes next when the profile wants them."""
    messages = state["messages"]
    update: list[AnyMessage] = []
    if unanswered := tool_calls_of(state):
        update = [
            ToolMessage(content=LIMIT_TOOL_RESULT, tool_call_id=call["id"], name=call["name"], status="error")
            for call in unanswered
        ]
        update.append(
            AIMessage(
                content=(
                    f"I stopped after {agent.max_model_calls} model calls without reaching a final answer. "
                    "Please try again, perhaps with a more specific question."
                )
            )
        )
    return await closing_update(messages, update, agent.suggester)


async def closing_update(
    messages: Sequence[AnyMessage], update: list[AnyMessage], suggester: Suggester | None
) -> dict[str, Any]:
    """The turn's record, with its usage and, when the profile wants them, the suggestions for what comes next."""
    start = last_user_index(messages) or 0
    turn = AnswerRecord(finished_at=timestamp(), finish_reason="stop", usage=usage_since(messages, start))
    if suggester is not None:
        suggestions = await suggester.suggest(messages[start].text, [*messages[start + 1 :], *update])
        if suggestions is not None and (suggestions.values or suggestions.actions):
            turn["suggestions"] = msgspec.to_builtins(suggestions)
    return {"messages": update, "turns": {messages[start].id: turn}}
