"""What a paused conversation waits for: the person's approval of tool calls, or their answer to the agent.

Both are LangGraph interrupts, checkpointed with the conversation. Three shapes ask for approval: the built-in
agent's approvals middleware (`{"approvals": [...]}`), and LangChain's `HumanInTheLoopMiddleware`, batched (a
`HITLRequest` per model call) or per call (a `tool_approval` request per call). Each call that waits gets an
approval id, the answer ends with a `tool-approval-request` per call, and the person's responses come back in
the next chat request, checked against what waits before the graph resumes with `Command(resume={interrupt
id: value})` in the shape the interrupt asked for: approve, edit, reject. Any other `interrupt(value)` is a
question to the person, answered with a value. Nothing resumes on a response that does not match what waits.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from typing import Any, Literal, NotRequired, TypedDict

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool

from threadline.conversations.browser_calls import BrowserCall, browser_call
from threadline.events import plain

SUPERSEDED = "superseded by a new message"
CANCELLED = "the answer was stopped"
NOT_INTERACTIVE = "this client cannot ask the person for approval"


Decision = Literal["approve", "edit", "reject", "respond"]
DECISIONS: tuple[Decision, ...] = ("approve", "edit", "reject", "respond")


class PendingApproval(TypedDict):
    """One call waiting, as the built-in agent's interrupt stores it (and as the others are read)."""

    approvalId: str
    toolCallId: str
    toolName: str


@dataclass(frozen=True)
class Waiting:
    """One call that waits, with the interrupt it waits in and the shape that interrupt is resumed with."""

    approval_id: str
    tool_call_id: str
    tool_name: str
    interrupt_id: str
    shape: Literal["threadline", "batched", "per_call"] = "threadline"
    decisions: tuple[Decision, ...] = ("approve", "reject")  # what the person may decide (`edit`: change the input)
    description: str = ""  # why it waits, in the agent's words (HumanInTheLoopMiddleware's `description`)

    @property
    def part_data(self) -> dict[str, Any] | None:
        """The `data-approval` part's data (threadline's extension), when there is more to say than approve or
        reject: the decisions, where `edit` is one, and why it waits."""
        if "edit" not in self.decisions and not self.description:
            return None
        reason = {"reason": self.description} if self.description else {}
        return {"toolCallId": self.tool_call_id, "decisions": list(self.decisions), **reason}


@dataclass(frozen=True)
class Question:
    """An `interrupt(value)` that is not about tool calls: the agent asks the person something."""

    id: str  # the interrupt's
    value: Any

    @property
    def part_data(self) -> dict[str, Any]:
        """The `data-interrupt` part's data, live and in the history alike."""
        return {"id": self.id, "value": plain(self.value)}


class ApprovalResponse(TypedDict):
    approved: bool
    reason: NotRequired[str | None]
    approval_id: NotRequired[str]
    edited_input: NotRequired[dict[str, Any]]  # approved with a changed input, where the interrupt allows `edit`


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


@dataclass(frozen=True)
class Paused:
    """What an answer waits for: the person's approvals, their answers to the agent, the page's browser tools."""

    approvals: list[Waiting]
    questions: list[Question]
    browser_calls: list[BrowserCall]


def waiting_of(interrupts: Any, calls: Sequence[ToolCall]) -> Paused:
    """What the interrupts (a StateSnapshot's, or a stream's `__interrupt__`) wait for; `calls` are the
    unanswered tool calls of the last model message, which a batched HITL request lists in order."""
    approvals: list[Waiting] = []
    questions: list[Question] = []
    browser_calls: list[BrowserCall] = []
    for interrupt in interrupts or ():
        value, interrupt_id = interrupt.value, interrupt.id
        if (call := browser_call(interrupt_id, value)) is not None:
            browser_calls.append(call)
        elif isinstance(value, dict) and "approvals" in value:
            approvals += [
                Waiting(item["approvalId"], item["toolCallId"], item["toolName"], interrupt_id)
                for item in value["approvals"]
            ]
        elif isinstance(value, dict) and "action_requests" in value:
            approvals += _batched(interrupt_id, value, calls)
        elif isinstance(value, dict) and value.get("type") == "tool_approval":
            allowed = _decisions(interrupt)
            said = _text(value.get("description"))
            approvals.append(
                Waiting(interrupt_id, value["tool_call_id"], value["name"], interrupt_id, "per_call", allowed, said)
            )
        else:
            questions.append(Question(interrupt_id, value))
    return Paused(approvals, questions, browser_calls)


def _batched(interrupt_id: str, request: dict[str, Any], calls: Sequence[ToolCall]) -> list[Waiting]:
    """A HITLRequest names no tool call ids: its action requests follow the model's calls in order."""
    remaining = list(calls)
    waiting = []
    for index, (action, review) in enumerate(zip(request["action_requests"], request["review_configs"], strict=False)):
        call = next((call for call in remaining if call["name"] == action["name"]), None)
        if call is None:
            continue
        remaining.remove(call)
        allowed = tuple(d for d in review.get("allowed_decisions", ()) if d in ("approve", "edit", "reject", "respond"))
        said = _text(action.get("description"))
        waiting.append(
            Waiting(f"{interrupt_id}-{index}", call["id"] or "", call["name"], interrupt_id, "batched", allowed, said)
        )
    return waiting


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _decisions(interrupt: Any) -> tuple[Decision, ...]:
    """A per-call request's allowed decisions are in its response schema; approve and reject when unreadable."""
    schema = str(getattr(interrupt, "response_schema", "") or "")
    allowed = tuple(d for d in DECISIONS if f"'{d}'" in schema or f'"{d}"' in schema)
    return allowed or ("approve", "reject")


def no_problem(_tool_name: str, _value: Any) -> str | None:
    return None


def check(
    waiting: Sequence[Waiting],
    responses: dict[str, tuple[str, ApprovalResponse]],
    input_problem: Callable[[str, Any], str | None] = no_problem,
) -> dict[str, Any]:
    """The resume value (by interrupt id) for `responses` (by approval id: the tool call id and the response),
    refused unless they answer exactly the approvals waiting, each changed input valid for its tool
    (`input_problem(tool name, input)` says what is wrong with one, None when nothing is)."""
    if not waiting:
        raise ApprovalError(
            "No tool call waits for approval in this conversation (was it already answered?)", conflict=True
        )
    by_id = {item.approval_id: item for item in waiting}
    for approval_id, (tool_call_id, response) in responses.items():
        item = by_id.get(approval_id)
        if item is None or item.tool_call_id != tool_call_id:
            raise ApprovalError(f"Approval {approval_id!r} does not match a tool call waiting in this conversation")
        if "edited_input" in response and "edit" not in item.decisions:
            raise ApprovalError(f"The input of tool call {tool_call_id!r} cannot be edited")
        if "edited_input" in response and (problem := input_problem(item.tool_name, response["edited_input"])):
            raise ApprovalError(
                f"The changed input of tool call {tool_call_id!r} is not valid for {item.tool_name}: {problem}"
            )
    if missing := set(by_id) - set(responses):
        raise ApprovalError(f"Every waiting tool call needs a response; missing: {', '.join(sorted(missing))}")
    resume: dict[str, Any] = {}
    for item in waiting:
        response = responses[item.approval_id][1]
        if item.shape == "threadline":
            entry = response | ApprovalResponse(approved=response["approved"], approval_id=item.approval_id)
            resume.setdefault(item.interrupt_id, {})[item.tool_call_id] = entry
        elif item.shape == "batched":
            resume.setdefault(item.interrupt_id, {"decisions": []})["decisions"].append(_decision(item, response))
        else:
            resume[item.interrupt_id] = _decision(item, response)
    return resume


def _decision(item: Waiting, response: ApprovalResponse) -> dict[str, Any]:
    """A response as HumanInTheLoopMiddleware's decision: approve, edit (approved with a new input) or reject."""
    if response["approved"]:
        if "edited_input" in response:
            return {"type": "edit", "edited_action": {"name": item.tool_name, "args": response["edited_input"]}}
        return {"type": "approve"}
    return {"type": "reject"} | ({"message": response["reason"]} if response.get("reason") else {})


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


def not_run(call: ToolCall) -> ToolMessage:
    """The tool result the model reads for a call its agent ended on without running (agents-from-scratch's `Done`):
    the conversation stays one a provider accepts, and the call is shown as it was, asked and never run."""
    return ToolMessage(
        content="Not run: the agent ended its answer without running this tool call.",
        tool_call_id=call["id"] or "",
        name=call["name"],
        artifact={"not_run": True},
    )


def is_not_run(message: ToolMessage) -> bool:
    return isinstance(message.artifact, dict) and bool(message.artifact.get("not_run"))


def is_denied(message: ToolMessage) -> bool:
    return isinstance(message.artifact, dict) and bool(message.artifact.get("denied"))
