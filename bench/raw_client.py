"""The benchmarks' client: one answer over raw HTTP/1.1 on asyncio streams, cheap enough not to be the bottleneck."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Endpoint:
    """Where an answer is asked for, and how its stream shows a token, its end and a failure."""

    path: str
    body: Callable[[int], str]  # the request body asking for `tokens` tokens
    delta: bytes
    done: bytes
    error: bytes


def _chat_body(tokens: int) -> str:
    message = {"role": "user", "parts": [{"type": "text", "text": f"count to {tokens}"}]}
    return json.dumps({"id": f"b{uuid.uuid4().hex[:16]}", "trigger": "submit-message", "messages": [message]})


def _ag_ui_body(tokens: int) -> str:
    message = {"id": f"m{uuid.uuid4().hex[:16]}", "role": "user", "content": f"count to {tokens}"}
    return json.dumps({"threadId": f"b{uuid.uuid4().hex[:16]}", "runId": "r", "messages": [message]})


CHAT = Endpoint("/api/chat", _chat_body, b'"text-delta"', b"data: [DONE]", b'"type":"error"')
AG_UI = Endpoint("/api/ag-ui", _ag_ui_body, b'"TEXT_MESSAGE_CONTENT"', b'"RUN_FINISHED"', b'"RUN_ERROR"')


async def one_answer(
    port: int, tokens: int, headers: str = "", endpoint: Endpoint = CHAT
) -> tuple[float, float, float, int] | str:
    """(first byte, first text-delta, total, text-deltas) in seconds, or what went wrong. `headers`: more
    request header lines, each ending in CRLF."""
    body = endpoint.body(tokens)
    started = time.perf_counter()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as exc:
        return f"connect: {exc.__class__.__name__}"
    try:
        writer.write(
            f"POST {endpoint.path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{headers}Connection: close\r\n\r\n{body}".encode()
        )
        received = b""
        first_byte = first_delta = None
        while chunk := await reader.read(65536):
            now = time.perf_counter()
            if first_byte is None:
                first_byte = now
            received += chunk
            if first_delta is None and endpoint.delta in received:
                first_delta = now
            if received.endswith(b"\r\n0\r\n\r\n"):  # the last chunk: the AI SDK keeps the connection open
                break
        if not received.startswith(b"HTTP/1.1 200"):
            return received.split(b"\r\n", 1)[0].decode(errors="replace") or "empty response"
        if endpoint.done not in received or endpoint.error in received:
            return "stream did not finish cleanly"
        deltas = received.count(endpoint.delta)
        if deltas != tokens:
            return f"{deltas} of {tokens} tokens"
        return first_byte - started, first_delta - started, time.perf_counter() - started, deltas
    except OSError as exc:
        return f"read: {exc.__class__.__name__}"
    finally:
        writer.close()


async def answers_at(
    port: int,
    tokens: int,
    concurrency: int,
    answers: int,
    headers: Callable[[int], str] = lambda _: "",
    endpoint: Endpoint = CHAT,
) -> list:
    """`concurrency` clients asking one after another until `answers` answers are in, each a new visitor
    (or, with `headers`, whoever client n's header lines say); one_answer's result for each."""
    remaining = iter(range(answers))
    results: list = []

    async def client(n: int) -> None:
        for _ in remaining:
            results.append(await one_answer(port, tokens, headers(n), endpoint))

    await asyncio.gather(*(client(n) for n in range(concurrency)))
    return results


async def requests_at(port: int, path: str, clients: int, requests: int) -> list:
    """`clients` keep-alive connections, each a visitor of its own (the cookie its first response set), asking
    GET `path` one after another until `requests` are answered; for each, (time, time, time, 0) in seconds as
    one_answer's figures are, or what went wrong."""
    remaining = iter(range(requests))
    results: list = []

    async def client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        cookie = ""
        try:
            for _ in remaining:
                started = time.perf_counter()
                writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\n{cookie}\r\n".encode())
                head = (await reader.readuntil(b"\r\n\r\n")).decode()
                lines = (line.split(": ", 1) for line in head.split("\r\n")[1:] if ": " in line)
                fields = {name.lower(): value for name, value in lines}
                await reader.readexactly(int(fields.get("content-length", "0")))
                if "set-cookie" in fields and not cookie:
                    cookie = f"Cookie: {fields['set-cookie'].split(';', 1)[0]}\r\n"
                elapsed = time.perf_counter() - started
                results.append((elapsed,) * 3 + (0,) if head.startswith("HTTP/1.1 200") else head.split("\r\n", 1)[0])
        finally:
            writer.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return results
