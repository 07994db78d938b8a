"""When PostgreSQL goes away mid-conversation, conversations go on in memory and are saved when it returns.

`FallbackCheckpointer` wraps LangGraph's Postgres checkpointer. It remembers the newest checkpoint of
recently used conversations; when a read or write fails, that conversation's state moves to an
in-memory checkpointer and carries on there. For a few seconds after a failure the database is not
tried at all (a dead server would otherwise cost a pool timeout per write). A background loop writes
the newest in-memory checkpoint of each such conversation back once the database answers again.
Whoever is streaming is told through `current_turn` (a `data-warning` chunk).

A conversation this process had no copy of goes on from nothing; what it says meanwhile is saved after the
history the database kept (`after_history`, the conversation's own reducers), never over it.

A write PostgreSQL refuses for what it holds (a data error) is not an outage: it never pauses the
database for others; that one conversation goes to memory and is retried on its own (`SaveRetries`).
"""

from __future__ import annotations

import asyncio
import logging
import select
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence, Set
from datetime import UTC, datetime
from typing import Any

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    copy_checkpoint,
)
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.memory import InMemorySaver
from psycopg_pool import AsyncConnectionPool

from threadline.storage.saver import READ_AHEAD, PooledPostgresSaver, ReadAhead
from threadline.turn_context import current_turn

log = logging.getLogger(__name__)

# The database cannot be reached: everything waits for it (see DatabaseHealth). Any other psycopg.Error
# is about what was written (a value PostgreSQL refuses) and concerns that one conversation only.
CONNECTION_ERRORS = (psycopg.OperationalError, psycopg.InterfaceError, OSError, TimeoutError)
WARNING_CODE = "DATABASE_UNAVAILABLE"
WARNING_TEXT = (
    "Your conversation cannot be saved right now; it goes on, and it will be saved as soon as the database is back."
)


# A conversation's state from its history and what was said while the database was away, as one state.
MergeStates = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]


def warn_current_turn() -> None:
    if (turn := current_turn.get()) is not None:
        turn.warn(WARNING_CODE, WARNING_TEXT)


async def closed_while_idle(conn: psycopg.AsyncConnection[Any]) -> None:
    """The pool's check of a connection it hands out: one the server closed while it idled (a restart of PostgreSQL
    ends every session) has its end of file waiting, so its socket is readable. Only then is it tried with a round
    trip, and a dead one is replaced: a restart no longer fails the first use of each pooled connection, which made
    the whole database look down for `DatabaseHealth.pause` seconds. A poll of the socket, not a query, per use."""
    readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    if readable:
        await AsyncConnectionPool.check_connection(conn)


class DatabaseHealth:
    """Shared by everything that talks to PostgreSQL: after a failure, skip it for `pause` seconds."""

    def __init__(self, pause: float = 3.0) -> None:
        self.pause = pause
        self.down_until = 0.0

    @property
    def down(self) -> bool:
        return time.monotonic() < self.down_until

    def failed(self, what: str, exc: BaseException, **context: Any) -> None:
        if not self.down:
            log.error("database unavailable during %s: %s", what, exc, extra=context)
        self.down_until = time.monotonic() + self.pause


class SaveRetries:
    """Conversations whose save PostgreSQL refused (a data error, not an outage): each is retried on its own
    with a doubling delay, then quarantined, so one conversation that cannot be saved never holds up others."""

    def __init__(self, first_delay: float = 2.0, attempts: int = 5) -> None:
        self.first_delay = first_delay
        self.attempts = attempts
        self.failing: dict[str, tuple[int, float]] = {}  # key → (failures so far, when to try next)
        self.quarantined: set[str] = set()

    def due(self, key: str) -> bool:
        return key not in self.quarantined and time.monotonic() >= self.failing.get(key, (0, 0.0))[1]

    def failed(self, key: str, what: str, exc: BaseException) -> None:
        failures = self.failing.get(key, (0, 0.0))[0] + 1
        if failures >= self.attempts:
            self.failing.pop(key, None)
            self.quarantined.add(key)
            log.error(
                "quarantined %s after %d failed attempts at %s (%s): it stays in this process's memory only",
                key,
                failures,
                what,
                exc,
                extra={"conversation_id": key},
            )
            return
        delay = self.first_delay * 2 ** (failures - 1)
        self.failing[key] = (failures, time.monotonic() + delay)
        log.warning(
            "could not save %s during %s (%s); retrying in %.0f s",
            key,
            what,
            exc,
            delay,
            extra={"conversation_id": key},
        )

    def succeeded(self, key: str) -> None:
        self.failing.pop(key, None)

    def forget(self, key: str) -> None:
        self.failing.pop(key, None)
        self.quarantined.discard(key)

    def refused(self, key: str) -> bool:
        """Whether the key is held back by a data error rather than by an outage."""
        return key in self.failing or key in self.quarantined


async def save_each(
    keys: Iterable[str], save: Callable[[str], Awaitable[None]], retries: SaveRetries, health: DatabaseHealth, what: str
) -> int:
    """Save each key's record on its own: an outage ends the round (everything waits for the database), a
    value PostgreSQL refuses holds back that key alone, retried later with back-off. How many were saved."""
    saved = 0
    for key in keys:
        if not retries.due(key):
            continue
        try:
            await save(key)
        except CONNECTION_ERRORS as exc:
            health.failed(what, exc)
            break
        except psycopg.Error as exc:
            retries.failed(key, what, exc)
            continue
        retries.succeeded(key)
        saved += 1
    return saved


def _thread(config: RunnableConfig) -> str:
    return str(config["configurable"]["thread_id"])


class FallbackCheckpointer(BaseCheckpointSaver[Any]):
    def __init__(
        self,
        primary: BaseCheckpointSaver[Any],
        health: DatabaseHealth,
        after_history: MergeStates,
        remember: int = 2048,
    ) -> None:
        super().__init__(serde=primary.serde)
        self.primary = primary
        self.health = health
        self.after_history = after_history  # a history's channel values and what came after them, as one state
        self.memory = InMemorySaver(serde=primary.serde)
        self.latest: OrderedDict[str, CheckpointTuple] = OrderedDict()
        self.remember = remember
        self.unsaved: set[str] = set()  # conversations whose newest state is only in memory
        self.unread: set[str] = set()  # ... of which this process had no copy: their history is in the database
        self.retries = SaveRetries()
        self.lock = asyncio.Lock()

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.primary.get_next_version(current, channel)

    def _keep(self, thread_id: str, item: CheckpointTuple) -> None:
        self.latest[thread_id] = item
        self.latest.move_to_end(thread_id)
        if len(self.latest) > self.remember:
            self.latest.popitem(last=False)

    def _uses_primary(self, thread_id: str) -> bool:
        return thread_id not in self.unsaved and not self.health.down

    def _failed(self, thread_id: str, what: str, exc: psycopg.Error | OSError) -> None:
        """An outage pauses the database for everyone; a refused value moves only this conversation."""
        if isinstance(exc, CONNECTION_ERRORS):
            self.health.failed(what, exc, conversation_id=thread_id)
            warn_current_turn()
        else:
            self.retries.failed(thread_id, what, exc)

    async def _move_to_memory(self, thread_id: str) -> None:
        if thread_id in self.unsaved:
            return
        self.unsaved.add(thread_id)
        if (item := self.latest.get(thread_id)) is None:
            self.unread.add(thread_id)
        else:
            checkpoint = item.checkpoint
            await self.memory.aput(
                item.parent_config or _root(item.config), checkpoint, item.metadata, checkpoint["channel_versions"]
            )

    def read_ahead(self, thread_id: str) -> ReadAhead | None:
        """A read of the conversation's latest checkpoint to send in the round trip that records its answer; None
        where the run reads for itself (a conversation kept in memory, the database down)."""
        if isinstance(self.primary, PooledPostgresSaver) and self._uses_primary(thread_id):
            return ReadAhead(self.primary, thread_id, self.latest.get(thread_id))
        return None

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread_id = _thread(config)
        ahead: ReadAhead | None = config["configurable"].get(READ_AHEAD)  # the run's first read: made already
        if ahead is not None and self._uses_primary(thread_id):
            taken, found = ahead.take(config)
            if taken:
                if found is not None:
                    self._keep(thread_id, found)
                return found
        if self._uses_primary(thread_id):
            try:
                if isinstance(self.primary, PooledPostgresSaver):  # what this process holds need not be read again
                    item = await self.primary.aget_tuple(config, known=self.latest.get(thread_id))
                else:
                    item = await self.primary.aget_tuple(config)
            except (psycopg.Error, *CONNECTION_ERRORS) as exc:
                self._failed(thread_id, "a checkpoint read", exc)
            else:
                if item is not None and "checkpoint_id" not in config["configurable"]:
                    self._keep(thread_id, item)
                return item
        elif not self.retries.refused(thread_id):
            warn_current_turn()
        async with self.lock:
            await self._move_to_memory(thread_id)
            return await self.memory.aget_tuple(config)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        thread_id = _thread(config)
        if self._uses_primary(thread_id):
            try:
                saved = await self.primary.aput(config, checkpoint, metadata, new_versions)
            except (psycopg.Error, *CONNECTION_ERRORS) as exc:
                self._failed(thread_id, "a checkpoint write", exc)
            else:
                self._keep(thread_id, CheckpointTuple(saved, checkpoint, metadata, _parent(config)))
                return saved
        elif not self.retries.refused(thread_id):
            warn_current_turn()
        async with self.lock:
            await self._move_to_memory(thread_id)
            # Every channel, not only the new ones: older values live in the database we cannot reach.
            return await self.memory.aput(config, checkpoint, metadata, checkpoint["channel_versions"])

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        thread_id = _thread(config)
        if self._uses_primary(thread_id):
            try:
                return await self.primary.aput_writes(config, writes, task_id, task_path)
            except (psycopg.Error, *CONNECTION_ERRORS) as exc:
                self._failed(thread_id, "a checkpoint write", exc)
        elif not self.retries.refused(thread_id):
            warn_current_turn()
        async with self.lock:
            await self._move_to_memory(thread_id)
            await self.memory.aput_writes(config, writes, task_id, task_path)

    async def alist(self, config: RunnableConfig | None, **kwargs: Any) -> AsyncIterator[CheckpointTuple]:
        source = self.memory if config and _thread(config) in self.unsaved else self.primary
        async for item in source.alist(config, **kwargs):
            yield item

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Prune in the database only: a conversation kept in memory has a single checkpoint there anyway."""
        saved = [thread_id for thread_id in thread_ids if thread_id not in self.unsaved]
        if saved and not self.health.down:
            await self.primary.aprune(saved, strategy=strategy)

    async def adelete_thread(self, thread_id: str) -> None:
        await self.primary.adelete_thread(thread_id)
        await self.forget(thread_id)

    async def forget(self, thread_id: str) -> None:
        async with self.lock:
            self.unsaved.discard(thread_id)
            self.unread.discard(thread_id)
            self.retries.forget(thread_id)
            self.latest.pop(thread_id, None)
            await self.memory.adelete_thread(thread_id)

    def waiting_for_database(self) -> set[str]:
        """Conversations in memory because the database was unreachable (not because it refused them)."""
        return {thread_id for thread_id in self.unsaved if not self.retries.refused(thread_id)}

    def _after(self, history: CheckpointTuple, meanwhile: CheckpointTuple) -> CheckpointTuple:
        """The checkpoint that follows `history` with what was said `meanwhile`, in memory, from nothing."""
        step = history.metadata.get("step", -1) + 1
        checkpoint = copy_checkpoint(history.checkpoint)  # a new id, newer than any: it is the conversation's latest
        checkpoint["id"], checkpoint["ts"] = str(uuid6(clock_seq=step)), datetime.now(UTC).isoformat()
        values = self.after_history(history.checkpoint["channel_values"], meanwhile.checkpoint["channel_values"])
        for channel, value in values.items():
            checkpoint["channel_values"][channel] = value
            checkpoint["channel_versions"][channel] = self.get_next_version(
                checkpoint["channel_versions"].get(channel), None
            )
        metadata = CheckpointMetadata(source="update", step=step, parents={})
        return CheckpointTuple(history.config, checkpoint, metadata, history.config)

    async def save_unsaved(self, skip: Set[str] = frozenset()) -> int:
        """Write each in-memory conversation's newest checkpoint to the database; how many were saved."""
        if not self.unsaved or self.health.down:
            return 0

        async def save(thread_id: str) -> None:
            root = _root({"configurable": {"thread_id": thread_id}})
            item = await self.memory.aget_tuple(root)
            if item is not None and thread_id in self.unread and (history := await self.primary.aget_tuple(root)):
                item = self._after(history, item)
            if item is not None:
                config = item.parent_config or _root(item.config)
                versions = item.checkpoint["channel_versions"]
                stored = await self.primary.aput(config, item.checkpoint, item.metadata, versions)
                self._keep(thread_id, CheckpointTuple(stored, item.checkpoint, item.metadata, item.parent_config))
            self.unsaved.discard(thread_id)
            self.unread.discard(thread_id)
            await self.memory.adelete_thread(thread_id)

        async with self.lock:
            saved = await save_each(
                list(self.unsaved - skip), save, self.retries, self.health, "saving a conversation kept in memory"
            )
        if saved:
            log.info("saved %d conversation(s) kept in memory", saved)
        return saved


PARENT_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id")


def _parent(config: RunnableConfig) -> RunnableConfig:
    """The part of a run's config that names the checkpoint a new one follows. The whole config also holds the
    run's callbacks, and through them its answer with everything it streamed: kept with the copy, every recent
    conversation's last answer would stay in memory."""
    configurable = config["configurable"]
    return {"configurable": {key: configurable[key] for key in PARENT_KEYS if key in configurable}}


def _root(config: RunnableConfig) -> RunnableConfig:
    """A config naming the thread only (no parent checkpoint), in the root namespace."""
    return {"configurable": {"thread_id": _thread(config), "checkpoint_ns": ""}}
