"""Requests per key, a moving window kept in memory or shared through Redis.

The key is mostly the client's network address (see http/client_address.py), not its anonymous client id:
a visitor who drops the cookie would otherwise get a fresh allowance with every request. Seed 004's
per-user limit (`chat-stream`) is counted per visitor id, on top of the per-address one.

In memory, each key's window is its own requests, expired as the key is hit, and a key whose window is empty is
dropped once per window's length. `limits`' own in-memory storage sweeps every key after every hit instead, with
a worker-thread hop per key (at 200 requests a second, half a core with 10 keys and more than one with 1000
clients seen in the last minute, against 5 % here: `python3 tasks.py bench rate-limit`), and keeps a list entry
per unit counted (a byte quota: 839 MB for 100 MB of files).
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable

from limits import parse
from limits.aio.strategies import MovingWindowRateLimiter, RateLimiter, SlidingWindowCounterRateLimiter
from limits.storage import storage_from_string

from threadline.refusals import Refused

log = logging.getLogger(__name__)


class RateLimit:
    """Requests per key in one namespace: `chat` for answers, `api` for every other request (both keyed by
    client address), `chat-stream` for seed 004's per-visitor limit.

    `sums`: a quota that one hit spends many units of (bytes). Through Redis it is counted by `limits`' sliding
    window counter, two numbers per key: its moving window keeps a list entry per unit, ten million for a 10 MB
    file, pushed by a script that holds Redis meanwhile."""

    def __init__(self, limit: str, storage_url: str, namespace: str = "chat", *, sums: bool = False) -> None:
        self.item = parse(limit)
        self.namespace = namespace
        self.shared: RateLimiter | None = None
        self.windows: MovingWindows | None = None
        self.store_down = False  # said once when Redis stops answering, once when it is back
        if storage_url.startswith(("redis://", "rediss://")):
            storage = storage_from_string(f"async+{storage_url}", implementation="redispy")
            self.shared = (SlidingWindowCounterRateLimiter if sums else MovingWindowRateLimiter)(storage)
            self.description = f"{limit}, shared through Redis"
        else:
            self.windows = MovingWindows(self.item.amount, self.item.get_expiry())
            self.description = f"{limit}, in this process"

    async def hit(self, address: str, cost: int = 1) -> float | None:
        """Count one request (or `cost` units); None when allowed, else the seconds until it would be."""
        if self.windows is not None:
            reset_at = self.windows.hit(address, cost)
        else:
            assert self.shared is not None
            reset_at = await self._shared_hit(self.shared, address, cost)
        return None if reset_at is None else max(1.0, math.ceil(reset_at - time.time()))

    async def _shared_hit(self, limiter: RateLimiter, address: str, cost: int) -> float | None:
        try:
            if await limiter.hit(self.item, self.namespace, address, cost=cost):
                return None
            reset_at, _remaining = await limiter.get_window_stats(self.item, self.namespace, address)
        except Exception as error:  # noqa: BLE001 - fail open: a store that is down must not take the chat down
            if not self.store_down:
                self.store_down = True
                log.error(
                    "%s limit: Redis is unavailable (%s); requests are allowed unlimited until it is back",
                    self.namespace,
                    error,
                )
            return None
        if self.store_down:
            self.store_down = False
            log.warning("%s limit: Redis answers again; requests are limited again", self.namespace)
        return reset_at

    async def check(self, address: str, cost: int = 1) -> None:
        """Count one request (or `cost` units); Refused (RATE_LIMITED, with the seconds to wait) when over."""
        if (retry_after := await self.hit(address, cost)) is not None:
            seconds = int(retry_after)
            raise Refused("RATE_LIMITED", f"Too many requests. Try again in {seconds} s.", retry_after=seconds)


class Window:
    """One key's requests in the last `seconds`: (time, cost) each, and their total cost."""

    __slots__ = ("entries", "total")

    def __init__(self) -> None:
        self.entries: deque[tuple[float, int]] = deque()
        self.total = 0

    def since(self, start: float) -> Window:
        while self.entries and self.entries[0][0] <= start:
            self.total -= self.entries.popleft()[1]
        return self


class MovingWindows:
    """`limits`' moving window, in this process: at most `limit` units per key in any `seconds`."""

    def __init__(self, limit: int, seconds: int, clock: Callable[[], float] = time.time) -> None:
        self.limit = limit
        self.seconds = seconds
        self.clock = clock
        self.windows: dict[str, Window] = {}
        self.next_sweep = clock() + seconds

    def hit(self, key: str, cost: int = 1) -> float | None:
        """Count `cost` units for `key`: None when allowed, else the time at which they would be."""
        now = self.clock()
        if now >= self.next_sweep:  # keys nobody used for a whole window: forgotten
            start = now - self.seconds
            self.windows = {known: window for known, window in self.windows.items() if window.since(start).total}
            self.next_sweep = now + self.seconds
        if (window := self.windows.get(key)) is None:
            window = self.windows[key] = Window()
        if window.since(now - self.seconds).total + cost > self.limit:
            return (window.entries[0][0] if window.entries else now) + self.seconds
        window.entries.append((now, cost))
        window.total += cost
        return None
