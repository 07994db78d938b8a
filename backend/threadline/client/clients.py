"""`Client` and `AsyncClient`: the same methods, for plain Python and for asyncio."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

import httpx

from threadline.client.answer import Answer, Compared
from threadline.client.chunks import Chunk
from threadline.client.protocol import (
    ACCEPT,
    CONVERSATIONS_PATH,
    IDENTITY_HEADER,
    AgentOptions,
    Attachment,
    Contract,
    ConversationSummary,
    Rating,
    Uploaded,
    Wire,
    achunks_of,
    action_request,
    aevents_of,
    approval_request,
    chat_request,
    chunks_of,
    contract_request,
    edit_request,
    error_from,
    events_of,
    feedback_path,
    is_json,
    json_of,
    next_page,
    outputs_request,
    regenerate_request,
    remember_identity,
    reply_request,
    stopped,
    upload_request,
    whole,
)

H = TypeVar("H", httpx.Client, httpx.AsyncClient)
StreamMode = Literal["messages", "events"]
Preference = Literal["A", "B", "tie"]


class _Connection(Generic[H]):
    """What both clients hold: the wire they read, and an HTTP client that carries the visitor's identity."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        wire: Wire = "ndjson",
        token: str | None = None,
        bearer: str | None = None,
        timeout: float = 130.0,
    ) -> None:
        self.wire = wire
        self.http: H = self._open(base_url, timeout)
        if token:
            self.http.headers[IDENTITY_HEADER] = token
        if bearer:  # a signed-in user: the access token from the server's identity provider (AUTH_ISSUER)
            self.http.headers["authorization"] = f"Bearer {bearer}"

    def _open(self, base_url: str, timeout: float) -> H:
        raise NotImplementedError

    @property
    def token(self) -> str | None:
        """The signed anonymous identity the server issued: pass it to a new client to reach your conversations."""
        token: str | None = self.http.headers.get(IDENTITY_HEADER)
        return token


class Client(_Connection[httpx.Client]):
    """Synchronous client. Keeps the anonymous identity the server issues, so conversations stay yours."""

    def _open(self, base_url: str, timeout: float) -> httpx.Client:
        return httpx.Client(base_url=base_url, timeout=timeout)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def stream(
        self,
        text: str,
        conversation_id: str | None = None,
        *,
        stream_mode: StreamMode | None = None,
        files: Sequence[Attachment] = (),
        agent: str | AgentOptions | None = None,
        profile: str | None = None,
    ) -> Iterator[Chunk]:
        """The answer's chunks as they arrive; leaving the loop early stops the answer on the server. `files`:
        paths of files to attach (images, PDFs, text; see the docs' Attachments), or files `upload`ed before.
        `agent`: which of the server's agents a new conversation goes to (`agents()`), or an `AgentOptions`
        with its own input and context too. `profile`: the model profile to answer with (`profiles()`)."""
        body = chat_request(text, conversation_id, stream_mode, files=files, agent=agent, profile=profile)
        yield from self._chunks("POST", "/api/chat", body)

    def _chunks(
        self, method: str, path: str, body: dict[str, Any] | None = None, wire: Wire | None = None
    ) -> Iterator[Chunk]:
        wire = wire or self.wire
        with self.http.stream(method, path, json=body, headers={"accept": ACCEPT[wire]}) as response:
            remember_identity(self.http, response)
            if response.status_code == 204:  # nothing streams there (any more)
                return
            if response.status_code != 200:
                raise error_from(response, response.read())
            yield from chunks_of(response, wire)

    def ask(
        self,
        text: str,
        conversation_id: str | None = None,
        *,
        stream_mode: StreamMode | None = None,
        files: Sequence[Attachment] = (),
        agent: str | AgentOptions | None = None,
        profile: str | None = None,
    ) -> Answer:
        """The whole answer; raises ThreadlineError (with the partial `answer`) when it ends in error."""
        options = {"stream_mode": stream_mode, "files": files, "agent": agent, "profile": profile}
        return whole(self.stream(text, conversation_id, **options))  # type: ignore[arg-type]

    def agents(self) -> list[dict[str, Any]]:
        """The agents a new conversation may go to (`id`, `name`, `description`, `starters`), the default first."""
        agents: list[dict[str, Any]] = json_of(self.http.get("/api/agents"))
        return agents

    def profiles(self) -> list[dict[str, Any]]:
        """The model profiles an answer may use (`id`, `label`, `model`, `default`, …)."""
        profiles: list[dict[str, Any]] = json_of(self.http.get("/api/profiles"))
        return profiles

    def upload(self, path: str | Path) -> Uploaded:
        """Store a file once, to attach to messages (`files=[uploaded]`) without sending its bytes again."""
        url, request = upload_request(Path(path))
        return Uploaded.of(json_of(self.http.post(url, **request)))

    def resume(self, conversation_id: str) -> Answer | None:
        """The answer still being written in a conversation, from its first chunk (as a reloaded page gets it);
        None when none runs."""
        chunks = list(self._chunks("GET", f"/api/chat/{conversation_id}/stream", wire="sse"))  # replayed as recorded
        return whole(iter(chunks)) if chunks else None

    def rate(self, answer: Answer | str, rating: Rating | None, comment: str | None = None) -> None:
        """Rate an answer (or an answer by its id) "up" or "down", with an optional comment; None takes the
        rating back."""
        path = feedback_path(answer)
        rated = self.http.put(path, json={"rating": rating, "comment": comment}) if rating else self.http.delete(path)
        json_of(rated)

    def delete(self, conversation_id: str) -> None:
        """Delete a conversation, its messages and the files only it used."""
        json_of(self.http.delete(f"{CONVERSATIONS_PATH}/{conversation_id}"))

    def compare(
        self, text: str, conversation_id: str | None = None, *, profiles: tuple[str, str] | None = None
    ) -> Compared:
        """Two answers to one message, on `profiles` (else the server's CHAT_AB_PROFILES), to `vote` on."""
        first = whole(self._chunks("POST", "/api/chat", chat_request(text, conversation_id, profiles=profiles)))
        comparison_id = first.metadata["comparisonId"]
        second = whole(self._chunks("GET", f"/api/comparisons/{comparison_id}/stream"))
        return Compared(comparison_id, first, second)

    def edit(
        self,
        conversation_id: str,
        message_id: str,
        text: str,
        *,
        stream_mode: StreamMode | None = None,
        files: Sequence[Attachment] = (),
    ) -> Answer:
        """Send `text` in place of the user message `message_id` (see `messages`); it is answered from before
        that message, and the branch it replaces stays as version of it (`show_version`)."""
        body = edit_request(conversation_id, message_id, text, stream_mode, files)
        return whole(self._chunks("POST", "/api/chat", body))

    def regenerate(
        self, conversation_id: str, answer_id: str | None = None, *, stream_mode: StreamMode | None = None
    ) -> Answer:
        """Write an answer again (by its id, else the last); the earlier one stays as a version of it."""
        return whole(self._chunks("POST", "/api/chat", regenerate_request(conversation_id, answer_id, stream_mode)))

    def messages(self, conversation_id: str) -> list[dict[str, Any]]:
        """The conversation's messages on the branch shown, as `UIMessage` dicts; a message with versions has
        `metadata["version"]` (shown, from 1) and `metadata["versions"]` (how many)."""
        messages: list[dict[str, Any]] = json_of(self.http.get(f"/api/conversations/{conversation_id}"))["messages"]
        return messages

    def conversations(self, query: str = "", *, page_size: int = 50) -> Iterator[ConversationSummary]:
        """Your conversations, most recently used first, page by page as you iterate; with `query`, those with
        every one of its words (or a word's beginning) in their title or messages."""
        url: str | None = CONVERSATIONS_PATH
        params: dict[str, Any] | None = {"limit": page_size} | ({"q": query} if query else {})
        while url is not None:
            response = self.http.get(url, params=params)
            yield from map(ConversationSummary.of, json_of(response))
            url, params = next_page(response), None

    def share(self, conversation_id: str) -> dict[str, Any]:
        """A read-only link to the conversation as it is now (`{"id", "url", "sharedAt"}`; `url` is the page's
        path); again, the same link brought up to date."""
        shared: dict[str, Any] = json_of(self.http.post(f"/api/conversations/{conversation_id}/share"))
        return shared

    def stop_sharing(self, conversation_id: str) -> None:
        """The conversation's link stops working."""
        json_of(self.http.delete(f"/api/conversations/{conversation_id}/share"))

    def show_version(self, conversation_id: str, message_id: str, version: int) -> list[dict[str, Any]]:
        """Show version `version` (from 1) of an edited message or a regenerated answer; the messages now shown."""
        body = {"messageId": message_id, "version": version}
        shown = json_of(self.http.post(f"/api/conversations/{conversation_id}/versions", json=body))
        messages: list[dict[str, Any]] = shown["messages"]
        return messages

    def approve(self, answer: Answer, edits: dict[str, dict[str, Any]] | None = None) -> Answer:
        """Approve every tool call of `answer` that waits, those in `edits` (by tool call id) with a changed
        input where the agent allows it; returns the answer as it goes on from there."""
        return self._go_on(answer, approval_request(answer, True, None, edits))

    def deny(self, answer: Answer, reason: str | None = None) -> Answer:
        """Decline every tool call of `answer` that waits; the model answers without them."""
        return self._go_on(answer, approval_request(answer, False, reason))

    def reply(self, answer: Answer, value: Any) -> Answer:
        """Answer the agent's question that `answer` ends with (`answer.question`); the answer goes on."""
        return self._go_on(answer, reply_request(answer, value))

    def send_outputs(self, answer: Answer, outputs: dict[str, Any], agent: AgentOptions | None = None) -> Answer:
        """Give the outputs (by tool call id) of the calls of your own tools that `answer` ended on
        (`answer.open_calls`); `agent` with the same tools as the question. Returns the answer as it goes on."""
        return self._go_on(answer, outputs_request(answer, outputs, agent))

    def _go_on(self, answer: Answer, request: dict[str, Any]) -> Answer:
        return whole(self._chunks("POST", "/api/chat", request), copy.deepcopy(answer))

    def run_action(self, answer: Answer, action: str, data: dict[str, Any] | None = None) -> Answer | dict[str, Any]:
        """Press one of `answer`'s suggested server actions: the new answer when the action continues the
        conversation, else its result (`{"action", "result", "message"}`)."""
        body = action_request(answer, action, data)
        with self.http.stream("POST", "/api/actions", json=body, headers={"accept": ACCEPT[self.wire]}) as response:
            if response.status_code != 200:
                raise error_from(response, response.read())
            if is_json(response):
                done: dict[str, Any] = json.loads(response.read())
                return done
            return whole(chunks_of(response, self.wire))

    def vote(self, comparison_id: str, preference: Preference) -> dict[str, Any]:
        """Pick the better answer; the conversation goes on with it (A on a tie)."""
        voted: dict[str, Any] = json_of(
            self.http.post(f"/api/comparisons/{comparison_id}/vote", json={"preference": preference})
        )
        return voted

    def cancel(self, conversation_id: str) -> bool:
        """Stop the answer running in a conversation; False when none was running."""
        return stopped(self.http.post("/api/cancel_stream", json={"conversationId": conversation_id}))

    def stream_contract(
        self, contract: Contract, message: str, conversation_id: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """An answer on a seed document's own wire (see the docs' seed contracts), its events as dicts;
        a refused request raises ThreadlineError, a failure after that arrives as an `error` event."""
        path, body = contract_request(contract, message, conversation_id)
        with self.http.stream("POST", path, json=body) as response:
            remember_identity(self.http, response)
            if response.status_code != 200:
                raise error_from(response, response.read())
            yield from events_of(response)

    def load_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Seed 002's conversation: its messages in order, each with its feedback."""
        loaded: dict[str, Any] = json_of(
            self.http.post("/api/load_conversation", json={"conversation_id": conversation_id})
        )
        return loaded

    def list_conversations(self) -> list[dict[str, Any]]:
        """Seed 002's list: your conversations, most recent message first."""
        listed: list[dict[str, Any]] = json_of(self.http.get("/api/list_conversations"))
        return listed

    def rename(self, conversation_id: str, title: str) -> ConversationSummary:
        """Give a conversation a title of your own (1–120 characters); its summary back."""
        return ConversationSummary.of(
            json_of(self.http.patch(f"{CONVERSATIONS_PATH}/{conversation_id}", json={"title": title}))
        )

    def claim(self, anonymous_token: str) -> dict[str, Any]:
        """Signed in (`bearer=`), take the conversations of an anonymous identity (another client's `token`):
        `{"conversations": [moved ids], "skipped": [ids you already had]}`."""
        claimed: dict[str, Any] = json_of(self.http.post(CLAIM_PATH, json={"anonymousToken": anonymous_token}))
        return claimed


CLAIM_PATH = "/api/account/claim"


class AsyncClient(_Connection[httpx.AsyncClient]):
    """The same as Client, for asyncio: every method is a coroutine (`stream` an async iterator)."""

    def _open(self, base_url: str, timeout: float) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=base_url, timeout=timeout)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def stream(
        self,
        text: str,
        conversation_id: str | None = None,
        *,
        stream_mode: StreamMode | None = None,
        files: Sequence[Attachment] = (),
        agent: str | AgentOptions | None = None,
        profile: str | None = None,
    ) -> AsyncIterator[Chunk]:
        body = chat_request(text, conversation_id, stream_mode, files=files, agent=agent, profile=profile)
        async for chunk in self._chunks("POST", "/api/chat", body):
            yield chunk

    async def _chunks(
        self, method: str, path: str, body: dict[str, Any] | None = None, wire: Wire | None = None
    ) -> AsyncIterator[Chunk]:
        wire = wire or self.wire
        async with self.http.stream(method, path, json=body, headers={"accept": ACCEPT[wire]}) as response:
            remember_identity(self.http, response)
            if response.status_code == 204:
                return
            if response.status_code != 200:
                raise error_from(response, await response.aread())
            async for chunk in achunks_of(response, wire):
                yield chunk

    async def _whole(self, chunks: AsyncIterator[Chunk], answer: Answer | None = None) -> Answer:
        return whole(iter([chunk async for chunk in chunks]), answer)

    async def ask(
        self,
        text: str,
        conversation_id: str | None = None,
        *,
        stream_mode: StreamMode | None = None,
        files: Sequence[Attachment] = (),
        agent: str | AgentOptions | None = None,
        profile: str | None = None,
    ) -> Answer:
        options = {"stream_mode": stream_mode, "files": files, "agent": agent, "profile": profile}
        return await self._whole(self.stream(text, conversation_id, **options))  # type: ignore[arg-type]

    async def agents(self) -> list[dict[str, Any]]:
        agents: list[dict[str, Any]] = json_of(await self.http.get("/api/agents"))
        return agents

    async def profiles(self) -> list[dict[str, Any]]:
        profiles: list[dict[str, Any]] = json_of(await self.http.get("/api/profiles"))
        return profiles

    async def upload(self, path: str | Path) -> Uploaded:
        url, request = upload_request(Path(path))
        return Uploaded.of(json_of(await self.http.post(url, **request)))

    async def resume(self, conversation_id: str) -> Answer | None:
        chunks = [chunk async for chunk in self._chunks("GET", f"/api/chat/{conversation_id}/stream", wire="sse")]
        return whole(iter(chunks)) if chunks else None

    async def rate(self, answer: Answer | str, rating: Rating | None, comment: str | None = None) -> None:
        path = feedback_path(answer)
        json_of(
            await (
                self.http.put(path, json={"rating": rating, "comment": comment}) if rating else self.http.delete(path)
            )
        )

    async def delete(self, conversation_id: str) -> None:
        json_of(await self.http.delete(f"{CONVERSATIONS_PATH}/{conversation_id}"))

    async def compare(
        self, text: str, conversation_id: str | None = None, *, profiles: tuple[str, str] | None = None
    ) -> Compared:
        body = chat_request(text, conversation_id, profiles=profiles)
        first = await self._whole(self._chunks("POST", "/api/chat", body))
        comparison_id = first.metadata["comparisonId"]
        second = await self._whole(self._chunks("GET", f"/api/comparisons/{comparison_id}/stream"))
        return Compared(comparison_id, first, second)

    async def edit(
        self,
        conversation_id: str,
        message_id: str,
        text: str,
        *,
        stream_mode: StreamMode | None = None,
        files: Sequence[Attachment] = (),
    ) -> Answer:
        body = edit_request(conversation_id, message_id, text, stream_mode, files)
        return await self._whole(self._chunks("POST", "/api/chat", body))

    async def regenerate(
        self, conversation_id: str, answer_id: str | None = None, *, stream_mode: StreamMode | None = None
    ) -> Answer:
        body = regenerate_request(conversation_id, answer_id, stream_mode)
        return await self._whole(self._chunks("POST", "/api/chat", body))

    async def messages(self, conversation_id: str) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = json_of(await self.http.get(f"/api/conversations/{conversation_id}"))[
            "messages"
        ]
        return messages

    async def conversations(self, query: str = "", *, page_size: int = 50) -> AsyncIterator[ConversationSummary]:
        url: str | None = CONVERSATIONS_PATH
        params: dict[str, Any] | None = {"limit": page_size} | ({"q": query} if query else {})
        while url is not None:
            response = await self.http.get(url, params=params)
            for conversation in json_of(response):
                yield ConversationSummary.of(conversation)
            url, params = next_page(response), None

    async def share(self, conversation_id: str) -> dict[str, Any]:
        shared: dict[str, Any] = json_of(await self.http.post(f"/api/conversations/{conversation_id}/share"))
        return shared

    async def stop_sharing(self, conversation_id: str) -> None:
        json_of(await self.http.delete(f"/api/conversations/{conversation_id}/share"))

    async def show_version(self, conversation_id: str, message_id: str, version: int) -> list[dict[str, Any]]:
        body = {"messageId": message_id, "version": version}
        shown = json_of(await self.http.post(f"/api/conversations/{conversation_id}/versions", json=body))
        messages: list[dict[str, Any]] = shown["messages"]
        return messages

    async def approve(self, answer: Answer, edits: dict[str, dict[str, Any]] | None = None) -> Answer:
        return await self._go_on(answer, approval_request(answer, True, None, edits))

    async def deny(self, answer: Answer, reason: str | None = None) -> Answer:
        return await self._go_on(answer, approval_request(answer, False, reason))

    async def reply(self, answer: Answer, value: Any) -> Answer:
        return await self._go_on(answer, reply_request(answer, value))

    async def send_outputs(self, answer: Answer, outputs: dict[str, Any], agent: AgentOptions | None = None) -> Answer:
        """Give the outputs (by tool call id) of the calls of your own tools that `answer` ended on; see `Client`."""
        return await self._go_on(answer, outputs_request(answer, outputs, agent))

    async def _go_on(self, answer: Answer, request: dict[str, Any]) -> Answer:
        return await self._whole(self._chunks("POST", "/api/chat", request), copy.deepcopy(answer))

    async def run_action(
        self, answer: Answer, action: str, data: dict[str, Any] | None = None
    ) -> Answer | dict[str, Any]:
        body = action_request(answer, action, data)
        headers = {"accept": ACCEPT[self.wire]}
        async with self.http.stream("POST", "/api/actions", json=body, headers=headers) as response:
            if response.status_code != 200:
                raise error_from(response, await response.aread())
            if is_json(response):
                done: dict[str, Any] = json.loads(await response.aread())
                return done
            return await self._whole(achunks_of(response, self.wire))

    async def vote(self, comparison_id: str, preference: Preference) -> dict[str, Any]:
        response = await self.http.post(f"/api/comparisons/{comparison_id}/vote", json={"preference": preference})
        voted: dict[str, Any] = json_of(response)
        return voted

    async def cancel(self, conversation_id: str) -> bool:
        return stopped(await self.http.post("/api/cancel_stream", json={"conversationId": conversation_id}))

    async def stream_contract(
        self, contract: Contract, message: str, conversation_id: str | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        path, body = contract_request(contract, message, conversation_id)
        async with self.http.stream("POST", path, json=body) as response:
            remember_identity(self.http, response)
            if response.status_code != 200:
                raise error_from(response, await response.aread())
            async for event in aevents_of(response):
                yield event

    async def load_conversation(self, conversation_id: str) -> dict[str, Any]:
        response = await self.http.post("/api/load_conversation", json={"conversation_id": conversation_id})
        loaded: dict[str, Any] = json_of(response)
        return loaded

    async def list_conversations(self) -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = json_of(await self.http.get("/api/list_conversations"))
        return listed

    async def rename(self, conversation_id: str, title: str) -> ConversationSummary:
        response = await self.http.patch(f"{CONVERSATIONS_PATH}/{conversation_id}", json={"title": title})
        return ConversationSummary.of(json_of(response))

    async def claim(self, anonymous_token: str) -> dict[str, Any]:
        response = await self.http.post(CLAIM_PATH, json={"anonymousToken": anonymous_token})
        claimed: dict[str, Any] = json_of(response)
        return claimed
