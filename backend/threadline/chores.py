"""Work a process does on its own, hourly, for as long as it runs: dropping old traces, unused uploads and
conversations past their retention."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

HOUR = 3600.0


async def hourly(work: Callable[[], Awaitable[int]], done: str, failed: str, every: float = HOUR) -> None:
    """Run `work` now and then every `every` seconds. How much it did is logged with `done` (a `%d` format) when
    it did anything; a failure is logged with `failed`, and the next round tries again."""
    while True:
        try:
            if count := await work():
                log.info(done, count)
        except Exception:
            log.warning(failed, exc_info=True)
        await asyncio.sleep(every)
