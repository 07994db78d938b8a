"""The built-in agent: LangChain's `create_agent` with threadline's tools and middleware, checkpointed per conversation.

A turn runs `turn.before_agent` (the question enters with its record) → `model` ⇄ `tools`; the last model call
closes the turn with the answer's record, in its own step. A profile that suggests what comes next
(agent/suggestions.py) closes it in a step after the agent instead, `turn.after_agent`, so the answer is saved
before the suggestions are asked for. A stop, a rollback or a recovery closes a turn as that node in either graph.
Middleware does the rest, with no node of its own: each model call's prompt is compressed when it grows long
(agent/compression.py) and its attachments made readable, the budget of model calls is kept, a failing tool
answers with its error, a call of a tool that needs approval waits for the person in its tools step
(conversations/approvals.py), and the page's own tools are offered and their calls wait for the page
(agent/browser_tools.py). A team's own agent runs inside the same bookkeeping (agent/hosting.py), so the answers
read every agent alike.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat
from operator import attrgetter
from typing import Annotated, Any, NotRequired, cast

import msgspec
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    InvalidToolCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import GraphBubbleUp
from langgraph.graph import END, add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt.tool_node import TOOL_CALL_ERROR_TEMPLATE
from langgraph.store.base import BaseStore
from langgraph.types import Command, Send, interrupt
from typing_extensions import TypedDict  # the kind LangChain's AgentState is, so BuiltInState can extend both

from threadline import events as ev
from threadline.agent.attachments import FileReader
from threadline.agent.browser_tools import BrowserTools
from threadline.agent.compression import Compressor, ContextState
from threadline.agent.suggestions import Suggester
from threadline.conversations.approvals import NOT_INTERACTIVE, SUPERSEDED, ApprovalResponse, ask, denial, waits
from threadline.conversations.state import (
    TURN,
    AnswerRecord,
    FileRef,
    StateWriter,
    clean_message,
    closing_node,
    config_of,
    holds_answer,
    last_user_index,
    merge_records,
    question,
    unanswered_calls,
    usage_since,
)
from threadline.conversations.versions import Fork, answer_key, branch, merge_forks
from threadline.events import timestamp
from threadline.turn_context import tell_the_turn

Graph = CompiledStateGraph[Any, Any, Any, Any]  # the compiled conversation graph (ChatState in and out)
LIMIT_TOOL_RESULT = "Not run: this answer reached its limit of model calls."
UNPARSED_ARGUMENTS = "Not run: the arguments of this call are not valid JSON."
SUMMARIZING = "Summarizing earlier messages…"
APPROVED = "threadline_approved"  # on a call the `approve` node of the graph before this one let through


class TurnInput(TypedDict):
    """One new turn as the graph is given it and its input node reads it: a plain dict, as every stored
    conversation's checkpoint holds it (`ChatState.request`)."""

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
    files: NotRequired[list[FileRef]]  # the new message's attachments, by reference
    edit: NotRequired[bool]  # the message replaces the user message by its id, which is kept as a version
    input: NotRequired[dict[str, Any]]  # the chat body's `input`, for a hosted agent's own input keys


class TurnRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One new turn as the answer machinery holds it; `graph_input` is what its graph is given."""

    user_message_id: str
    text: str
    regenerate: bool
    assistant_message_id: str
    model: str
    created_at: str
    trace_id: str
    profile: str
    comparison_id: str = ""  # when this answer is one of an A/B comparison's two
    interactive: bool = True  # False: the wire cannot ask for approval, so such calls are declined
    files: tuple[FileRef, ...] = ()  # the new message's attachments, by reference
    edit: bool = False  # the message replaces the user message by its id, which is kept as a version
    input: dict[str, Any] | None = None  # the chat body's `input`, for a hosted agent's own input keys
    browser_tools: tuple[dict[str, Any], ...] = ()  # the page's own tools (agent/browser_tools.py), in the config
    resume: dict[str, Any] | None = None  # the turn goes on: the person's answers, by the interrupt they answer
    declined: tuple[str, ...] = ()  # the tool calls among them that the person declined
    replied: tuple[dict[str, Any], ...] = ()  # the agent's questions the person answered, kept with the record

    def graph_input(self) -> TurnInput:
        """The turn as its graph's input, plain data: each optional key only when it is set, as stored conversations
        have it. A question read back from a conversation (to answer again) has LangChain's text, a `str` subclass."""
        given = TurnInput(
            user_message_id=self.user_message_id,
            text=str(self.text),
            regenerate=self.regenerate,
            assistant_message_id=self.assistant_message_id,
            model=self.model,
            created_at=self.created_at,
            trace_id=self.trace_id,
            profile=self.profile,
        )
        if self.comparison_id:
            given["comparison_id"] = self.comparison_id
        if not self.interactive:
            given["interactive"] = False
        if self.files:
            given["files"] = list(self.files)
        if self.edit:
            given["edit"] = True
        if self.input:
            given["input"] = dict(self.input)
        return given


class ChatState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    turns: Annotated[dict[str, AnswerRecord], merge_records]  # by user message id; the name old checkpoints use
    model_calls: int
    request: TurnInput | None
    context: ContextState | None  # the summary the model sees instead of the older turns (agent/compression.py)
    interactive: bool  # whether this turn may wait for the person's approval of a tool call
    versions: Annotated[dict[str, Fork], merge_forks]  # edits' and regenerations' versions not shown


class BuiltInState(AgentState[Any], ChatState, total=False):  # type: ignore[misc]  # messages: required there
    """The built-in agent's state: create_agent's (`jump_to`, `structured_response`) and the conversation's."""


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


def build_graph(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    checkpointer: BaseCheckpointSaver[Any],
    options: GraphOptions,
    store: BaseStore | None = None,
) -> Graph:
    """Compile the graph once at start-up; each conversation is a thread of the checkpointer. It is LangChain's
    `create_agent` with threadline's middleware, the shape a team's agent has."""
    asking = frozenset(tool.name for tool in tools if waits(tool, options.require_approval, options.auto_approve))
    suggester = options.suggester
    middleware: list[AgentMiddleware[Any, Any]] = [
        TurnRecord() if suggester is None else TurnRecordAndSuggestions(suggester),
        Approvals(asking),
        ToolErrors(),
        ModelCall(
            options.max_model_calls,
            Compressor(model, options.context_limit) if options.context_limit else None,
            options.files,
            closes_turn=suggester is None,
        ),
        BrowserTools(),
    ]
    agent = create_agent(
        model, tools, system_prompt=options.system_prompt, middleware=middleware, state_schema=BuiltInState
    )
    builder = agent.builder
    builder.compiled = False  # create_agent compiled it; it is compiled again below, with these nodes
    if asking:  # a conversation an earlier version left waiting in its `approve` node resumes there
        builder.add_node("approve", partial(legacy_approve, asking=asking), destinations=("tools", "model"))
    if suggester is None:  # no step of its own after the agent, but the node a turn is closed as
        builder.add_node(CLOSING, closing_step)
        builder.add_edge(CLOSING, END)
    return cast(Graph, builder.compile(checkpointer=checkpointer, store=store))


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


async def keep_lost_input(graph: StateWriter, thread_id: str, given: TurnInput) -> None:
    """Take in what the turn of an answer whose process died brought, as `input_node` would have, when no checkpoint
    holds it: LangGraph writes them while the answer goes on, so the person's message may have gone with the
    process (the answer's row kept it). The turn is then closed as interrupted (conversations/closing.py)."""
    config = config_of(thread_id)
    values = (await graph.aget_state(config)).values or {}
    if holds_answer(values, given["assistant_message_id"]):
        return
    update = await input_node(cast(ChatState, {**values, "request": given}))
    await graph.aupdate_state(config, update, as_node=closing_node(graph))


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
    ids = map(attrgetter("id"), messages)  # compared in C: a long conversation has hundreds
    answers = map(dict.get, cast(Iterable[dict[str, Any]], turns.values()), repeat("assistant_id"))
    if user_id in ids or user_id in answers:
        return f"{user_id}-{uuid.uuid4().hex[:8]}"
    return user_id


class TurnRecord(AgentMiddleware[Any, Any]):
    """threadline's bookkeeping before the agent: the question enters with its record (input_node). The last model
    call closes the turn (ModelCall), with no step of its own: one checkpointed step fewer per answer (0.93× the
    server CPU of an answer at c=1 and c=64)."""

    name = TURN

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        return await input_node(state)


class TurnRecordAndSuggestions(TurnRecord):
    """... and, for a profile that suggests what comes next, the step after the agent that closes the turn with
    them: the answer is saved before the suggestions are asked for, so a stop or a crash meanwhile keeps it."""

    def __init__(self, suggester: Suggester) -> None:
        super().__init__()
        self.suggester = suggester

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        return await closing_update(state["messages"], self.suggester)


CLOSING = f"{TURN}.after_agent"  # the node a turn is closed as (conversations/state.py: TURN_ENDS)


async def closing_step(state: ChatState) -> dict[str, Any]:
    """The node of a graph without suggestions that a stop, a rollback or a recovery closes a turn as, and where a
    conversation an earlier version saved between its last model call and this step goes on."""
    return await closing_update(state["messages"], None)


class ToolErrors(AgentMiddleware[Any, Any]):
    """A tool that raises answers its call with the error, so the model can try again (LangGraph's ToolNode with
    `handle_tool_errors=True`); an interrupt or a stop passes through."""

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        try:
            return await handler(request)
        except GraphBubbleUp:
            raise
        except Exception as error:  # noqa: BLE001 - whatever a tool raised, the model is told
            call = request.tool_call
            content = TOOL_CALL_ERROR_TEMPLATE.format(error=repr(error))
            return ToolMessage(content=content, tool_call_id=call["id"], name=call["name"], status="error")


class ModelCall(AgentMiddleware[Any, Any]):
    """Each model call: the prompt compressed when it grows long, attachments made readable, the answer cleaned,
    calls whose arguments are not JSON answered at once (the model tries again in the same step), and the budget
    of model calls kept: past it, the calls it asks for are not run and the turn ends with a plain answer."""

    def __init__(
        self, max_model_calls: int, compressor: Compressor | None, files: FileReader, *, closes_turn: bool = False
    ) -> None:
        super().__init__()
        self.max_model_calls = max_model_calls
        self.compressor = compressor
        self.files = files
        self.closes_turn = closes_turn  # the call that ends the agent's loop closes the turn with its record

    async def awrap_model_call(self, request: ModelRequest[Any], handler: Any) -> ExtendedModelResponse[Any]:
        state = cast(dict[str, Any], request.state)
        update: dict[str, Any] = {}
        if self.compressor is not None:
            request, update = await self._compressed(request)
        request = request.override(messages=cast(list[AnyMessage], await self.files.readable(request.messages)))
        calls, result = state.get("model_calls", 0), []
        while True:
            response = clean_message(cast(AIMessage, (await handler(request)).result[0]))
            calls += 1
            unparsed = [unparsed_result(call) for call in response.invalid_tool_calls if call["id"]]
            result += [response, *unparsed]
            if not unparsed or response.tool_calls or calls >= self.max_model_calls:
                break
            request = request.override(messages=[*request.messages, response, *unparsed])
        if response.tool_calls and calls >= self.max_model_calls:
            result += self._over_budget(response.tool_calls)
        update["model_calls"] = calls
        if self.closes_turn and not next(m for m in reversed(result) if isinstance(m, AIMessage)).tool_calls:
            # the agent's loop ends here (create_agent's own test): the turn closes in this step
            messages = cast(list[AnyMessage], [*state["messages"], *result])
            update["turns"] = (await closing_update(messages, None))["turns"]
        command: Command[Any] = Command(update=update)
        return ExtendedModelResponse(model_response=ModelResponse(result=result), command=command)

    async def _compressed(self, request: ModelRequest[Any]) -> tuple[ModelRequest[Any], dict[str, Any]]:
        """The prompt with the older turns summarized once it grows long, and the summary to keep."""
        assert self.compressor is not None and request.system_message is not None
        context = cast(dict[str, Any], request.state).get("context")
        prompt, kept = await self.compressor.prompt(
            request.system_message,
            request.messages,
            context,
            lambda: tell_the_turn(ev.Status(text=SUMMARIZING)),
        )
        compressed = request.override(
            system_message=cast(SystemMessage, prompt[0]), messages=cast(list[AnyMessage], prompt[1:])
        )
        return compressed, {"context": kept} if kept != context else {}

    def _over_budget(self, calls: list[ToolCall]) -> list[BaseMessage]:
        results: list[BaseMessage] = [
            ToolMessage(content=LIMIT_TOOL_RESULT, tool_call_id=call["id"], name=call["name"], status="error")
            for call in calls
        ]
        results.append(
            AIMessage(
                content=(
                    f"I stopped after {self.max_model_calls} model calls without reaching a final answer. "
                    "Please try again, perhaps with a more specific question."
                )
            )
        )
        return results


def unparsed_result(call: InvalidToolCall) -> ToolMessage:
    """A call whose arguments are not even JSON gets an error result at once, so the model can try again (and the
    provider, which wants a result for every call it sees, accepts the next request)."""
    return ToolMessage(content=UNPARSED_ARGUMENTS, tool_call_id=call["id"], name=call["name"] or "", status="error")


class Approvals(AgentMiddleware[Any, Any]):
    """A call of a tool that waits for approval stops the agent in its tools step until the person answers
    (conversations/approvals.py), while the model call's other calls run; a declined call gets a result saying so."""

    def __init__(self, asking: frozenset[str]) -> None:
        super().__init__()
        self.asking = asking

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        call = request.tool_call
        if call["name"] in self.asking and not call.get(APPROVED) and (declined := declined_of([call], request.state)):
            return declined[0]
        return await handler(request)


def declined_of(waiting: list[ToolCall], state: Any) -> list[ToolMessage]:
    """Ask the person about calls that wait (or decline them when this turn cannot ask); resumed, `interrupt`
    returns their responses. The results of the declined calls."""
    if state.get("interactive", True):
        responses: dict[str, ApprovalResponse] = interrupt(ask(waiting))
    else:
        responses = {call["id"] or "": ApprovalResponse(approved=False, reason=NOT_INTERACTIVE) for call in waiting}
    declined = []
    for call in waiting:
        response = responses.get(call["id"] or "") or ApprovalResponse(approved=False)
        if not response["approved"]:
            declined.append(denial(call, response.get("approval_id"), response.get("reason")))
    return declined


async def legacy_approve(state: ChatState, *, asking: frozenset[str]) -> Command[Any]:
    """The `approve` node of the graph before it was `create_agent`'s: a conversation saved waiting in it is resumed
    here (the same node, so the same interrupt id), and goes on as the agent would."""
    calls = tool_calls_of(state)
    declined = declined_of([call for call in calls if call["name"] in asking], state)
    declined_ids = {message.tool_call_id for message in declined}
    running = [call | {"type": "tool_call", APPROVED: True} for call in calls if call["id"] not in declined_ids]
    goto: Any = [Send("tools", [call]) for call in running] if running else "model"
    return Command(update={"messages": declined}, goto=goto)


async def closing_update(messages: Sequence[AnyMessage], suggester: Suggester | None) -> dict[str, Any]:
    """The turn's record, with its usage and, when the profile wants them, the suggestions for what comes next.
    Not `messages`: a write of no messages is still a write, and each one writes the whole conversation again."""
    start = last_user_index(messages) or 0
    turn = AnswerRecord(finished_at=timestamp(), finish_reason="stop", usage=usage_since(messages, start))
    if suggester is not None:
        suggestions = await suggester.suggest(messages[start].text, messages[start + 1 :])
        if suggestions is not None and (suggestions.values or suggestions.actions):
            turn["suggestions"] = msgspec.to_builtins(suggestions)
    return {"turns": {messages[start].id: turn}}
