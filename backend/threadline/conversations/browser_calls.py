"""Tool calls the page runs itself (browser tools: AG-UI's `RunAgentInput.tools`, the AI SDK's client-side tools).

The agent's `BrowserTools` middleware (agent/browser_tools.py) offers the run's browser tools to the model; a call
of one is never run on the server: it waits in a LangGraph interrupt, checkpointed with the conversation like an
approval, and the answer ends with the call open. The page runs it and sends its output back (an assistant message
whose tool part is `output-available` on /api/chat, a tool message on /api/ag-ui); the answer resumes with
`Command(resume={interrupt id: {"output": …}})` and the agent goes on from that output. Only a call that waits can
be answered, once: the interrupt is the record of what waits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from langchain_core.messages import ToolCall, ToolMessage

BROWSER_TOOL = "browser_tool"  # the interrupt value's `type`


@dataclass(frozen=True)
class BrowserCall:
    """A call of a browser tool that waits for the page's output, and the interrupt it waits in."""

    interrupt_id: str
    tool_call_id: str
    tool_name: str


class BrowserOutput(TypedDict):
    """What the page answered for one call: its output, or (the tool failed) the error the model is told."""

    output: NotRequired[Any]
    error: NotRequired[str]


def request(call: ToolCall) -> dict[str, Any]:
    """The interrupt's value for one call, in the shape of LangChain's per-call requests (`type`, the call)."""
    return {"type": BROWSER_TOOL, "tool_call_id": call["id"] or "", "name": call["name"], "args": call["args"]}


def browser_call(interrupt_id: str, value: Any) -> BrowserCall | None:
    """The call an interrupt's value waits for, when it is a browser tool's."""
    if isinstance(value, dict) and value.get("type") == BROWSER_TOOL:
        return BrowserCall(interrupt_id, str(value.get("tool_call_id", "")), str(value.get("name", "")))
    return None


def result(call: ToolCall, answer: BrowserOutput) -> ToolMessage:
    """The tool result the model reads: the output as the page gave it (text, or its JSON), or the page's error.
    The artifact keeps the output itself, so the history shows what the page sent, not its text."""
    if "error" in answer:
        return ToolMessage(
            content=answer["error"],
            tool_call_id=call["id"] or "",
            name=call["name"],
            status="error",
            artifact={"browser": True},
        )
    output = answer.get("output")
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    return ToolMessage(
        content=text, tool_call_id=call["id"] or "", name=call["name"], artifact={"browser": True, "output": output}
    )


def browser_output(message: ToolMessage) -> tuple[bool, Any]:
    """(True, the output the page sent) for a browser tool's result; (False, None) for any other."""
    artifact = message.artifact
    if isinstance(artifact, dict) and artifact.get("browser") and "output" in artifact:
        return True, artifact["output"]
    return False, None
