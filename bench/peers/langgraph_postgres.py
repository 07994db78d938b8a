"""The equal-work peer: what a Python team hand-rolls *with* persistence. A one-node LangGraph graph (the same
demo model threadline uses, so the same answer) checkpointed by LangGraph's own AsyncPostgresSaver on a
psycopg pool, behind one Litestar route that turns `messages` stream mode into UI Message Stream chunks.

No identity, rate limit, running-answer record, conversation list, tools, traces or stop handling:
the difference to threadline is what those cost. Reads PORT, DATABASE_URL and DELAY_MS.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec
import uvicorn
from langchain_core.messages import AIMessageChunk, HumanMessage
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import START, MessagesState, StateGraph
from litestar import Litestar, Request, get, post
from litestar.response import Stream
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from threadline.agent.demo_model import DemoChatModel

MODEL = DemoChatModel(token_delay=float(os.environ.get("DELAY_MS", "0")) / 1000)
STATE: dict[str, Any] = {}


async def respond(state: MessagesState) -> dict[str, Any]:
    return {"messages": [await MODEL.ainvoke(state["messages"])]}


def sse(chunk: dict[str, Any]) -> bytes:
    return b"data: " + msgspec.json.encode(chunk) + b"\n\n"  # as a team that cares for speed would


async def answer(text: str, thread_id: str) -> AsyncIterator[bytes]:
    yield sse({"type": "start"}) + sse({"type": "start-step"}) + sse({"type": "text-start", "id": "t"})
    config = {"configurable": {"thread_id": thread_id}}
    async for message, _ in STATE["graph"].astream(
        {"messages": [HumanMessage(content=text)]}, config, stream_mode="messages"
    ):
        if isinstance(message, AIMessageChunk) and message.text:
            yield sse({"type": "text-delta", "id": "t", "delta": str(message.text)})
    yield sse({"type": "text-end", "id": "t"}) + sse({"type": "finish-step"}) + sse({"type": "finish"})
    yield b"data: [DONE]\n\n"


@post("/api/chat", status_code=200)
async def chat(request: Request) -> Stream:
    body = await request.json()
    text = "".join(part.get("text", "") for part in body["messages"][-1]["parts"])
    return Stream(answer(text, body["id"]), media_type="text/event-stream")


@get("/health")
async def health() -> str:
    return "ok"


@asynccontextmanager
async def lifespan(app: Litestar) -> AsyncIterator[None]:
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    async with AsyncConnectionPool(os.environ["DATABASE_URL"], max_size=10, kwargs=kwargs) as pool:
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        await saver.setup()
        builder = StateGraph(MessagesState)
        builder.add_node("respond", respond)
        builder.add_edge(START, "respond")
        STATE["graph"] = builder.compile(checkpointer=saver)
        yield


if __name__ == "__main__":
    app = Litestar([chat, health], lifespan=[lifespan])
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning", access_log=False)
