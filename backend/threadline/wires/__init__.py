"""Every wire an answer can be streamed on, one encoder each, named after its wire or seed.

Each encodes the same canonical events (events.py) and nothing else: `ui_message_stream` (the AI
SDK's, with its chunk types in `ui_chunks`), `ndjson`, `data_stream` (AI SDK 4), and the seed contracts'
`seed_001`, `seed_002` and `seed_004` (their SSE framing in `sse`). `registry` names them for the routes.
"""

__all__ = [
    "data_stream",
    "ndjson",
    "registry",
    "seed_001",
    "seed_002",
    "seed_004",
    "sse",
    "ui_chunks",
    "ui_message_stream",
]
