"""graph_events(): one graph run turned into the canonical event stream (answers/turn.py frames and owns it).

LangGraph's `messages` stream mode gives model tokens and finished tool results; `updates` says when
a node is done, which is when a model call's text and tool inputs are complete and a step ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import msgspec
from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langgraph.types import Command, StreamMode

from threadline.agent.graph import Graph, TurnRequest
from threadline.agent.tool_inputs import ToolInfo
from threadline.answers import events as ev
from threadline.conversations.approvals import pending_of
from threadline.conversations.state import AnswerRecord, clean_text, config_of, text_and_reasoning, tool_output

STREAM_MODES: list[StreamMode] = ["messages", "updates"]


class TurnTranslator:
    """Keeps which step, text, reasoning and tool-input parts are open while one answer streams.

    In `events` mode everything is streamed; in `messages` mode text, reasoning, finished tool calls and
    their results: no status, no tool arguments while they are generated. Text and reasoning arrive
    cleaned (`clean_text`): no end markers or control characters ever reach a wire.
    """

    def __init__(self, events_mode: bool, tools: Mapping[str, ToolInfo] | None = None) -> None:
        self.events_mode = events_mode
        self.tools = tools  # None: the tools are not known here, and calls are shown as the model made them
        self.input_errors: set[str] = set()  # calls shown as tool-input-error: their error result is not shown
        self.usage = ev.Usage()
        self.step_open = False
        self.text_id: str | None = None
        self.reasoning_id: str | None = None
        self.parts = 0
        self.tool_calls: dict[Any, str] = {}
        self.pending_tools: set[str] = set()
        self.call_text: list[str] = []
        self.call_reasoning: list[str] = []
        self.finish: AnswerRecord | None = None

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
        if self.step_open:
            self.step_open = False
            out.append(ev.StepFinish())
        return out

    def close_parts(self) -> list[ev.Event]:
        out: list[ev.Event] = []
        if self.reasoning_id:
            out.append(ev.ReasoningEnd(id=self.reasoning_id))
            self.reasoning_id = None
        if self.text_id:
            out.append(ev.TextEnd(id=self.text_id))
            self.text_id = None
        return out

    def model_chunk(self, chunk: AIMessage) -> list[ev.Event]:
        out = self.open_step()
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
        """A model call finished: its text is complete and its tool calls have their final input."""
        out = self.close_parts()
        self.call_text.clear()
        self.call_reasoning.clear()
        for call in message.tool_calls:
            call_id = call["id"] or ""
            self.pending_tools.add(call_id)
            if problem := self._input_problem(call["name"], call["args"]):
                self.input_errors.add(call_id)
                out.append(
                    ev.ToolInputError(
                        tool_call_id=call_id, tool_name=call["name"], input=call["args"], error_text=problem
                    )
                )
                continue
            title = self._title(call["name"])
            out.append(
                ev.ToolInputAvailable(tool_call_id=call_id, tool_name=call["name"], input=call["args"], title=title)
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
        if not message.tool_calls:
            out += self.close_step()
        return out

    def _title(self, tool_name: str) -> str:
        info = self.tools.get(tool_name) if self.tools else None
        return info.title if info else ""

    def _input_problem(self, tool_name: str, tool_input: Any) -> str | None:
        if self.tools is None:
            return None
        if (info := self.tools.get(tool_name)) is None:
            return f"There is no tool named {tool_name!r}."
        return info.problem(tool_input)

    def message(self, message: Any, node: str) -> list[ev.Event]:
        if isinstance(message, AIMessageChunk):
            return self.model_chunk(message)
        if isinstance(message, ToolMessage):
            self.pending_tools.discard(message.tool_call_id)
            if node == "process" or message.tool_call_id in self.input_errors:  # shown as the model's error
                return []
            if node == "input":  # declines an earlier answer's call that waited for approval: not this answer's
                return []
            return [tool_output(message)]
        if isinstance(message, AIMessage):
            if node == "process":  # a model that did not stream: its whole text at once
                return self.model_chunk(message)
            # The respond node's own closing answer is a step of its own, already saved with it.
            out = [*self.close_step(), *self.model_chunk(message), *self.close_step()]
            self.call_text.clear()
            return out
        return []

    def interrupted(self, why: str) -> list[ev.Event]:
        """Close whatever the answer left open, so the client's message is complete and no tool runs forever."""
        out = self.close_parts()
        out += [
            ev.ToolOutputError(tool_call_id=call_id, error_text=f"Not finished: {why}.")
            for call_id in sorted(self.pending_tools)
        ]
        self.pending_tools.clear()
        return out + self.close_step()

    def partial_message(self) -> AIMessage | None:
        """What the interrupted model call had said so far, to be saved with the conversation."""
        text, reasoning = "".join(self.call_text), "".join(self.call_reasoning)
        if not reasoning:
            return AIMessage(content=text) if text else None
        blocks: list[str | dict[str, Any]] = [{"type": "reasoning", "reasoning": reasoning}]
        blocks += [{"type": "text", "text": text}] if text else []
        return AIMessage(content=blocks)

    def update(self, node: str, update: Any) -> list[ev.Event]:
        update = update or {}
        if node == "process":  # the model's message, perhaps followed by results for calls it could not make
            return self.model_done(next(m for m in update["messages"] if isinstance(m, AIMessage)))
        if node == "tools":
            return self.close_step()
        if node == "respond":
            self.finish = record = next(iter(update["turns"].values()))
            if "suggestions" in record:
                return [*self.close_step(), msgspec.convert(record["suggestions"], ev.Suggestions)]
            return self.close_step()
        if node == "__interrupt__":  # the graph waits for the person's approval: the answer ends here
            self.finish = AnswerRecord(finish_reason="tool-calls")
            requests = [
                ev.ToolApprovalRequest(approval_id=approval["approvalId"], tool_call_id=approval["toolCallId"])
                for approval in pending_of(update)
            ]
            self.pending_tools.difference_update(request.tool_call_id for request in requests)
            return [*requests, *self.close_step()]
        return []


async def graph_events(
    graph: Graph,
    thread_id: str,
    request: TurnRequest,
    translator: TurnTranslator,
    callbacks: list[Any] | None = None,
    metadata: dict[str, str] | None = None,
) -> AsyncIterator[ev.Event]:
    """Run the graph for one turn and yield what the answer shows, between `start` and `finish`;
    `callbacks` and `metadata` go to LangChain's run config (tracing to Langfuse, say)."""
    config = config_of(thread_id)
    if callbacks:
        config |= {"callbacks": callbacks, "metadata": metadata or {}}
    graph_input: Any = Command(resume=request["resume"]) if "resume" in request else {"request": request}
    stream: AsyncIterator[Any] = graph.astream(graph_input, config, stream_mode=STREAM_MODES)
    async for mode, payload in stream:
        batch: list[ev.Event]
        if mode == "messages":
            message, metadata = payload
            batch = translator.message(message, metadata.get("langgraph_node", ""))
        else:
            batch = [event for node, update in payload.items() for event in translator.update(node, update)]
        for event in batch:
            yield event
