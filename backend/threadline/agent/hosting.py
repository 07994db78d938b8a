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

from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.messages import AnyMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config, get_store
from langgraph.errors import GraphBubbleUp
from langgraph.graph import END, START, StateGraph, add_messages
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from threadline.agent import paused_usage
from threadline.agent.attachments import FileReader, restored
from threadline.agent.context import AgentContext
from threadline.agent.graph import ChatState, Graph, closing_update, input_node
from threadline.agent.loading import AgentGraph
from threadline.agent.model_calls import model_calls_of
from threadline.agent.own_context import CURRENT, OwnContext
from threadline.agent.own_input import InputCheck
from threadline.agent.suggestions import Suggester
from threadline.agent.task_graphs import HIDDEN_RUN, TaskGraph
from threadline.agent.transcript import after_run, agent_input
from threadline.conversations.approvals import is_denied, not_run
from threadline.conversations.state import AnswerRecord, Usage, unanswered_calls
from threadline.events import plain
from threadline.turn_context import TurnContext, current_turn

MESSAGES = "messages"
STRUCTURED = "structured_response"  # create_agent's state key for a `response_format` agent's typed answer


@dataclass(frozen=True)
class Hosting:
    """What threadline knows of one served agent's graph beyond running it: the built-in agent's by default, a
    team's own (THREADLINE_GRAPH) as `hosted` describes it."""

    own_context: OwnContext | None = None  # how its own context_schema is made, if it declares one
    own_input: InputCheck = field(default_factory=lambda: InputCheck(None))  # its own input keys besides messages
    subgraphs: frozenset[str] = frozenset()  # its declared subgraphs, as `a|b` paths
    browser_tools: bool = True  # whether it takes the page's own tools (agent/browser_tools.py)
    tool_names: frozenset[str] | None = None  # its own tools' names, which a browser tool may not take; None: ours
    own_tools: bool = False  # it may call tools threadline does not know: a name outside ours is no error
    names_models_called: bool = False  # its answers name the models its calls went to, not the profile's
    input_declines_waiting: bool = True  # its input step declines what an earlier answer left waiting; else the
    # answer service does, before the run


BUILT_IN_HOSTING = Hosting()


class HostedState(ChatState, total=False):
    agent_state: dict[str, Any]  # the agent's own state keys besides `messages`, kept from answer to answer
    agent_messages: list[AnyMessage] | None  # the agent's own messages, while they differ from the transcript
    agent_messages_until: str | None  # ... and the id of the last transcript message they cover
    agent_input: dict[str, Any]  # the chat body's `input` of the message being answered (agent/own_input.py)
    structured_response: Any  # a task graph's output (agent/task_graphs.py), shown after its answer's text


def host_graph(
    agent: AgentGraph,
    own_context: OwnContext | None,
    checkpointer: BaseCheckpointSaver[Any],
    store: BaseStore,
    suggester: Suggester | None,
    files: FileReader,
    input_check: InputCheck,
) -> Graph:
    """Compile threadline's graph around `agent`: its `input` node and the `agent` step's end (or, with suggestions,
    a `respond` step after it) keep the turn's record as the built-in agent's middleware does, so a stop, a
    rollback or a recovery edits either conversation alike (conversations/closing.py), as `respond`."""

    # LangGraph filters what a run returns, and the node updates it streams, to the graph's output schema: the
    # agent's messages are read whatever that schema lets through (data-enrichment's lets only `info` out).
    output = [agent.output_channels] if isinstance(agent.output_channels, str) else list(agent.output_channels)
    task = TaskGraph.of(agent)  # a graph without `messages`: the message is its text input, its output the answer
    shown_output = output if MESSAGES in output or (task and not task.works_in_messages) else [*output, MESSAGES]

    async def run_agent(state: HostedState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        carried = state.get("agent_state") or {}
        own_input = state.get("agent_input") or {}
        if missing := input_check.missing([*carried, *own_input]):
            raise AgentInputMissing(missing)
        memory = agent_input(state["messages"], state.get("agent_messages"), state.get("agent_messages_until"))
        given = await files.readable(memory)  # attachments as content blocks, for its model
        config = get_config()
        graph_input = {**carried, **own_input, MESSAGES: given}
        if task is not None:  # its model calls are its work, not the answer (agent/task_graphs.py)
            graph_input = task.graph_input(state["messages"], {**carried, **own_input})
            config = {**config, "tags": [*config.get("tags", ()), HIDDEN_RUN]}
        ours = runtime.context
        context = own_context.build(ours.request_context, ours.visitor_id) if own_context else ours
        result = await _run(agent, graph_input, config, ours, context=context, output_keys=shown_output)
        if task is not None:
            return await _task_answer(task, result, state, suggester, output)
        # Messages with attachments go back to holding references only; calls the person declined stay declined.
        declined = turn.declined if (turn := current_turn.get()) is not None else set()
        kept = [_marked(message, declined) for message in restored(result.get(MESSAGES, []), memory)]
        kept += [not_run(call) for call in unanswered_calls(cast(list[AnyMessage], kept))]  # ended: never run
        update = after_run(given, kept, state["messages"])
        update["agent_state"] = {k: v for k, v in result.items() if k != MESSAGES}
        if suggester is None:  # the run that ends the agent closes the turn, in its own step
            update["turns"] = await _closing_records(state, update)
        return update

    async def respond(state: HostedState) -> dict[str, Any]:
        return _answer_record(await closing_update(state["messages"], suggester), state)

    builder = StateGraph(HostedState, context_schema=AgentContext)
    builder.add_node("input", take_input)
    builder.add_node("agent", run_agent)
    builder.add_node("respond", respond)
    builder.add_edge(START, "input")
    builder.add_edge("input", "agent")
    # With suggestions, a step of their own once the answer is saved; without, `respond` is only the node a
    # stop, a rollback or a recovery closes a turn as (and where an earlier version's checkpoint goes on).
    builder.add_edge("agent", "respond" if suggester is not None else END)
    builder.add_edge("respond", END)
    return cast(Graph, builder.compile(checkpointer=checkpointer, store=store))


async def _run(
    agent: AgentGraph,
    graph_input: dict[str, Any],
    config: Any,
    ours: AgentContext,
    *,
    context: Any,
    output_keys: Any,
) -> dict[str, Any]:
    """One run of the agent, with threadline's context for `threadline_context()`; its own failures told apart from
    a model call's and from LangGraph's control flow; what it used before a pause counted when it goes on
    (agent/paused_usage.py)."""
    calls = model_calls_of(config)
    threadline_context = CURRENT.set(ours)  # what threadline_context() gives the agent's code
    store = get_store()
    try:
        async with paused_usage.across_a_pause(store, config["configurable"]["thread_id"]):
            return await _invoke(agent, graph_input, config, context, output_keys)
    except GraphBubbleUp:
        raise  # an interrupt, or a Command for a parent graph: LangGraph's control flow
    except Exception as error:
        if calls is not None and calls.failed(error):
            raise  # the model call failed: the provider's failure, classified as one
        raise AgentFailed(f"{type(error).__name__} in the agent's own code") from error
    finally:
        CURRENT.reset(threadline_context)


async def _invoke(
    agent: AgentGraph, graph_input: dict[str, Any], config: Any, context: Any, output_keys: Any
) -> dict[str, Any]:
    # Checkpointed when it ends or stops to ask ("exit"), not step by step: the transcript is this graph's, and a
    # stopped or killed run is closed from it (conversations/closing.py), so its own steps in between were never
    # read back; a run that asks resumes from what it saved (6 fewer checkpoints).
    result: dict[str, Any] = await agent.ainvoke(
        graph_input, config, context=context, durability="exit", output_keys=output_keys
    )
    return result


async def _task_answer(
    task: TaskGraph, result: dict[str, Any], state: HostedState, suggester: Suggester | None, output_keys: list[str]
) -> dict[str, Any]:
    """A task graph's run as the turn's update: what it did in `messages` and its output's text as the answer, its
    output as its structured response (shown after the text, as the history shows it) and kept with the answer's
    record."""
    output = plain({key: value for key, value in result.items() if key in output_keys})
    before = (state.get("agent_state") or {}).get(MESSAGES, [])
    update: dict[str, Any] = {
        "messages": task.answer(result, before),
        "agent_state": {**result, STRUCTURED: output},
        STRUCTURED: output,
    }
    if suggester is None:
        update["turns"] = await _closing_records(state, update)
    return update


async def take_input(state: HostedState) -> dict[str, Any]:
    """The built-in input node, and the chat body's `input` kept for the agent's whole answer (resumes too)."""
    request = state["request"]
    return await input_node(state) | {"agent_input": request.get("input", {}) if request else {}}


async def _closing_records(state: HostedState, update: dict[str, Any]) -> dict[str, AnswerRecord]:
    """The turn's record from the agent's run, as `respond` would write it after the run's update."""
    messages = cast(list[AnyMessage], add_messages(cast(list[Any], state["messages"]), update["messages"]))
    after = cast(HostedState, {"messages": messages, "agent_state": update["agent_state"]})
    return cast(dict[str, AnswerRecord], _answer_record(await closing_update(messages, None), after)["turns"])


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


class AgentInputMissing(ValueError):
    """The agent's input lacks a key it needs (its input schema's, without a default), which no message of this
    conversation gave: the request is refused naming it, before the agent runs."""


class AgentFailed(Exception):
    """The team's agent raised an exception of its own (not a model call's failure): the answer ends with
    AGENT_ERROR, the exception it was raised from is in the log and the trace."""
