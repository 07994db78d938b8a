"""TurnTranslator: what a graph run streams, turned into the canonical events of one answer (answers/runner.py
reads the run's stream and hands each item here). It keeps what the answer has shown (texts, tool calls and their
results, the steps) and what it must hide (a model call internal to the agent, with its tool calls and results), so
a message that lands whole is shown once, and the turn's record when the run writes it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, cast

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

from threadline import events as ev
from threadline.agent.hosting import BUILT_IN_HOSTING, STRUCTURED, Hosting
from threadline.agent.tool_inputs import ToolInfo
from threadline.conversations.approvals import Waiting, waiting_of
from threadline.conversations.state import (
    TURN,
    AnswerRecord,
    clean_text,
    text_and_reasoning,
    tool_results,
)
from threadline.turn_context import ProviderBusy

QUESTION = "interrupt"  # the data part that carries an agent's question to the person
# threadline's own input node before every agent: before a team's (agent/hosting.py), and the built-in's middleware's
INPUT = frozenset({"input", f"{TURN}.before_agent"})


RESERVED_PARTS = frozenset(
    {QUESTION, "approval", "suggestions", "status", "warning", "tool-progress"}
)  # threadline's own


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


class TurnTranslator:
    """Keeps which step, text, reasoning and tool-input parts are open while one answer streams.

    In `events` mode everything is streamed; in `messages` mode text, reasoning, finished tool calls and
    their results: no status, no tool arguments while they are generated. Text and reasoning arrive
    cleaned (`clean_text`): no end markers or control characters ever reach a wire.
    """

    # Slots, not a dict: past 30 attributes an instance's dict holds keys of its own (1.5 KB an answer).
    __slots__ = (
        "began_after",
        "browser_tools",
        "call_reasoning",
        "call_text",
        "calls_done",
        "data_parts",
        "declined",
        "early_results",
        "early_said",
        "events_mode",
        "finish",
        "finished_calls",
        "hidden",
        "input_errors",
        "interactive",
        "last_calls",
        "last_work",
        "own_tools",
        "parts",
        "pending_tools",
        "provider_busy",
        "reasoning_id",
        "settled",
        "shown",
        "speaking",
        "step_open",
        "stopped",
        "streamed",
        "subgraph_shown",
        "subgraphs",
        "text_id",
        "tool_calls",
        "tools",
        "unsaid",
        "unsaid_calls",
        "usage",
        "waiting",
        "working_on",
    )

    def __init__(
        self,
        events_mode: bool,
        tools: Mapping[str, ToolInfo] | None = None,
        hosting: Hosting = BUILT_IN_HOSTING,
    ) -> None:
        self.events_mode = events_mode
        self.tools = tools  # None: the tools are not known here, and calls are shown as the model made them
        self.own_tools = hosting.own_tools  # the agent may have tools of its own besides these: any name goes
        self.subgraphs = hosting.subgraphs  # its declared subgraphs (`a|b` paths): their steps are its own
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
        self.provider_busy = False  # a provider answered 429 during the turn
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
                out.append(ev.TextStart(id=self.text_id, agent=self.speaking))
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
            return (
                None if self.own_tools or tool_name in self.browser_tools else f"There is no tool named {tool_name!r}."
            )
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
        tool's progress; `{"name", "data", "id"?, "transient"?}` a `data-{name}` part; anything else `data-custom`.
        threadline's own nodes tell the turn a status or a busy provider (turn_context.tell_the_turn)."""
        if isinstance(payload, ev.Status):
            return [payload] if self.events_mode else []
        if isinstance(payload, ProviderBusy):
            self.provider_busy = True  # a turn that still runs out of time does so because the provider is busy
            self.last_work = max(self.last_work, time.monotonic() + payload.retry_after)  # its wait is no silence
            text = f"The model provider is busy; trying again in {payload.retry_after:.0f} s…"
            return [ev.Status(text=text)] if self.events_mode else []
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
