"""Reading UI Message Stream chunks: the server's own chunk types (wires/ui_chunks.py), and `DataChunk` for the
`data-*` chunks (threadline's status, warning, tool progress and suggestions)."""

from __future__ import annotations

from typing import Any

import msgspec

from threadline.wires import ui_chunks
from threadline.wires.ui_chunks import *  # noqa: F403  # every chunk type, declared once
from threadline.wires.ui_chunks import AnyChunk, Chunk


class DataChunk(Chunk, tag="data", frozen=True):
    """A `data-<name>` chunk: threadline's status, warning, tool progress, suggestions and the agent's question
    (`interrupt`), or what a team's own agent writes."""

    name: str
    data: Any = None
    id: str = ""
    transient: bool = False


_decode_known = msgspec.json.Decoder(AnyChunk).decode
_decode_any = msgspec.json.Decoder().decode


def parse_chunk(raw: bytes | str) -> Chunk:
    """One chunk from its JSON; `data-*` chunks become `DataChunk`."""
    raw = raw.encode() if isinstance(raw, str) else raw
    if raw.startswith(b'{"type":"data-'):
        value = _decode_any(raw)
        return DataChunk(
            name=value["type"].removeprefix("data-"),
            data=value.get("data"),
            id=str(value.get("id") or ""),
            transient=bool(value.get("transient")),
        )
    chunk: Chunk = _decode_known(raw)
    return chunk


__all__ = ["DataChunk", "parse_chunk"]
__all__ += ui_chunks.__all__
