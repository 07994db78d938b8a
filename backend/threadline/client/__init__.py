"""A Python client for threadline: answers as typed chunks, sync or async, over NDJSON or SSE.

    from threadline.client import Client, TextDelta

    with Client("http://127.0.0.1:8000") as client:
        for chunk in client.stream("calculate 6*7"):
            if isinstance(chunk, TextDelta):
                print(chunk.delta, end="", flush=True)
        answer = client.ask("and times 2?")          # the whole answer, reassembled
        print(answer.text, answer.tool_calls)

The chunks are the UI Message Stream's, the same objects `useChat` reads, and `Answer` puts them
together the way `useChat` does. `stream_contract("seed-004" | "seed-002", …)` speaks the seed
documents' own wires instead (their events as dicts), with seed 002's `load_conversation` and
`list_conversations` beside it. Leaving a `stream()` loop early closes the connection, which stops
the answer on the server (what was shown is saved); `cancel()` stops one from anywhere.
"""

from threadline.client.answer import Answer, Compared, ToolCall
from threadline.client.chunks import DataChunk, parse_chunk
from threadline.client.clients import AsyncClient, Client
from threadline.client.protocol import AgentOptions, Contract, ConversationSummary, ThreadlineError, Uploaded, Wire
from threadline.wires import ui_chunks
from threadline.wires.ui_chunks import *  # noqa: F403  # every chunk type, declared once

__all__ = [
    "AgentOptions",
    "Answer",
    "AsyncClient",
    "Client",
    "Compared",
    "Contract",
    "ConversationSummary",
    "DataChunk",
    "ThreadlineError",
    "ToolCall",
    "Uploaded",
    "Wire",
    "parse_chunk",
]
__all__ += ui_chunks.__all__
