"""Checkpoint writes of many conversations share one batch (storage/saver.py): what one conversation writes
wrongly fails only that conversation's writes, and each conversation's writes land in the order made; what is
written aside (a trace) fails alone."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from threadline.storage.migrations import migrate
from threadline.storage.saver import PooledPostgresSaver, aside
from threadline.storage.schema import Schema
from threadline_testing.database import TEST_SCHEMA


@pytest.fixture
async def saver(database_url: str):
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    async with AsyncConnectionPool(database_url, min_size=1, max_size=4, kwargs=kwargs) as pool:
        await migrate(pool, Schema(TEST_SCHEMA))
        yield PooledPostgresSaver(pool)


def config_of(thread_id: str) -> dict:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


async def test_a_failing_write_fails_only_its_own_conversation_in_a_shared_batch(saver: PooledPostgresSaver):
    first = asyncio.create_task(saver.aput(config_of("batch-first"), empty_checkpoint(), {}, {}))
    broken = asyncio.create_task(
        saver.batches.write("batch-broken", [("INSERT INTO no_such_table VALUES (%s)", [(1,)])])
    )
    checkpoint = empty_checkpoint()
    fine = asyncio.create_task(saver.aput(config_of("batch-fine"), checkpoint, {}, {}))
    await asyncio.sleep(0)
    assert saver.batches.sender is not None
    assert len(saver.batches.queued) == 3, "the three writes wait for the same batch"

    await first
    with pytest.raises(Exception, match="no_such_table"):
        await broken
    await fine
    saved = await saver.aget_tuple(config_of("batch-fine"))
    assert saved is not None and saved.checkpoint["id"] == checkpoint["id"]


async def test_a_conversations_writes_land_in_the_order_made(saver: PooledPostgresSaver):
    # The same checkpoint written five times, while other conversations write too: the last write wins.
    checkpoint, config = empty_checkpoint(), config_of("in-order")
    writes = [
        saver.aput(config_of(f"beside-{step}"), empty_checkpoint(), {}, {}) if step % 2 else None for step in range(10)
    ]
    writes = [write or saver.aput(config, checkpoint, {"step": step}, {}) for step, write in enumerate(writes)]
    await asyncio.gather(*writes)
    latest = await saver.aget_tuple(config)
    assert latest is not None and latest.metadata["step"] == 8


async def test_a_steps_checkpoint_goes_in_the_batch_of_its_writes(saver: PooledPostgresSaver):
    # LangGraph writes a step's task writes, then, a turn or two of the event loop later, the step's checkpoint:
    # one answer at a time, both go out in one round trip.
    before, after = empty_checkpoint(), empty_checkpoint()
    await saver.aput(config_of("gathered"), before, {}, {})
    step = {"configurable": {**config_of("gathered")["configurable"], "checkpoint_id": before["id"]}}
    writes = asyncio.create_task(saver.aput_writes(step, [("messages", "hello")], "task-1"))
    await asyncio.sleep(0)
    checkpoint = asyncio.create_task(saver.aput(step, after, {}, {}))
    await asyncio.sleep(0)
    assert len(saver.batches.queued) == 2, "the checkpoint waits in the batch of the writes before it"
    await asyncio.gather(writes, checkpoint)
    latest = await saver.aget_tuple(config_of("gathered"))
    assert latest is not None and latest.checkpoint["id"] == after["id"]


async def test_a_write_aside_fails_alone_and_no_read_of_the_conversation_waits_for_it(saver: PooledPostgresSaver):
    # What an answer leaves after its stream (a trace, search words) rides the batch under a key of its own.
    checkpoint, config = empty_checkpoint(), config_of("aside-fine")
    fine = asyncio.create_task(saver.aput(config, checkpoint, {}, {}))
    trace = asyncio.create_task(
        saver.batches.write(aside("trace", "aside-fine"), [("INSERT INTO no_such_table VALUES (%s)", [(1,)])])
    )
    await asyncio.sleep(0)
    assert len(saver.batches.queued) == 2, "the two writes wait for the same batch"
    # A read of the conversation waits for what is in flight under its thread's key only.
    assert saver.in_flight.count == {"aside-fine": 1, aside("trace", "aside-fine"): 1}
    await fine
    with pytest.raises(Exception, match="no_such_table"):
        await trace
    saved = await saver.aget_tuple(config)
    assert saved is not None and saved.checkpoint["id"] == checkpoint["id"]
