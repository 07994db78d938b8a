"""What the API tests share: apps with their lifespan, useChat-shaped requests, and stream readers."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import httpx
import pytest
from litestar.testing import AsyncTestClient
from threadline.http.app import create_app
from threadline.http.connection_limits import server_config
from threadline.settings import Settings, load_settings
from threadline_testing import standins
from threadline_testing.sse import aevents_of, parse_sse


@asynccontextmanager
async def running(settings: Settings) -> AsyncIterator[AsyncTestClient]:
    """An app with its lifespan run (storage, graph), and a client for it."""
    async with AsyncTestClient(app=create_app(settings), timeout=30) as client:
        yield client


def chat_body(conversation_id: str | None, text: str, **extra) -> dict:
    body = {
        "messages": [{"id": f"u{uuid.uuid4().hex[:10]}", "role": "user", "parts": [{"type": "text", "text": text}]}],
        "trigger": "submit-message",
        **extra,
    }
    if conversation_id:
        body["id"] = conversation_id
    return body


async def chat(client: AsyncTestClient, conversation_id: str | None, text: str, **extra):
    """POST one useChat-shaped message; returns (response, raw body, parsed chunks)."""
    response = await client.post("/api/chat", json=chat_body(conversation_id, text, **extra))
    assert response.status_code == 200, response.text
    return response, response.content, parse_sse(response.content)


def text_of(chunks: list[dict]) -> str:
    return "".join(chunk["delta"] for chunk in chunks if chunk["type"] == "text-delta")


def last_text(message: dict) -> str:
    """The text of a UI message's last text part (a finished answer ends with its suggestions)."""
    return [part for part in message["parts"] if part["type"] == "text"][-1]["text"]


def on_backend(make, backend: str, **overrides) -> Settings:
    """Settings from `make` (a settings fixture) on PostgreSQL or, for "memory", on CHAT_MEMORY_BACKEND=memory."""
    memory = {"memory_backend": "memory", "database_url": None} if backend == "memory" else {}
    return make(**overrides, **memory)


def new_conversation_id() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


@contextmanager
def serving(settings: Settings) -> Iterator[str]:
    """The app behind a real uvicorn on a loopback port, in a thread; yields its base URL."""
    import socket
    import threading
    import time

    import uvicorn

    listener = socket.socket()  # bound here and handed over, so no other process can take the port in between
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(
        server_config(
            create_app(settings),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            max_connections=settings.limits.max_connections,
            header_timeout=settings.limits.header_timeout,
        )
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        listener.close()


async def sse_chunks(response) -> AsyncIterator[dict]:
    """A streaming httpx response's SSE chunks as they arrive."""
    async for chunk in aevents_of(response):
        yield chunk


async def stream_some(client: httpx.AsyncClient, conversation_id: str, deltas: int, tokens: int = 300):
    """Start a long answer; return the open response, its chunk iterator and the text of the first deltas. Keep the
    iterator while the answer should stay open: once it is dropped, its finalizer closes the response."""
    request = client.build_request("POST", "/api/chat", json=chat_body(conversation_id, f"count to {tokens}"))
    response = await client.send(request, stream=True)
    assert response.status_code == 200
    text, chunks = await first_deltas(response, deltas)
    return response, chunks, text


async def first_deltas(response, count: int):
    """The text of a streaming answer's first `count` deltas, and the iterator of its remaining chunks."""
    chunks = sse_chunks(response)
    text = ""
    async for chunk in chunks:
        if chunk["type"] == "text-delta":
            text += chunk["delta"]
            count -= 1
            if count == 0:
                return text, chunks
    raise AssertionError("the answer ended early")


async def saved_answer(client: httpx.AsyncClient, conversation_id: str, *, wait: float = 10.0) -> dict:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        response = await client.get(f"/api/conversations/{conversation_id}")
        assert response.status_code == 200, response.text
        messages = response.json()["messages"]
        if len(messages) > 1 and messages[-1]["metadata"].get("finishedAt"):
            return messages[-1]
        await asyncio.sleep(0.05)
    raise AssertionError("the answer was not saved")


def quiet_demo() -> tuple:
    """The demo model as a profile that suggests nothing after its answers, as a paid provider's by default."""
    profile = {"id": "demo", "provider": "demo", "model": "demo", "suggestions": False}
    return load_settings({"CHAT_PROFILES": json.dumps([profile])}).models.profiles


@contextmanager
def standin_for(provider: str, url_variable: str, key_variable: str) -> Iterator[standins.StandIn]:
    """One stand-in of `provider` for a module, where an agent's own `init_chat_model(...)` reaches it through
    the provider's variables (an agent module makes its model once, when it is first imported)."""
    standin = standins.start(provider)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ANTHROPIC_API_URL", raising=False)  # langchain-anthropic reads it before ANTHROPIC_BASE_URL
        patch.setenv(url_variable, standin.base_url)
        patch.setenv(key_variable, "sk-test")
        yield standin
    standin.stop()
