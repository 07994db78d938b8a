"""The wires an answer can be streamed on, by name and by media type, for the routes that choose one.

Events arrive in batches, whatever was ready at once, and each batch goes out as one write.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass

from threadline.answers import events as ev
from threadline.wires import data_stream, ndjson, seed_004, ui_message_stream


@dataclass(frozen=True)
class Wire:
    name: str
    media_type: str
    headers: dict[str, str]
    encode: Callable[[AsyncIterable[list[ev.Event]]], AsyncIterator[bytes]]


UI_MESSAGE_STREAM = Wire(
    "ui-message-stream", ui_message_stream.MEDIA_TYPE, ui_message_stream.HEADERS, ui_message_stream.encode
)
NDJSON = Wire("ndjson", ndjson.MEDIA_TYPE, ndjson.HEADERS, ndjson.encode)
DATA_STREAM = Wire("data-stream", data_stream.MEDIA_TYPE, data_stream.HEADERS, data_stream.encode)
WIRES = {wire.name: wire for wire in (UI_MESSAGE_STREAM, NDJSON, DATA_STREAM)}
SEED_004 = Wire("seed-004", seed_004.MEDIA_TYPE, seed_004.HEADERS, seed_004.encode)  # POST /api/chat/stream
BY_MEDIA_TYPE = {UI_MESSAGE_STREAM.media_type: UI_MESSAGE_STREAM, NDJSON.media_type: NDJSON}
