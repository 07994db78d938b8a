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


class Connection:
    """One client's HTTP/1.1 connection: kept open from answer to answer (`keep_alive`, as a browser keeps one),
    else opened and closed for each."""

    def __init__(self, port: int, keep_alive: bool) -> None:
        self.port, self.keep_alive = port, keep_alive
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.streams is None:
            self.streams = await asyncio.open_connection("127.0.0.1", self.port)
        return self.streams

    def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None


async def _response(reader: asyncio.StreamReader, endpoint: Endpoint) -> tuple[str, float, bytes, float | None, bool]:
    """A response's status line, when its head came, its body (chunks joined), when the first token came, and
    whether the server keeps the connection."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    head_at = time.perf_counter()
    fields = dict(
        (name.lower(), value.lower()) for name, _, value in (line.partition(": ") for line in head.split("\r\n")[1:])
    )
    first_delta = None
    if "content-length" in fields:
        body = await reader.readexactly(int(fields["content-length"]))
    else:  # chunked: the streams
        parts = []
        while size := int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16):
            parts.append((await reader.readexactly(size + 2))[:-2])
            if first_delta is None and endpoint.delta in parts[-1]:
                first_delta = time.perf_counter()
        await reader.readuntil(b"\r\n")
        body = b"".join(parts)
    return head.split("\r\n", 1)[0], head_at, body, first_delta, fields.get("connection") != "close"


async def one_answer(
    connection: Connection, tokens: int, headers: str = "", endpoint: Endpoint = CHAT
) -> tuple[float, float, float, int] | str:
    """(response head, first text-delta, total, text-deltas) in seconds, or what went wrong. `headers`: more
    request header lines, each ending in CRLF."""
    body = endpoint.body(tokens)
    close = "" if connection.keep_alive else "Connection: close\r\n"
    started = time.perf_counter()
    try:
        reader, writer = await connection.open()
    except OSError as exc:
        return f"connect: {exc.__class__.__name__}"
    try:
        writer.write(
            f"POST {endpoint.path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body.encode())}\r\n{headers}{close}\r\n{body}".encode()
        )
        status, first_byte, received, first_delta, kept = await _response(reader, endpoint)
    except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
        connection.close()
        return f"read: {exc.__class__.__name__}"
    if not (kept and connection.keep_alive):
        connection.close()
    if not status.startswith("HTTP/1.1 200"):
        return status or "empty response"
    if endpoint.done not in received or endpoint.error in received or first_delta is None:
        return "stream did not finish cleanly"
    deltas = received.count(endpoint.delta)
    if deltas != tokens:
        return f"{deltas} of {tokens} tokens"
    return first_byte - started, first_delta - started, time.perf_counter() - started, deltas


async def answers_at(
    port: int,
    tokens: int,
    concurrency: int,
    answers: int,
    headers: Callable[[int], str] = lambda _: "",
    endpoint: Endpoint = CHAT,
    keep_alive: bool = True,
) -> list:
    """`concurrency` clients asking one after another until `answers` answers are in, each answer from a new visitor
    (or, with `headers`, whoever client n's header lines say) on the client's keep-alive connection, as a browser
    keeps one (`keep_alive=False`: a new connection per answer); one_answer's result for each."""
    remaining = iter(range(answers))
    results: list = []

    async def client(n: int) -> None:
        connection = Connection(port, keep_alive)
        try:
            for _ in remaining:
                results.append(await one_answer(connection, tokens, headers(n), endpoint))
        finally:
            connection.close()

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
