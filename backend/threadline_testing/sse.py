"""Reading SSE bodies in tests and benchmarks with httpx-sse, as the Python client reads them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
from httpx_sse import EventSource

DONE = "[DONE]"


def events_of(response: httpx.Response) -> Iterator[Any]:
    """Each event's JSON, as it arrives, until the UI Message Stream's `[DONE]` (the seed wires have none)."""
    for event in EventSource(response).iter_sse():
        if event.data == DONE:
            return
        if event.data:
            yield json.loads(event.data)


async def aevents_of(response: httpx.Response) -> AsyncIterator[Any]:
    async for event in EventSource(response).aiter_sse():
        if event.data == DONE:
            return
        if event.data:
            yield json.loads(event.data)


def parse_sse(raw: bytes) -> list[Any]:
    """The JSON events of a whole SSE body; checks that `[DONE]` ends it."""
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=raw)
    data = [event.data for event in EventSource(response).iter_sse()]
    assert data and data[-1] == DONE, raw[-200:]
    return [json.loads(item) for item in data[:-1]]
