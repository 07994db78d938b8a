"""Requests per key, a moving window kept in memory or shared through Redis.

The key is mostly the client's network address (see http/client_address.py), not its anonymous client id:
a visitor who drops the cookie would otherwise get a fresh allowance with every request. Seed 004's
per-user limit (`chat-stream`) is counted per visitor id, on top of the per-address one.
"""

from __future__ import annotations

import logging
import math
import time

from limits import parse
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from threadline.refusals import Refused

log = logging.getLogger(__name__)


class RateLimit:
    """Requests per key in one namespace: `chat` for answers, `api` for every other request (both keyed by
    client address), `chat-stream` for seed 004's per-visitor limit."""

    def __init__(self, limit: str, storage_url: str, namespace: str = "chat") -> None:
        self.item = parse(limit)
        self.namespace = namespace
        if storage_url.startswith(("redis://", "rediss://")):
            storage = storage_from_string(f"async+{storage_url}", implementation="redispy")
            self.description = f"{limit}, shared through Redis"
        else:
            storage = storage_from_string("async+memory://")
            self.description = f"{limit}, in this process"
        self.limiter = MovingWindowRateLimiter(storage)

    async def hit(self, address: str, cost: int = 1) -> float | None:
        """Count one request (or `cost` units); None when allowed, else the seconds until it would be."""
        try:
            if await self.limiter.hit(self.item, self.namespace, address, cost=cost):
                return None
            reset_at, _remaining = await self.limiter.get_window_stats(self.item, self.namespace, address)
        except Exception:  # a rate-limit store that is down must not take the chat down with it
            log.warning("rate limit store unavailable; request allowed", exc_info=True)
            return None
        return max(1.0, math.ceil(reset_at - time.time()))

    async def check(self, address: str, cost: int = 1) -> None:
        """Count one request (or `cost` units); Refused (RATE_LIMITED, with the seconds to wait) when over."""
        if (retry_after := await self.hit(address, cost)) is not None:
            seconds = int(retry_after)
            raise Refused("RATE_LIMITED", f"Too many requests. Try again in {seconds} s.", retry_after=seconds)
