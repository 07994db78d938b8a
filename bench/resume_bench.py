"""Replay lag across processes: how long after a text delta reaches the answer's own connection (on
process A) does a reader resuming it on process B (GET /api/chat/{id}/stream) get the same delta.

Two servers share one PostgreSQL; an answer streams 300 tokens 20 ms apart on A; B's reader attaches
after the first deltas and follows the rest. Prints the lag's percentiles per round. A benchmark, never a
test: run it by hand

    python3 tasks.py bench resume [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid

import httpx
from stream_bench import start_server
from threadline_testing.ports import free_port
from threadline_testing.sse import aevents_of

TOKENS = 300


async def deltas(response: httpx.Response, seen: dict[int, float]) -> None:
    """Record when each text delta arrives, by its position in the answer."""
    index = 0
    async for chunk in aevents_of(response):
        if chunk["type"] == "text-delta":
            seen[index] = time.perf_counter()
            index += 1
        elif chunk["type"] == "finish":
            return


async def one_round(first: str, second: str) -> list[float]:
    conversation_id = uuid.uuid4().hex
    body = {
        "id": conversation_id,
        "messages": [{"role": "user", "parts": [{"type": "text", "text": f"count to {TOKENS}"}]}],
    }
    original: dict[int, float] = {}
    resumed: dict[int, float] = {}
    async with httpx.AsyncClient(base_url=first, timeout=60) as a, httpx.AsyncClient(base_url=second, timeout=60) as b:
        await a.get("/api/conversations")
        b.cookies = a.cookies
        async with a.stream("POST", "/api/chat", json=body) as answer:
            reading = asyncio.create_task(deltas(answer, original))
            while len(original) < 10:
                await asyncio.sleep(0.01)
            async with b.stream("GET", f"/api/chat/{conversation_id}/stream") as replay:
                assert replay.status_code == 200, replay.status_code
                await deltas(replay, resumed)
            await reading
    # Deltas that were already written when B attached arrive at once: only those after it count.
    attached = min(resumed.values())
    return [(resumed[i] - original[i]) * 1000 for i in original if i in resumed and original[i] > attached + 0.3]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        ports = free_port(), free_port()
        servers = [start_server(port, data_dir, token_delay_ms=20) for port in ports]
        try:
            first, second = (f"http://127.0.0.1:{port}" for port in ports)
            print("round  deltas  lag p50   p95    max")
            for number in range(1, args.rounds + 1):
                lags = asyncio.run(one_round(first, second))
                q = statistics.quantiles(lags, n=100)
                print(f"{number:5}  {len(lags):6}  {q[49]:6.0f}ms {q[94]:5.0f}ms {max(lags):5.0f}ms")
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=30)


if __name__ == "__main__":
    main()
