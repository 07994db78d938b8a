"""Where an answer's CPU goes: each layer of the token path measured on its own, in one process.

    python3 tasks.py bench layers [--answers 200]

Every row adds one layer to the previous one, for a 200-token answer from the demo model at zero delay
with the in-memory checkpointer (no HTTP, no PostgreSQL), so the differences price the layers:
the model's own chunks, LangChain's streaming wrapper, a LangGraph run of the conversation graph,
LangGraph's `messages` + `updates` stream modes as a hand-written server reads them, and threadline's own
run (the `messages` handler attached directly: runner.py), translator and SSE encoder.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from threadline.agent.demo_model import DemoChatModel
from threadline.agent.graph import GraphOptions, TurnRequest, build_graph
from threadline.answers.runner import run_graph
from threadline.answers.translator import TurnTranslator
from threadline.serving.gc_tuning import tune_for_serving
from threadline.wires.ui_message_stream import encode_event
from threadline_testing.turns import turn_request

PROMPT = "count to 200"
model = DemoChatModel(token_delay=0)
graph = build_graph(model, [], InMemorySaver(), GraphOptions(system_prompt="", max_model_calls=2))


def request() -> TurnRequest:
    return turn_request(PROMPT)


def thread() -> dict:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


async def model_chunks() -> None:
    async for _ in model._astream([HumanMessage(PROMPT)]):
        pass


async def langchain_stream() -> None:
    async for _ in model.astream([HumanMessage(PROMPT)]):
        pass


async def graph_run() -> None:
    await graph.ainvoke({"request": request().graph_input()}, thread())


async def graph_stream() -> None:
    async for _ in graph.astream(
        {"request": request().graph_input()}, thread(), stream_mode=["messages", "updates", "custom"]
    ):
        pass


async def threadline_events() -> None:
    await run_graph(graph, uuid.uuid4().hex, request(), TurnTranslator(events_mode=False), encode_event)


LAYERS = [
    ("the demo model's own chunks", model_chunks),
    ("LangChain astream around them", langchain_stream),
    ("a LangGraph run of the graph (no streaming)", graph_run),
    ("LangGraph messages + updates streams", graph_stream),
    ("threadline's run: messages as they come, translator, SSE encoder", threadline_events),
]


async def cpu_ms(layer, answers: int) -> float:
    for _ in range(10):
        await layer()
    started = time.process_time()
    for _ in range(answers):
        await layer()
    return (time.process_time() - started) / answers * 1000


async def main(answers: int) -> None:
    tune_for_serving()  # as `threadline serve` does
    print("| layer | CPU per 200-token answer | per token |")
    print("|---|---|---|")
    for name, layer in LAYERS:
        ms = await cpu_ms(layer, answers)
        print(f"| {name} | {ms:.2f} ms | {ms * 1000 / 200:.1f} µs |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=200)
    asyncio.run(main(parser.parse_args().answers))
