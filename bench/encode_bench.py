"""Encoding cost per chunk for each wire: how many chunks per second one core turns into bytes.

Encodes a 200-token answer (text deltas framed by the usual start, step and finish events) over and
over through each wire's encoder, as the server does. A benchmark, never a test; run it by hand:

    .venv/bin/python bench/encode_bench.py
"""

from __future__ import annotations

import asyncio
import time

from threadline import events as ev
from threadline.wires.registry import WIRES

ANSWER = [
    ev.Start(message_id="m1", conversation_id="c1", model="demo:demo", created_at="2026-01-01T00:00:00.000Z"),
    ev.StepStart(),
    ev.TextStart(id="text-1"),
    *(ev.TextDelta(id="text-1", delta=f" token{n}") for n in range(200)),
    ev.TextEnd(id="text-1"),
    ev.StepFinish(),
    ev.Finish(finish_reason="stop", finished_at="2026-01-01T00:00:01.000Z"),
]


async def _events():
    for event in ANSWER:
        yield [event]


async def chunks_per_second(wire: str, seconds: float = 2.0) -> tuple[float, float]:
    encode = WIRES[wire].encode
    answers = 0
    total_bytes = 0
    deadline = time.perf_counter() + seconds
    started = time.process_time()
    while time.perf_counter() < deadline:
        async for chunk in encode(_events()):
            total_bytes += len(chunk)
        answers += 1
    cpu = time.process_time() - started
    return answers * len(ANSWER) / cpu, total_bytes / answers


async def main() -> None:
    print(f"{'wire':<18} {'chunks/s (one core)':>20} {'µs per chunk':>13} {'bytes per answer':>17}")
    for wire in WIRES:
        rate, size = await chunks_per_second(wire)
        print(f"{wire:<18} {rate:>20,.0f} {1e6 / rate:>13.2f} {size:>17,.0f}")


if __name__ == "__main__":
    asyncio.run(main())
