"""The floor: bare Litestar writing pre-built UI Message Stream chunks, TOKENS of them, DELAY_MS apart."""

from __future__ import annotations

import asyncio
import os

import uvicorn
from litestar import Litestar, get, post
from litestar.response import Stream

TOKENS = int(os.environ.get("TOKENS", "200"))
DELAY = float(os.environ.get("DELAY_MS", "0")) / 1000
HEAD = [b'data: {"type":"start"}\n\n', b'data: {"type":"start-step"}\n\n', b'data: {"type":"text-start","id":"t"}\n\n']
TOKENS_SSE = [b'data: {"type":"text-delta","id":"t","delta":" %d"}\n\n' % (n + 1) for n in range(TOKENS)]
TAIL = [
    b'data: {"type":"text-end","id":"t"}\n\n',
    b'data: {"type":"finish-step"}\n\n',
    b'data: {"type":"finish","finishReason":"stop"}\n\n',
    b"data: [DONE]\n\n",
]


async def answer():
    for chunk in HEAD:
        yield chunk
    for chunk in TOKENS_SSE:
        if DELAY:
            await asyncio.sleep(DELAY)
        yield chunk
    for chunk in TAIL:
        yield chunk


@post("/api/chat", status_code=200)
async def chat() -> Stream:
    return Stream(answer(), media_type="text/event-stream")


@get("/health")
async def health() -> str:
    return "ok"


if __name__ == "__main__":
    uvicorn.run(
        Litestar([chat, health]), host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning", access_log=False
    )
