"""A Python client for threadline: answers as typed chunks, sync or async, over NDJSON or SSE.

    from threadline.client import Client, TextDelta

    with Client("http://127.0.0.1:8000") as client:
        for chunk in client.stream("calculate 6*7"):
            if isinstance(chunk, TextDelta):
                print(chunk.delta, end="", flush=True)
        answer = client.ask("and times 2?")          # the whole answer, reassembled
        print(answer.text, answer.tool_calls)

The chunks are the UI Message Stream's, the same objects `useChat` reads, and `Answer` puts them
together the way `useChat` does. `stream_contract("seed-004" | "seed-002", …)` speaks the seed
documents' own wires instead (their events as dicts), with seed 002's `load_conversation` and
`list_conversations` beside it. Leaving a `stream()` loop early closes the connection, which stops
the answer on the server (what was shown is saved); `cancel()` stops one from anywhere.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import msgspec

IDENTITY_HEADER = "x-threadline-client"
Wire = Literal["ndjson", "sse"]
Contract = Literal["seed-004", "seed-002", "seed-001"]
CONTRACT_PATHS = {
    "seed-004": "/api/chat/stream",
    "seed-002": "/api/get_chat_response_stream",
    "seed-001": "/api/general_chat/stream",
}
_ACCEPT = {"ndjson": "application/x-ndjson", "sse": "text/event-stream"}


class Chunk(msgspec.Struct, tag_field="type", rename="camel", frozen=True):
    """One UI Message Stream chunk; `type` on the wire is the subclass's tag."""


class Start(Chunk, tag="start", frozen=True):
    message_id: str | None = None
    message_metadata: dict[str, Any] = {}


class StartStep(Chunk, tag="start-step", frozen=True):
    pass


class FinishStep(Chunk, tag="finish-step", frozen=True):
    pass


class TextStart(Chunk, tag="text-start", frozen=True):
    id: str


class TextDelta(Chunk, tag="text-delta", frozen=True):
    id: str
    delta: str


class TextEnd(Chunk, tag="text-end", frozen=True):
    id: str


class ReasoningStart(Chunk, tag="reasoning-start", frozen=True):
    id: str


class ReasoningDelta(Chunk, tag="reasoning-delta", frozen=True):
    id: str
    delta: str


class ReasoningEnd(Chunk, tag="reasoning-end", frozen=True):
    id: str


class ToolInputStart(Chunk, tag="tool-input-start", frozen=True):
    tool_call_id: str
    tool_name: str


class ToolInputDelta(Chunk, tag="tool-input-delta", frozen=True):
    tool_call_id: str
    input_text_delta: str


class ToolInputAvailable(Chunk, tag="tool-input-available", frozen=True):
    tool_call_id: str
    tool_name: str
    input: Any = None


class ToolOutputAvailable(Chunk, tag="tool-output-available", frozen=True):
    tool_call_id: str
    output: Any = None


class ToolOutputError(Chunk, tag="tool-output-error", frozen=True):
    tool_call_id: str
    error_text: str


class ToolInputError(Chunk, tag="tool-input-error", frozen=True):
    tool_call_id: str
    tool_name: str
    input: Any = None
    error_text: str = ""


class MessageMetadata(Chunk, tag="message-metadata", frozen=True):
    message_metadata: dict[str, Any] = {}


class ToolOutputDenied(Chunk, tag="tool-output-denied", frozen=True):
    tool_call_id: str


class ToolApprovalRequest(Chunk, tag="tool-approval-request", frozen=True):
    approval_id: str
    tool_call_id: str


class Finish(Chunk, tag="finish", frozen=True):
    finish_reason: str | None = None
    message_metadata: dict[str, Any] = {}


class Error(Chunk, tag="error", frozen=True):
    error_text: str


class Data(Chunk, tag="data", frozen=True):
    """A `data-<name>` chunk: threadline's status, warning and tool progress."""

    name: str
    data: Any = None
    transient: bool = False


KnownChunk = (
    Start
    | StartStep
    | FinishStep
    | TextStart
    | TextDelta
    | TextEnd
    | ReasoningStart
    | ReasoningDelta
    | ReasoningEnd
    | ToolInputStart
    | ToolInputDelta
    | ToolInputAvailable
    | ToolOutputAvailable
    | ToolOutputError
    | ToolOutputDenied
    | ToolApprovalRequest
    | ToolInputError
    | MessageMetadata
    | Finish
    | Error
)
_decode_known = msgspec.json.Decoder(KnownChunk).decode
_decode_any = msgspec.json.Decoder().decode


def parse_chunk(raw: bytes | str) -> Chunk:
    """One chunk from its JSON; `data-*` chunks become `Data`."""
    raw = raw.encode() if isinstance(raw, str) else raw
    if raw.startswith(b'{"type":"data-'):
        value = _decode_any(raw)
        return Data(
            name=value["type"].removeprefix("data-"), data=value.get("data"), transient=bool(value.get("transient"))
        )
    chunk: Chunk = _decode_known(raw)
    return chunk


@dataclass
class ToolCall:
    tool_call_id: str
    tool_name: str
    state: Literal[
        "input-streaming", "input-available", "approval-requested", "output-available", "output-error", "output-denied"
    ] = "input-streaming"
    input_text: str = ""
    input: Any = None
    output: Any = None
    error_text: str | None = None
    approval_id: str | None = None  # set while the call waits for the person's approval


@dataclass
class Answer:
    """An assistant message put together from its chunks, as `useChat` does."""

    id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    parts: list[dict[str, Any] | ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    error: str | None = None
    suggestions: dict[str, Any] | None = None  # {"values": [{label, value}], "actions": [{label, action, …}]}

    @property
    def text(self) -> str:
        return "".join(part["text"] for part in self.parts if isinstance(part, dict) and part["type"] == "text")

    @property
    def reasoning(self) -> str:
        return "".join(part["text"] for part in self.parts if isinstance(part, dict) and part["type"] == "reasoning")

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [part for part in self.parts if isinstance(part, ToolCall)]

    @property
    def conversation_id(self) -> str | None:
        return self.metadata.get("conversationId")

    def _tool(self, tool_call_id: str) -> ToolCall:
        return next(call for call in self.tool_calls if call.tool_call_id == tool_call_id)

    def _open(self, kind: str, part_id: str) -> None:
        self.parts.append({"type": kind, "id": part_id, "text": ""})

    def _append(self, kind: str, part_id: str, delta: str) -> None:
        part = next(
            part
            for part in reversed(self.parts)
            if isinstance(part, dict) and part["type"] == kind and part["id"] == part_id
        )
        part["text"] += delta

    def apply(self, chunk: Chunk) -> None:
        match chunk:
            case Start():
                self.id = chunk.message_id or self.id
                self.metadata |= chunk.message_metadata
            case TextStart():
                self._open("text", chunk.id)
            case TextDelta():
                self._append("text", chunk.id, chunk.delta)
            case ReasoningStart():
                self._open("reasoning", chunk.id)
            case ReasoningDelta():
                self._append("reasoning", chunk.id, chunk.delta)
            case ToolInputStart():
                self.parts.append(ToolCall(chunk.tool_call_id, chunk.tool_name))
            case ToolInputDelta():
                self._tool(chunk.tool_call_id).input_text += chunk.input_text_delta
            case ToolInputAvailable():
                if not any(call.tool_call_id == chunk.tool_call_id for call in self.tool_calls):
                    self.parts.append(ToolCall(chunk.tool_call_id, chunk.tool_name))
                call = self._tool(chunk.tool_call_id)
                call.state, call.input = "input-available", chunk.input
            case ToolOutputAvailable():
                call = self._tool(chunk.tool_call_id)
                call.state, call.output = "output-available", chunk.output
            case ToolOutputError():
                call = self._tool(chunk.tool_call_id)
                call.state, call.error_text = "output-error", chunk.error_text
            case ToolApprovalRequest():
                call = self._tool(chunk.tool_call_id)
                call.state, call.approval_id = "approval-requested", chunk.approval_id
            case ToolOutputDenied():
                self._tool(chunk.tool_call_id).state = "output-denied"
            case ToolInputError():
                if not any(call.tool_call_id == chunk.tool_call_id for call in self.tool_calls):
                    self.parts.append(ToolCall(chunk.tool_call_id, chunk.tool_name))
                call = self._tool(chunk.tool_call_id)
                call.state, call.input, call.error_text = "output-error", chunk.input, chunk.error_text
            case MessageMetadata():
                self.metadata |= chunk.message_metadata
            case Finish():
                self.finish_reason = chunk.finish_reason
                self.metadata |= chunk.message_metadata
            case Error():
                self.error = chunk.error_text
            case Data(name="suggestions"):
                self.suggestions = chunk.data


@dataclass(frozen=True)
class Compared:
    """An A/B comparison's two answers; `b` is empty when its stream was already read elsewhere."""

    comparison_id: str
    a: Answer
    b: Answer


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


def _error_from(response: httpx.Response, body: bytes) -> ThreadlineError:
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


def _whole(chunks: Iterator[Chunk], answer: Answer | None = None) -> Answer:
    """The answer the chunks make, or `answer` continued with them (after approvals, as useChat does)."""
    answer = answer or Answer()
    for chunk in chunks:
        answer.apply(chunk)
    if answer.error is not None:
        raise ThreadlineError(answer.error, answer=answer)
    return answer


def _stopped(response: httpx.Response) -> bool:
    """A stop request's answer: True when an answer was stopped, False when none was running."""
    if response.status_code == 409:
        return False
    if response.status_code != 200:
        raise _error_from(response, response.content)
    return True


_DONE = object()


def _chunk_of(line: str, wire: Wire) -> Chunk | object | None:
    """The chunk on one line of either wire; None for a line without one, _DONE for SSE's `[DONE]`."""
    if wire == "sse":
        if not line.startswith("data: "):
            return None
        line = line[len("data: ") :]
        if line == "[DONE]":
            return _DONE
    return parse_chunk(line) if line else None


def _remember_identity(http: httpx.Client | httpx.AsyncClient, response: httpx.Response) -> None:
    if issued := response.headers.get(IDENTITY_HEADER):
        http.headers[IDENTITY_HEADER] = issued


def _event_of(line: str) -> dict[str, Any] | None:
    """One event of the seed contracts' streams: `data: <json>` lines, no terminator."""
    return json.loads(line[len("data: ") :]) if line.startswith("data: ") else None


def _contract_request(contract: Contract, message: str, conversation_id: str | None) -> tuple[str, dict[str, Any]]:
    """The path and body of a seed contract's chat request."""
    key = "conversationId" if contract == "seed-004" else "conversation_id"
    body: dict[str, Any] = {"message": message} | ({key: conversation_id} if conversation_id else {})
    return CONTRACT_PATHS[contract], body


def _request(text: str, conversation_id: str | None, stream_mode: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": [{"role": "user", "parts": [{"type": "text", "text": text}]}]}
    if conversation_id:
        body["id"] = conversation_id
    if stream_mode:
        body["streamMode"] = stream_mode
    return body


def _approval_request(answer: Answer, approved: bool, reason: str | None) -> dict[str, Any]:
    """The chat request `useChat` sends after addToolApprovalResponse: the answer, its waiting calls answered."""
    response = {"approved": approved} | ({"reason": reason} if reason else {})
    parts = [
        {
            "type": f"tool-{call.tool_name}",
            "toolCallId": call.tool_call_id,
            "state": "approval-responded",
            "approval": {"id": call.approval_id} | response,
        }
        for call in answer.tool_calls
        if call.state == "approval-requested"
    ]
    if not parts:
        raise ValueError("no tool call of this answer waits for approval")
    return {"id": answer.conversation_id, "messages": [{"id": answer.id, "role": "assistant", "parts": parts}]}


def _action_request(answer: Answer, action: str, data: dict[str, Any] | None) -> dict[str, Any]:
    body = {"conversationId": answer.conversation_id, "messageId": answer.id, "action": action}
    return body | ({"data": data} if data is not None else {})


class Client:
    """Synchronous client. Keeps the anonymous identity the server issues, so conversations stay yours."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        wire: Wire = "ndjson",
        token: str | None = None,
        timeout: float = 130.0,
    ) -> None:
        self.wire = wire
        self.http = httpx.Client(base_url=base_url, timeout=timeout)
        if token:
            self.http.headers[IDENTITY_HEADER] = token

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    @property
    def token(self) -> str | None:
        token: str | None = self.http.headers.get(IDENTITY_HEADER)
        return token

    def stream(
        self, text: str, conversation_id: str | None = None, *, stream_mode: Literal["messages", "events"] | None = None
    ) -> Iterator[Chunk]:
        """The answer's chunks as they arrive; leaving the loop early stops the answer on the server."""
        yield from self._chunks("POST", "/api/chat", _request(text, conversation_id, stream_mode))

    def _chunks(self, method: str, path: str, body: dict[str, Any] | None = None) -> Iterator[Chunk]:
        with self.http.stream(method, path, json=body, headers={"accept": _ACCEPT[self.wire]}) as response:
            _remember_identity(self.http, response)
            if response.status_code not in (200, 204):
                raise _error_from(response, response.read())
            for line in response.iter_lines():
                if (chunk := _chunk_of(line, self.wire)) is _DONE:
                    return
                if isinstance(chunk, Chunk):
                    yield chunk

    def ask(self, text: str, conversation_id: str | None = None, **options: Any) -> Answer:
        """The whole answer; raises ThreadlineError (with the partial `answer`) when it ends in error."""
        return _whole(self.stream(text, conversation_id, **options))

    def compare(
        self, text: str, conversation_id: str | None = None, *, profiles: tuple[str, str] | None = None
    ) -> Compared:
        """Two answers to one message, on `profiles` (else the server's CHAT_AB_PROFILES), to `vote` on."""
        body = _request(text, conversation_id, None) | ({"compareProfiles": list(profiles)} if profiles else {})
        first = _whole(self._chunks("POST", "/api/chat", body))
        comparison_id = first.metadata["comparisonId"]
        second = _whole(self._chunks("GET", f"/api/comparisons/{comparison_id}/stream"))
        return Compared(comparison_id, first, second)

    def approve(self, answer: Answer) -> Answer:
        """Approve every tool call of `answer` that waits; returns the answer as it goes on from there."""
        return self._respond(answer, True, None)

    def deny(self, answer: Answer, reason: str | None = None) -> Answer:
        """Decline every tool call of `answer` that waits; the model answers without them."""
        return self._respond(answer, False, reason)

    def _respond(self, answer: Answer, approved: bool, reason: str | None) -> Answer:
        request = _approval_request(answer, approved, reason)
        return _whole(self._chunks("POST", "/api/chat", request), copy.deepcopy(answer))

    def run_action(self, answer: Answer, action: str, data: dict[str, Any] | None = None) -> Answer | dict[str, Any]:
        """Press one of `answer`'s suggested server actions: the new answer when the action continues the
        conversation, else its result (`{"action", "result", "message"}`)."""
        body = _action_request(answer, action, data)
        with self.http.stream("POST", "/api/actions", json=body, headers={"accept": _ACCEPT[self.wire]}) as response:
            if response.status_code != 200:
                raise _error_from(response, response.read())
            if response.headers.get("content-type", "").startswith("application/json"):
                done: dict[str, Any] = json.loads(response.read())
                return done
            return _whole(
                chunk for line in response.iter_lines() if isinstance(chunk := _chunk_of(line, self.wire), Chunk)
            )

    def vote(self, comparison_id: str, preference: Literal["A", "B", "tie"]) -> dict[str, Any]:
        """Pick the better answer; the conversation goes on with it (A on a tie)."""
        response = self.http.post(f"/api/comparisons/{comparison_id}/vote", json={"preference": preference})
        if response.status_code != 200:
            raise _error_from(response, response.content)
        voted: dict[str, Any] = response.json()
        return voted

    def cancel(self, conversation_id: str) -> bool:
        """Stop the answer running in a conversation; False when none was running."""
        return _stopped(self.http.post("/api/cancel_stream", json={"conversationId": conversation_id}))

    def stream_contract(
        self, contract: Contract, message: str, conversation_id: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """An answer on a seed document's own wire (see the README's Seed contracts), its events as dicts;
        a refused request raises ThreadlineError, a failure after that arrives as an `error` event."""
        path, body = _contract_request(contract, message, conversation_id)
        with self.http.stream("POST", path, json=body) as response:
            _remember_identity(self.http, response)
            if response.status_code != 200:
                raise _error_from(response, response.read())
            for line in response.iter_lines():
                if (event := _event_of(line)) is not None:
                    yield event

    def load_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Seed 002's conversation: its messages in order, each with its feedback."""
        response = self.http.post("/api/load_conversation", json={"conversation_id": conversation_id})
        if response.status_code != 200:
            raise _error_from(response, response.content)
        loaded: dict[str, Any] = response.json()
        return loaded

    def list_conversations(self) -> list[dict[str, Any]]:
        """Seed 002's list: your conversations, most recent message first."""
        response = self.http.get("/api/list_conversations")
        if response.status_code != 200:
            raise _error_from(response, response.content)
        listed: list[dict[str, Any]] = response.json()
        return listed


class AsyncClient:
    """The same as Client, for asyncio."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        wire: Wire = "ndjson",
        token: str | None = None,
        timeout: float = 130.0,
    ) -> None:
        self.wire = wire
        self.http = httpx.AsyncClient(base_url=base_url, timeout=timeout)
        if token:
            self.http.headers[IDENTITY_HEADER] = token

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    @property
    def token(self) -> str | None:
        token: str | None = self.http.headers.get(IDENTITY_HEADER)
        return token

    async def stream(
        self, text: str, conversation_id: str | None = None, *, stream_mode: Literal["messages", "events"] | None = None
    ) -> AsyncIterator[Chunk]:
        async with self.http.stream(
            "POST",
            "/api/chat",
            json=_request(text, conversation_id, stream_mode),
            headers={"accept": _ACCEPT[self.wire]},
        ) as response:
            _remember_identity(self.http, response)
            if response.status_code != 200:
                raise _error_from(response, await response.aread())
            async for line in response.aiter_lines():
                if (chunk := _chunk_of(line, self.wire)) is _DONE:
                    return
                if isinstance(chunk, Chunk):
                    yield chunk

    async def ask(self, text: str, conversation_id: str | None = None, **options: Any) -> Answer:
        answer = Answer()
        async for chunk in self.stream(text, conversation_id, **options):
            answer.apply(chunk)
        if answer.error is not None:
            raise ThreadlineError(answer.error, answer=answer)
        return answer

    async def cancel(self, conversation_id: str) -> bool:
        return _stopped(await self.http.post("/api/cancel_stream", json={"conversationId": conversation_id}))

    async def run_action(
        self, answer: Answer, action: str, data: dict[str, Any] | None = None
    ) -> Answer | dict[str, Any]:
        body = _action_request(answer, action, data)
        headers = {"accept": _ACCEPT[self.wire]}
        async with self.http.stream("POST", "/api/actions", json=body, headers=headers) as response:
            if response.status_code != 200:
                raise _error_from(response, await response.aread())
            if response.headers.get("content-type", "").startswith("application/json"):
                done: dict[str, Any] = json.loads(await response.aread())
                return done
            chunks = [
                chunk async for line in response.aiter_lines() if isinstance(chunk := _chunk_of(line, self.wire), Chunk)
            ]
            return _whole(iter(chunks))

    async def stream_contract(
        self, contract: Contract, message: str, conversation_id: str | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        path, body = _contract_request(contract, message, conversation_id)
        async with self.http.stream("POST", path, json=body) as response:
            _remember_identity(self.http, response)
            if response.status_code != 200:
                raise _error_from(response, await response.aread())
            async for line in response.aiter_lines():
                if (event := _event_of(line)) is not None:
                    yield event
