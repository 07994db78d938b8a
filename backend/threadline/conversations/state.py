"""A conversation as the checkpointer holds it: its thread, its messages, and a record of each answer.

Whatever reads a conversation (the routes, an answer being stopped, the MCP tools, the `UIMessage`
view) goes through here, so the thread's name, the state's shape and the keys of the stored record
live in one place. Records are stored with our own keys; those written before with the wire's
camelCase keys still load (`record_of`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolCall,
    ToolMessage,
    messages_from_dict,
)
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

from threadline import events as ev
from threadline import mount_path
from threadline.conversations.approvals import Question, Waiting, is_denied, is_not_run, waiting_of
from threadline.conversations.browser_calls import BrowserCall, browser_output
from threadline.storage.encoded_once import KeptRecord

if TYPE_CHECKING:
    from threadline.conversations.versions import Fork

FILES = "files"  # where a user message keeps its attachments: its additional_kwargs


class FileRef(TypedDict):
    """An attached file as a conversation keeps it: a reference to the file store, never the bytes."""

    id: str
    sha256: str
    media_type: str
    filename: str
    size: int


def files_of(message: BaseMessage) -> list[FileRef]:
    files: list[FileRef] = message.additional_kwargs.get(FILES) or []
    return files


def question(text: str, message_id: str, files: Sequence[FileRef]) -> HumanMessage:
    """The user's message as the conversation keeps it: its text, and its files by reference."""
    return HumanMessage(id=message_id, content=text, additional_kwargs={FILES: list(files)} if files else {})


class Usage(TypedDict):
    input_tokens: int
    output_tokens: int
    total_tokens: int


class AnswerRecord(TypedDict, total=False):
    """What is kept of one answer besides its messages, under the id of the user message it answers."""

    assistant_id: str
    model: str
    created_at: str
    user_created_at: str
    finished_at: str
    finish_reason: str
    interrupted: str
    usage: Usage
    trace_id: str
    profile: str
    comparison_id: str
    suggestions: dict[str, Any]  # the answer's suggested replies and actions (events.Suggestions)
    structured_response: Any  # a `response_format` agent's typed answer (agent/hosting.py), as JSON
    asked: list[dict[str, Any]]  # the agent's questions left unanswered by a stop or a new message: {id, data}
    # ... and those the person answered: {id, data (with the `reply`), after (the id of the message they followed)}
    replied: list[dict[str, Any]]
    data_parts: list[dict[str, Any]]  # the agent's data parts the message kept: {part, after (as `replied`)}


_EARLIER_KEYS = {
    "assistantId": "assistant_id",
    "createdAt": "created_at",
    "userCreatedAt": "user_created_at",
    "finishedAt": "finished_at",
    "finishReason": "finish_reason",
}
_EARLIER_USAGE = {"inputTokens": "input_tokens", "outputTokens": "output_tokens", "totalTokens": "total_tokens"}


def record_of(stored: dict[str, Any]) -> AnswerRecord:
    """A stored record with our keys, whichever keys it was written with."""
    record: dict[str, Any] = {_EARLIER_KEYS.get(key, key): value for key, value in stored.items()}
    if isinstance(usage := record.get("usage"), dict):
        record["usage"] = {_EARLIER_USAGE.get(key, key): value for key, value in usage.items()}
    return record  # type: ignore[return-value]


def merge_records(left: dict[str, AnswerRecord], right: dict[str, AnswerRecord | None]) -> dict[str, AnswerRecord]:
    """The state's reducer for records: later updates add fields to an answer's record, a new answer to
    the same question (a regenerated one) starts a record of its own, and None takes a record out (its
    answer was set aside as a version: conversations/versions.py). Each record is a `KeptRecord`, replaced,
    never edited, so a checkpoint write reuses the bytes of those that did not change (storage/encoded_once.py)."""
    merged: dict[str, Any] = {
        key: record if type(record) is KeptRecord else KeptRecord(record) for key, record in (left or {}).items()
    }
    for key, update in (right or {}).items():
        if update is None:
            merged.pop(key, None)
            continue
        record = record_of(dict(merged.get(key, {})))
        if update.get("assistant_id", record.get("assistant_id")) != record.get("assistant_id"):
            record = AnswerRecord(user_created_at=record["user_created_at"]) if "user_created_at" in record else {}
        merged[key] = KeptRecord(record | update)
    return merged


def after_history(history: dict[str, Any], meanwhile: dict[str, Any]) -> dict[str, Any]:
    """A conversation's state when it went on without its history (the database was away, and this process had
    no copy of it): what was said meanwhile comes after what the history holds, by the state's own reducers."""
    merged = history | {channel: value for channel, value in meanwhile.items() if value is not None}
    merged["messages"] = add_messages(history.get("messages", []), meanwhile.get("messages", []))
    merged["turns"] = merge_records(history.get("turns", {}), meanwhile.get("turns", {}))
    merged["versions"] = (history.get("versions") or {}) | (meanwhile.get("versions") or {})
    return merged


def holds_answer(values: Mapping[str, Any], assistant_id: str) -> bool:
    """Whether a conversation's state has the record of the answer `assistant_id`, which its input step writes with
    the question."""
    records = values.get("turns", {}).values()
    return any(record and record.get("assistant_id") == assistant_id for record in reversed(records))


def config_of(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def last_user_index(messages: Sequence[AnyMessage]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return index
    return None


def unanswered_calls(messages: Sequence[AnyMessage]) -> list[ToolCall]:
    """The last model message's tool calls that have no result: calls waiting for approval."""
    index = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)), None)
    if index is None:
        return []
    answered = {message.tool_call_id for message in messages[index + 1 :] if isinstance(message, ToolMessage)}
    calls: list[ToolCall] = messages[index].tool_calls  # type: ignore[union-attr]
    return [call for call in calls if call["id"] not in answered]


def usage_since(messages: Sequence[AnyMessage], start: int) -> Usage:
    """Tokens the model calls after `start` used, as the providers reported them."""
    usage = Usage(input_tokens=0, output_tokens=0, total_tokens=0)
    for message in messages[start:]:
        if isinstance(message, AIMessage) and message.usage_metadata:
            usage["input_tokens"] += message.usage_metadata.get("input_tokens", 0)
            usage["output_tokens"] += message.usage_metadata.get("output_tokens", 0)
            usage["total_tokens"] += message.usage_metadata.get("total_tokens", 0)
    return usage


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


def text_and_reasoning(message: AIMessage) -> tuple[str, str]:
    """(text, reasoning) of a model's message. OpenAI-compatible servers (vLLM, DeepSeek, OpenRouter) send
    reasoning beside the content, where langchain-deepseek keeps it: `additional_kwargs["reasoning_content"]`."""
    text, reasoning = split_content(message.content)
    beside = message.additional_kwargs.get("reasoning_content")
    return text, reasoning + beside if isinstance(beside, str) else reasoning


# Seed 003: `␄` ends a provider's stream on some models, and control characters (other than newline and tab)
# have no business in a chat; both are dropped from every text and reasoning delta and from what is stored.
# Looked for before anything is taken out: most tokens have none, and a search is a quarter of a translation.
_UNWANTED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2404]")


def clean_text(text: str) -> str:
    return _UNWANTED.sub("", text) if text and _UNWANTED.search(text) else text


def clean_message(message: AIMessage) -> AIMessage:
    """The model's finished message as it is stored: cleaned, its text trimmed at the edges."""
    content = message.content
    if isinstance(content, str):
        cleaned: str | list[Any] = clean_text(content).strip()
    else:
        cleaned = []
        for block in content:
            if isinstance(block, str):
                cleaned.append(clean_text(block).strip())
            elif block.get("type") == "text":
                cleaned.append(block | {"text": clean_text(block.get("text", "")).strip()})
            elif (
                block.get("type") in ("thinking", "reasoning")
                and isinstance(block.get(block["type"]), str)
                and "signature" not in block  # a signed block goes back to its provider exactly as it came
            ):
                cleaned.append(block | {block["type"]: clean_text(block[block["type"]]).strip()})
            else:
                cleaned.append(block)
    extra = message.additional_kwargs
    if isinstance(extra.get("reasoning_content"), str):
        extra = extra | {"reasoning_content": clean_text(extra["reasoning_content"]).strip()}
    if cleaned == content and extra == message.additional_kwargs:
        return message
    return message.model_copy(update={"content": cleaned, "additional_kwargs": extra})


def tool_output(message: ToolMessage) -> ev.ToolOutput | ev.ToolOutputError:
    """The event for a finished tool call: the live stream and a reloaded history show the same."""
    content = message.content if isinstance(message.content, str) else split_content(message.content)[0]
    if is_denied(message):
        return ev.ToolOutputDenied(tool_call_id=message.tool_call_id, error_text=content)
    if message.status == "error":
        return ev.ToolOutputError(tool_call_id=message.tool_call_id, error_text=content)
    browser, output = browser_output(message)
    return ev.ToolOutput(tool_call_id=message.tool_call_id, output=output if browser else content)


def tool_results(message: ToolMessage) -> list[ev.Event]:
    """A finished tool call's events: its output, then the files and sources it produced (kept in the
    message's `artifact` by reference: `{"files": [FileRef], "sources": [{"url", "title"}]}`). A call its agent
    ended on without running has none: it stays as it was shown, asked."""
    if is_not_run(message):
        return []
    artifact = message.artifact if isinstance(message.artifact, dict) else {}
    files: list[FileRef] = artifact.get("files") or []
    sources: list[dict[str, str]] = artifact.get("sources") or []
    return [
        tool_output(message),
        *(ev.File(url=mount_path.url(f"/api/files/{file['id']}"), media_type=file["media_type"]) for file in files),
        *(
            ev.SourceUrl(source_id=f"{message.tool_call_id}-{n}", url=source["url"], title=source.get("title"))
            for n, source in enumerate(sources)
        ),
    ]


@dataclass(frozen=True)
class Conversation:
    """A conversation's messages and its answers' records, as of its latest checkpoint."""

    thread_id: str
    messages: list[AnyMessage]
    records: dict[str, AnswerRecord]  # by the id of the user message each answers
    approvals: list[Waiting] = field(default_factory=list)  # tool calls that wait for the person's approval
    unsaved: list[AnyMessage] = field(default_factory=list)  # the end of `messages` a hosted agent has not returned
    questions: list[Question] = field(default_factory=list)  # what the agent asked the person, unanswered
    forks: dict[str, Fork] = field(default_factory=dict)  # versions not shown, along the branch shown
    browser_calls: list[BrowserCall] = field(default_factory=list)  # calls waiting for the page to run them

    @property
    def waits(self) -> bool:
        """Whether its answer waits: for the person (an approval, an answer) or for the page (a browser tool)."""
        return bool(self.approvals or self.questions or self.browser_calls)

    def removal_of(self, messages: Sequence[AnyMessage]) -> list[RemoveMessage]:
        """What removes `messages` from the checkpoint, which holds none of the unsaved ones yet."""
        unsaved = {message.id for message in self.unsaved}
        return [RemoveMessage(id=message.id) for message in messages if message.id and message.id not in unsaved]

    @property
    def waiting(self) -> dict[str, str]:
        """The approval ids of the calls that wait, by tool call id."""
        return {item.tool_call_id: item.approval_id for item in self.approvals}

    def last_question(self) -> HumanMessage | None:
        """The newest user message: what a regenerated answer answers again."""
        index = last_user_index(self.messages)
        return None if index is None else self.messages[index]  # type: ignore[return-value]

    def question_answered_by(self, assistant_id: str) -> str | None:
        """The id of the user message an answer (by its assistant message id) belongs to."""
        return next((key for key, record in self.records.items() if record.get("assistant_id") == assistant_id), None)

    def unfinished_question(self) -> str | None:
        """The id of the newest user message when its answer never finished (its process died)."""
        question = self.last_question()
        if question is None or "finished_at" in self.records.get(question.id or "", {}):
            return None
        return question.id


class StateReader(Protocol):
    checkpointer: Any

    async def aget_state(self, config: RunnableConfig) -> Any: ...


class StateWriter(StateReader, Protocol):
    @property
    def nodes(self) -> Mapping[str, Any]: ...

    async def aupdate_state(self, config: RunnableConfig, values: Any, as_node: str | None = None) -> Any: ...


TURN = "turn"  # the built-in agent's bookkeeping middleware (agent/graph.py): its nodes are `turn.before_agent`, ...
TURN_ENDS = ("respond", f"{TURN}.after_agent")  # the node that closes a turn: around a team's agent, in the built-in


def closing_node(graph: StateWriter) -> str:
    """The node a stop, a rollback or a recovery writes as: the one that closes a turn, so nothing runs after it."""
    return next(name for name in TURN_ENDS if name in graph.nodes)


async def load(graph: StateReader, thread_id: str) -> Conversation:
    """The conversation's latest state; empty when it has none yet."""
    snapshot = await graph.aget_state(config_of(thread_id))
    values = snapshot.values or {}
    records = {key: record_of(record) for key, record in values.get("turns", {}).items()}
    messages = list(values.get("messages", []))
    unsaved = await _unsaved(graph, thread_id, snapshot.tasks, messages)
    messages += unsaved
    paused = waiting_of(snapshot.interrupts, unanswered_calls(messages))
    forks = values.get("versions") or {}
    return Conversation(
        thread_id, messages, records, paused.approvals, unsaved, paused.questions, forks, paused.browser_calls
    )


async def _unsaved(graph: StateReader, thread_id: str, tasks: Sequence[Any], saved: list[AnyMessage]) -> list[Any]:
    """What a hosted agent (agent/hosting.py) added in a run that has not returned (it waits for the person, or
    was stopped): its subgraph's own checkpoints hold it until then, its declared subgraphs' (a worker that
    asked) below them. A message the agent wrote as a human is never the person's (agent/transcript.py)."""
    task = next((task for task in tasks if task.name == "agent"), None)
    if task is None or not isinstance(graph.checkpointer, BaseCheckpointSaver):
        return []
    namespace = f"{task.name}:{task.id}"  # how LangGraph names a task's subgraph checkpoints
    latest: dict[str, Any] = {}  # the newest checkpoint of the agent's run and of each subgraph below it
    async for found in graph.checkpointer.alist({"configurable": {"thread_id": thread_id}}):
        where = found.config["configurable"].get("checkpoint_ns", "")
        if (where == namespace or where.startswith(namespace + "|")) and where not in latest:
            latest[where] = found
    known = {message.id for message in saved}
    unsaved: list[Any] = []
    for where in sorted(latest, key=len):  # the agent's own messages first, then its subgraphs'
        kept = latest[where].checkpoint["channel_values"].get("messages", [])  # a DeltaChannel keeps a marker
        for message in kept if isinstance(kept, list) else []:
            if message.id not in known and not isinstance(message, HumanMessage):
                known.add(message.id)
                unsaved.append(message)
    return unsaved


async def copy_conversation(graph: StateWriter, source: str, target: str) -> None:
    """Make `target` hold what `source` holds now: its messages, answer records and context summary. A fork
    of the conversation for an A/B answer, and how the voted answer becomes the conversation's own."""
    values = (await graph.aget_state(config_of(source))).values or {}
    update = {
        "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *values.get("messages", [])],
        "turns": values.get("turns", {}),
        "context": values.get("context"),
        "versions": values.get("versions") or {},
    }
    await graph.aupdate_state(config_of(target), update, as_node=closing_node(graph))


def turn_span(messages: Sequence[AnyMessage], question_id: str | None) -> tuple[int, int] | None:
    """Where a turn lies: the index of its question and that of the next question (or the end); None when
    the question is not there."""
    start = next((index for index, message in enumerate(messages) if message.id == question_id), None)
    if question_id is None or start is None:
        return None
    end = next((i for i in range(start + 1, len(messages)) if isinstance(messages[i], HumanMessage)), len(messages))
    return start, end


def answer_messages(conversation: Conversation, assistant_id: str) -> tuple[str, list[AnyMessage]] | None:
    """The id of the question an answer answers, and the answer's messages (model calls and tool results, up
    to the next question); None when it is not there."""
    question = conversation.question_answered_by(assistant_id)
    if question is None or (span := turn_span(conversation.messages, question)) is None:
        return None
    return question, conversation.messages[span[0] + 1 : span[1]]


def answer_text(conversation: Conversation, assistant_id: str) -> tuple[str, str] | None:
    """(text, finish reason) of an answer, from its question to the next one; None when it is not there."""
    if (found := answer_messages(conversation, assistant_id)) is None:
        return None
    question, answer = found
    text = [split_content(message.content)[0] for message in answer if isinstance(message, AIMessage)]
    return "\n\n".join(part for part in text if part), conversation.records[question].get("finish_reason", "stop")


async def replace_answer(
    graph: StateWriter, conversation: Conversation, question_id: str, kept: dict[str, Any]
) -> None:
    """Make `kept` (an answer's messages and record, as `comparisons.kept_answer` keeps them) the answer to
    the question: the answer there now is taken out. How a vote makes its answer the conversation's."""
    start, end = turn_span(conversation.messages, question_id) or (0, 0)
    removed = [RemoveMessage(id=message.id) for message in conversation.messages[start + 1 : end] if message.id]
    update = {"messages": [*removed, *messages_from_dict(kept["messages"])], "turns": {question_id: kept["record"]}}
    await graph.aupdate_state(config_of(conversation.thread_id), update, as_node=closing_node(graph))
