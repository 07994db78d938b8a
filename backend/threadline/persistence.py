"""Where conversations live: PostgreSQL (a given server or an embedded one) or process memory.

LangGraph's checkpointer keeps each conversation's messages; the `conversations` table keeps what a
list needs (title and times) so listing never has to read checkpoints.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack, asynccontextmanager
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

import msgspec
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from threadline.fallback import DB_ERRORS, DatabaseHealth, FallbackCheckpointer
from threadline.settings import Settings

log = logging.getLogger("threadline.persistence")

# Applied in order, each step once; append steps, never edit a released one.
MIGRATIONS = [
    [
        """CREATE TABLE conversations (
            id text PRIMARY KEY,
            title text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            last_message_at timestamptz NOT NULL DEFAULT now()
        )""",
        "CREATE INDEX conversations_last_message_at ON conversations (last_message_at DESC)",
    ],
    [
        "ALTER TABLE conversations ADD COLUMN client_id text",
        "CREATE INDEX conversations_client_recent ON conversations (client_id, last_message_at DESC)",
    ],
    [
        """CREATE TABLE active_turns (
            conversation_id text PRIMARY KEY,
            client_id text NOT NULL,
            started_at timestamptz NOT NULL DEFAULT now()
        )""",
        "CREATE UNIQUE INDEX active_turns_one_per_client ON active_turns (client_id)",
    ],
]
TITLE_LENGTH = 80


class Conversation(msgspec.Struct, rename="camel", frozen=True):
    id: str
    title: str
    created_at: datetime
    last_message_at: datetime


COLUMNS = "id, title, created_at, last_message_at"


def title_from(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1].rstrip() + "…"


class PostgresConversations:
    """Each conversation belongs to the client that started it; others cannot tell it exists.

    While the database is down, owners this process has seen decide, and new conversations are
    remembered and written when it is back (see `save_pending`).
    """

    def __init__(self, pool: AsyncConnectionPool, health: DatabaseHealth) -> None:
        self.pool = pool
        self.health = health
        self.owners: dict[str, str] = {}
        self.pending: dict[str, tuple[str, str]] = {}

    async def touch(self, conversation_id: str, client_id: str, first_message: str) -> bool:
        """Create the conversation on its first message, or mark it as just used; False if it is not theirs."""
        if not self.health.down:
            try:
                mine = await self._touch(conversation_id, client_id, title_from(first_message))
            except DB_ERRORS as exc:
                self.health.failed("recording a conversation", exc, conversation_id=conversation_id)
            else:
                if mine:
                    self._remember_owner(conversation_id, client_id)
                return mine
        owner = self.owners.get(conversation_id)
        if owner is None:
            self._remember_owner(conversation_id, client_id)
            self.pending[conversation_id] = (client_id, title_from(first_message))
        return owner in (None, client_id)

    async def _touch(self, conversation_id: str, client_id: str, title: str) -> bool:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "INSERT INTO conversations (id, title, client_id) VALUES (%s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET last_message_at = now() "
                "WHERE conversations.client_id = EXCLUDED.client_id RETURNING id",
                (conversation_id, title, client_id),
            )
            return await cursor.fetchone() is not None

    def _remember_owner(self, conversation_id: str, client_id: str) -> None:
        if len(self.owners) > 100_000:
            self.owners.clear()
        self.owners[conversation_id] = client_id

    async def save_pending(self) -> set[str]:
        """Record conversations started while the database was down; returns the ids that proved taken."""
        taken: set[str] = set()
        for conversation_id, (client_id, title) in list(self.pending.items()):
            try:
                mine = await self._touch(conversation_id, client_id, title)
            except DB_ERRORS as exc:
                self.health.failed("recording conversations started while it was down", exc)
                break
            del self.pending[conversation_id]
            if not mine:  # another visitor's id: what was said meanwhile must not land in their conversation
                self.owners.pop(conversation_id, None)
                taken.add(conversation_id)
        return taken

    async def get(self, conversation_id: str, client_id: str) -> Conversation | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT {COLUMNS} FROM conversations WHERE id = %s AND client_id = %s", (conversation_id, client_id)
            )
            row = await cursor.fetchone()
        if row is None:
            return None
        self._remember_owner(conversation_id, client_id)  # whatever this process caches, it knows whose it is
        return Conversation(**row)

    async def list(self, client_id: str, limit: int = 100) -> list[Conversation]:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT {COLUMNS} FROM conversations WHERE client_id = %s ORDER BY last_message_at DESC LIMIT %s",
                (client_id, limit),
            )
            return [Conversation(**row) for row in await cursor.fetchall()]

    async def delete(self, conversation_id: str, client_id: str) -> bool:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "DELETE FROM conversations WHERE id = %s AND client_id = %s", (conversation_id, client_id)
            )
            deleted = cursor.rowcount > 0
        if deleted:
            self.owners.pop(conversation_id, None)
        return deleted


class MemoryConversations:
    """The same interface in process memory, for CHAT_MEMORY_BACKEND=memory."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[str, Conversation]] = {}

    async def touch(self, conversation_id: str, client_id: str, first_message: str) -> bool:
        now = datetime.now(UTC)
        owner, known = self.rows.get(conversation_id, (client_id, None))
        if owner != client_id:
            return False
        self.rows[conversation_id] = (client_id, Conversation(
            id=conversation_id, title=known.title if known else title_from(first_message),
            created_at=known.created_at if known else now, last_message_at=now,
        ))
        return True

    async def get(self, conversation_id: str, client_id: str) -> Conversation | None:
        owner, conversation = self.rows.get(conversation_id, (None, None))
        return conversation if owner == client_id else None

    async def list(self, client_id: str, limit: int = 100) -> list[Conversation]:
        mine = [conversation for owner, conversation in self.rows.values() if owner == client_id]
        return sorted(mine, key=lambda row: row.last_message_at, reverse=True)[:limit]

    async def delete(self, conversation_id: str, client_id: str) -> bool:
        if await self.get(conversation_id, client_id) is None:
            return False
        del self.rows[conversation_id]
        return True


Conversations = PostgresConversations | MemoryConversations


@dataclass
class Storage:
    checkpointer: BaseCheckpointSaver
    conversations: Conversations
    description: str
    pool: AsyncConnectionPool | None = None
    database_url: str | None = None
    health: DatabaseHealth | None = None

    def waiting_to_be_saved(self) -> int:
        """Conversations kept only in memory (or not yet listed) because the database was down."""
        if not isinstance(self.checkpointer, FallbackCheckpointer):
            return 0
        return len(self.checkpointer.unsaved | set(self.conversations.pending))

    async def keep_saving(self, every: float = 2.0) -> None:
        """Write back what was kept in memory while the database was down, once it answers again."""
        if not isinstance(self.checkpointer, FallbackCheckpointer):
            return
        while True:
            await asyncio.sleep(every)
            try:
                if self.health.down:
                    continue
                for conversation_id in await self.conversations.save_pending():
                    log.warning("dropping turns kept in memory for %s: the id belongs to another visitor",
                                conversation_id)
                    await self.checkpointer.forget(conversation_id)
                await self.checkpointer.save_unsaved(skip=set(self.conversations.pending))
            except Exception:
                log.exception("saving conversations kept in memory failed; will retry")


def embedded_database_url(data_dir) -> str:
    """Start (or reuse) a PostgreSQL server from the pgserver wheel, keeping its files in data_dir."""
    import pgserver

    server = pgserver.get_server(data_dir / "postgres", cleanup_mode="stop")
    return server.get_uri()


async def migrate(pool: AsyncConnectionPool) -> None:
    """Apply pending migrations under an advisory lock, so instances starting together do not race."""
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(7261584)")
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS threadline_migrations "
            "(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cursor = await conn.execute("SELECT coalesce(max(version), 0) AS version FROM threadline_migrations")
        current = (await cursor.fetchone())["version"]
        for version, statements in enumerate(MIGRATIONS, start=1):
            if version > current:
                for statement in statements:
                    await conn.execute(statement)
                await conn.execute("INSERT INTO threadline_migrations (version) VALUES (%s)", (version,))


@asynccontextmanager
async def open_storage(settings: Settings) -> AsyncIterator[Storage]:
    if settings.memory_backend == "memory":
        yield Storage(InMemorySaver(), MemoryConversations(), "memory (lost when the server stops)")
        return
    from threadline.postgres_saver import PooledPostgresSaver

    url = settings.database_url
    description = "PostgreSQL at DATABASE_URL"
    if not url:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        url = await asyncio.to_thread(embedded_database_url, settings.data_dir.resolve())
        description = f"embedded PostgreSQL in {settings.data_dir / 'postgres'}"
    async with AsyncExitStack() as stack:
        # A short wait for a connection: when the database is down, callers fall back instead of hanging.
        pool = AsyncConnectionPool(
            url, min_size=1, max_size=10, open=False, timeout=2.0,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row, "connect_timeout": 3},
        )
        await pool.open(wait=True, timeout=30)
        stack.push_async_callback(pool.close)
        postgres_saver = PooledPostgresSaver(pool)
        await postgres_saver.setup()
        await migrate(pool)
        health = DatabaseHealth()
        yield Storage(FallbackCheckpointer(postgres_saver, health), PostgresConversations(pool, health), description,
                      pool=pool, database_url=url, health=health)
