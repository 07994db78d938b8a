"""AG-UI 1.0 (`@ag-ui/client`'s HttpAgent, CopilotKit, assistant-ui): an answer as AG-UI events over SSE.

One answer is one run. It opens with RUN_STARTED and a MESSAGES_SNAPSHOT of the stored conversation, the new user
message included, so a client that sent only that message holds the whole conversation, in order (the client keeps its
messages that are in a snapshot where they were, and adds the others after them: the new message is in the snapshot
under the id it was stored with, which the client did not give it). The answer then streams as assistant messages, one
per speaker of a team (`Speakers`; one for an agent that is not a team, under the stored answer's id): its texts as
TEXT_MESSAGE_* (with the speaker's `name` where it is known as the text starts), its tool calls as TOOL_CALL_* with
their message as parent, each result as TOOL_CALL_RESULT, its reasoning as REASONING_* messages; the model's steps are
STEP_STARTED/FINISHED. What AG-UI has no event for (status, warnings, titles, suggestions, progress, files, sources, an
agent's data parts, usage so far) goes out as CUSTOM events named `threadline.<kind>`. The answer ends with RUN_FINISHED
(its usage; for an answer that waits for the person, `outcome.type` `interrupt` with what it waits for; for one that
ends on calls of the client's browser tools, `success` with their `pendingToolCallIds`) or RUN_ERROR with threadline's
error code. `snapshot_messages` turns a conversation's messages, as GET /api/conversations/{id} gives them, into AG-UI's
messages in the order a client that followed the live events holds them.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import msgspec

from threadline import events as ev
from threadline.wires.sse import as_text, json_of

MEDIA_TYPE = "text/event-stream"
HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def _sse(event: dict[str, Any]) -> bytes:
    return b"data: " + json_of(event) + b"\n\n"


class Speakers:
    """Which AG-UI assistant message an answer's text or tool call goes to: the answer's id for the first, then
    `<id>-2`, `<id>-3`… each time a named agent other than the one who spoke so far in it speaks (a team's
    supervisor, then its worker). An unnamed part stays where it is: who said it is not known. The live events
    and the snapshot split alike, so a stored answer keeps the ids it streamed under; live, a speaker is known only
    where its run names it as it starts (create_agent's `lc_agent_name`), so an answer may stream as fewer
    messages than its snapshot holds, which the next run's snapshot puts right."""

    def __init__(self, answer_id: str) -> None:
        self.answer_id = answer_id
        self.message_id = answer_id
        self.name = ""  # the speaker of the current message, once known
        self.spoken = False  # whether the current message has a text or a tool call yet
        self.count = 1

    def is_new(self, agent: str) -> bool:
        """Whether a text or tool call of `agent` ("" when not known) starts a message of its own."""
        return bool(agent and self.name and agent != self.name and self.spoken)

    def heard(self, agent: str) -> None:
        """A text or tool call of `agent` comes: in a message of its own when `is_new`."""
        if self.is_new(agent):
            self.count += 1
            self.message_id, self.name = f"{self.answer_id}-{self.count}", agent
        self.name = self.name or agent
        self.spoken = True


class AgUiEncoder:
    """One per run: which text, reasoning and tool call are open, so every one the run opens is closed before
    RUN_FINISHED, as the client's verifier demands."""

    def __init__(
        self, thread_id: str, run_id: str, snapshot: list[dict[str, Any]], answered: frozenset[str] = frozenset()
    ) -> None:
        self.thread_id, self.run_id, self.snapshot = thread_id, run_id, snapshot
        self.answered = answered  # browser tools' calls whose results the client sent: in the snapshot already
        self.speakers = Speakers("")
        self.text_open = False
        self.reasoning: str | None = None  # the open reasoning message's id
        self.reasonings = 0
        self.tools_open: set[str] = set()
        self.tools_seen: dict[str, None] = {}  # in the order they started
        self.results: set[str] = set()
        self.args_streamed: set[str] = set()
        self.steps = 0
        self.step_open = False
        self.interrupts: list[dict[str, Any]] = []
        self.ended = False

    def encode(self, event: ev.Event) -> list[dict[str, Any]]:
        """The AG-UI events of one canonical event (none, one or several)."""
        if self.ended:
            return []
        match event:
            case ev.Start():
                self.speakers = Speakers(event.message_id)
                run = {"type": "RUN_STARTED", "threadId": self.thread_id, "runId": self.run_id}
                return [run, {"type": "MESSAGES_SNAPSHOT", "messages": self.snapshot}]
            case ev.TextStart():
                return [*self._close_reasoning(), *self._speaks(event.agent), *self._open_text()]
            case ev.TextDelta(delta=delta):  # every token: no list built for an already open message
                content = {"type": "TEXT_MESSAGE_CONTENT", "messageId": self.speakers.message_id, "delta": delta}
                return [content] if self.text_open else [*self._open_text(), content]
            case ev.TextEnd():
                return self._close_text()
            case ev.ReasoningStart() | ev.ReasoningDelta():
                return self._reasoning(event)
            case ev.ReasoningEnd():
                return self._close_reasoning()
            case ev.StepStart():
                closed = self._close_step()  # one step at a time, so RUN_FINISHED finds none left open
                self.steps, self.step_open = self.steps + 1, True
                return [*closed, {"type": "STEP_STARTED", "stepName": f"step {self.steps}"}]
            case ev.StepFinish():
                return [*self._close_parts(), *self._close_step()]
            case ev.ToolInputStart() | ev.ToolInputDelta() | ev.ToolInputAvailable() | ev.ToolInputError():
                return self._tool_input(event)
            case ev.ToolOutput() | ev.ToolOutputError():
                self.results.add(event.tool_call_id)
                ended = self._end_tool(event.tool_call_id)
                return ended if event.tool_call_id in self.answered else [*ended, _tool_result(event)]
            case ev.ToolApprovalRequest() | ev.Data(name="interrupt"):
                return self._waits(event)
            case ev.Finish():
                return self._finish(event)
            case ev.Error():
                self.ended = True
                return [{"type": "RUN_ERROR", "message": event.message, "code": event.code}]
        return [_custom(event)]

    def _waits(self, event: ev.ToolApprovalRequest | ev.Data) -> list[dict[str, Any]]:
        """What the answer waits for: a tool call's approval, or the agent's question (shown as a CUSTOM event too,
        with what it asks), an interrupt of the run's outcome."""
        if isinstance(event, ev.ToolApprovalRequest):
            waits = {"id": event.approval_id, "reason": "tool_approval", "toolCallId": event.tool_call_id}
            self.interrupts.append(waits)
            return []
        asked = event.data if isinstance(event.data, dict) else {}
        question = {"id": str(asked.get("id") or event.id), "reason": "input_required"}
        self.interrupts.append(question | {"message": as_text(asked.get("value", event.data))})
        return [_custom(event)]

    def _speaks(self, agent: str) -> list[dict[str, Any]]:
        """The open text closed when `agent` starts a message of its own."""
        closed = self._close_text() if self.speakers.is_new(agent) else []
        self.speakers.heard(agent)
        return closed

    def _open_text(self) -> list[dict[str, Any]]:
        if self.text_open:
            return []
        self.text_open = self.speakers.spoken = True
        start = {"type": "TEXT_MESSAGE_START", "messageId": self.speakers.message_id, "role": "assistant"}
        return [start | {"name": self.speakers.name}] if self.speakers.name else [start]

    def _close_text(self) -> list[dict[str, Any]]:
        if not self.text_open:
            return []
        self.text_open = False
        return [{"type": "TEXT_MESSAGE_END", "messageId": self.speakers.message_id}]

    def _reasoning(self, event: ev.ReasoningStart | ev.ReasoningDelta) -> list[dict[str, Any]]:
        out = self._close_text()
        if self.reasoning is None:
            self.reasonings += 1
            self.reasoning = f"{self.speakers.answer_id}-reasoning-{self.reasonings}"
            out += [
                {"type": "REASONING_START", "messageId": self.reasoning},
                {"type": "REASONING_MESSAGE_START", "messageId": self.reasoning, "role": "reasoning"},
            ]
        if isinstance(event, ev.ReasoningDelta):
            out.append({"type": "REASONING_MESSAGE_CONTENT", "messageId": self.reasoning, "delta": event.delta})
        return out

    def _close_reasoning(self) -> list[dict[str, Any]]:
        if self.reasoning is None:
            return []
        closed, self.reasoning = self.reasoning, None
        return [{"type": "REASONING_MESSAGE_END", "messageId": closed}, {"type": "REASONING_END", "messageId": closed}]

    def _close_parts(self) -> list[dict[str, Any]]:
        return [*self._close_text(), *self._close_reasoning()]

    def _close_step(self) -> list[dict[str, Any]]:
        if not self.step_open:
            return []
        self.step_open = False
        return [{"type": "STEP_FINISHED", "stepName": f"step {self.steps}"}]

    def _tool_input(
        self, event: ev.ToolInputStart | ev.ToolInputDelta | ev.ToolInputAvailable | ev.ToolInputError
    ) -> list[dict[str, Any]]:
        """A call streams its arguments in events mode; in messages mode it arrives whole (ToolInputAvailable)."""
        call_id = event.tool_call_id
        if isinstance(event, ev.ToolInputDelta):
            self.args_streamed.add(call_id)
            return [{"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": event.input_text_delta}]
        if call_id in self.tools_seen and call_id not in self.tools_open:
            return []  # already whole
        agent = "" if isinstance(event, ev.ToolInputStart) else event.agent
        out = [] if call_id in self.tools_open else [*self._speaks(agent), *self._start_tool(call_id, event.tool_name)]
        if isinstance(event, ev.ToolInputStart):
            return out
        if call_id not in self.args_streamed:
            out.append({"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": as_text(event.input)})
        out += self._end_tool(call_id)
        if isinstance(event, ev.ToolInputError):
            self.results.add(call_id)
            out.append(_tool_result(ev.ToolOutputError(tool_call_id=call_id, error_text=event.error_text)))
        return out

    def _start_tool(self, call_id: str, name: str) -> list[dict[str, Any]]:
        self.tools_open.add(call_id)
        self.tools_seen[call_id] = None
        start = {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name}
        return [*self._close_parts(), start | {"parentMessageId": self.speakers.message_id}]

    def _end_tool(self, call_id: str) -> list[dict[str, Any]]:
        if call_id not in self.tools_open:
            return []
        self.tools_open.discard(call_id)
        return [{"type": "TOOL_CALL_END", "toolCallId": call_id}]

    def _finish(self, event: ev.Finish) -> list[dict[str, Any]]:
        out = [*self._close_parts(), *(end for call_id in sorted(self.tools_open) for end in self._end_tool(call_id))]
        out += self._close_step()
        self.ended = True
        usage = {
            "inputTokens": event.usage.input_tokens,
            "outputTokens": event.usage.output_tokens,
            "totalTokens": event.usage.total_tokens,
        }
        finished: dict[str, Any] = {"type": "RUN_FINISHED", "threadId": self.thread_id, "runId": self.run_id}
        finished["usage"] = [usage | ({"model": event.model} if event.model else {})]
        waiting = {item.get("toolCallId") for item in self.interrupts}
        if self.interrupts:
            finished["outcome"] = {"type": "interrupt", "interrupts": self.interrupts}
        elif pending := [call for call in self.tools_seen if call not in self.results and call not in waiting]:
            finished["outcome"] = {"type": "success", "pendingToolCallIds": pending}  # the client's browser tools
        return [*out, finished]


def _tool_result(event: ev.ToolOutput | ev.ToolOutputError) -> dict[str, Any]:
    content = as_text(event.output) if isinstance(event, ev.ToolOutput) else event.error_text
    message_id = f"{event.tool_call_id}-result"
    return {"type": "TOOL_CALL_RESULT", "messageId": message_id, "toolCallId": event.tool_call_id, "content": content}


def _custom(event: ev.Event) -> dict[str, Any]:
    value = msgspec.to_builtins(event)
    return {"type": "CUSTOM", "name": f"threadline.{value.pop('type')}", "value": value}


async def encode(
    batches: AsyncIterable[list[ev.Event]],
    thread_id: str,
    run_id: str,
    snapshot: list[dict[str, Any]],
    answered: frozenset[str] = frozenset(),
) -> AsyncIterator[bytes]:
    encoder = AgUiEncoder(thread_id, run_id, snapshot, answered)
    async for batch in batches:
        if out := [_sse(payload) for event in batch for payload in encoder.encode(event)]:
            yield b"".join(out)


def snapshot_messages(conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A conversation's UI messages as AG-UI messages, in the order a client that followed the live events holds
    them: an answer's reasoning where it came, one assistant message with all its text and tool calls, its tool
    results right after it."""
    messages: list[dict[str, Any]] = []
    for message in conversation:
        if message["role"] == "user":
            text = "".join(part["text"] for part in message["parts"] if part["type"] == "text")
            messages.append({"id": message["id"], "role": "user", "content": text})
        else:
            _answer(message, messages)
    return messages


def _answer(message: dict[str, Any], messages: list[dict[str, Any]]) -> None:
    """An answer's parts as AG-UI messages, one assistant message per speaker as it streamed (`Speakers`)."""
    speakers = Speakers(message["id"])
    answer: dict[str, Any] = {}
    reasonings = 0
    for part in message["parts"]:
        kind = part["type"]
        if kind == "reasoning":
            reasonings += 1
            messages.append(
                {"id": f"{message['id']}-reasoning-{reasonings}", "role": "reasoning", "content": part["text"]}
            )
        elif kind == "text" or kind.startswith("tool-") or kind == "dynamic-tool":
            speakers.heard(_speaker(part))
            if answer.get("id") != speakers.message_id:
                answer = {"id": speakers.message_id, "role": "assistant"}
                messages.append(answer)
            if speakers.name:
                answer["name"] = speakers.name
            if kind == "text":
                answer["content"] = answer.get("content", "") + part["text"]
            else:
                _tool_call(part, kind, answer, messages)


def _speaker(part: dict[str, Any]) -> str:
    """Who said a stored text or made a stored tool call, as the UI Message Stream marked it."""
    said = (part.get("providerMetadata") or part.get("callProviderMetadata") or {}).get("threadline") or {}
    return str(said.get("agent") or "")


def _tool_call(part: dict[str, Any], kind: str, answer: dict[str, Any], messages: list[dict[str, Any]]) -> None:
    call_id = part["toolCallId"]
    name = part.get("toolName") or kind.removeprefix("tool-")
    arguments = as_text(part.get("input") if part.get("input") is not None else {})
    answer.setdefault("toolCalls", []).append(
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    )
    if part["state"] == "output-available":
        content = as_text(part.get("output"))
    elif part["state"] in ("output-error", "output-denied"):
        content = part.get("errorText") or "Not run."
    else:
        return
    at = messages.index(answer) + 1
    while at < len(messages) and messages[at]["role"] == "tool":
        at += 1
    messages.insert(at, {"id": f"{call_id}-result", "role": "tool", "toolCallId": call_id, "content": content})
