"""A conversation's latest checkpoint, read by the process that wrote or read it last: its channel values are
reused, not read and decoded again, only while that checkpoint is still the latest; read ahead, in the round trip
that records an answer, it is what the run starts from (storage/saver.py)."""

from __future__ import annotations

from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import START, StateGraph, add_messages
from langgraph.types import Command, interrupt
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from threadline.storage.fallback import DatabaseHealth, FallbackCheckpointer
from threadline.storage.migrations import migrate
from threadline.storage.saver import READ_AHEAD, PooledPostgresSaver
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


async def read_ahead(pool: AsyncConnectionPool, saver: FallbackCheckpointer, thread: str):
    """The conversation's latest checkpoint read in another statement's round trip, as an answer's rows carry it."""
    ahead = saver.read_ahead(thread)
    assert ahead is not None
    async with pool.connection() as conn:
        async with conn.pipeline():
            await conn.execute("SELECT 1")
            await ahead.send(conn)
    await ahead.receive()
    return ahead


def run_config(thread: str, ahead) -> dict:
    return {"configurable": {"thread_id": thread, READ_AHEAD: ahead}}


async def test_a_run_starts_from_the_checkpoint_read_ahead_and_reads_for_itself_only_after(database_url):
    pools, (one, other) = await processes(database_url, 2)
    try:
        first, second = graph(one), graph(other)
        ahead = await read_ahead(pools[0], one, "r")
        assert ahead.found is None, "a new conversation has no checkpoint"
        await first.ainvoke({"messages": [HumanMessage("hello")]}, run_config("r", ahead))
        assert not ahead.usable, "the run's first read took it"

        await second.ainvoke({"messages": [HumanMessage("again, elsewhere")]}, config("r"))  # another process
        ahead = await read_ahead(pools[0], one, "r")  # what `one` holds is no longer the latest
        result = await first.ainvoke({"messages": [HumanMessage("and here")]}, run_config("r", ahead))
        assert not ahead.usable
        assert [message.content for message in result["messages"]] == [
            "hello",
            "1 messages so far",
            "again, elsewhere",
            "3 messages so far",
            "and here",
            "5 messages so far",
        ]
        ahead = await read_ahead(pools[0], one, "r")  # now it is: its values are reused
        assert ahead.found is not None and ahead.found.config == one.latest["r"].config
        assert ahead.take(config("other thread")) == (False, None), "only its own conversation's read takes it"
        result = await first.ainvoke({"messages": [HumanMessage("once more")]}, run_config("r", ahead))
        assert len(result["messages"]) == 8 and not ahead.usable
        state = await first.aget_state(run_config("r", ahead))  # taken once: a later read reads again
        assert len(state.values["messages"]) == 8
    finally:
        for pool in pools:
            await pool.close()


async def test_an_interrupt_read_ahead_is_resumed(database_url):
    pools, (one,) = await processes(database_url, 1)
    try:
        app = graph(one)
        await app.ainvoke({"messages": [HumanMessage("ask me")]}, config("q"))
        ahead = await read_ahead(pools[0], one, "q")
        assert ahead.found is not None and any(
            channel == "__interrupt__" for _, channel, _ in ahead.found.pending_writes
        )
        result = await app.ainvoke(Command(resume="the blue one"), run_config("q", ahead))
        assert result["messages"][-1].content == "you chose the blue one"
    finally:
        for pool in pools:
            await pool.close()
