"""What one conversation stores in PostgreSQL as it grows: every checkpoint kept, against the latest only.

    python3 tasks.py bench storage [--turns 1000] [--chars 200]

One conversation answers `--turns` turns of `--chars`-character messages (demo model, zero delay, no
HTTP) with threadline's PostgreSQL storage, in a scratch database on DATABASE_URL's server (else the
local one on 127.0.0.1:5432). "every checkpoint" is LangGraph's default, what threadline stored before;
"latest only" prunes after each turn as threadline does now (answers/turn.py). Printed at 10, 100 and 1,000
turns: the bytes the conversation's checkpoint rows take (`pg_column_size`, so after PostgreSQL's own
compression) and those bytes per turn, which stay flat only when storage grows linearly.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import string
import time
import uuid
from pathlib import Path
from tempfile import TemporaryDirectory

from threadline.agent.demo_model import DemoChatModel
from threadline.agent.graph import GraphOptions, build_graph
from threadline.answers.runner import run_graph
from threadline.answers.translator import TurnTranslator
from threadline.conversations.state import after_history, config_of
from threadline.settings import Settings, replaced
from threadline.storage.stores import open_storage
from threadline_testing.database import fresh_database, thread_footprint
from threadline_testing.turns import turn_request

MARKS = (10, 100, 1000)
ALPHABET = string.ascii_lowercase + " " * 5


async def grow(url: str, turns: int, chars: int, prune: bool) -> dict[int, int]:
    """Stored bytes of one conversation after each mark."""
    sizes = {}
    with TemporaryDirectory() as data_dir:
        settings = replaced(Settings(), model_provider="demo", database_url=url, data_dir=Path(data_dir))
        async with open_storage(settings.storage, after_history) as storage:
            graph = build_graph(
                DemoChatModel(token_delay=0),
                [],
                storage.checkpointer,
                GraphOptions(system_prompt="", max_model_calls=1),
            )
            thread_id = uuid.uuid4().hex
            words = random.Random(7)
            for turn in range(1, turns + 1):
                text = "".join(words.choices(ALPHABET, k=chars))  # text compresses about as much as prose
                request = turn_request(text)
                await run_graph(graph, config_of(thread_id), request, TurnTranslator(events_mode=False), lambda _: None)
                if prune:
                    await storage.checkpointer.aprune([thread_id])
                if turn in MARKS:
                    sizes[turn] = (await thread_footprint(url, thread_id))[1]
    return sizes


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--chars", type=int, default=200, help="characters in each user message")
    args = parser.parse_args()
    with TemporaryDirectory() as embedded, fresh_database(Path(embedded), variable="DATABASE_URL") as url:
        print(f"{args.turns} turns of {args.chars}-character messages; bytes stored (bytes per turn)")
        for label, prune in (("every checkpoint", False), ("latest only", True)):
            started = time.perf_counter()
            sizes = await grow(url, args.turns, args.chars, prune)
            cells = "  ".join(f"{turn:>5} turns: {size:>12,} ({size // turn:>9,})" for turn, size in sizes.items())
            print(f"{label:>16}: {cells}   [{time.perf_counter() - started:.0f} s]", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
