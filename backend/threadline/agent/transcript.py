"""What the person saw, and what a hosted agent remembers, kept apart.

The conversation's `messages` are its transcript: the person's questions and what the agent answered, which
the history, edits and versions, search and sharing read. An agent may treat its own `messages` as memory
it rewrites: SummarizationMiddleware replaces older turns with a summary, an email assistant writes a
HumanMessage of its own ("Respond to the email: …"). Those changes stay in the agent's memory, kept beside
the transcript only while it differs from it, with the id of the last transcript message it covers; they
never remove a turn from the transcript, and a message the agent writes as a human is never the person's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage


def agent_input(
    transcript: Sequence[BaseMessage], memory: Sequence[BaseMessage] | None, until: str | None
) -> list[BaseMessage]:
    """The messages the agent starts from: its memory and what the transcript has after it; the transcript
    itself when there is no memory, or when an edit or a regeneration went back before where it ends."""
    if memory is None or until is None:
        return list(transcript)
    ids = [message.id for message in transcript]
    if until not in ids:
        return list(transcript)
    return [*memory, *transcript[ids.index(until) + 1 :]]


def after_run(
    given: Sequence[BaseMessage], result: Sequence[BaseMessage], transcript: Sequence[BaseMessage]
) -> dict[str, Any]:
    """The graph update after the agent's run: the messages it added or changed, for the transcript (not those
    it wrote as a human), and its memory when that is no longer the transcript."""
    before = {message.id: message for message in given}
    shown = [
        message for message in result if not isinstance(message, HumanMessage) and before.get(message.id) != message
    ]
    known = {message.id for message in transcript}
    ids = [message.id for message in transcript] + [message.id for message in shown if message.id not in known]
    if [message.id for message in result] == ids:
        return {"messages": shown, "agent_messages": None, "agent_messages_until": None}
    return {"messages": shown, "agent_messages": list(result), "agent_messages_until": ids[-1] if ids else None}
