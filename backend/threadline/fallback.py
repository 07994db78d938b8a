"""When PostgreSQL goes away mid-conversation, conversations go on in memory and are saved when it returns.

`FallbackCheckpointer` wraps LangGraph's Postgres checkpointer. It remembers the newest checkpoint of
recently used conversations; when a read or write fails, that conversation's state moves to an
in-memory checkpointer and carries on there. For a few seconds after a failure the database is not
tried at all (a dead server would otherwise cost a pool timeout per write). A background loop writes
the newest in-memory checkpoint of each such conversation back once the database answers again.
Whoever is streaming is told through `current_turn` (a `data-warning` chunk).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from typing import Any

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (BaseCheckpointSaver, ChannelVersions, Checkpoint, CheckpointMetadata,
                                       CheckpointTuple)
from langgraph.checkpoint.memory import InMemorySaver

from threadline.turns import current_turn

log = logging.getLogger("threadline.fallback")

DB_ERRORS = (psycopg.Error, OSError, TimeoutError)
WARNING_CODE = "DATABASE_UNAVAILABLE"
WARNING_TEXT = ("Your conversation cannot be saved right now; it goes on, and it will be saved as soon as "
                "the database is back.")


def warn_current_turn() -> None:
    if (turn := current_turn.get()) is not None:
        turn.warn(WARNING_CODE, WARNING_TEXT)


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


def _thread(config: RunnableConfig) -> str:
    return config["configurable"]["thread_id"]


class FallbackCheckpointer(BaseCheckpointSaver):
    def __init__(self, primary: BaseCheckpointSaver, health: DatabaseHealth, remember: int = 2048) -> None:
        super().__init__(serde=primary.serde)
        self.primary = primary
        self.health = health
        self.memory = InMemorySaver(serde=primary.serde)
        self.latest: OrderedDict[str, CheckpointTuple] = OrderedDict()
        self.remember = remember
        self.unsaved: set[str] = set()  # conversations whose newest state is only in memory
        self.lock = asyncio.Lock()

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.primary.get_next_version(current, channel)

    def _keep(self, thread_id: str, item: CheckpointTuple) -> None:
        self.latest[thread_id] = item
        self.latest.move_to_end(thread_id)
        if len(self.latest) > self.remember:
            self.latest.popitem(last=False)

    async def _move_to_memory(self, thread_id: str) -> None:
        if thread_id in self.unsaved:
            return
        self.unsaved.add(thread_id)
        if (item := self.latest.get(thread_id)) is not None:
            checkpoint = item.checkpoint
            await self.memory.aput(item.parent_config or _root(item.config), checkpoint, item.metadata,
                                   checkpoint["channel_versions"])

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread_id = _thread(config)
        if thread_id not in self.unsaved and not self.health.down:
            try:
                item = await self.primary.aget_tuple(config)
            except DB_ERRORS as exc:
                self.health.failed("a checkpoint read", exc, conversation_id=thread_id)
            else:
                if item is not None and "checkpoint_id" not in config["configurable"]:
                    self._keep(thread_id, item)
                return item
        warn_current_turn()
        async with self.lock:
            await self._move_to_memory(thread_id)
            return await self.memory.aget_tuple(config)

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        thread_id = _thread(config)
        if thread_id not in self.unsaved and not self.health.down:
            try:
                saved = await self.primary.aput(config, checkpoint, metadata, new_versions)
            except DB_ERRORS as exc:
                self.health.failed("a checkpoint write", exc, conversation_id=thread_id)
            else:
                self._keep(thread_id, CheckpointTuple(saved, checkpoint, metadata, config))
                return saved
        warn_current_turn()
        async with self.lock:
            await self._move_to_memory(thread_id)
            # Every channel, not only the new ones: older values live in the database we cannot reach.
            return await self.memory.aput(config, checkpoint, metadata, checkpoint["channel_versions"])

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        thread_id = _thread(config)
        if thread_id not in self.unsaved and not self.health.down:
            try:
                return await self.primary.aput_writes(config, writes, task_id, task_path)
            except DB_ERRORS as exc:
                self.health.failed("a checkpoint write", exc, conversation_id=thread_id)
        warn_current_turn()
        async with self.lock:
            await self._move_to_memory(thread_id)
            await self.memory.aput_writes(config, writes, task_id, task_path)

    async def alist(self, config: RunnableConfig | None, **kwargs: Any) -> AsyncIterator[CheckpointTuple]:
        source = self.memory if config and _thread(config) in self.unsaved else self.primary
        async for item in source.alist(config, **kwargs):
            yield item

    async def adelete_thread(self, thread_id: str) -> None:
        await self.primary.adelete_thread(thread_id)
        await self.memory.adelete_thread(thread_id)
        self.unsaved.discard(thread_id)
        self.latest.pop(thread_id, None)

    async def forget(self, thread_id: str) -> None:
        async with self.lock:
            self.unsaved.discard(thread_id)
            self.latest.pop(thread_id, None)
            await self.memory.adelete_thread(thread_id)

    async def save_unsaved(self, skip: set[str] = frozenset()) -> int:
        """Write each in-memory conversation's newest checkpoint to the database; how many were saved."""
        saved = 0
        if not self.unsaved or self.health.down:
            return 0
        async with self.lock:
            for thread_id in list(self.unsaved - skip):
                item = await self.memory.aget_tuple(_root({"configurable": {"thread_id": thread_id}}))
                if item is None:
                    self.unsaved.discard(thread_id)
                    continue
                try:
                    stored = await self.primary.aput(item.parent_config or _root(item.config), item.checkpoint,
                                                     item.metadata, item.checkpoint["channel_versions"])
                except DB_ERRORS as exc:
                    self.health.failed("saving conversations kept in memory", exc)
                    break
                self.unsaved.discard(thread_id)
                await self.memory.adelete_thread(thread_id)
                self._keep(thread_id, CheckpointTuple(stored, item.checkpoint, item.metadata, item.parent_config))
                saved += 1
        if saved:
            log.info("database back: saved %d conversation(s) kept in memory", saved)
        return saved


def _root(config: RunnableConfig) -> RunnableConfig:
    """A config naming the thread only (no parent checkpoint), in the root namespace."""
    return {"configurable": {"thread_id": _thread(config), "checkpoint_ns": ""}}
