"""What the model sees of a long conversation (seed 003, "Context and Memory Lifecycle").

Before each model call the prompt's size is estimated; above 70 % of the profile's `context_limit`,
the older turns are replaced by a summary the model writes, and the newest turns stay verbatim. Cuts
fall only where a user message starts a turn, so a tool call and its result are never split. The
summary and the message it covers up to are kept in the conversation's state and reused by the next
turns until the prompt grows past the threshold again; a summary whose last message is gone (an answer
regenerated) or made another way is made again. The conversation's history is never changed: only
the model's view of it.

The estimate is an approximation of our own, the same for every provider (their exact counters are
network calls or absent): four characters a token, plus four tokens a message; an attached image or PDF
page costs what the providers charge for a large one (`FILE_TOKENS`), a text file its characters.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from threadline.agent.attachments import kind_of
from threadline.conversations.state import FileRef, files_of

THRESHOLD = 0.7  # of the context limit: above it, older turns are summarized
KEEP = 0.35  # of the limit: what the newest turns may take, verbatim, after a summary
SUMMARY_SHARE = 0.2  # of the limit: the longest a summary may be
STRATEGY = "summary-v1"
SUMMARIZE = (
    "Summarize the conversation below for the assistant who will continue it: the user's goals, the facts "
    "and decisions established, tool results that matter, and open questions. Be brief and concrete."
)


# An image as the providers count a large one (about 1,600 tokens); a PDF, by its size, as pages of both.
IMAGE_TOKENS = 1_600
PDF_BYTES_PER_PAGE = 50_000


def file_tokens(file: FileRef) -> int:
    kind = kind_of(file["media_type"])
    if kind == "image":
        return IMAGE_TOKENS
    if kind == "pdf":
        return max(1, file["size"] // PDF_BYTES_PER_PAGE) * (IMAGE_TOKENS + 500)
    return file["size"] // 4


class ContextState(TypedDict):
    summary: str
    through: str  # the id of the last message the summary covers
    strategy: str


def tokens(messages: Sequence[BaseMessage]) -> int:
    """The estimate: four characters a token, four tokens a message (tool calls count by their arguments).
    Every model call counts its whole prompt (hundreds of messages in a long conversation), so a message whose
    content is a string is measured as it is, without the `.text` LangChain would build from it."""
    total = 0
    for message in messages:
        content = message.content
        total += 4 + (len(content) if type(content) is str else len(message.text)) // 4
        if files := files_of(message):
            total += sum(map(file_tokens, files))
        if isinstance(message, AIMessage) and message.tool_calls:
            total += sum(len(str(call["args"])) // 4 + 4 for call in message.tool_calls)
    return total


def _transcript(messages: Sequence[AnyMessage]) -> str:
    lines = []
    for message in messages:
        if isinstance(message, HumanMessage):
            attached = ", ".join(file["filename"] for file in files_of(message))
            lines.append(f"User: {message.text}" + (f" [attached {attached}]" if attached else ""))
        elif isinstance(message, ToolMessage):
            lines.append(f"Tool {message.name} returned: {message.text[:500]}")
        elif isinstance(message, AIMessage):
            calls = ", ".join(f"{call['name']}({call['args']})" for call in message.tool_calls)
            lines.append(f"Assistant: {message.text}" + (f" [called {calls}]" if calls else ""))
    return "\n".join(lines)


def _with_summary(system: SystemMessage, summary: str) -> SystemMessage:
    # One system message: some providers (Anthropic) take no second one.
    return SystemMessage(content=f"{system.text}\n\nSummary of the earlier conversation:\n{summary}")


def _after(messages: Sequence[AnyMessage], message_id: str) -> int | None:
    """The index just after the message with this id, None when it is no longer there."""
    return next((index + 1 for index, message in enumerate(messages) if message.id == message_id), None)


class Compressor:
    """One per profile with a context limit: builds each model call's prompt from the conversation."""

    def __init__(self, model: BaseChatModel, limit: int) -> None:
        self.model = model
        self.limit = limit

    async def prompt(
        self,
        system: SystemMessage,
        messages: Sequence[AnyMessage],
        state: ContextState | None,
        on_summarize: Callable[[], Awaitable[None] | None] = lambda: None,
    ) -> tuple[list[BaseMessage], ContextState | None]:
        """The messages to send, and the context state to keep (the same one when nothing changed)."""
        start, head = 0, system
        if state and state["strategy"] == STRATEGY and (covered := _after(messages, state["through"])) is not None:
            start, head = covered, _with_summary(system, state["summary"])
        else:
            state = None
        prompt: list[BaseMessage] = [head, *messages[start:]]
        if tokens(prompt) <= THRESHOLD * self.limit:
            return prompt, state
        cut = self._cut(messages, start)
        if cut <= start:
            return prompt, state  # only the newest turn is left: nothing older to summarize
        if (waiting := on_summarize()) is not None:
            await waiting
        summary = await self._summarize(state["summary"] if state else None, messages[start:cut])
        state = ContextState(summary=summary, through=messages[cut - 1].id or "", strategy=STRATEGY)
        return [_with_summary(system, summary), *messages[cut:]], state

    def _cut(self, messages: Sequence[AnyMessage], start: int) -> int:
        """Where the verbatim tail begins: the oldest turn start whose tail fits in KEEP, but never after the
        newest turn's start (the question being answered stays whole)."""
        turn_starts = [index for index in range(start, len(messages)) if isinstance(messages[index], HumanMessage)]
        if not turn_starts:
            return start
        cut = turn_starts[-1]
        tail = tokens(messages[cut:])  # the estimate adds up message by message: each turn is counted once
        for index, end in zip(reversed(turn_starts[:-1]), reversed(turn_starts[1:]), strict=True):
            tail += tokens(messages[index:end])
            if tail > KEEP * self.limit:
                break
            cut = index
        return cut

    async def _summarize(self, earlier: str | None, messages: Sequence[AnyMessage]) -> str:
        transcript = _transcript(messages)
        if earlier:
            transcript = f"(Summary so far: {earlier})\n{transcript}"
        budget = int(SUMMARY_SHARE * self.limit) * 4  # characters
        transcript = transcript[-(int(THRESHOLD * self.limit) * 4 - len(SUMMARIZE)) :]  # the request fits too
        request = [SystemMessage(content=SUMMARIZE), HumanMessage(content=transcript)]
        # "nostream": LangGraph keeps this call's tokens out of the answer it streams.
        reply = await self.model.ainvoke(request, config={"tags": ["nostream"]})
        summary = reply.text.strip()
        return summary if len(summary) <= budget else summary[: budget - 1].rstrip() + "…"
