"""`threadline chat`: talk to a running server from the terminal, tokens as they stream, tools as they run."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from threadline.client import (
    Client,
    DataChunk,
    ErrorChunk,
    StartChunk,
    TextDelta,
    ThreadlineError,
    ToolInputAvailableChunk,
    ToolOutputAvailableChunk,
    ToolOutputErrorChunk,
)


def _short(value: object, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def turn(client: Client, text: str, conversation_id: str | None, out: TextIO) -> str | None:
    """Stream one answer to `out`; returns the conversation id. Ctrl+C stops the answer, keeping what came."""
    try:
        for chunk in client.stream(text, conversation_id, stream_mode="events"):
            match chunk:
                case TextDelta():
                    out.write(chunk.delta)
                case ToolInputAvailableChunk():
                    out.write(f"\n  ⚙ {chunk.tool_name} {_short(chunk.input)}")
                case ToolOutputAvailableChunk():
                    out.write(f" → {_short(chunk.output)}\n")
                case ToolOutputErrorChunk():
                    out.write(f" ✗ {_short(chunk.error_text)}\n")
                case DataChunk(name="warning"):
                    out.write(f"\n  ! {chunk.data.get('message')}\n")
                case ErrorChunk():
                    out.write(f"\n  ✗ {chunk.error_text}\n")
                case StartChunk():
                    conversation_id = chunk.message_metadata.get("conversationId", conversation_id)
            out.flush()
    except KeyboardInterrupt:
        out.write("\n  (stopped)")
    except ThreadlineError as error:
        out.write(f"  ✗ {error}\n")
    out.write("\n")
    return conversation_id


def run(
    url: str, conversation_id: str | None, token: str | None, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout
) -> int:
    with Client(url, token=token) as client:
        interactive = stdin.isatty()
        while True:
            if interactive:
                out.write("you> ")
                out.flush()
            try:
                line = stdin.readline()
            except KeyboardInterrupt:
                return 0
            if not line:
                return 0
            if line.strip():
                conversation_id = turn(client, line.strip(), conversation_id, out)
