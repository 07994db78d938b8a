"""What an agent's shape costs, in one process: the CPU of a 200-token answer streamed as the answers stream it
(`messages`, `updates` and `custom` modes, subgraphs included), with the in-memory checkpointer and two tools
bound, no HTTP and no PostgreSQL.

    python3 tasks.py bench shapes [--rounds 5] [--answers 200]

- the built-in agent (agent/graph.py): `create_agent`, flat, with threadline's middleware;
- `create_agent`, flat: the model node alone;
- `create_agent`, flat, with a middleware that has `before_agent` and `after_agent` hooks (where threadline's
  input and respond bookkeeping would go) and `wrap_model_call` / `wrap_tool_call` hooks (where compression,
  the call budget, attachments and approvals would go); the hooks do nothing here, so the row prices the shape;
- `create_agent` hosted the way a team's agent is (agent/hosting.py): inside threadline's input → agent → respond.

Rounds are interleaved; each figure is the median (min–max) over rounds.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from threadline.agent.attachments import FileReader
from threadline.agent.demo_model import DemoChatModel
from threadline.agent.graph import GraphOptions, build_graph
from threadline.agent.hosting import host_graph
from threadline.answers.runner import STREAM_MODES
from threadline_testing.turns import turn_request

PROMPT = "count to 200"
SYSTEM = "Be brief."


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    return expression


@tool
def clock(zone: str) -> str:
    """The time in a time zone."""
    return zone


class Bookkeeping(AgentMiddleware):
    """Hooks where threadline's own work would go, doing nothing: the question comes in before the agent."""

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"messages": [HumanMessage(PROMPT, id=uuid.uuid4().hex)]}

    async def aafter_agent(self, state: Any, runtime: Any) -> None:
        return None

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)


def shapes() -> dict[str, tuple[Any, Any]]:
    """Each shape's compiled graph and a function giving one answer's input."""
    model, tools = DemoChatModel(token_delay=0), [calculator, clock]
    builtin = build_graph(model, tools, InMemorySaver(), GraphOptions(system_prompt=SYSTEM, max_model_calls=5))
    flat = create_agent(model, tools, system_prompt=SYSTEM, checkpointer=InMemorySaver())
    hooked = create_agent(model, tools, system_prompt=SYSTEM, middleware=[Bookkeeping()], checkpointer=InMemorySaver())
    agent = create_agent(model, tools, system_prompt=SYSTEM)
    hosted = host_graph(agent, None, InMemorySaver(), InMemoryStore(), None, FileReader())
    return {
        "the built-in agent": (builtin, lambda: {"request": turn_request(PROMPT).graph_input()}),
        "create_agent, flat": (flat, lambda: {"messages": [HumanMessage(PROMPT)]}),
        "create_agent, flat, with bookkeeping and wrap hooks": (hooked, lambda: {"messages": []}),
        "create_agent, hosted in threadline's graph": (hosted, lambda: {"request": turn_request(PROMPT).graph_input()}),
    }


async def answer(graph: Any, given: Any) -> None:
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    async for _ in graph.astream(given(), config, stream_mode=STREAM_MODES, subgraphs=True):
        pass


async def main(rounds: int, answers: int) -> None:
    every = shapes()
    results: dict[str, list[float]] = {name: [] for name in every}
    for number in range(rounds):
        names = list(every)
        for name in names[number % len(names) :] + names[: number % len(names)]:
            graph, given = every[name]
            for _ in range(10):  # warm-up
                await answer(graph, given)
            started = time.process_time()
            for _ in range(answers):
                await answer(graph, given)
            results[name].append((time.process_time() - started) / answers * 1000)
    print(f"\n| shape | CPU per 200-token answer ({rounds} rounds) |\n|---|---|")
    for name, values in results.items():
        print(f"| {name} | {statistics.median(values):.2f} ms ({min(values):.2f}–{max(values):.2f}) |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--answers", type=int, default=200)
    arguments = parser.parse_args()
    import uvloop  # the event loop the server runs on (uvicorn[standard])

    uvloop.run(main(arguments.rounds, arguments.answers))
