"""What context compression costs a model call: the estimate alone (below the threshold), a stored summary
reused, and a summary made (with the demo model at zero delay, so the figure is our own work, not the
model's). Each case runs 2,000 times per round, 5 rounds; prints the median and the range in µs.

    python3 tasks.py bench context
"""

from __future__ import annotations

import asyncio
import statistics
import time

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from threadline.agent.compression import Compressor, ContextState
from threadline.agent.demo_model import DemoChatModel

ROUNDS, CALLS = 5, 2_000


def conversation(turns: int) -> list:
    messages = []
    for turn in range(turns):
        messages.append(HumanMessage(id=f"u{turn}", content=f"turn {turn}: " + "tell me more about tea. " * 6))
        messages.append(AIMessage(id=f"a{turn}", content="Tea is a drink made from leaves. " * 5))
    return messages


async def timed(case) -> list[float]:
    spreads = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(CALLS):
            await case()
        spreads.append((time.perf_counter() - started) / CALLS * 1e6)
    return spreads


async def main() -> None:
    system = SystemMessage(content="You are a helpful assistant.")
    model = DemoChatModel(token_delay=0)
    messages = conversation(40)
    roomy, tight = Compressor(model, 1_000_000), Compressor(model, 4_000)
    _, state = await tight.prompt(system, messages, None)
    assert state is not None
    reused: ContextState = state
    cases = {
        "below the threshold (estimate only)": lambda: roomy.prompt(system, messages, None),
        "summary reused": lambda: tight.prompt(system, messages, reused),
        "summary made (demo model, 0 delay)": lambda: tight.prompt(system, messages, None),
    }
    print(f"{len(messages)} messages; µs per model call, median (range) over {ROUNDS} rounds of {CALLS}")
    for name, case in cases.items():
        figures = await timed(case)
        print(f"{name:>40}: {statistics.median(figures):9.1f} ({min(figures):.1f}–{max(figures):.1f})")


if __name__ == "__main__":
    asyncio.run(main())
