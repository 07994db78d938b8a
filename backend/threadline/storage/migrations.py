"""The tables and their ordered migrations, applied once per database under an advisory lock."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.store.postgres.aio import AsyncPostgresStore

from threadline.storage.saver import Pool
from threadline.storage.schema import Schema

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
    [  # each answer's trace (storage/traces.py)
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
    [  # a person's rating of an answer (storage/feedback.py)
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
    [  # an A/B comparison of two answers, and its vote (storage/comparisons.py)
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
        # names the question it answers, so the answers a regenerate replaced are bounded (storage/traces.py)
        "ALTER TABLE traces ALTER COLUMN trace DROP NOT NULL",
        "ALTER TABLE traces ADD COLUMN question_id text",
    ],
    [  # an anonymous identity whose conversations a signed-in user took (storage/claims.py)
        """CREATE TABLE claims (
            anonymous_id text PRIMARY KEY,
            principal text NOT NULL,
            claimed_at timestamptz NOT NULL DEFAULT now()
        )""",
    ],
    [  # attached files: their bytes once by content hash, who has each, and the conversations using it
        "CREATE TABLE file_blobs (sha256 text PRIMARY KEY, data bytea NOT NULL)",
        # images and PDFs are compressed already: stored as they are, not compressed again
        "ALTER TABLE file_blobs ALTER COLUMN data SET STORAGE EXTERNAL",
        """CREATE TABLE files (
            client_id text NOT NULL,
            id text NOT NULL,
            sha256 text NOT NULL,
            media_type text NOT NULL,
            filename text NOT NULL,
            size bigint NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (client_id, id)
        )""",
        "CREATE INDEX files_by_blob ON files (sha256)",
        """CREATE TABLE file_uses (
            client_id text NOT NULL,
            file_id text NOT NULL,
            conversation_id text NOT NULL,
            PRIMARY KEY (client_id, conversation_id, file_id)
        )""",
        "CREATE INDEX file_uses_by_file ON file_uses (client_id, file_id)",
    ],
    [  # what finds a conversation (storage/conversation_list.py): its title's and its messages' words
        "ALTER TABLE conversations ADD COLUMN words tsvector NOT NULL DEFAULT ''",
        "UPDATE conversations SET words = to_tsvector('simple', title)",
        "CREATE INDEX conversations_words ON conversations USING gin (words)",
    ],
    [  # read-only links to a conversation's snapshot (storage/shares.py)
        """CREATE TABLE shares (
            id text PRIMARY KEY,
            client_id text NOT NULL,
            conversation_id text NOT NULL,
            title text NOT NULL,
            messages jsonb NOT NULL,
            files text[] NOT NULL,
            shared_at timestamptz NOT NULL DEFAULT now(),
            UNIQUE (client_id, conversation_id)
        )""",
    ],
    [  # a visitor may have several answers running, one per conversation (answers/active.py)
        "DROP INDEX active_turns_one_per_client",
        "CREATE INDEX active_turns_client ON active_turns (client_id)",
    ],
    ["ALTER TABLE conversations ADD COLUMN agent_id text"],  # the agent it keeps, of several (agent/graphs.py)
    [  # a running answer's canonical events, batch by batch, for readers that resume it (answers/recordings.py);
        # stream_chunks held UI Message Stream bytes: left to processes of the version before, while they run
        """CREATE TABLE recorded_events (
            thread_id text NOT NULL,
            message_id text NOT NULL,
            seq integer NOT NULL,
            data bytea NOT NULL,
            ended boolean NOT NULL DEFAULT false,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (thread_id, message_id, seq)
        )""",
        "CREATE INDEX recorded_events_by_age ON recorded_events (created_at)",
    ],
    [  # a search for a rare word among 100,000 conversations walked them all (52 ms): with the default sample the
        # planner cannot tell a rare word from a common one, and took the recency index for both (0.8 ms now)
        "ALTER TABLE conversations ALTER COLUMN words SET STATISTICS 1000",
        "ANALYZE conversations",
    ],
    # what a running answer's turn brought (its question), written with its row before the run: a process that
    # closes the turn of an answer whose process died keeps the question though no checkpoint held it yet
    ["ALTER TABLE active_turns ADD COLUMN turn_input jsonb"],
]


MIGRATION_LOCK = 7261584
LOCK_POLL = 0.1  # seconds between tries for the migration lock


async def _try_lock(conn: psycopg.AsyncConnection[Any]) -> bool:
    row = await (await conn.execute("SELECT pg_try_advisory_lock(%s) AS locked", (MIGRATION_LOCK,))).fetchone()
    return bool(row and row["locked"])


async def migrate(pool: Pool, schema: Schema) -> str:
    """Choose the schema (storage/schema.py), set up LangGraph's tables, then apply our pending migrations, under a
    session advisory lock, so instances starting together on a new database do not race; the schema chosen.

    The lock is tried, not waited for: a session blocked in `pg_advisory_lock` holds a snapshot, and
    LangGraph's `CREATE INDEX CONCURRENTLY` in the process holding the lock waits for every such
    snapshot, so two processes starting together would wait for each other for good. And the setup runs
    on the connection that holds the lock, so nothing the lock guards waits on another connection.
    """
    async with pool.connection() as conn:
        while not await _try_lock(conn):
            await asyncio.sleep(LOCK_POLL)
        try:
            chosen = await schema.choose(conn)  # the pool's connections look in it first (storage/schema.py)
            await AsyncPostgresSaver(conn).setup()
            await AsyncPostgresStore(conn).setup()  # agents' long-term memory (runtime.store)
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
    return chosen
