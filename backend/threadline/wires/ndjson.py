"""Newline-delimited JSON: the UI Message Stream's chunks, one per line, for programs (see client/__init__.py)."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

from threadline import events as ev
from threadline.wires.ui_message_stream import chunk_json

MEDIA_TYPE = "application/x-ndjson"
HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def encode_event(event: ev.Event) -> bytes:
    return chunk_json(event) + b"\n"


async def encode(batches: AsyncIterable[list[ev.Event]]) -> AsyncIterator[bytes]:
    async for batch in batches:
        yield b"".join([encode_event(event) for event in batch])
