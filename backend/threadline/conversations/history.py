"""A conversation's checkpointed messages as AI SDK `UIMessage` objects, shaped like the live stream.

A reloaded page must show exactly what was streamed, so each model call becomes a `step-start`
followed by its reasoning, text and tool parts, and a turn's model calls share one assistant message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from threadline import events as ev
from threadline import mount_path
from threadline.conversations.approvals import Question, Waiting, is_not_run
from threadline.conversations.state import (
    AnswerRecord,
    Conversation,
    FileRef,
    Usage,
    files_of,
    text_and_reasoning,
    tool_output,
    tool_results,
)
from threadline.conversations.versions import answer_key, numbering
from threadline.storage.feedback import Feedback


def _usage(usage: Usage | None) -> dict[str, int] | None:
    """An answer's usage; none for one that counted nothing (stopped before any model call finished), as live."""
    if usage is None or not any(usage.values()):
        return None
    return {
        "inputTokens": usage["input_tokens"],
        "outputTokens": usage["output_tokens"],
        "totalTokens": usage["total_tokens"],
    }


def _assistant(user_id: str, record: AnswerRecord, conversation_id: str, feedback: Feedback | None) -> dict[str, Any]:
    metadata = {
        "conversationId": conversation_id,
        "model": record.get("model"),
        "createdAt": record.get("created_at"),
        "finishedAt": record.get("finished_at"),
        "usage": _usage(record.get("usage")),
        "interrupted": record.get("interrupted"),
        "traceId": record.get("trace_id"),
        "profile": record.get("profile"),
        "comparisonId": record.get("comparison_id"),
        "feedback": None if feedback is None else msgspec.to_builtins(feedback),
    }
    return {
        "id": record.get("assistant_id") or f"{user_id}-answer",
        "role": "assistant",
        "metadata": {key: value for key, value in metadata.items() if value is not None},
        "parts": [],
    }


def ui_messages(
    conversation: Conversation,
    conversation_id: str,
    feedback: Mapping[str, Feedback] | None = None,
    titles: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The conversation's messages; `feedback` (by assistant message id) goes into each rated answer's metadata,
    and `titles` (by tool name) onto tool parts, as the live stream shows them."""
    titles = titles or {}
    feedback = feedback or {}
    result: list[dict[str, Any]] = []
    assistant: dict[str, Any] | None = None
    tool_parts: dict[str, dict[str, Any]] = {}
    endings: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []  # each answer's closing parts, added last
    placed: dict[str | None, list[dict[str, Any]]] = {}  # parts shown between messages, by the message they followed
    numbers = numbering(conversation.forks)
    for message in conversation.messages:
        if isinstance(message, HumanMessage):
            if assistant is not None:  # the message they followed is gone: they close their answer
                assistant["parts"] += [part for parts in placed.values() for part in parts]
            record = conversation.records.get(message.id or "", AnswerRecord())
            answer_id = record.get("assistant_id")
            assistant = _assistant(message.id or "", record, conversation_id, feedback.get(answer_id or ""))
            user = _user_message(message, record)
            _number(user, numbers.get(message.id or ""))
            _number(assistant, numbers.get(answer_key(message.id or "")))
            result += [user, assistant]
            endings.append((assistant, _closing_parts(record)))
            placed = _placed(record)
        elif assistant is None:
            continue
        elif isinstance(message, AIMessage):
            assistant["parts"] += _answer_parts(message, titles, tool_parts)
        elif isinstance(message, ToolMessage) and message.tool_call_id in tool_parts:
            _settle(tool_parts[message.tool_call_id], message)
            assistant["parts"] += [msgspec.to_builtins(event) for event in tool_results(message)[1:]]
        if assistant is not None and message.id in placed:  # an answered question, a data part, where it was shown
            assistant["parts"] += placed.pop(message.id)
    for tool_call_id, approval_id in conversation.waiting.items():  # calls waiting for the person's approval
        waiting = tool_parts.get(tool_call_id)
        if waiting is not None and waiting["state"] == "input-available":
            waiting.update(state="approval-requested", approval={"id": approval_id})
    if assistant is not None:  # what the agent asked the person, unanswered, and the inputs they may change
        assistant["parts"] += [part for parts in placed.values() for part in parts]
        assistant["parts"] += [_question_part(question) for question in conversation.questions]
        assistant["parts"] += [_approval_part(item) for item in conversation.approvals if item.part_data]
    for answer, parts in endings:
        answer["parts"] += parts
    # An answer that showed nothing is left out, unless it was interrupted: the page then says so.
    return [
        message
        for message in result
        if message["role"] == "user" or message["parts"] or message["metadata"].get("interrupted")
    ]


def _closing_parts(record: AnswerRecord) -> list[dict[str, Any]]:
    """What closes an answer, whatever it shows before: its typed answer, the agent's questions a stop or a new
    message left unanswered, and its suggestions, last."""
    parts: list[dict[str, Any]] = []
    if "structured_response" in record:
        parts.append({"type": "data-structured-response", "data": record["structured_response"]})
    parts += [{"type": "data-interrupt", **asked} for asked in record.get("asked", [])]
    if "suggestions" in record:
        suggestions = record["suggestions"]
        data = {"values": suggestions.get("values", []), "actions": suggestions.get("actions", [])}
        parts.append({"type": "data-suggestions", "id": "suggestions", "data": data})
    return parts


def _placed(record: AnswerRecord) -> dict[str | None, list[dict[str, Any]]]:
    """What an answer showed between its messages, by the id of the message each followed: the agent's questions
    the person answered (with their reply), and the data parts its agent sent."""
    placed: dict[str | None, list[dict[str, Any]]] = {}
    for replied in record.get("replied", []):
        part = {"type": "data-interrupt", "id": replied["id"], "data": replied["data"]}
        placed.setdefault(replied.get("after"), []).append(part)
    for kept in record.get("data_parts", []):
        placed.setdefault(kept.get("after"), []).append(kept["part"])
    return placed


def _number(message: dict[str, Any], number: tuple[int, int] | None) -> None:
    """A message with versions (edits, regenerated answers) says which is shown and how many there are."""
    if number is not None:
        message["metadata"] |= {"version": number[0], "versions": number[1]}


def _question_part(question: Question) -> dict[str, Any]:
    """What the agent asked the person and waits for (`interrupt(value)`), as the live stream sent it."""
    return {"type": "data-interrupt", "id": question.id, "data": question.part_data}


def _approval_part(item: Waiting) -> dict[str, Any]:
    """Why a call waits, or that its input may be changed before it runs, as the live stream sent it."""
    return {"type": "data-approval", "id": item.approval_id, "data": item.part_data}


def _user_message(message: HumanMessage, record: AnswerRecord) -> dict[str, Any]:
    """Files first, then the text, as `sendMessage({ text, files })` builds the message."""
    files = [file_part(file) for file in files_of(message)]
    return {
        "id": message.id,
        "role": "user",
        "metadata": {"createdAt": record.get("user_created_at")},
        "parts": [*files, {"type": "text", "text": message.text}] if message.text or not files else files,
    }


def file_part(file: FileRef) -> dict[str, Any]:
    """An attachment as the AI SDK's `file` part: a URL its owner can fetch (GET /api/files/{id})."""
    return {
        "type": "file",
        "mediaType": file["media_type"],
        "filename": file["filename"],
        "url": mount_path.url(f"/api/files/{file['id']}"),
    }


def _answer_parts(
    message: AIMessage, titles: Mapping[str, str], tool_parts: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """One model call's parts: a step, its reasoning and text, and its tool calls (kept in `tool_parts` by id,
    for their results to settle)."""
    parts: list[dict[str, Any]] = [{"type": "step-start"}]
    by = {"threadline": {"agent": message.name}} if message.name else None  # as wires/ui_message_stream.py says
    text, reasoning = text_and_reasoning(message)
    if reasoning:
        parts.append(
            {"type": "reasoning", "text": reasoning, "state": "done"} | ({"providerMetadata": by} if by else {})
        )
    if text:
        parts.append({"type": "text", "text": text, "state": "done"} | ({"providerMetadata": by} if by else {}))
    for call in message.tool_calls:
        part = {
            "type": f"tool-{call['name']}",
            "toolCallId": call["id"],
            "state": "input-available",
            "input": call["args"],
        }
        if title := titles.get(call["name"]):
            part["title"] = title
        if by:
            part["callProviderMetadata"] = by
        tool_parts[call["id"] or ""] = part
        parts.append(part)
    return parts


def _settle(part: dict[str, Any], message: ToolMessage) -> None:
    """A tool part with its result: its output, its error, or the person's refusal to run it; a call its agent ended
    on without running stays as it was shown, asked."""
    if is_not_run(message):
        return
    outcome = tool_output(message)
    if isinstance(outcome, ev.ToolOutputDenied):
        declined = message.artifact if isinstance(message.artifact, dict) else {}
        approval_id = declined.get("approval_id") or f"declined-{message.tool_call_id}"
        approval = {"id": approval_id, "approved": False} | (
            {"reason": declined["reason"]} if declined.get("reason") else {}
        )
        part.update(state="output-denied", approval=approval)
    elif isinstance(outcome, ev.ToolOutputError):
        part.update(state="output-error", errorText=outcome.error_text)
    else:
        part.update(state="output-available", output=outcome.output)
