"""Where conversations live: PostgreSQL (a given server or an embedded one) or process memory.

LangGraph's checkpointer keeps each conversation's messages (only its latest checkpoint, see
answers/turn.py); the `conversations` table keeps what a list needs (title and times) so listing never has
to read checkpoints, and the turn counts the storage limits need.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import msgspec
import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from threadline.conversations.comparisons import ComparisonStore, MemoryComparisons, PostgresComparisons
from threadline.conversations.feedback import FeedbackStore, MemoryFeedback, PostgresFeedback
from threadline.conversations.state import thread_of
from threadline.observability.trace_store import MemoryTraces, PostgresTraces, TraceStore
from threadline.refusals import Refused
from threadline.settings import Settings
from threadline.storage.fallback import CONNECTION_ERRORS, DatabaseHealth, FallbackCheckpointer, SaveRetries, save_each
from threadline.storage.saver import Pool, PooledPostgresSaver

log = logging.getLogger(__name__)

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
    [  # conversation ids scoped per visitor (persistence.thread_of), turn counts for the storage limits,
        # and running answers tied to the database session of the process that runs them (answers/active.py)
        "UPDATE conversations SET client_id = '' WHERE client_id IS NULL",
        "ALTER TABLE conversations ALTER COLUMN client_id SET NOT NULL",
        "ALTER TABLE conversations DROP CONSTRAINT conversations_pkey",
        "ALTER TABLE conversations ADD PRIMARY KEY (client_id, id)",
        "DROP INDEX conversations_last_message_at",
        "ALTER TABLE conversations ADD COLUMN turns integer NOT NULL DEFAULT 0",
        *(
            f"UPDATE {table} SET thread_id = c.client_id || ':' || c.id FROM conversations c "
            f"WHERE {table}.thread_id = c.id"
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
        ),
        "DELETE FROM active_turns",
        "ALTER TABLE active_turns RENAME COLUMN conversation_id TO thread_id",
        "ALTER TABLE active_turns ADD COLUMN session text",
    ],
    [  # each answer's trace (observability/trace_store.py)
        """CREATE TABLE traces (
            trace_id text PRIMARY KEY,
            client_id text NOT NULL,
            conversation_id text NOT NULL,
            message_id text NOT NULL,
            started_at timestamptz NOT NULL,
            trace jsonb NOT NULL
        )""",
        "CREATE INDEX traces_by_message ON traces (client_id, message_id)",
        "CREATE INDEX traces_by_conversation ON traces (client_id, conversation_id)",
        "CREATE INDEX traces_by_age ON traces (started_at)",
    ],
    [  # a person's rating of an answer (conversations/feedback.py)
        """CREATE TABLE feedback (
            client_id text NOT NULL,
            message_id text NOT NULL,
            conversation_id text NOT NULL,
            trace_id text,
            rating text NOT NULL CHECK (rating IN ('up', 'down')),
            comment text,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (client_id, message_id)
        )""",
        "CREATE INDEX feedback_by_conversation ON feedback (client_id, conversation_id)",
        "CREATE INDEX feedback_by_trace ON feedback (trace_id)",
    ],
    ["ALTER TABLE conversations ADD COLUMN profile_id text"],  # the model profile it goes on with (agent/profiles.py)
    [  # an A/B comparison of two answers, and its vote (conversations/comparisons.py)
        """CREATE TABLE comparisons (
            id text PRIMARY KEY,
            client_id text NOT NULL,
            conversation_id text NOT NULL,
            profile_a text NOT NULL,
            profile_b text NOT NULL,
            preference text,
            created_at timestamptz NOT NULL DEFAULT now(),
            document jsonb NOT NULL
        )""",
        "CREATE INDEX comparisons_by_conversation ON comparisons (client_id, conversation_id)",
    ],
    [  # a running answer's stream, batch by batch, for readers that resume it (answers/recordings.py)
        """CREATE TABLE stream_chunks (
            thread_id text NOT NULL,
            message_id text NOT NULL,
            seq integer NOT NULL,
            data bytea NOT NULL,
            ended boolean NOT NULL DEFAULT false,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (thread_id, message_id, seq)
        )""",
        "CREATE INDEX stream_chunks_by_age ON stream_chunks (created_at)",
    ],
    # which answer runs (its assistant message id), so a rollback takes out only the answer it stopped
    ["ALTER TABLE active_turns ADD COLUMN answer_id text"],
    [  # a trace row outlives its document (retention), so an answer's conversation is one lookup away, and
        # names the question it answers, so the answers a regenerate replaced are bounded (trace_store.py)
        "ALTER TABLE traces ALTER COLUMN trace DROP NOT NULL",
        "ALTER TABLE traces ADD COLUMN question_id text",
    ],
]
TITLE_LENGTH = 80


class Conversation(msgspec.Struct, rename="camel", frozen=True):
    id: str
    title: str
    created_at: datetime
    last_message_at: datetime
    profile_id: str | None = None  # the model profile of its latest answer


COLUMNS = "id, title, created_at, last_message_at, profile_id"


def title_from(text: str) -> str:
    line = " ".join("".join(char for char in text if char.isprintable() or char.isspace()).split())
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1].rstrip() + "…"


class StorageLimits(msgspec.Struct, frozen=True):
    """What one visitor may store: turns per conversation and conversations in all."""

    turns_per_conversation: int = 500
    conversations_per_visitor: int = 500

    def too_many_turns(self) -> Refused:
        return Refused(
            "CONVERSATION_FULL",
            f"This conversation has reached its limit of "
            f"{self.turns_per_conversation} messages. Start a new conversation to go on.",
        )

    def too_many_conversations(self) -> Refused:
        return Refused(
            "TOO_MANY_CONVERSATIONS",
            f"You have reached the limit of "
            f"{self.conversations_per_visitor} conversations. Delete one to start another.",
        )


def unstorable(exc: BaseException) -> Refused:
    log.warning("PostgreSQL refused a conversation's record: %s", exc)
    return Refused("VALIDATION_ERROR", "Invalid request: this message cannot be stored.", "messages")


# One statement: continue the visitor's conversation if it has room for a turn, else create it if the
# visitor has room for a conversation. No row back means one of the two limits was reached.
TOUCH = """
WITH continued AS (
    UPDATE conversations
    SET last_message_at = now(), turns = turns + %(turns)s, profile_id = coalesce(%(profile_id)s, profile_id)
    WHERE client_id = %(client_id)s AND id = %(id)s AND turns + %(turns)s <= %(max_turns)s
    RETURNING false AS created
), started AS (
    INSERT INTO conversations (client_id, id, title, turns, profile_id)
    SELECT %(client_id)s, %(id)s, %(title)s, %(turns)s, %(profile_id)s
    WHERE NOT EXISTS (SELECT 1 FROM conversations WHERE client_id = %(client_id)s AND id = %(id)s)
      AND (SELECT count(*) FROM conversations WHERE client_id = %(client_id)s) < %(max_conversations)s
    ON CONFLICT DO NOTHING
    RETURNING true AS created
)
SELECT created FROM continued UNION ALL SELECT created FROM started
"""


class PostgresConversations:
    """Each visitor's conversations, with what a list needs (title, times) and the turn count limits use.

    While the database is down, new conversations are remembered and written when it is back (see
    `save_pending`); a limit cannot be checked then, so none is enforced.
    """

    def __init__(self, pool: Pool, health: DatabaseHealth, limits: StorageLimits) -> None:
        self.pool = pool
        self.health = health
        self.limits = limits
        self.pending: dict[str, tuple[str, str, str]] = {}  # thread → (client id, conversation id, title)
        self.retries = SaveRetries()

    async def touch(
        self,
        conversation_id: str,
        client_id: str,
        first_message: str,
        *,
        new_turn: bool = True,
        profile_id: str | None = None,
    ) -> bool:
        """Record a turn of the visitor's conversation, creating it on its first; True when this created it.

        Refused when a storage limit is reached or PostgreSQL refuses the record's values.
        """
        title = title_from(first_message)
        if not self.health.down:
            try:
                return await self._touch(conversation_id, client_id, title, 1 if new_turn else 0, profile_id)
            except CONNECTION_ERRORS as exc:
                self.health.failed("recording a conversation", exc, conversation_id=conversation_id)
            except psycopg.Error as exc:
                raise unstorable(exc) from None
        self.pending.setdefault(thread_of(client_id, conversation_id), (client_id, conversation_id, title))
        return False

    async def _touch(
        self, conversation_id: str, client_id: str, title: str, turns: int, profile_id: str | None
    ) -> bool:
        params = {
            "profile_id": profile_id,
            "client_id": client_id,
            "id": conversation_id,
            "title": title,
            "turns": turns,
            "max_turns": self.limits.turns_per_conversation,
            "max_conversations": self.limits.conversations_per_visitor,
        }
        async with self.pool.connection() as conn:
            row = await (await conn.execute(TOUCH, params)).fetchone()
            if row is not None:
                return bool(row["created"])
            exists = await (
                await conn.execute(
                    "SELECT 1 FROM conversations WHERE client_id = %s AND id = %s", (client_id, conversation_id)
                )
            ).fetchone()
        raise self.limits.too_many_turns() if exists else self.limits.too_many_conversations()

    async def save_pending(self) -> None:
        """Record conversations started while the database was down; one it refuses waits on its own."""

        async def save(thread_id: str) -> None:
            async with self.pool.connection() as conn:
                await conn.execute(
                    "INSERT INTO conversations (client_id, id, title, turns) VALUES (%s, %s, %s, 1) "
                    "ON CONFLICT (client_id, id) DO UPDATE SET last_message_at = now()",
                    self.pending[thread_id],
                )
            del self.pending[thread_id]

        await save_each(
            list(self.pending),
            save,
            self.retries,
            self.health,
            "recording a conversation started while the database was down",
        )

    async def get(self, conversation_id: str, client_id: str) -> Conversation | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT {COLUMNS} FROM conversations WHERE client_id = %s AND id = %s", (client_id, conversation_id)
            )
            row = await cursor.fetchone()
        return None if row is None else Conversation(**row)

    async def list(self, client_id: str, limit: int = 100) -> list[Conversation]:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT {COLUMNS} FROM conversations WHERE client_id = %s ORDER BY last_message_at DESC LIMIT %s",
                (client_id, limit),
            )
            return [Conversation(**row) for row in await cursor.fetchall()]

    async def delete(self, conversation_id: str, client_id: str) -> bool:
        self.pending.pop(thread_of(client_id, conversation_id), None)
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "DELETE FROM conversations WHERE client_id = %s AND id = %s", (client_id, conversation_id)
            )
            return cursor.rowcount > 0


class MemoryConversations:
    """The same interface in process memory, for CHAT_MEMORY_BACKEND=memory."""

    def __init__(self, limits: StorageLimits) -> None:
        self.limits = limits
        self.rows: dict[tuple[str, str], tuple[int, Conversation]] = {}
        self.counts: dict[str, int] = {}  # conversations per visitor, so a limit check does not scan every row
        self.pending: dict[str, tuple[str, str, str]] = {}  # never anything: memory cannot go away
        self.retries = SaveRetries()

    async def save_pending(self) -> None:
        """Nothing waits: memory cannot go away."""

    async def touch(
        self,
        conversation_id: str,
        client_id: str,
        first_message: str,
        *,
        new_turn: bool = True,
        profile_id: str | None = None,
    ) -> bool:
        now = datetime.now(UTC)
        turns, known = self.rows.get((client_id, conversation_id), (0, None))
        turns += 1 if new_turn else 0
        if known is None and self.counts.get(client_id, 0) >= self.limits.conversations_per_visitor:
            raise self.limits.too_many_conversations()
        if turns > self.limits.turns_per_conversation:
            raise self.limits.too_many_turns()
        if known is None:
            self.counts[client_id] = self.counts.get(client_id, 0) + 1
        self.rows[(client_id, conversation_id)] = (
            turns,
            Conversation(
                id=conversation_id,
                title=known.title if known else title_from(first_message),
                created_at=known.created_at if known else now,
                last_message_at=now,
                profile_id=profile_id,
            ),
        )
        return known is None

    async def get(self, conversation_id: str, client_id: str) -> Conversation | None:
        return self.rows.get((client_id, conversation_id), (0, None))[1]

    async def list(self, client_id: str, limit: int = 100) -> list[Conversation]:
        mine = [conversation for (owner, _), (_, conversation) in self.rows.items() if owner == client_id]
        return sorted(mine, key=lambda row: row.last_message_at, reverse=True)[:limit]

    async def delete(self, conversation_id: str, client_id: str) -> bool:
        if self.rows.pop((client_id, conversation_id), None) is None:
            return False
        if left := self.counts.pop(client_id) - 1:
            self.counts[client_id] = left
        return True


class Conversations(Protocol):
    """A visitor's conversations, in PostgreSQL or in memory."""

    pending: dict[str, tuple[str, str, str]]
    retries: SaveRetries

    async def touch(
        self,
        conversation_id: str,
        client_id: str,
        first_message: str,
        *,
        new_turn: bool = True,
        profile_id: str | None = None,
    ) -> bool: ...

    async def get(self, conversation_id: str, client_id: str) -> Conversation | None: ...

    async def list(self, client_id: str, limit: int = 100) -> list[Conversation]: ...

    async def delete(self, conversation_id: str, client_id: str) -> bool: ...

    async def save_pending(self) -> None: ...


@dataclass
class Storage:
    checkpointer: BaseCheckpointSaver[Any]
    conversations: Conversations
    traces: TraceStore
    feedback: FeedbackStore
    comparisons: ComparisonStore
    description: str
    pool: Pool | None = None
    database_url: str | None = None
    health: DatabaseHealth = field(default_factory=DatabaseHealth)

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


def embedded_database(data_dir: Path) -> Any:
    """Start (or reuse) a PostgreSQL server from the pgserver wheel, keeping its files in data_dir. Its
    `cleanup()` stops it unless another process still uses it (or it was running before we came)."""
    import pgserver

    return pgserver.get_server(data_dir / "postgres", cleanup_mode="stop")  # type: ignore[attr-defined]


MIGRATION_LOCK = 7261584
LOCK_POLL = 0.1  # seconds between tries for the migration lock


async def _try_lock(conn: psycopg.AsyncConnection[Any]) -> bool:
    row = await (await conn.execute("SELECT pg_try_advisory_lock(%s) AS locked", (MIGRATION_LOCK,))).fetchone()
    return bool(row and row["locked"])


async def migrate(pool: Pool) -> None:
    """Set up LangGraph's tables, then apply our pending migrations, under a session advisory lock, so
    instances starting together on a new database do not race.

    The lock is tried, not waited for: a session blocked in `pg_advisory_lock` holds a snapshot, and
    LangGraph's `CREATE INDEX CONCURRENTLY` in the process holding the lock waits for every such
    snapshot, so two processes starting together would wait for each other for good. And the setup runs
    on the connection that holds the lock, so nothing the lock guards waits on another connection.
    """
    async with pool.connection() as conn:
        while not await _try_lock(conn):
            await asyncio.sleep(LOCK_POLL)
        try:
            await AsyncPostgresSaver(conn).setup()
            async with conn.transaction():
                await conn.execute(
                    "CREATE TABLE IF NOT EXISTS threadline_migrations "
                    "(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
                )
                cursor = await conn.execute("SELECT coalesce(max(version), 0) AS version FROM threadline_migrations")
                row = await cursor.fetchone()
                current = row["version"] if row else 0
                for version, statements in enumerate(MIGRATIONS, start=1):
                    if version > current:
                        for statement in statements:
                            await conn.execute(statement)
                        await conn.execute("INSERT INTO threadline_migrations (version) VALUES (%s)", (version,))
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))


@asynccontextmanager
async def open_storage(settings: Settings) -> AsyncIterator[Storage]:
    limits = StorageLimits(settings.max_turns_per_conversation, settings.max_conversations_per_visitor)
    if settings.memory_backend == "memory":
        yield Storage(
            InMemorySaver(),
            MemoryConversations(limits),
            MemoryTraces(),
            MemoryFeedback(),
            MemoryComparisons(),
            "memory (lost when the server stops)",
        )
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
        # A short wait for a connection: when the database is down, callers fall back instead of hanging.
        pool: Pool = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=10,
            open=False,
            timeout=2.0,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row, "connect_timeout": 3},
        )
        await pool.open(wait=True, timeout=30)
        stack.push_async_callback(pool.close)
        postgres_saver = PooledPostgresSaver(pool)
        await migrate(pool)
        health = DatabaseHealth()
        yield Storage(
            FallbackCheckpointer(postgres_saver, health),
            PostgresConversations(pool, health, limits),
            PostgresTraces(pool),
            PostgresFeedback(pool),
            PostgresComparisons(pool),
            description,
            pool=pool,
            database_url=url,
            health=health,
        )
