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
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Protocol, cast
from uuid import UUID

import msgspec
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    ToolCall,
    ToolMessage,
    convert_to_messages,
)
from langchain_core.outputs import ChatGenerationChunk, LLMResult
from langchain_core.runnables import RunnableConfig
from langgraph.pregel._messages import StreamMessagesHandler
from langgraph.types import Command, StreamMode

from threadline import events as ev
from threadline.agent.browser_tools import BROWSER_TOOLS
from threadline.agent.context import AgentContext
from threadline.agent.graph import Graph, TurnRequest
from threadline.agent.hosting import STRUCTURED
from threadline.agent.model_calls import INTERNAL_CALL, ModelCalls
from threadline.agent.tool_inputs import ToolInfo
from threadline.conversations.approvals import NOT_INTERACTIVE, ApprovalResponse, Waiting, check, waiting_of
from threadline.conversations.state import (
    TURN,
    AnswerRecord,
    clean_text,
    config_of,
    text_and_reasoning,
    tool_results,
)
from threadline.current_answer import current_turn

STREAM_MODES: list[StreamMode] = ["updates", "custom"]  # and `messages`, read by MessagesAsTheyCome
QUESTION = "interrupt"  # the data part that carries an agent's question to the person
# threadline's own input node before every agent: before a team's (agent/hosting.py), and the built-in's middleware's
INPUT = frozenset({"input", f"{TURN}.before_agent"})
# Model calls internal to an agent (LangChain's middleware marks them, INTERNAL_CALL; `nostream` tags): never the
# answer's text.
HIDDEN_TAGS = frozenset({"nostream", "langsmith:nostream"})
HOSTED_AGENT = "agent:"  # the checkpoint namespace of a hosted agent's run (agent/hosting.py's `agent` node)


class TurnTranslator:
    """Keeps which step, text, reasoning and tool-input parts are open while one answer streams.

    In `events` mode everything is streamed; in `messages` mode text, reasoning, finished tool calls and
    their results: no status, no tool arguments while they are generated. Text and reasoning arrive
    cleaned (`clean_text`): no end markers or control characters ever reach a wire.
    """

    def __init__(
        self,
        events_mode: bool,
        tools: Mapping[str, ToolInfo] | None = None,
        hosted: bool = False,
        subgraphs: frozenset[str] = frozenset(),
    ) -> None:
        self.events_mode = events_mode
        self.tools = tools  # None: the tools are not known here, and calls are shown as the model made them
        self.hosted = hosted  # a team's own agent, which may have tools of its own besides these: any name goes
        self.subgraphs = subgraphs  # its declared subgraphs (`a|b` paths): their steps are its own
        self.input_errors: set[str] = set()  # calls shown as tool-input-error: their error result is not shown
        self.usage = ev.Usage()
        self.step_open = False
        self.text_id: str | None = None
        self.reasoning_id: str | None = None
        self.parts = 0
        self.tool_calls: dict[Any, str] = {}
        self.pending_tools: set[str] = set()
        self.call_text: list[str] = []
        self.speaking = ""  # the named agent whose model call streams, when its run says so (lc_agent_name)
        self.call_reasoning: list[str] = []
        self.finish: AnswerRecord | None = None
        self.calls_done = False  # the last model call asked for tools: the next call starts a new step
        self.last_calls: list[ToolCall] = []  # the last model call's tool calls, which an interrupt may wait for
        self.streamed: set[str | None] = set()  # the model messages streamed in this answer
        self.finished_calls: set[str | None] = set()  # ... and those whose call is complete
        self.declined: set[str] = set()  # tool calls the person declined: their results are shown as denied
        self.browser_tools: frozenset[str] = frozenset()  # the page's own tools: calls of them are the page's to run
        # The agent's data parts the message keeps, by name and id, with the message they followed (keep_part), and
        # the message the answer began after (the question, or for an answer that goes on, where it paused).
        self.data_parts: dict[tuple[str, str], dict[str, Any]] = {}
        self.began_after: str | None = None
        self.waiting: list[Waiting] = []  # the approvals this answer ended waiting for
        self.interactive = True  # False: the wire cannot ask the person, and run_graph declines what waits
        self.hidden: set[str] = set()  # messages of model calls internal to the agent (structured output): never shown
        # Messages of `nostream` calls, by id, with their tool calls: shown only if they land in the agent's messages
        self.unsaid: dict[str, set[str]] = {}
        self.unsaid_calls: set[str] = set()
        self.early_results: dict[str, ToolMessage] = {}  # results streamed before their call's input was shown
        self.early_said: list[AIMessage] = []  # ... and whole messages (the budget's "I stopped …" after its results)
        self.settled: set[str] = set()  # tool calls whose result this answer has shown
        self.shown: list[AnyMessage] = []  # the agent's messages as they were shown, for the transcript
        self.subgraph_shown = False  # ... some of them from its subgraphs, which its state may not keep
        # When the agent last did anything (a token, hidden or not, one of its nodes ending), by time.monotonic(): the
        # answer's time limits measure the silence of its work, not of its visible text (answers/turn.py).
        self.last_work = 0.0
        self.working_on = ""  # the node of the agent's that started last, shown as the answer's status
        # The answer was stopped: nothing after is shown, so nothing after is translated (what was translated is
        # what is saved). The stop cancels the answer's task; a node's own task may still send a token.
        self.stopped = False

    def _part_id(self, kind: str) -> str:
        self.parts += 1
        return f"{kind}-{self.parts}"

    def open_step(self) -> list[ev.Event]:
        if self.step_open:
            return []
        self.step_open = True
        return [ev.StepStart(), ev.Status(text="Thinking…")] if self.events_mode else [ev.StepStart()]

    def close_step(self) -> list[ev.Event]:
        out = self.close_parts()
        self.calls_done = False
        if self.step_open:
            self.step_open = False
            out.append(ev.StepFinish())
        return out

    def close_parts(self, agent: str = "") -> list[ev.Event]:
        out: list[ev.Event] = []
        if self.reasoning_id:
            out.append(ev.ReasoningEnd(id=self.reasoning_id, agent=agent))
            self.reasoning_id = None
        if self.text_id:
            out.append(ev.TextEnd(id=self.text_id, agent=agent))
            self.text_id = None
        return out

    def model_chunk(self, chunk: AIMessage) -> list[ev.Event]:
        # A new model call after tool results is a new step; otherwise the token loop just goes on.
        out = [*self.close_step(), *self.open_step()] if self.calls_done else self.open_step()
        text, reasoning = text_and_reasoning(chunk)
        text, reasoning = clean_text(text), clean_text(reasoning)
        if reasoning:
            self.call_reasoning.append(reasoning)
            if self.reasoning_id is None:
                self.reasoning_id = self._part_id("reasoning")
                out.append(ev.ReasoningStart(id=self.reasoning_id))
            out.append(ev.ReasoningDelta(id=self.reasoning_id, delta=reasoning))
        if text:
            if self.reasoning_id:
                out.append(ev.ReasoningEnd(id=self.reasoning_id))
                self.reasoning_id = None
            if self.text_id is None:
                self.text_id = self._part_id("text")
                out.append(ev.TextStart(id=self.text_id))
            out.append(ev.TextDelta(id=self.text_id, delta=text))
            self.call_text.append(text)
        for call in getattr(chunk, "tool_call_chunks", ()) if self.events_mode else ():
            key = call["index"] if call.get("index") is not None else call.get("id")
            call_id = self.tool_calls.get(key)
            if call_id is None and call.get("id") and call.get("name"):
                call_id = self.tool_calls[key] = call["id"]
                out.append(
                    ev.ToolInputStart(tool_call_id=call_id, tool_name=call["name"], title=self._title(call["name"]))
                )
                self.pending_tools.add(call_id)
            if call_id and call.get("args"):
                out.append(ev.ToolInputDelta(tool_call_id=call_id, input_text_delta=call["args"]))
        return out

    def model_done(self, message: AIMessage) -> list[ev.Event]:
        """A model call finished: its text is complete and its tool calls have their final input; a named
        agent's (`AIMessage.name`: a supervisor's worker, a swarm's agent) parts say who it was."""
        agent = message.name or ""
        out = self.close_parts(agent)
        self.call_text.clear()
        self.call_reasoning.clear()
        self.last_calls = message.tool_calls
        self.calls_done = bool(message.tool_calls)
        for call in message.tool_calls:
            call_id = call["id"] or ""
            self.pending_tools.add(call_id)
            if problem := self._input_problem(call["name"], call["args"]):
                self.input_errors.add(call_id)
                out.append(
                    ev.ToolInputError(
                        tool_call_id=call_id,
                        tool_name=call["name"],
                        input=call["args"],
                        error_text=problem,
                        agent=agent,
                    )
                )
                continue
            title = self._title(call["name"])
            out.append(
                ev.ToolInputAvailable(
                    tool_call_id=call_id, tool_name=call["name"], input=call["args"], title=title, agent=agent
                )
            )
            if self.events_mode:
                out.append(ev.Status(text=f"Calling tool {call['name']}…"))
        for invalid in message.invalid_tool_calls:  # arguments that are not even JSON: no tool runs
            call_id = invalid.get("id") or self._part_id("call")
            self.input_errors.add(call_id)
            out.append(
                ev.ToolInputError(
                    tool_call_id=call_id,
                    tool_name=invalid.get("name") or "",
                    input=invalid.get("args"),
                    error_text=invalid.get("error") or "The tool's input is not valid JSON.",
                )
            )
        if message.usage_metadata:  # the tokens so far, for a client that shows them while the answer goes on
            self.usage = ev.Usage(
                input_tokens=self.usage.input_tokens + message.usage_metadata.get("input_tokens", 0),
                output_tokens=self.usage.output_tokens + message.usage_metadata.get("output_tokens", 0),
                total_tokens=self.usage.total_tokens + message.usage_metadata.get("total_tokens", 0),
            )
            out.append(ev.MessageMetadata(usage=self.usage))
        self.tool_calls.clear()
        out += self._held_results(message)
        if not message.tool_calls:
            out += self.close_step()
        return out

    def _held_results(self, message: AIMessage) -> list[ev.Event]:
        """The results held while `message`'s call streamed: first its own calls' (create_agent's structured-output
        tool answers in the model's own node), then any that answer an earlier call. The node that returned such
        a result reported through the run's stream, which this call's tokens (shown as they come) overtook: a
        resumed answer's first tool result, say. It is shown now, not lost."""
        out: list[ev.Event] = []
        for call in message.tool_calls:
            if (early := self.early_results.pop(call["id"] or "", None)) is not None:
                out += self.agent_message(early)
        for call_id in list(self.early_results):
            out += self.agent_message(self.early_results.pop(call_id))
        said, self.early_said = self.early_said, []
        for whole in said:
            out += self.agent_message(whole)
        return out

    def _title(self, tool_name: str) -> str:
        info = self.tools.get(tool_name) if self.tools else None
        return info.title if info else ""

    def _input_problem(self, tool_name: str, tool_input: Any) -> str | None:
        if self.tools is None:
            return None
        if (info := self.tools.get(tool_name)) is None:
            return None if self.hosted or tool_name in self.browser_tools else f"There is no tool named {tool_name!r}."
        return info.problem(tool_input)

    def message(self, message: Any, node: str, namespace: tuple[str, ...] = ()) -> list[ev.Event]:
        """A token, or a whole message a node returned, from any agent's node: the same for the built-in graph's
        and a hosted agent's. The input node's are not this answer's (it declines what an earlier one left
        waiting)."""
        if isinstance(message, AIMessageChunk):
            self.streamed.add(message.id)
            return self.model_chunk(message)
        if not namespace and node in INPUT:
            return []
        self.subgraph_shown |= len(namespace) > 1
        return self.agent_message(message)

    def agent_message(self, message: BaseMessage) -> list[ev.Event]:
        """A message new in the agent's run (LangGraph passes on each once): a tool's result, or a model
        message that was not streamed, which is shown whole and is complete."""
        if isinstance(message, ToolMessage):
            self.settled.add(message.tool_call_id)
            if self.streamed - self.finished_calls:  # a call still streaming: its input is shown first (model_done)
                self.early_results[message.tool_call_id] = message
                return []
            self.shown.append(message)
            self.pending_tools.discard(message.tool_call_id)
            if message.tool_call_id in self.input_errors:
                return []
            if message.tool_call_id in self.declined:
                return [ev.ToolOutputDenied(tool_call_id=message.tool_call_id, error_text=str(message.text))]
            return tool_results(message)
        if isinstance(message, AIMessage) and message.id not in self.finished_calls:
            if self.streamed - self.finished_calls:  # after a call still streaming: shown once that call is done
                self.early_said.append(message)
                return []
            self.finished_calls.add(message.id)
            self.shown.append(message)
            return [*self.model_chunk(message), *self.model_done(message)]
        return []

    def inside_a_node(self, namespace: tuple[str, ...]) -> bool:
        """A graph run from inside a hosted agent's node (deepagents' `task` tool runs a sub-agent): its steps are
        that node's own business, neither shown nor kept; the node's result is. A declared subgraph's steps (a
        supervisor's workers) are the agent's."""
        return len(namespace) > 1 and "|".join(part.partition(":")[0] for part in namespace[1:]) not in self.subgraphs

    def interrupted(self, why: str) -> list[ev.Event]:
        """Close whatever the answer left open, so the client's message is complete and no tool runs forever."""
        out = self.close_parts(self.speaking)
        out += [
            ev.ToolOutputError(tool_call_id=call_id, error_text=f"Not finished: {why}.")
            for call_id in sorted(self.pending_tools)
        ]
        self.pending_tools.clear()
        return out + self.close_step()

    def partial_message(self) -> AIMessage | None:
        """What the interrupted model call had said so far, to be saved with the conversation."""
        text, reasoning = "".join(self.call_text), "".join(self.call_reasoning)
        name = self.speaking or None
        if not reasoning:
            return AIMessage(content=text, name=name) if text else None
        blocks: list[str | dict[str, Any]] = [{"type": "reasoning", "reasoning": reasoning}]
        blocks += [{"type": "text", "text": text}] if text else []
        return AIMessage(content=blocks, name=name)

    def update(self, node: str, update: Any, namespace: tuple[str, ...] = ()) -> list[ev.Event]:
        """A node is done. threadline's own input node (in every conversation graph) starts the answer, and the
        node whose update holds the turn's record ends it: the last model call, a hosted agent's run, or the step
        after the agent that suggests. Any other node, the built-in agent's or a hosted agent's, is read alike."""
        update = update or {}
        if node == "__interrupt__":  # the graph waits for the person: the answer ends here
            return [] if namespace else self.paused(update)
        if not namespace and node in INPUT:
            return []
        self.subgraph_shown |= len(namespace) > 1
        out = self.agent_update(update)
        if not namespace and (turns := closing_of(update)):
            out += self.closed(turns)
        return out

    def closed(self, turns: dict[str, AnswerRecord]) -> list[ev.Event]:
        """The turn is closed with its record: the answer ends, with the suggestions for what comes next if any."""
        self.finish = record = next(iter(turns.values()))
        if "suggestions" in record:
            return [*self.close_step(), msgspec.convert(record["suggestions"], ev.Suggestions)]
        return self.close_step()

    def agent_update(self, update: Any) -> list[ev.Event]:
        """An agent's node is done: a model call it streamed is complete, with its tool calls."""
        out: list[ev.Event] = []
        for value in update if isinstance(update, list) else [update]:
            messages = value.get("messages") if isinstance(value, dict) else None
            for message in messages if isinstance(messages, list) else [messages]:
                if isinstance(message, dict) and message.get("role") == "tool":  # a node may return dicts
                    message = convert_to_messages([message])[0]
                if (
                    isinstance(message, ToolMessage)
                    and message.tool_call_id not in self.settled
                    and (message.id is None or message.tool_call_id in self.pending_tools)
                ):  # a result LangGraph did not stream (a node's dict, a Command's update), not an earlier one
                    out += self.agent_message(message)
                if isinstance(message, AIMessage) and message.id in self.unsaid:  # what a hidden call said, kept
                    self.unsaid_calls -= self.unsaid.pop(message.id)
                    out += self.agent_message(message)
                if not isinstance(message, AIMessage) or message.id not in self.streamed:
                    continue
                if message.id not in self.finished_calls:
                    self.finished_calls.add(message.id)
                    self.shown.append(message)
                    out += self.model_done(message)
            if isinstance(value, dict) and value.get(STRUCTURED) is not None:  # create_agent's response_format
                out.append(ev.Data(name=STRUCTURED.replace("_", "-"), data=ev.plain(value[STRUCTURED])))
        return out

    def node_started(self, node: str) -> list[ev.Event]:
        """One of the agent's own nodes started (not threadline's, not a model call of the built-in agent): in events
        mode its name is the answer's status while it works without text, as LangGraph Studio shows the node."""
        if not self.events_mode or node == self.working_on or self.text_id is not None:
            return []
        self.working_on = node
        return [ev.Status(text=f"Working: {node.replace('_', ' ')}…")]

    def hide(self, call: HiddenCall) -> None:
        """A hidden model call ended: what it said is not shown, nor are its tool calls and their results, unless its
        message lands in the agent's messages (`agent_update`); a structured-output call's never is."""
        if call.message.id is None:
            return
        if call.internal:
            self.hidden.add(call.message.id)
            return
        calls = {tool_call["id"] for tool_call in call.message.tool_calls if tool_call["id"]}
        self.unsaid[call.message.id] = calls
        self.unsaid_calls |= calls

    def same_call(self, call: SameCall) -> None:
        """One model call streamed under several message ids (OpenAI's Responses API: LangChain's run id, then the
        response's): it is one message, the one its node returns."""
        self.streamed -= call.ids
        self.streamed.add(call.message_id)

    def paused(self, interrupts: Any) -> list[ev.Event]:
        """Approvals end the answer with a request per call, a browser tool's call with its call open; any other
        interrupt is the agent's question."""
        paused = waiting_of(interrupts, self.last_calls)
        approvals, questions = paused.approvals, paused.questions
        self.waiting = approvals
        if approvals and not self.interactive:
            return []  # declined at once (run_graph), and the agent goes on
        self.finish = AnswerRecord(finish_reason="tool-calls" if approvals or paused.browser_calls else "other")
        requests = [
            ev.ToolApprovalRequest(approval_id=item.approval_id, tool_call_id=item.tool_call_id) for item in approvals
        ]
        # A call the page runs stays open, as its input showed it: the page answers it with its output.
        self.pending_tools.difference_update(request.tool_call_id for request in requests)
        self.pending_tools.difference_update(call.tool_call_id for call in paused.browser_calls)
        # threadline's extension: why it waits, and whether the page may offer to change the input first
        editable = [ev.Data(name="approval", id=a.approval_id, data=a.part_data) for a in approvals if a.part_data]
        asked = [ev.Data(name=QUESTION, id=question.id, data=question.part_data) for question in questions]
        return [*requests, *editable, *asked, *self.close_step()]

    def custom(self, payload: Any) -> list[ev.Event]:
        """What a node sent with `get_stream_writer()`: `{"tool_call_id", "progress", "total"?, "message"?}` is a
        tool's progress; `{"name", "data", "id"?, "transient"?}` a `data-{name}` part; anything else `data-custom`."""
        if isinstance(payload, dict) and isinstance(payload.get("tool_call_id"), str) and "progress" in payload:
            # Passed on in either mode: it keeps a long tool's answer alive (answers/turn.py shows it in events mode).
            progress = ev.ToolProgress(
                tool_call_id=payload["tool_call_id"],
                progress=float(payload["progress"]),
                total=payload.get("total"),
                message=payload.get("message"),
            )
            return [progress]
        if isinstance(payload, dict) and isinstance(payload.get("name"), str) and "data" in payload:
            name = payload["name"] if payload["name"] not in RESERVED_PARTS else f"agent-{payload['name']}"
            part = ev.Data(
                name=name,
                data=ev.plain(payload["data"]),
                id=str(payload.get("id") or ""),
                transient=bool(payload.get("transient") is True),
            )
        else:
            part = ev.Data(name="custom", data=ev.plain(payload))
        if not part.transient:
            self.keep_part(part)
        return [part]

    def keep_part(self, part: ev.Data) -> None:
        """A data part the message keeps, for the history: where it was shown (after the last message shown, else
        where the answer began), once per id (a part with the id of an earlier one replaces it, as useChat does)."""
        key = part.id or f"#{len(self.data_parts)}"
        shown = {"type": f"data-{part.name}", "data": part.data} | ({"id": part.id} if part.id else {})
        placed = self.data_parts.get((part.name, key))
        after = placed["after"] if placed else (self.shown[-1].id if self.shown else self.began_after)
        self.data_parts[(part.name, key)] = {"part": shown, "after": after}


class Tracing(Protocol):
    """What a run is traced with (observability/answers.py's AnswerWatch): LangChain callbacks and run metadata."""

    callbacks: list[Any]
    metadata: dict[str, str]


MessagesItem = tuple[tuple[str, ...], str, tuple[Any, dict[str, Any]]]  # (namespace, "messages", (message, metadata))


def closing_of(update: Any) -> dict[str, AnswerRecord] | None:
    """The turn's record in a node's update (a dict, or a list of them for a node that returned Commands)."""
    for value in update if isinstance(update, list) else [update]:
        if isinstance(value, dict) and value.get("turns"):
            return cast(dict[str, AnswerRecord], value["turns"])
    return None


MARKS = "calls"  # the mode of what CallsAsTheyEnd tells the answer besides messages: HiddenCall, SameCall, NodeStarted


class HiddenCall(msgspec.Struct, frozen=True):
    """A model call internal to the agent ended with this message (`internal`: a structured-output call's)."""

    message: AIMessage
    internal: bool


class SameCall(msgspec.Struct, frozen=True):
    """A model call whose tokens came under `ids` ended as the message `message_id`."""

    ids: frozenset[str]
    message_id: str


class NodeStarted(msgspec.Struct, frozen=True):
    """One of a hosted agent's nodes started."""

    node: str


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

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        about = kwargs.get("metadata") or {}
        if (node := about.get("langgraph_node")) and kwargs.get("name") == node:
            namespace = about.get("langgraph_checkpoint_ns", "")
            if namespace.count("|") == 1 and namespace.startswith(HOSTED_AGENT):  # a hosted agent's own node
                self.stream(((), MARKS, (NodeStarted(node), {})))
        return super().on_chain_start(serialized, inputs, run_id=run_id, **kwargs)

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


RESERVED_PARTS = frozenset(
    {QUESTION, "approval", "suggestions", "status", "warning", "tool-progress"}
)  # threadline's own


def resumed(request: TurnRequest) -> Command[Any]:
    """The person's answers to what the turn waited for, and the agent's questions they answered kept with the
    turn's record (shown where they were asked, conversations/history.py)."""
    if "replied" not in request:
        return Command(resume=request["resume"])
    update = {"turns": {request["user_message_id"]: {"replied": request["replied"]}}}
    return Command(resume=request["resume"], update=update)


def with_browser_tools(config: RunnableConfig, request: TurnRequest) -> TurnRequest:
    """The page's tools go to the agent's BrowserTools middleware in the run's config, for this run only (a list,
    which no checkpoint's metadata keeps), and not in the run's input, which its first checkpoint keeps."""
    if not (tools := request.get("browser_tools")):
        return request
    config["configurable"][BROWSER_TOOLS] = tools
    return cast(TurnRequest, {key: value for key, value in request.items() if key != "browser_tools"})


async def run_graph(
    graph: Graph,
    thread_id: str,
    request: TurnRequest,
    translator: TurnTranslator,
    show: Callable[[ev.Event], None],
    tracing: Tracing | None = None,
    context: AgentContext | None = None,
) -> None:
    """Run the graph for one turn and hand what the answer shows to `show`, between `start` and `finish`;
    `tracing`'s callbacks and metadata go to LangChain's run config (to Langfuse, say), `context` to every node as
    LangGraph runtime context. A wire that cannot ask the person declines what a hosted agent asks them to
    approve, and the agent goes on."""
    calls = ModelCalls(current_turn.get())
    messages = MessagesAsTheyCome(translator, show)
    config = config_of(thread_id) | {
        "callbacks": [*(tracing.callbacks if tracing else ()), calls, messages.handler()],
        "metadata": tracing.metadata if tracing else {},
    }
    translator.browser_tools = frozenset(tool["name"] for tool in request.get("browser_tools", ()))
    request = with_browser_tools(config, request)
    translator.declined = set(request.get("declined", ()))
    translator.interactive = request.get("interactive", True)
    graph_input: Any = resumed(request) if "resume" in request else {"request": request}
    try:
        while graph_input is not None:
            stream: AsyncIterator[Any] = graph.astream(
                graph_input, config, stream_mode=STREAM_MODES, subgraphs=True, context=context
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
            graph_input, waiting = None, translator.waiting
            if waiting and not translator.interactive:
                declined = ApprovalResponse(approved=False, reason=NOT_INTERACTIVE)
                translator.declined |= {item.tool_call_id for item in waiting}
                translator.waiting = []
                responses = {item.approval_id: (item.tool_call_id, declined) for item in waiting}
                graph_input = Command(resume=check(waiting, responses))
    except BaseException as error:
        calls.abandoned(error)
        raise
