"""What the seed contracts' wires share: each event a JSON `data:` line, a batch one write, no terminator."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any

import msgspec

from threadline import events as ev

json_of = msgspec.json.Encoder().encode


def as_text(value: Any) -> str:
    """A tool's output as the text these contracts carry: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json_of(value).decode()


async def sse_events(
    batches: AsyncIterable[list[ev.Event]], payloads: Callable[[ev.Event], list[Any]]
) -> AsyncIterator[bytes]:
    """`payloads` turns one canonical event into the contract's events (none, one or several)."""
    async for batch in batches:
        if out := [payload for event in batch for payload in payloads(event)]:
            yield b"".join([b"data: " + json_of(payload) + b"\n\n" for payload in out])
