"""What counting requests in memory costs: one process's CPU while 200 requests a second are counted against a
moving window, with 10, 1000 or 5000 clients seen in that window, by threadline's windows and by the `limits`
library's own in-memory storage (which http/rate_limit.py used before). A benchmark, never a test:

    python3 tasks.py bench rate-limit [--rounds 3]

The loop that paces the requests costs a few percent of a core by itself; both rows include it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from limits import parse
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string
from threadline.http.rate_limit import MovingWindows

LIMIT = "1000/minute"
PER_SECOND, SECONDS = 200, 3


async def share_of_a_core(clients: int, hit) -> float:
    for client in range(clients):  # every client has been seen once in the window
        await hit(f"client-{client}")
    started = time.process_time()
    for n in range(PER_SECOND * SECONDS):
        await hit(f"client-{n % clients}")
        await asyncio.sleep(1 / PER_SECOND)
    return (time.process_time() - started) / SECONDS * 100


def ours():
    item = parse(LIMIT)
    windows = MovingWindows(item.amount, item.get_expiry())

    async def hit(key: str) -> bool:
        return windows.hit(key) is None

    return hit


def the_librarys():
    limiter, item = MovingWindowRateLimiter(storage_from_string("async+memory://")), parse(LIMIT)

    async def hit(key: str) -> bool:
        return await limiter.hit(item, "chat", key)

    return hit


def main(rounds: int) -> None:
    print(f"{PER_SECOND} requests a second:")
    print("| clients in the window | threadline's windows | `limits`' async memory storage |")
    print("|---|---|---|")
    for clients in (10, 1000, 5000):
        figures = {name: [] for name in ("ours", "theirs")}
        for _ in range(rounds):  # interleaved
            figures["ours"].append(asyncio.run(share_of_a_core(clients, ours())))
            figures["theirs"].append(asyncio.run(share_of_a_core(clients, the_librarys())))
        cells = [f"{statistics.median(v):.0f} % of a core ({min(v):.0f}–{max(v):.0f})" for v in figures.values()]
        print(f"| {clients} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    main(parser.parse_args().rounds)
