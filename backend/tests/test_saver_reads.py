"""A conversation's latest checkpoint, read by the process that wrote or read it last: its channel values are
reused, not read and decoded again, only while that checkpoint is still the latest (storage/saver.py)."""

from __future__ import annotations

from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import START, StateGraph, add_messages
from langgraph.types import interrupt
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from threadline.storage.fallback import DatabaseHealth, FallbackCheckpointer
from threadline.storage.migrations import migrate
from threadline.storage.saver import PooledPostgresSaver
from threadline.storage.schema import Schema


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def answer(state: State) -> dict[str, list[AnyMessage]]:
    said = state["messages"][-1].content
    if said == "ask me":
        reply = interrupt("which one?")  # a pending write the next read must still see
        return {"messages": [AIMessage(f"you chose {reply}")]}
    return {"messages": [AIMessage(f"{len(state['messages'])} messages so far")]}


def graph(checkpointer: FallbackCheckpointer):
    builder = StateGraph(State)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    return builder.compile(checkpointer=checkpointer)


async def processes(database_url: str, count: int) -> tuple[list[AsyncConnectionPool], list[FallbackCheckpointer]]:
    """`count` checkpointers on one database, as `count` server processes have."""
    schema, pools, savers = Schema("threadline"), [], []
    for _ in range(count):
        kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
        pool = AsyncConnectionPool(database_url, open=False, kwargs=kwargs, configure=schema.configure)
        await pool.open(wait=True)
        await migrate(pool, schema)
        pools.append(pool)
        savers.append(FallbackCheckpointer(PooledPostgresSaver(pool), DatabaseHealth(), lambda old, new: new))
    return pools, savers


def config(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


async def test_the_latest_checkpoint_is_the_databases_whoever_wrote_it(database_url):
    pools, (one, other) = await processes(database_url, 2)
    try:
        first, second = graph(one), graph(other)
        await first.ainvoke({"messages": [HumanMessage("hello")]}, config("t"))
        held = one.latest["t"]
        read = await one.aget_tuple(config("t"))
        assert read is not None and read.config == held.config
        assert read.checkpoint["channel_values"]["messages"] == held.checkpoint["channel_values"]["messages"]
        read.checkpoint["channel_values"]["messages"].append(HumanMessage("changed in place"))
        assert len(held.checkpoint["channel_values"]["messages"]) == 2, "a reader's list is its own"

        await second.ainvoke({"messages": [HumanMessage("again, elsewhere")]}, config("t"))  # another process
        newer = await one.aget_tuple(config("t"))
        assert newer is not None and newer.config != held.config
        assert [message.content for message in newer.checkpoint["channel_values"]["messages"]] == [
            "hello",
            "1 messages so far",
            "again, elsewhere",
            "3 messages so far",
        ]
        state = await first.aget_state(config("t"))
        assert len(state.values["messages"]) == 4
    finally:
        for pool in pools:
            await pool.close()


async def test_what_a_paused_answer_wrote_after_its_checkpoint_is_read_with_it(database_url):
    pools, (one,) = await processes(database_url, 1)
    try:
        app = graph(one)
        await app.ainvoke({"messages": [HumanMessage("ask me")]}, config("p"))
        assert one.latest["p"].pending_writes in (None, [])  # what it holds knows nothing of the interrupt
        read = await one.aget_tuple(config("p"))
        assert read is not None and any(channel == "__interrupt__" for _, channel, _ in read.pending_writes)
        state = await app.aget_state(config("p"))
        assert state.interrupts and state.interrupts[0].value == "which one?"
    finally:
        for pool in pools:
            await pool.close()
