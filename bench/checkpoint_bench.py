"""What checkpointing to PostgreSQL costs a turn, measured in one process with threadline's own storage.

    python3 tasks.py bench checkpoint [--answers 300]

The conversation graph answers 200-token turns one at a time (demo model, zero delay, no HTTP), each in a
new conversation, once with the in-memory checkpointer and once with threadline's PostgreSQL storage
(FallbackCheckpointer over LangGraph's AsyncPostgresSaver; DATABASE_URL, else a local server on
127.0.0.1:5432, else the embedded one), in interleaved rounds. Printed per turn: the checkpoint writes
LangGraph makes, and what PostgreSQL adds to the answer's latency and CPU against memory.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from contextlib import AsyncExitStack
from pathlib import Path

import uvloop
from layers_bench import request
from stream_bench import database_url
from threadline.agent.demo_model import DemoChatModel
from threadline.agent.graph import GraphOptions, build_graph
from threadline.answers.runner import run_graph
from threadline.answers.translator import TurnTranslator
from threadline.conversations.state import after_history, config_of
from threadline.serving.gc_tuning import tune_for_serving
from threadline.settings import Settings, replaced
from threadline.storage.stores import open_storage


class WriteCounter:
    """Counts the checkpoint writes (checkpoints and pending writes) of the checkpointer it wraps."""

    def __init__(self, checkpointer) -> None:
        self.writes = 0
        for name in ("aput", "aput_writes"):
            setattr(checkpointer, name, self._counted(getattr(checkpointer, name)))

    def _counted(self, write):
        async def counted(*args, **kwargs):
            self.writes += 1
            return await write(*args, **kwargs)

        return counted


async def answer(graph) -> float:
    started = time.perf_counter()
    await run_graph(graph, config_of(uuid.uuid4().hex), request(), TurnTranslator(events_mode=False), lambda _: None)
    return time.perf_counter() - started


async def measure(graph, counter: WriteCounter, answers: int) -> dict:
    latencies = []
    counter.writes = 0
    cpu = time.process_time()
    for _ in range(answers):
        latencies.append(await answer(graph))
    cpu = (time.process_time() - cpu) / answers
    return {"latency": statistics.median(latencies) * 1000, "cpu": cpu * 1000, "writes": counter.writes / answers}


async def main(answers: int, rounds: int) -> None:
    tune_for_serving()  # as `threadline serve` does
    results: dict[str, list[dict]] = {"memory": [], "postgres": []}
    with tempfile.TemporaryDirectory() as data_dir:
        async with AsyncExitStack() as stack:
            graphs = {}
            for backend in results:
                settings = replaced(
                    Settings(),
                    model_provider="demo",
                    model_name="demo",
                    memory_backend=backend,
                    data_dir=Path(data_dir),
                    database_url=database_url(),
                )
                storage = await stack.enter_async_context(open_storage(settings.storage, after_history))
                counter = WriteCounter(storage.checkpointer)
                graph = build_graph(
                    DemoChatModel(token_delay=0),
                    [],
                    storage.checkpointer,
                    GraphOptions(system_prompt="", max_model_calls=2),
                )
                await measure(graph, counter, 30)  # warm-up
                graphs[backend] = graph, counter
            for _ in range(rounds):  # interleaved, so both see the same machine
                for backend, (graph, counter) in graphs.items():
                    results[backend].append(await measure(graph, counter, answers))
    memory, postgres = (
        {key: statistics.median(r[key] for r in rounds_) for key in rounds_[0]} for rounds_ in results.values()
    )
    print(
        f"| per turn (200-token answer, one at a time; medians of {rounds} rounds) | in memory | PostgreSQL "
        "| added by PostgreSQL |"
    )
    print("|---|---|---|---|")
    print(
        f"| checkpoint writes (checkpoints and pending writes) | {memory['writes']:.0f} | {postgres['writes']:.0f} | |"
    )
    print(
        f"| answer latency p50 | {memory['latency']:.2f} ms | {postgres['latency']:.2f} ms | "
        f"{postgres['latency'] - memory['latency']:.2f} ms |"
    )
    print(
        f"| CPU per answer | {memory['cpu']:.2f} ms | {postgres['cpu']:.2f} ms | "
        f"{postgres['cpu'] - memory['cpu']:.2f} ms |"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    uvloop.run(main(arguments.answers, arguments.rounds))
