"""Tool calls that wait for the person's approval: a LangGraph interrupt, checkpointed with the conversation.

The graph's `approve` node stops before a call that needs approval (mcp_client.toolbox.needs_approval) with
`interrupt({"approvals": [...]})`; the answer ends with a `tool-approval-request` per call. The person's
responses come back in the next chat request and are checked against the interrupt waiting in the
checkpoint before the graph resumes with `Command(resume={tool_call_id: ApprovalResponse})`: approved calls run,
denied ones get a tool result saying so, and the model goes on. Nothing runs on a response that does not
match what waits.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from fnmatch import fnmatch
from typing import Any, NotRequired, TypedDict

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool

SUPERSEDED = "superseded by a new message"
CANCELLED = "the answer was stopped"
NOT_INTERACTIVE = "this client cannot ask the person for approval"


class PendingApproval(TypedDict):
    """One call waiting, as the interrupt stores it."""

    approvalId: str
    toolCallId: str
    toolName: str


class ApprovalResponse(TypedDict):
    approved: bool
    reason: NotRequired[str | None]
    approval_id: NotRequired[str]


class ApprovalError(ValueError):
    """A response that does not match the approvals waiting; `conflict`: nothing waits (any more)."""

    def __init__(self, message: str, *, conflict: bool = False) -> None:
        super().__init__(message)
        self.conflict = conflict


def waits(tool: BaseTool, require: Sequence[str] = (), auto: Sequence[str] = ()) -> bool:
    """Whether a call of `tool` waits for approval: its MCP server's policy (mcp_client.toolbox.needs_approval),
    widened by a profile's `require_approval` and overridden by its `auto_approve` (names or globs)."""
    if any(fnmatch(tool.name, pattern) for pattern in auto):
        return False
    return bool(getattr(tool, "needs_approval", False)) or any(fnmatch(tool.name, pattern) for pattern in require)


def ask(calls: list[ToolCall]) -> dict[str, list[PendingApproval]]:
    """The interrupt's value for the calls that need approval."""
    return {
        "approvals": [
            PendingApproval(approvalId=uuid.uuid4().hex, toolCallId=call["id"] or "", toolName=call["name"])
            for call in calls
        ]
    }


def pending_of(interrupts: Any) -> list[PendingApproval]:
    """The approvals the checkpoint's interrupts wait for (a StateSnapshot's `interrupts`)."""
    return [
        approval
        for interrupt in interrupts or ()
        if isinstance(interrupt.value, dict)
        for approval in interrupt.value.get("approvals", [])
    ]


def check(
    waiting_calls: Mapping[str, str], responses: dict[str, tuple[str, ApprovalResponse]]
) -> dict[str, ApprovalResponse]:
    """The resume value for `responses` (by approval id: the tool call id and the response), refused unless
    they answer exactly the approvals waiting (`waiting_calls`: approval ids by tool call id)."""
    if not waiting_calls:
        raise ApprovalError(
            "No tool call waits for approval in this conversation (was it already answered?)", conflict=True
        )
    waiting = {approval_id: tool_call_id for tool_call_id, approval_id in waiting_calls.items()}
    for approval_id, (tool_call_id, _) in responses.items():
        if waiting.get(approval_id) != tool_call_id:
            raise ApprovalError(f"Approval {approval_id!r} does not match a tool call waiting in this conversation")
    if missing := set(waiting) - set(responses):
        raise ApprovalError(f"Every waiting tool call needs a response; missing: {', '.join(sorted(missing))}")
    return {
        tool_call_id: response | ApprovalResponse(approved=response["approved"], approval_id=approval_id)
        for approval_id, (tool_call_id, response) in responses.items()
    }


def denial(call: ToolCall, approval_id: str | None, reason: str | None) -> ToolMessage:
    """The tool result the model reads for a declined call; its artifact marks it declined for the wires."""
    because = f" ({reason})" if reason else ""
    return ToolMessage(
        content=f"Not run: the user declined this tool call{because}. Do not call it again unless they ask.",
        tool_call_id=call["id"] or "",
        name=call["name"],
        status="error",
        artifact={"denied": True, "approval_id": approval_id, "reason": reason},
    )


def is_denied(message: ToolMessage) -> bool:
    return isinstance(message.artifact, dict) and bool(message.artifact.get("denied"))
