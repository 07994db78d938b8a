"""Where conversations live: PostgreSQL (a given server or an embedded one) or process memory.

`open_storage` opens the database (starting the embedded one without DATABASE_URL), applies the
migrations, and puts every store in one `Storage`: LangGraph's checkpointer keeps each conversation's
messages (only its latest checkpoint, see answers/turn.py), the conversation list (storage/conversation_list.py),
traces, feedback and comparisons keep the rest; LangGraph's store keeps what agents remember across a user's
conversations; claims.py moves an anonymous visitor's to a user. Every store is in this package, so what keeps
anything sits below the answer machinery, the conversations' logic and the traces that use it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from threadline.settings.storage import StorageSettings
from threadline.storage.agent_store import AgentStore
from threadline.storage.claims import Claims
from threadline.storage.comparisons import ComparisonStore
from threadline.storage.conversation_list import Conversations, StorageLimits
from threadline.storage.embedded import embedded_database
from threadline.storage.encoded_once import EncodedOnce
from threadline.storage.fallback import (
    CONNECTION_ERRORS,
    DatabaseHealth,
    FallbackCheckpointer,
    MergeStates,
    closed_while_idle,
)
from threadline.storage.feedback import FeedbackStore
from threadline.storage.file_store import FileStore
from threadline.storage.memory.claims import MemoryClaims
from threadline.storage.memory.comparisons import MemoryComparisons
from threadline.storage.memory.conversation_list import MemoryConversations
from threadline.storage.memory.feedback import MemoryFeedback
from threadline.storage.memory.file_store import MemoryFiles
from threadline.storage.memory.shares import MemoryShares
from threadline.storage.memory.traces import MemoryTraces
from threadline.storage.migrations import migrate
from threadline.storage.postgres.claims import PostgresClaims
from threadline.storage.postgres.comparisons import PostgresComparisons
from threadline.storage.postgres.conversation_list import PostgresConversations
from threadline.storage.postgres.feedback import PostgresFeedback
from threadline.storage.postgres.file_store import PostgresFiles, s3_blobs
from threadline.storage.postgres.shares import PostgresShares
from threadline.storage.postgres.traces import PostgresTraces
from threadline.storage.saver import Pool, PooledPostgresSaver, ReadAhead
from threadline.storage.schema import Schema
from threadline.storage.shares import ShareStore
from threadline.storage.traces import TraceStore

log = logging.getLogger(__name__)


@dataclass
class Storage:
    checkpointer: BaseCheckpointSaver[Any]
    conversations: Conversations
    traces: TraceStore
    feedback: FeedbackStore
    comparisons: ComparisonStore
    claims: Claims
    files: FileStore
    shares: ShareStore
    description: str
    store: BaseStore = field(default_factory=InMemoryStore)  # agents' long-term memory (LangGraph's store)
    pool: Pool | None = None
    database_url: str | None = None
    health: DatabaseHealth = field(default_factory=DatabaseHealth)

    def read_ahead(self, thread_id: str) -> ReadAhead | None:
        """The conversation's latest checkpoint, read in the round trip that records its answer (storage/saver.py)."""
        return self.checkpointer.read_ahead(thread_id) if isinstance(self.checkpointer, FallbackCheckpointer) else None

    def waiting_to_be_saved(self) -> int:
        """Conversations kept only in memory (or not yet listed) until the database is back."""
        if not isinstance(self.checkpointer, FallbackCheckpointer):
            return 0
        waiting = {key for key in self.conversations.pending if not self.conversations.retries.refused(key)}
        return len(self.checkpointer.waiting_for_database() | waiting)

    def quarantined(self) -> int:
        """Conversations PostgreSQL kept refusing: they live on in this process's memory only (see the log)."""
        if not isinstance(self.checkpointer, FallbackCheckpointer):
            return 0
        return len(self.checkpointer.retries.quarantined | self.conversations.retries.quarantined)

    async def unready(self) -> str | None:
        """Why this process should get no new visitors now (the database does not answer), else None."""
        if self.pool is None:
            return None
        try:
            async with self.pool.connection(timeout=1.0) as conn:
                await conn.execute("SELECT 1")
        except CONNECTION_ERRORS as exc:
            self.health.failed("a readiness check", exc)
            return "the database does not answer"
        return None

    async def keep_saving(self, every: float = 2.0) -> None:
        """Write back what was kept in memory while the database was down, once it answers again."""
        if not isinstance(self.checkpointer, FallbackCheckpointer):
            return
        while True:
            await asyncio.sleep(every)
            try:
                if self.health.down:
                    continue
                await self.conversations.save_pending()
                await self.checkpointer.save_unsaved(skip=set(self.conversations.pending))
            except Exception:
                log.exception("saving conversations kept in memory failed; will retry")


@asynccontextmanager
async def open_storage(settings: StorageSettings, after_history: MergeStates) -> AsyncIterator[Storage]:
    """The stores `settings` name, open until the block ends; `after_history` is how a conversation's state and
    what was said while the database was away become one (conversations/state.py), for the checkpointer's
    fallback."""
    limits = StorageLimits(settings.max_turns_per_conversation, settings.max_conversations_per_visitor)
    if settings.memory_backend == "memory":
        saver = InMemorySaver(serde=EncodedOnce())
        stores = (saver, MemoryConversations(limits), MemoryTraces(), MemoryFeedback(), MemoryComparisons())
        files, shares = MemoryFiles(settings.file_quota_bytes), MemoryShares()
        claims = MemoryClaims(*stores, files, shares, settings.file_quota_bytes)
        yield Storage(*stores, claims, files, shares, "memory (lost when the server stops)", InMemoryStore())
        return
    url = settings.database_url
    description = "PostgreSQL at DATABASE_URL"
    async with AsyncExitStack() as stack:
        if not url:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            embedded = await asyncio.to_thread(embedded_database, settings.data_dir.resolve())
            # Stopped as the server shuts down, not at interpreter exit: uvicorn ends a SIGTERM by raising
            # it again, and the process then dies without running exit handlers.
            stack.push_async_callback(asyncio.to_thread, embedded.cleanup)
            url = str(embedded.get_uri())
            description = f"embedded PostgreSQL in {settings.data_dir / 'postgres'}"
        schema = Schema(settings.database_schema)
        # A short wait for a connection: when the database is down, callers fall back instead of hanging.
        pool: Pool = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=10,
            open=False,
            timeout=2.0,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row, "connect_timeout": 3},
            configure=schema.configure,
            check=closed_while_idle,
        )
        await pool.open(wait=True, timeout=30)
        stack.push_async_callback(pool.close)
        postgres_saver = PooledPostgresSaver(pool)
        description += f", schema {await migrate(pool, schema)}"
        blobs = s3_blobs(settings.file_store_url) if settings.file_store_url else None
        health = DatabaseHealth()
        yield Storage(
            FallbackCheckpointer(postgres_saver, health, after_history),
            PostgresConversations(pool, health, limits, postgres_saver.batches),
            PostgresTraces(pool, postgres_saver.batches),
            PostgresFeedback(pool),
            PostgresComparisons(pool),
            PostgresClaims(pool, limits, settings.file_quota_bytes),
            PostgresFiles(pool, settings.file_quota_bytes, blobs),
            PostgresShares(pool),
            description,
            AgentStore(pool),
            pool=pool,
            database_url=url,
            health=health,
        )
