"""The wires an answer can be streamed on, by name and by media type, for the routes that choose one.

Events arrive in batches, whatever was ready at once, and each batch goes out as one write.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass

from threadline import events as ev
from threadline.wires import data_stream, ndjson, seed_001, seed_002, seed_004, ui_message_stream

Encode = Callable[[AsyncIterable[list[ev.Event]]], AsyncIterator[bytes]]


@dataclass(frozen=True)
class Wire:
    """One way to write an answer. `refuses_early`: a failure before anything was shown is an HTTP status (the AI
    SDK's clients check it); the seed documents want every failure after the request as an event instead."""

    name: str
    media_type: str
    headers: dict[str, str]
    encode: Encode  # a new encoding per call: an encoder keeps state for one stream
    refuses_early: bool = True


UI_MESSAGE_STREAM = Wire(
    "ui-message-stream", ui_message_stream.MEDIA_TYPE, ui_message_stream.HEADERS, ui_message_stream.encode
)
NDJSON = Wire("ndjson", ndjson.MEDIA_TYPE, ndjson.HEADERS, ndjson.encode)
DATA_STREAM = Wire("data-stream", data_stream.MEDIA_TYPE, data_stream.HEADERS, data_stream.encode)
WIRES = {wire.name: wire for wire in (UI_MESSAGE_STREAM, NDJSON, DATA_STREAM)}
# The seed documents' own wires, each on its route (http/routes/contracts/).
SEED_001 = Wire(
    "seed-001",
    seed_001.MEDIA_TYPE,
    seed_001.HEADERS,
    lambda batches: seed_001.GeneralChatEncoder().encode(batches),
    False,
)
SEED_004 = Wire("seed-004", seed_004.MEDIA_TYPE, seed_004.HEADERS, seed_004.encode, refuses_early=False)


def seed_002_wire(preview: int) -> Wire:
    """Seed 002's, showing `preview` characters of a tool's result (CHAT_TOOL_OUTPUT_PREVIEW)."""

    def encode(batches: AsyncIterable[list[ev.Event]]) -> AsyncIterator[bytes]:
        return seed_002.ChatResponseEncoder(preview=preview).encode(batches)

    return Wire("seed-002", seed_002.MEDIA_TYPE, seed_002.HEADERS, encode, refuses_early=False)


BY_MEDIA_TYPE = {UI_MESSAGE_STREAM.media_type: UI_MESSAGE_STREAM, NDJSON.media_type: NDJSON}
