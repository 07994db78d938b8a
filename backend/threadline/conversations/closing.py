"""Edits to a conversation's checkpoint when an answer does not end on its own: a stop, a failure, a
rollback, a stop while tool calls wait for approval, or a process that died mid-answer. Each is one
`aupdate_state`, written as the graph's node that closes a turn would have (`closing_node`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from threadline.conversations.approvals import CANCELLED, denial
from threadline.conversations.state import (
    AnswerRecord,
    StateWriter,
    Usage,
    closing_node,
    config_of,
    load,
    turn_span,
    unanswered_calls,
    usage_since,
)
from threadline.events import timestamp

STOPPED = "cancelled"  # what a record's `interrupted` says of an answer a person stopped


@dataclass(frozen=True)
class Said:
    """What an interrupted answer showed: its messages (whole, as the person saw them), and the text and reasoning
    of the model call it was in the middle of."""

    shown: Sequence[AnyMessage] = ()
    partial: AIMessage | None = None
    usage: Usage | None = None  # every call it made, as the providers reported them (hidden ones too)


async def close_turn(
    graph: StateWriter,
    thread_id: str,
    why: str,
    finish_reason: str,
    finished_at: str,
    *,
    said: Said | None = None,
    assistant_id: str | None = None,
) -> None:
    """Add what the answer showed that the checkpoint does not hold (a node's message whose write failed) and the
    partial answer after what the checkpoint holds, closing tool calls that never got a result, and mark the
    turn interrupted. Without `assistant_id`, the newest turn that never finished is closed (an answer whose server
    process died)."""
    conversation = await load(graph, thread_id)
    if assistant_id is not None:
        user_id = conversation.question_answered_by(assistant_id)
    else:
        user_id = conversation.unfinished_question()
    if user_id is None:
        return  # stopped before the turn began (or it did finish): nothing was shown, nothing to keep
    said = said or Said()
    known = {message.id for message in conversation.messages}
    messages = [*conversation.messages, *(message for message in said.shown if message.id not in known)]
    # what a hosted agent did before it was stopped, and what was shown but not kept
    update: list[Any] = [*conversation.unsaved, *messages[len(conversation.messages) :]]
    answered = {message.tool_call_id for message in messages if isinstance(message, ToolMessage)}
    last = messages[-1] if messages else None
    if isinstance(last, AIMessage):
        update += [
            ToolMessage(
                content=f"Not run: the answer was interrupted ({why}).",
                tool_call_id=call["id"],
                name=call["name"],
                status="error",
            )
            for call in last.tool_calls
            if call["id"] not in answered
        ]
    if said.partial is not None:
        update.append(said.partial)
    start = next(index for index, message in enumerate(messages) if message.id == user_id)
    record = AnswerRecord(
        finished_at=finished_at,
        finish_reason=finish_reason,
        interrupted=why,
        usage=said.usage if said.usage and said.usage["total_tokens"] else usage_since(messages, start),
    )
    await graph.aupdate_state(
        config_of(thread_id), {"messages": update, "turns": {user_id: record}}, as_node=closing_node(graph)
    )


async def forget_turn(graph: StateWriter, thread_id: str, assistant_id: str, finished_at: str) -> None:
    """Take back what a failed answer added after its question, so the user can simply ask again (seed 004:
    "Error: no assistant message created"); the turn is closed, so nothing tries to recover it."""
    conversation = await load(graph, thread_id)
    user_id = conversation.question_answered_by(assistant_id)
    if user_id is None:
        return
    messages = conversation.messages
    start = next(index for index, message in enumerate(messages) if message.id == user_id)
    unsaved = {message.id for message in conversation.unsaved}
    added = [
        RemoveMessage(id=message.id) for message in messages[start + 1 :] if message.id and message.id not in unsaved
    ]
    record = AnswerRecord(finished_at=finished_at, finish_reason="error", usage=usage_since(messages, start))
    await graph.aupdate_state(
        config_of(thread_id), {"messages": added, "turns": {user_id: record}}, as_node=closing_node(graph)
    )


async def roll_back(graph: StateWriter, thread_id: str, answer_id: str) -> None:
    """Double-texting's rollback: take the answer `answer_id` and the question it answers out of the
    conversation, when a stop cut that answer short; an answer that had ended in full stays. Another
    rollback of the same answer, in another process say, may remove it first: then there is nothing to do."""
    for _ in range(3):
        conversation = await load(graph, thread_id)
        question_id = conversation.question_answered_by(answer_id)
        if question_id is None or conversation.records[question_id].get("interrupted") != STOPPED:
            return
        if (span := turn_span(conversation.messages, question_id)) is None:
            return
        unsaved = {message.id for message in conversation.unsaved}
        span_messages = conversation.messages[slice(*span)]
        removed = [
            RemoveMessage(id=message.id) for message in span_messages if message.id and message.id not in unsaved
        ]
        try:
            await graph.aupdate_state(config_of(thread_id), {"messages": removed}, as_node=closing_node(graph))
            return
        except ValueError:  # "Attempting to delete a message with an ID that doesn't exist": removed meanwhile
            continue


async def decline_waiting(graph: StateWriter, thread_id: str, reason: str = CANCELLED) -> bool:
    """Decline the tool calls that wait for the person's approval or for the page to run them, or leave the agent's
    question unanswered: a stop while waiting, or (`SUPERSEDED`) a new message; False when nothing waits."""
    conversation = await load(graph, thread_id)
    question = conversation.last_question()
    if not conversation.waits or question is None:
        return False
    declined = [
        denial(call, conversation.waiting.get(call["id"] or ""), reason)
        for call in unanswered_calls(conversation.messages)
    ]
    interrupted = STOPPED if reason == CANCELLED else "superseded"
    record = AnswerRecord(finished_at=timestamp(), finish_reason="other", interrupted=interrupted)
    if conversation.questions:  # what the agent asked stays with the answer that asked it, unanswered
        record["asked"] = [{"id": asked.id, "data": asked.part_data} for asked in conversation.questions]
    update = {"messages": [*conversation.unsaved, *declined], "turns": {question.id: record}}
    await graph.aupdate_state(config_of(thread_id), update, as_node=closing_node(graph))
    return True


async def recover_turn(graph: StateWriter, thread_id: str, why: str) -> None:
    """Close the unfinished turn of an answer whose process died, so the conversation can go on."""
    await close_turn(graph, thread_id, why, "other", timestamp())


async def keep_shown(graph: StateWriter, thread_id: str, shown: list[AnyMessage]) -> None:
    """Put into the transcript the messages an answer showed that its agent's state did not keep (a supervisor's
    worker returns only its last message), where they were shown: each before the next shown message the
    transcript has, else at the end. The person's history is then what they saw."""
    messages = (await load(graph, thread_id)).messages
    known = {message.id for message in messages}
    missing = [message for message in shown if message.id not in known]
    if not missing:
        return
    before: dict[str | None, list[AnyMessage]] = {}
    waiting: list[AnyMessage] = []
    for message in shown:
        if message.id in known:
            before.setdefault(message.id, []).extend(waiting)
            waiting = []
        else:
            waiting.append(message)
    merged = [item for message in messages for item in [*before.get(message.id, []), message]] + waiting
    await graph.aupdate_state(
        config_of(thread_id),
        {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *merged]},
        as_node=closing_node(graph),
    )


async def keep_data_parts(graph: StateWriter, thread_id: str, question_id: str, parts: list[dict[str, Any]]) -> None:
    """Keep with a finished answer's record the data parts its agent sent (`get_stream_writer()`), each with the
    message it followed: the history shows them where they were shown (conversations/history.py)."""
    update = {"turns": {question_id: AnswerRecord(data_parts=parts)}}
    await graph.aupdate_state(config_of(thread_id), update, as_node=closing_node(graph))
