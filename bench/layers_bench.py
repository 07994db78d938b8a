"""Where an answer's CPU goes: each layer of the token path measured on its own, in one process.

    python3 tasks.py bench layers [--answers 200] [--rounds 5] [--tokens 200]

Every row adds one layer to the previous one, for a 200-token answer from the demo model at zero delay
with the in-memory checkpointer (no HTTP, no PostgreSQL), so the differences price the layers:
the model's own chunks, LangChain's streaming wrapper, a LangGraph run of the conversation graph,
LangGraph's `messages` + `updates` stream modes as a hand-written server reads them, and threadline's own
run (the `messages` handler attached directly: runner.py), translator and SSE encoder. Under the ladder, the
equal-work peer's graph (bench/peers/langgraph_postgres.py: one node calling the model, its `messages` stream) on
the same checkpointer: with `--tokens 2`, what a run of each graph costs besides its tokens.

The process is tuned as `threadline serve` tunes its own (`threadline.serving.tune_process`). Each round runs
every layer, in an order rotated from round to round, on a graph with a checkpointer of its own: run one after
the other in a fixed order, the last rows paid for the checkpoints the first ones left. Each figure is the median
(min–max) over the rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from peers.langgraph_postgres import respond
from threadline.agent.demo_model import DemoChatModel
from threadline.agent.graph import Graph, GraphOptions, TurnRequest, build_graph
from threadline.answers.runner import run_graph
from threadline.answers.translator import TurnTranslator
from threadline.conversations.state import config_of
from threadline.serving import tune_process
from threadline.wires.ui_message_stream import encode_event
from threadline_testing.turns import turn_request

PROMPT = "count to 200"
model = DemoChatModel(token_delay=0)


def threadline_graph() -> Graph:
    return build_graph(model, [], InMemorySaver(), GraphOptions(system_prompt="", max_model_calls=2))


def one_node_graph() -> Graph:
    return StateGraph(MessagesState).add_node(respond).add_edge(START, "respond").compile(InMemorySaver())


graph: Graph  # both built for each round (fresh_graphs)
peer_graph: Graph


def fresh_graphs() -> None:
    """Both graphs, with empty checkpointers: what a round's answers leave is not the next round's cost."""
    global graph, peer_graph
    graph, peer_graph = threadline_graph(), one_node_graph()


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
    await run_graph(graph, config_of(uuid.uuid4().hex), request(), TurnTranslator(events_mode=False), encode_event)


async def peer_stream() -> None:
    async for _ in peer_graph.astream({"messages": [HumanMessage(PROMPT)]}, thread(), stream_mode="messages"):
        pass


LAYERS = [
    ("the demo model's own chunks", model_chunks),
    ("LangChain astream around them", langchain_stream),
    ("a LangGraph run of the graph (no streaming)", graph_run),
    ("LangGraph messages + updates streams", graph_stream),
    ("threadline's run: messages as they come, translator, SSE encoder", threadline_events),
    ("the equal-work peer's one-node graph, its messages stream", peer_stream),
]


Layer = Callable[[], Awaitable[None]]


async def cpu_ms(layer: Layer, answers: int) -> float:
    for _ in range(10):
        await layer()
    started = time.process_time()
    for _ in range(answers):
        await layer()
    return (time.process_time() - started) / answers * 1000


async def main(answers: int, rounds: int, tokens: int) -> None:
    global PROMPT
    PROMPT = f"count to {tokens}"
    tune_process()  # as `threadline serve` does
    measured: dict[str, list[float]] = {name: [] for name, _ in LAYERS}
    for round_number in range(rounds):
        fresh_graphs()
        turn = round_number % len(LAYERS)
        for name, layer in LAYERS[turn:] + LAYERS[:turn]:
            measured[name].append(await cpu_ms(layer, answers))
    print(f"| layer | CPU per {tokens}-token answer | per token |")
    print("|---|---|---|")
    for name, figures in measured.items():
        ms = statistics.median(figures)
        print(f"| {name} | {ms:.2f} ms ({min(figures):.2f}–{max(figures):.2f}) | {ms * 1000 / tokens:.1f} µs |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=200, help="the answer's length (the demo model counts)")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.answers, arguments.rounds, arguments.tokens))
