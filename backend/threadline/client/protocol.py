"""What the clients send and how they read what comes back, shared by the sync and the async client."""

from __future__ import annotations

import base64
import json
import mimetypes
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import httpx
from httpx_sse import EventSource

from threadline.client.answer import Answer
from threadline.client.chunks import Chunk, parse_chunk

IDENTITY_HEADER = "x-threadline-client"
Wire = Literal["ndjson", "sse"]
Contract = Literal["seed-004", "seed-002", "seed-001"]
CONTRACT_PATHS = {
    "seed-004": "/api/chat/stream",
    "seed-002": "/api/get_chat_response_stream",
    "seed-001": "/api/general_chat/stream",
}
ACCEPT = {"ndjson": "application/x-ndjson", "sse": "text/event-stream"}
DONE = "[DONE]"  # the UI Message Stream's last SSE event


class ThreadlineError(Exception):
    """A refused request (`status`, `code`, `retry_after` from the server) or an answer that ended in error."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        retry_after: int | None = None,
        answer: Answer | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.retry_after, self.answer = status, code, retry_after, answer


def error_from(response: httpx.Response, body: bytes) -> ThreadlineError:
    try:
        info = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        info = {}
    return ThreadlineError(
        info.get("message") or f"HTTP {response.status_code}",
        status=response.status_code,
        code=info.get("code"),
        retry_after=info.get("retryAfter"),
    )


def json_of(response: httpx.Response) -> Any:
    """The body of a JSON answer (None for none, as a 204 has); a refusal raises ThreadlineError."""
    if not response.is_success:
        raise error_from(response, response.content)
    return response.json() if response.content else None


def whole(chunks: Iterator[Chunk], answer: Answer | None = None) -> Answer:
    """The answer the chunks make, or `answer` continued with them (after approvals, as useChat does)."""
    answer = answer or Answer()
    for chunk in chunks:
        answer.apply(chunk)
    if answer.error is not None:
        raise ThreadlineError(answer.error, answer=answer)
    return answer


def stopped(response: httpx.Response) -> bool:
    """A stop request's answer: True when an answer was stopped, False when none was running."""
    if response.status_code == 409:
        return False
    if response.status_code != 200:
        raise error_from(response, response.content)
    return True


def remember_identity(http: httpx.Client | httpx.AsyncClient, response: httpx.Response) -> None:
    if issued := response.headers.get(IDENTITY_HEADER):
        http.headers[IDENTITY_HEADER] = issued


def chunks_of(response: httpx.Response, wire: Wire) -> Iterator[Chunk]:
    """The chunks of a streamed answer on either wire, until SSE's `[DONE]`."""
    if wire == "ndjson":
        yield from (parse_chunk(line) for line in response.iter_lines() if line)
        return
    for event in EventSource(response).iter_sse():
        if event.data == DONE:
            return
        if event.data:
            yield parse_chunk(event.data)


async def achunks_of(response: httpx.Response, wire: Wire) -> AsyncIterator[Chunk]:
    if wire == "ndjson":
        async for line in response.aiter_lines():
            if line:
                yield parse_chunk(line)
        return
    async for event in EventSource(response).aiter_sse():
        if event.data == DONE:
            return
        if event.data:
            yield parse_chunk(event.data)


def events_of(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """The seed contracts' SSE events as dicts (their streams have no terminator)."""
    for event in EventSource(response).iter_sse():
        if event.data:
            yield json.loads(event.data)


async def aevents_of(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    async for event in EventSource(response).aiter_sse():
        if event.data:
            yield json.loads(event.data)


def is_json(response: httpx.Response) -> bool:
    content_type: str = response.headers.get("content-type", "")
    return content_type.startswith("application/json")


def contract_request(contract: Contract, message: str, conversation_id: str | None) -> tuple[str, dict[str, Any]]:
    """The path and body of a seed contract's chat request."""
    key = "conversationId" if contract == "seed-004" else "conversation_id"
    body: dict[str, Any] = {"message": message} | ({key: conversation_id} if conversation_id else {})
    return CONTRACT_PATHS[contract], body


def chat_request(
    text: str,
    conversation_id: str | None,
    stream_mode: str | None = None,
    profiles: tuple[str, str] | None = None,
    files: Sequence[Attachment] = (),
    agent: str | AgentOptions | None = None,
    profile: str | None = None,
) -> dict[str, Any]:
    parts = [{"type": "text", "text": text}, *(file_part(path) for path in files)]
    body: dict[str, Any] = {"messages": [{"role": "user", "parts": parts}]}
    if conversation_id:
        body["id"] = conversation_id
    if stream_mode:
        body["streamMode"] = stream_mode
    if profiles:
        body["compareProfiles"] = list(profiles)
    if profile:
        body["profileId"] = profile
    if isinstance(agent, str):
        agent = AgentOptions(agent)
    return body | (agent.body() if agent else {})


@dataclass(frozen=True)
class AgentOptions:
    """What a message tells a team's own agent: which one (`GET /api/agents`; a new conversation's choice,
    kept by its later messages), values for its own input keys, and for its runtime context's keys that
    THREADLINE_REQUEST_CONTEXT lets a request set."""

    agent: str | None = None
    input: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    # Tools this program runs itself (browser tools): `{"name", "description", "parameters"}` each, `parameters`
    # a JSON Schema. The answer ends on a call of one (`Answer.open_calls`); `send_outputs` lets it go on.
    tools: list[dict[str, Any]] | None = None

    def body(self) -> dict[str, Any]:
        return {key: value for key, value in vars(self).items() if value is not None}


CONVERSATIONS_PATH = "/api/conversations"


def next_page(response: httpx.Response) -> str | None:
    """The URL of the list's next page, from the response's `Link: <…>; rel="next"` header."""
    following = response.links.get("next")
    return following["url"] if following else None


def edit_request(
    conversation_id: str, message_id: str, text: str, stream_mode: str | None, files: Sequence[Attachment]
) -> dict[str, Any]:
    """An edit as useChat's `sendMessage({ text, messageId })` sends it: the message again, with its id."""
    body = chat_request(text, conversation_id, stream_mode, files=files)
    body["messages"][0]["id"] = body["messageId"] = message_id
    return body


def regenerate_request(conversation_id: str, answer_id: str | None, stream_mode: str | None) -> dict[str, Any]:
    """useChat's `regenerate({ messageId })`: the answer by that id (else the last) written again."""
    body = chat_request("", conversation_id, stream_mode) | {"trigger": "regenerate-message"}
    return body | ({"messageId": answer_id} if answer_id else {})


@dataclass(frozen=True)
class Uploaded:
    """A file uploaded once (`upload`), to attach to any number of messages by its `url`."""

    id: str
    url: str
    media_type: str
    filename: str | None = None

    @classmethod
    def of(cls, stored: dict[str, Any]) -> Uploaded:
        return cls(stored["id"], stored["url"], stored["mediaType"], stored.get("filename"))


@dataclass(frozen=True)
class ConversationSummary:
    """One of your conversations, as a list shows it."""

    id: str
    title: str
    created_at: datetime
    last_message_at: datetime
    profile_id: str | None = None  # the model profile of its latest answer
    agent_id: str | None = None  # the agent it goes on with (`agents()`)

    @classmethod
    def of(cls, row: dict[str, Any]) -> ConversationSummary:
        return cls(
            row["id"],
            row["title"],
            datetime.fromisoformat(row["createdAt"]),
            datetime.fromisoformat(row["lastMessageAt"]),
            row.get("profileId"),
            row.get("agentId"),
        )


Attachment = str | Path | Uploaded  # a file to read and send, or one uploaded before
Rating = Literal["up", "down"]


def upload_request(path: Path) -> tuple[str, Any]:
    """POST /api/files with the file's bytes as the body, its type as their type: (url, keyword arguments)."""
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"/api/files?filename={quote(path.name)}", {
        "content": path.read_bytes(),
        "headers": {"content-type": media_type},
    }


def feedback_path(answer: Any) -> str:
    """Where an answer's rating is kept: by its message id (`answer.id`, or the id itself)."""
    return f"/api/messages/{answer if isinstance(answer, str) else answer.id}/feedback"


def file_part(path: Attachment) -> dict[str, str | None]:
    """A file as `useChat` attaches it: a `file` part with a data URL (the server judges the type by the bytes),
    or the URL of a file uploaded before."""
    if isinstance(path, Uploaded):
        return {"type": "file", "mediaType": path.media_type, "filename": path.filename, "url": path.url}
    path = Path(path)
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    data = base64.b64encode(path.read_bytes()).decode()
    return {"type": "file", "mediaType": media_type, "filename": path.name, "url": f"data:{media_type};base64,{data}"}


def approval_request(
    answer: Answer, approved: bool, reason: str | None, edits: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The chat request `useChat` sends after addToolApprovalResponse: the answer, its waiting calls answered;
    `edits` (by tool call id) approve a call with a changed input, threadline's extension."""
    response = {"approved": approved} | ({"reason": reason} if reason else {})
    edits = edits or {}
    parts = [
        {
            "type": f"tool-{call.tool_name}",
            "toolCallId": call.tool_call_id,
            "state": "approval-responded",
            "approval": {"id": call.approval_id}
            | response
            | ({"editedInput": edits[call.tool_call_id]} if call.tool_call_id in edits else {}),
        }
        for call in answer.tool_calls
        if call.state == "approval-requested"
    ]
    if not parts:
        raise ValueError("no tool call of this answer waits for approval")
    return {"id": answer.conversation_id, "messages": [{"id": answer.id, "role": "assistant", "parts": parts}]}


def outputs_request(answer: Answer, outputs: dict[str, Any], agent: AgentOptions | None) -> dict[str, Any]:
    """The chat request `useChat` sends after addToolOutput: the answer, with the outputs (by tool call id) of the
    calls of the program's own tools it ended on, and the tools again."""
    parts = [
        {"type": f"tool-{call.tool_name}", "toolCallId": call.tool_call_id, "state": "output-available"}
        | {"output": outputs[call.tool_call_id]}
        for call in answer.open_calls
        if call.tool_call_id in outputs
    ]
    if not parts:
        raise ValueError("no call of this answer waits for an output of yours")
    body = {"id": answer.conversation_id, "messages": [{"id": answer.id, "role": "assistant", "parts": parts}]}
    return body | (agent.body() if agent else {})


def reply_request(answer: Answer, value: Any) -> dict[str, Any]:
    """The request that answers the agent's question at the end of `answer`; the answer goes on."""
    question = answer.question
    if question is None:
        raise ValueError("this answer does not end with a question of the agent")
    resume = {"interruptId": question["id"], "value": value}
    return {
        "id": answer.conversation_id,
        "messages": [{"id": answer.id, "role": "assistant", "parts": []}],
        "resume": resume,
    }


def action_request(answer: Answer, action: str, data: dict[str, Any] | None) -> dict[str, Any]:
    body = {"conversationId": answer.conversation_id, "messageId": answer.id, "action": action}
    return body | ({"data": data} if data is not None else {})
