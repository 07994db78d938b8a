"""run_turn(): one graph run turned into the canonical event stream.

LangGraph's `messages` stream mode gives model tokens and finished tool results; `updates` says when
a node is done, which is when a model call's text and tool inputs are complete and a step ends.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langgraph.graph.state import CompiledStateGraph

from threadline import events as ev
from threadline.graph import TurnRequest

log = logging.getLogger("threadline.runner")

STREAM_MODES = ["messages", "updates"]


def split_content(content: str | list[Any]) -> tuple[str, str]:
    """(text, reasoning) of a message's content, which providers give as a string or content blocks."""
    if isinstance(content, str):
        return content, ""
    text, reasoning = [], []
    for block in content:
        if isinstance(block, str):
            text.append(block)
        elif block.get("type") == "text":
            text.append(block.get("text", ""))
        elif block.get("type") in ("thinking", "reasoning"):
            reasoning.append(block.get("thinking") or block.get("reasoning") or block.get("text") or "")
    return "".join(text), "".join(reasoning)


def tool_output(message: ToolMessage) -> ev.ToolOutput | ev.ToolOutputError:
    """The event for a finished tool call; shared with history so a reload shows what was streamed."""
    content = message.content if isinstance(message.content, str) else split_content(message.content)[0]
    if message.status == "error":
        return ev.ToolOutputError(tool_call_id=message.tool_call_id, error_text=content)
    return ev.ToolOutput(tool_call_id=message.tool_call_id, output=content)


class _TurnTranslator:
    """Keeps which step, text, reasoning and tool-input parts are open while one answer streams."""

    def __init__(self, show_status: bool) -> None:
        self.show_status = show_status
        self.step_open = False
        self.text_id: str | None = None
        self.reasoning_id: str | None = None
        self.parts = 0
        self.tool_calls: dict[Any, str] = {}
        self.finish: dict[str, Any] | None = None

    def _part_id(self, kind: str) -> str:
        self.parts += 1
        return f"{kind}-{self.parts}"

    def open_step(self) -> list[ev.Event]:
        if self.step_open:
            return []
        self.step_open = True
        return [ev.StepStart(), ev.Status(text="Thinking…")] if self.show_status else [ev.StepStart()]

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
        text, reasoning = split_content(chunk.content)
        if reasoning:
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
        for call in getattr(chunk, "tool_call_chunks", ()):
            key = call["index"] if call.get("index") is not None else call.get("id")
            call_id = self.tool_calls.get(key)
            if call_id is None and call.get("id") and call.get("name"):
                call_id = self.tool_calls[key] = call["id"]
                out.append(ev.ToolInputStart(tool_call_id=call_id, tool_name=call["name"]))
            if call_id and call.get("args"):
                out.append(ev.ToolInputDelta(tool_call_id=call_id, input_text_delta=call["args"]))
        return out

    def model_done(self, message: AIMessage) -> list[ev.Event]:
        """A model call finished: its text is complete and its tool calls have their final input."""
        out = self.close_parts()
        for call in message.tool_calls:
            out.append(ev.ToolInputAvailable(tool_call_id=call["id"], tool_name=call["name"], input=call["args"]))
            if self.show_status:
                out.append(ev.Status(text=f"Calling tool {call['name']}…"))
        self.tool_calls.clear()
        if not message.tool_calls:
            out += self.close_step()
        return out

    def message(self, message: Any, node: str) -> list[ev.Event]:
        if isinstance(message, AIMessageChunk):
            return self.model_chunk(message)
        if isinstance(message, ToolMessage):
            return [tool_output(message)]
        if isinstance(message, AIMessage):
            if node == "process":  # a model that did not stream: its whole text at once
                return self.model_chunk(message)
            # The respond node's own closing answer is a step of its own.
            return [*self.close_step(), *self.model_chunk(message), *self.close_step()]
        return []

    def update(self, node: str, update: dict[str, Any] | None) -> list[ev.Event]:
        if node == "process":
            return self.model_done(update["messages"][-1])
        if node == "tools":
            return self.close_step()
        if node == "respond":
            self.finish = next(iter(update["turns"].values()))
            return self.close_step()
        return []


async def run_turn(
    graph: CompiledStateGraph, conversation_id: str, request: TurnRequest, *, stream_mode: str
) -> AsyncIterator[ev.Event]:
    """Run one turn of a conversation and yield its events, from `start` to `finish` or `error`."""
    yield ev.Start(message_id=request["assistant_message_id"], conversation_id=conversation_id,
                   model=request["model"], created_at=request["created_at"])
    translator = _TurnTranslator(show_status=stream_mode == "events")
    config = {"configurable": {"thread_id": conversation_id}}
    try:
        async for mode, payload in graph.astream({"request": request}, config, stream_mode=STREAM_MODES):
            if mode == "messages":
                message, metadata = payload
                batch = translator.message(message, metadata.get("langgraph_node", ""))
            else:
                batch = [event for node, update in payload.items() for event in translator.update(node, update)]
            for event in batch:
                yield event
    except Exception:
        log.exception("turn failed", extra={"conversation_id": conversation_id})
        yield ev.Error(code="AI_SERVICE_UNAVAILABLE", retryable=True,
                       message="The assistant is unavailable right now. Please try again in a moment.")
        return
    finish = translator.finish or {}
    usage = finish.get("usage", {})
    yield ev.Finish(
        finish_reason=finish.get("finishReason", "stop"),
        finished_at=finish.get("finishedAt") or ev.timestamp(),
        usage=ev.Usage(input_tokens=usage.get("inputTokens", 0), output_tokens=usage.get("outputTokens", 0),
                       total_tokens=usage.get("totalTokens", 0)),
    )
