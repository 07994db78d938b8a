"""LangGraph's AsyncPostgresSaver, fitted to a connection pool that many conversations use at once.

Changes to the library's saver, each measured (`python3 tasks.py bench checkpoint`, `bench breakdown`):

- It guards every query with one `asyncio.Lock`, which a single shared connection needs and a pool does
  not (langgraph issue #7259): every conversation's checkpoints would queue behind each other. A
  semaphore the size of the pool takes its place. The lock also kept a read behind the writes queued
  before it; LangGraph writes checkpoints in the background while the answer goes on, so a read of a
  conversation now waits for that conversation's writes in flight, and a tool that reads its own
  conversation mid-answer sees the steps before it.
- It sends each checkpoint write as a round trip of its own, nine per answer of the three-node graph,
  several at once on as many pooled connections. `BatchedWrites` sends the writes of every conversation in
  one batch at a time, and what LangGraph writes while a batch is on its way joins the next one: under load
  one round trip carries the steps of many answers (at c=64, 12.2 → 10.6–10.9 ms of server CPU per answer
  against batches of one conversation each).
- Its `aprune(strategy="keep_latest")` takes about twenty statements, one round trip each, in a transaction
  of its own; it runs after every answer. `aprune` below does the same in one statement (see `KEEP_LATEST`),
  sent in the next batch.
- It encodes each checkpoint in a worker thread (`asyncio.to_thread`). A chat's checkpoint takes
  microseconds to encode, and the hand-over to the thread and back costs more: about 1 ms of each
  answer's latency, over nine writes and a read. `aput`, `aput_writes` and `_load_checkpoint_tuple`
  below are the library's own (3.2) with the encoding and decoding done in place.
- It reads and decodes every channel's blob of the conversation's latest checkpoint at each answer's start: at
  turn 300, 600 messages rebuilt one by one, a quarter of the answer's CPU. `aget_tuple` is given the checkpoint
  this process holds of the conversation (the fallback keeps the latest it wrote or read, storage/fallback.py)
  and, in the same single statement, reads the blobs only when the latest is another: a checkpoint's values
  never change, so while it is still the latest the held values are the same (lists and dicts copied, so a
  reducer that changes a value in place changes the reader's only). Pending writes are read either way.
- Its read of the conversation's latest checkpoint is a round trip of its own at the start of each run, after the
  round trip that records the answer (answers/active.py). `ReadAhead` sends the same read in that round trip, and
  the run's first read takes what it found (storage/fallback.py): one round trip fewer before the first token,
  each of which costs every answer starting at that moment a turn of the event loop's queue.
- It inserts each blob, checkpoint and pending write with a statement of its own, 23 for a two-token answer:
  a batch merges them into one insert per table (storage/merged_inserts.py).
- It encodes every message of the conversation again at each step; `EncodedOnce` keeps each message's
  and each answer record's bytes after its first write (storage/encoded_once.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from threadline.storage.encoded_once import EncodedOnce
from threadline.storage.merged_inserts import Statement, merged


class WritesInFlight:
    """Per conversation, how many checkpoint writes have not finished, and who waits for them to."""

    def __init__(self) -> None:
        self.count: dict[str, int] = {}
        self.waiting: dict[str, asyncio.Event] = {}

    def begin(self, thread_id: str) -> None:
        self.count[thread_id] = self.count.get(thread_id, 0) + 1

    def end(self, thread_id: str) -> None:
        if left := self.count.pop(thread_id) - 1:
            self.count[thread_id] = left
        elif (event := self.waiting.pop(thread_id, None)) is not None:
            event.set()

    async def settled(self, thread_id: str) -> None:
        while thread_id in self.count:
            await self.waiting.setdefault(thread_id, asyncio.Event()).wait()
            # LangGraph starts a checkpoint queued behind the one that just ended on the next turn of the
            # event loop; look again after it.
            await asyncio.sleep(0)


# Turns of the event loop a batch waits for what else is being written: LangGraph queues a step's checkpoint two
# turns after the step's writes (one answer at a time, 7 batches per answer became 5 with two turns). Ten: sending a
# batch is work on the same event loop, and answers that are starting reach their model call first (LangGraph writes
# in the background; the run's end still waits for its writes). Two-token answers at c=64: first text-delta p50
# 103 -> 42 ms at the same CPU per answer (docs/performance.md).
GATHERING_TURNS = 10

# Whose writes (a conversation's thread, or a key of `aside`'s), its statements, its writer.
Write = tuple[str, list[Statement], "asyncio.Future[None]"]


class BatchedWrites:
    """Every conversation's checkpoint writes, sent in batches: one batch in flight at a time, and what LangGraph
    writes meanwhile, for any conversation, goes out together in the next, as one pipeline (one round trip and
    one commit). Under load a batch carries the steps of many answers at once; alone, a write waits a few turns of
    the event loop, for the checkpoint LangGraph writes after it and for the answers starting meanwhile.
    A conversation's writes land in the order they were made. A batch the database refuses is rolled back
    whole (one pipeline, one transaction) and sent again a conversation at a time, so only the writes of the
    conversation that failed fail; reads wait until every write of theirs has landed.

    What an answer leaves after its stream (its trace, its conversation's search words) goes in the same batches,
    each under a key of its own (`aside`): a round trip of their own cost an answer about 0.2 ms of CPU each under
    load, and what fails of them fails alone, without holding up a read of the conversation."""

    def __init__(self, saver: PooledPostgresSaver) -> None:
        self.saver = saver
        self.queued: list[Write] = []
        self.sender: asyncio.Task[None] | None = None

    async def write(self, key: str, statements: list[Statement]) -> None:
        """Land `statements` with the next batch; `key`: the conversation's thread, or a key of `aside`'s."""
        future = asyncio.get_running_loop().create_future()
        self.saver.in_flight.begin(key)
        self.queued.append((key, statements, future))
        if self.sender is None:
            self.sender = asyncio.create_task(self._send())
        await future

    async def _send(self) -> None:
        try:
            while self.queued:
                batch = await self._gathered()
                try:
                    outcome = await self._sent(batch)
                    if _refused(outcome) and len({write[0] for write in batch}) > 1:
                        await self._one_conversation_at_a_time(batch)
                    else:
                        _settle(batch, outcome)
                finally:
                    for key, _, _ in batch:
                        self.saver.in_flight.end(key)
                if outcome is not None and not isinstance(outcome, Exception):
                    raise outcome
        finally:
            self.sender = None

    async def _gathered(self) -> list[Write]:
        """The next batch: what is queued once the event loop has run what was ready a few times (a step's
        checkpoint follows its task's writes within as many turns, and so goes out with them, a round trip fewer)."""
        for _ in range(GATHERING_TURNS):
            await asyncio.sleep(0)
        batch, self.queued = self.queued, []
        return batch

    async def _one_conversation_at_a_time(self, batch: list[Write]) -> None:
        by_thread: dict[str, list[Write]] = {}
        for write in batch:
            by_thread.setdefault(write[0], []).append(write)
        for writes in by_thread.values():
            _settle(writes, await self._sent(writes))

    async def _sent(self, batch: list[Write]) -> BaseException | None:
        """Send a batch as one pipeline; what went wrong, if anything."""
        try:
            checkpoints: list[Statement] = []
            others: list[Statement] = []  # they touch no checkpoint table: sent after them
            for key, statements, _ in batch:
                (others if is_aside(key) else checkpoints).extend(statements)
            async with self.saver._cursor(pipeline=True) as cur:
                for query, rows in [*merged(checkpoints), *others]:
                    await cur.executemany(query, rows)
        except BaseException as exc:  # noqa: BLE001 - handed to every writer of the batch, which raises it
            return exc
        return None


ASIDE = "\0"  # what an `aside` key begins with: never a thread id, which PostgreSQL's text cannot hold a NUL of


def aside(what: str, key: str) -> str:
    """A key for writes that touch no checkpoint table (`what` of `key`): a read of a conversation does not wait
    for them, a refused one fails alone, and a batch sends them after its checkpoint writes."""
    return f"{ASIDE}{what} {key}"


def is_aside(key: str) -> bool:
    return key.startswith(ASIDE)


def _refused(outcome: BaseException | None) -> bool:
    """Whether the database refused a statement (it names why: a SQLSTATE), which may be one conversation's
    alone; a connection that failed or never came fails every write, and is not tried again one by one."""
    return isinstance(outcome, psycopg.Error) and outcome.sqlstate is not None


def _settle(batch: list[Write], outcome: BaseException | None) -> None:
    for _, _, future in batch:
        if future.done():  # its writer was cancelled; the write went out all the same
            continue
        if outcome is None:
            future.set_result(None)
        elif isinstance(outcome, asyncio.CancelledError):
            future.cancel()
        else:
            future.set_exception(outcome)


# Everything of a conversation but its latest checkpoint, in one statement. Only what is older than the
# latest goes: checkpoint ids (uuid6) and channel versions (zero-padded counters) grow with time, so a
# checkpoint or blob an answer starting meanwhile writes is never taken, even when its blobs are written
# before its checkpoint row. A hosted agent (agent/hosting.py) checkpoints in a namespace of its own per
# run: a run that returned left its namespace older than the latest checkpoint, and it goes; a run that
# waits for the person (an interrupt) wrote its own after the latest, and it stays until it is resumed.
KEEP_LATEST = """
WITH latest AS (
    SELECT checkpoint_id, checkpoint -> 'channel_versions' AS versions FROM checkpoints
    WHERE thread_id = %(thread_id)s AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1
), writes AS (
    DELETE FROM checkpoint_writes w USING latest
    WHERE w.thread_id = %(thread_id)s AND w.checkpoint_ns = '' AND w.checkpoint_id < latest.checkpoint_id
), older AS (
    DELETE FROM checkpoints c USING latest
    WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = '' AND c.checkpoint_id < latest.checkpoint_id
), blobs AS (
    DELETE FROM checkpoint_blobs b USING latest
    WHERE b.thread_id = %(thread_id)s AND b.checkpoint_ns = '' AND b.version < latest.versions ->> b.channel
), agent_writes AS (
    DELETE FROM checkpoint_writes w USING latest
    WHERE w.thread_id = %(thread_id)s AND w.checkpoint_ns <> '' AND w.checkpoint_id < latest.checkpoint_id
), agent_checkpoints AS (
    DELETE FROM checkpoints c USING latest
    WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns <> '' AND c.checkpoint_id < latest.checkpoint_id
), agent_blobs AS (
    DELETE FROM checkpoint_blobs b USING latest
    WHERE b.thread_id = %(thread_id)s AND b.checkpoint_ns <> '' AND NOT EXISTS (
        SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
        AND c.checkpoint_id >= latest.checkpoint_id
    )
)
UPDATE checkpoints c SET parent_checkpoint_id = NULL FROM latest
WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = '' AND c.checkpoint_id = latest.checkpoint_id
"""

Pool = AsyncConnectionPool[AsyncConnection[DictRow]]  # connections that return rows as dicts
# A common table expression that commits its statement's transaction without waiting for PostgreSQL to flush it
# to disk (`synchronous_commit` off for that transaction alone); the statement must read it to run it.
UNFLUSHED = "unflushed AS (SELECT set_config('synchronous_commit', 'off', true))"
# LangGraph's read of a checkpoint (`SELECT_SQL`), but for the blobs of its channels when the checkpoint is the one
# named first (`%s`): the caller holds those values. A pending write is read either way.
_BLOBS = "    (\n        select array_agg(array[bl.channel::bytea, bl.type::bytea, bl.blob])"
LATEST_UNLESS_KNOWN = AsyncPostgresSaver.SELECT_SQL.replace(
    _BLOBS, "    CASE WHEN checkpoint_id = %s THEN NULL ELSE" + _BLOBS.removeprefix("   ")
).replace("    ) as channel_values,", "    ) END as channel_values,")


def _reusable(config: RunnableConfig, known: CheckpointTuple) -> dict[str, Any] | None:
    """The channel values of `known` a read of the conversation's latest checkpoint may use instead of its blobs:
    for the root graph's latest only, never a delta channel's, each list, dict or set copied (a reducer that changes
    its value in place must not change what this process holds)."""
    configurable = config["configurable"]
    if configurable.get("checkpoint_id") or configurable.get("checkpoint_ns", ""):
        return None
    if known.config["configurable"].get("checkpoint_ns", "") or "channel_values" not in known.checkpoint:
        return None
    values = known.checkpoint["channel_values"]
    if any(isinstance(value, _DeltaSnapshot) for value in values.values()):
        return None
    return {key: value.copy() if isinstance(value, list | dict | set) else value for key, value in values.items()}


READ_AHEAD = "__threadline_read_ahead"  # the run config's key for a ReadAhead ("__": never in a checkpoint's metadata)


class ReadAhead:
    """A conversation's latest checkpoint, read in the round trip of another statement (the one that records the
    answer) instead of in one of its own when the run starts. The run's first read of the conversation's latest
    checkpoint takes it, once; a read ahead that found nothing it can hand over leaves that read to the run."""

    __slots__ = ("found", "known_id", "known_values", "saver", "sent", "thread_id", "usable")

    def __init__(self, saver: PooledPostgresSaver, thread_id: str, known: CheckpointTuple | None) -> None:
        self.saver = saver
        self.thread_id = thread_id
        root: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        self.known_values = None if known is None else _reusable(root, known)
        self.known_id = (
            None if known is None or self.known_values is None else known.config["configurable"]["checkpoint_id"]
        )
        self.sent: psycopg.AsyncCursor[DictRow] | None = None
        self.found: CheckpointTuple | None = None
        self.usable = False

    async def send(self, conn: AsyncConnection[DictRow]) -> None:
        """Queue the read in `conn`'s pipeline; not while a write of the conversation is on its way (a read must
        see it, and waits for it when the run reads)."""
        if self.thread_id in self.saver.in_flight.count:
            return
        latest = LATEST_UNLESS_KNOWN + "WHERE thread_id = %s AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1"
        self.sent = await conn.execute(latest, (self.known_id, self.thread_id), binary=True)

    async def receive(self) -> None:
        """Once the round trip is back: decode what it found, as `aget_tuple` would."""
        sent, known_values, self.sent, self.known_values = self.sent, self.known_values, None, None
        if sent is None or self.thread_id in self.saver.in_flight.count:
            return
        row = await sent.fetchone()
        if row is not None and row["checkpoint"]["v"] < 4:  # pending sends to move first: LangGraph's own read
            return
        try:
            if row is None:
                self.found = None
            elif row["checkpoint_id"] == self.known_id:
                self.found = await self.saver._load_checkpoint_tuple(row, known_values)
            else:
                self.found = await self.saver._load_checkpoint_tuple(row)
        except Exception:  # noqa: BLE001 - the answer is recorded all the same; the run's own read says what failed
            return
        self.usable = True

    def take(self, config: RunnableConfig) -> tuple[bool, CheckpointTuple | None]:
        """For the run's first read of this conversation's latest checkpoint: whether it was read ahead, and what
        was found (then let go of: the answer holds its read ahead to its end); any other read, and a second one,
        reads for itself."""
        configurable = config["configurable"]
        if not self.usable or configurable["thread_id"] != self.thread_id or configurable.get("checkpoint_ns", ""):
            return False, None
        if configurable.get("checkpoint_id"):
            return False, None
        found, self.found, self.usable = self.found, None, False
        return True, found


class PooledPostgresSaver(AsyncPostgresSaver):
    def __init__(self, pool: Pool) -> None:
        super().__init__(pool, serde=EncodedOnce())
        self.lock = asyncio.Semaphore(pool.max_size)  # type: ignore[assignment]  # the library types it a Lock
        self.in_flight = WritesInFlight()
        self.batches = BatchedWrites(self)

    async def aget_tuple(self, config: RunnableConfig, known: CheckpointTuple | None = None) -> CheckpointTuple | None:
        """The checkpoint `config` names, or the conversation's latest. `known`: a checkpoint of the conversation
        this process holds (the one it wrote or read last): when it is still the latest, its channel values are
        used as they are, not read and decoded again (a long conversation's messages are most of a read)."""
        thread_id = config["configurable"]["thread_id"]
        await self.in_flight.settled(thread_id)
        if known is None or (values := _reusable(config, known)) is None:
            return await super().aget_tuple(config)
        async with self._cursor() as cursor:
            await cursor.execute(
                LATEST_UNLESS_KNOWN + "WHERE thread_id = %s AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
                (known.config["configurable"]["checkpoint_id"], thread_id),
                binary=True,
            )
            row = await cursor.fetchone()
        if row is None or row["checkpoint"]["v"] < 4:  # none, or one from before pending sends moved: LangGraph's way
            return await super().aget_tuple(config)
        if row["checkpoint_id"] != known.config["configurable"]["checkpoint_id"]:
            return await self._load_checkpoint_tuple(row)  # another answer wrote a newer one: read as usual
        return await self._load_checkpoint_tuple(row, values)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        configurable = config["configurable"].copy()
        thread_id = configurable.pop("thread_id")
        checkpoint_ns = configurable.pop("checkpoint_ns")
        checkpoint_id = configurable.pop("checkpoint_id", None)
        copy = checkpoint.copy()
        copy["channel_values"] = copy["channel_values"].copy()
        next_config: RunnableConfig = {
            "configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint["id"]}
        }
        # Primitive values stay inline in the checkpoint row; the others go to the blobs table.
        blob_values = {}
        for key, value in checkpoint["channel_values"].items():
            if isinstance(value, _DeltaSnapshot):
                blob_values[key] = copy["channel_values"].pop(key)
                copy["channel_values"][key] = True
            elif not (value is None or isinstance(value, (str, int, float, bool))):
                blob_values[key] = copy["channel_values"].pop(key)
        blob_versions = {key: version for key, version in new_versions.items() if key in blob_values}
        blobs = self._dump_blobs(thread_id, checkpoint_ns, blob_values, blob_versions) if blob_versions else None
        row = (
            thread_id,
            checkpoint_ns,
            checkpoint["id"],
            checkpoint_id,
            Jsonb(copy),
            Jsonb(get_serializable_checkpoint_metadata(config, metadata)),
        )
        statements: list[Statement] = [(self.UPSERT_CHECKPOINT_BLOBS_SQL, blobs)] if blobs else []
        await self.batches.write(thread_id, [*statements, (self.UPSERT_CHECKPOINTS_SQL, [row])])
        return next_config

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        query = (
            self.UPSERT_CHECKPOINT_WRITES_SQL
            if all(write[0] in WRITES_IDX_MAP for write in writes)
            else self.INSERT_CHECKPOINT_WRITES_SQL
        )
        configurable = config["configurable"]
        params = self._dump_writes(
            configurable["thread_id"],
            configurable["checkpoint_ns"],
            configurable["checkpoint_id"],
            task_id,
            task_path,
            writes,
        )
        await self.batches.write(configurable["thread_id"], [(query, params)])

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        if strategy != "keep_latest":
            await super().aprune(thread_ids, strategy=strategy)
            return
        await asyncio.gather(
            *(self.batches.write(thread_id, [(KEEP_LATEST, [{"thread_id": thread_id}])]) for thread_id in thread_ids)
        )

    async def _load_checkpoint_tuple(self, value: DictRow, known: dict[str, Any] | None = None) -> CheckpointTuple:
        def config(checkpoint_id: str) -> RunnableConfig:
            return {
                "configurable": {
                    "thread_id": value["thread_id"],
                    "checkpoint_ns": value["checkpoint_ns"],
                    "checkpoint_id": checkpoint_id,
                }
            }

        checkpoint: Checkpoint = {  # type: ignore[typeddict-item]  # the stored row holds the other keys
            **value["checkpoint"],
            "channel_values": {
                **(value["checkpoint"].get("channel_values") or {}),
                **(self._load_blobs(value["channel_values"]) if known is None else known),
            },
        }
        parent = config(value["parent_checkpoint_id"]) if value["parent_checkpoint_id"] else None
        return CheckpointTuple(
            config(value["checkpoint_id"]),
            checkpoint,
            value["metadata"],
            parent,
            self._load_writes(value["pending_writes"]),
        )
