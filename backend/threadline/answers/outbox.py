"""An answer's events on their way to its response: the answer puts each one as it comes, and the response takes
all that are waiting at once, so that under load one write carries many events.

A list and the one reader's future. `asyncio.Queue` did this before, for a single reader: per token a put with its
counter, event and wake-up, and a `get_nowait` to take it again; and per answer three deques and an `asyncio.Event`
(about 3 KB) that a running answer held however empty (docs/performance.md prices both).
"""

from __future__ import annotations

import asyncio
from typing import Any


class Outbox:
    __slots__ = ("_reader", "events")

    def __init__(self) -> None:
        self.events: list[Any] = []
        self._reader: asyncio.Future[None] | None = None  # the response waiting for an event, if it is

    def put(self, event: Any) -> None:
        self.events.append(event)
        reader = self._reader
        if reader is not None and not reader.done():
            reader.set_result(None)

    async def take(self) -> list[Any]:
        """Every event waiting, in order, once there is one."""
        while not self.events:
            self._reader = asyncio.get_running_loop().create_future()
            try:
                await self._reader
            finally:
                self._reader = None
        events, self.events = self.events, []
        return events

    def put_back(self, events: list[Any]) -> None:
        """Events taken and not used: the first to be taken again."""
        self.events[:0] = events
