"""The conversation list in PostgreSQL (the protocol and shared types: storage/conversation_list.py)."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg.rows import DictRow

from threadline.refusals import Refused
from threadline.storage.conversation_list import (
    ADD_WORDS,
    ANONYMOUS,
    COLUMNS,
    FIRST_PAGE,
    SEARCHED_CHARS,
    ConversationSummary,
    Page,
    Pending,
    StorageLimits,
    log,
    search_terms,
    title_from,
    ts_query,
    unstorable,
)
from threadline.storage.fallback import CONNECTION_ERRORS, DatabaseHealth, SaveRetries, save_each
from threadline.storage.saver import UNFLUSHED, BatchedWrites, Pool, aside
from threadline.storage.threads import thread_of

Connection = psycopg.AsyncConnection[DictRow]


# One statement: continue the visitor's conversation if it has room for a turn, else create it if the
# visitor has room for a conversation. No row back means one of the two limits was reached. It does not wait
# for PostgreSQL to flush it to disk: the answer's checkpoints, written after it and flushed, flush it too (the
# write-ahead log is one sequence, flushed in order), so a crash cannot keep a conversation's checkpoint and
# lose its row; and the answer's first token no longer waits for a flush of its own.
def touch_sql(guard: str) -> str:
    """The statement, its writes made only where `guard` holds."""
    return f"""
WITH {UNFLUSHED}, continued AS (
    UPDATE conversations
    SET last_message_at = now(), turns = turns + %(turns)s, profile_id = coalesce(%(profile_id)s, profile_id)
    WHERE client_id = %(client_id)s AND id = %(id)s AND turns + %(turns)s <= %(max_turns)s
      AND (agent_id IS NULL OR %(agent_id)s::text IS NULL OR agent_id = %(agent_id)s)
      AND EXISTS (SELECT FROM unflushed) AND {guard}
    RETURNING false AS created
), started AS (
    INSERT INTO conversations (client_id, id, title, turns, profile_id, agent_id, words)
    SELECT %(client_id)s, %(id)s, %(title)s, %(turns)s, %(profile_id)s, %(agent_id)s, to_tsvector('simple', %(title)s)
    WHERE NOT EXISTS (SELECT 1 FROM conversations WHERE client_id = %(client_id)s AND id = %(id)s)
      AND (SELECT count(*) FROM conversations WHERE client_id = %(client_id)s) < %(max_conversations)s AND {guard}
    ON CONFLICT DO NOTHING
    RETURNING true AS created
)
SELECT created FROM continued UNION ALL SELECT created FROM started
"""


TOUCH = touch_sql("true")
# Sent after the running answer's row in one round trip (answers/active.py): a pipeline's statements are one
# transaction, in which the turn is written only if the answer's row was.
TOUCH_WITH_THE_ANSWER = touch_sql(
    "EXISTS (SELECT FROM active_turns WHERE thread_id = %(thread)s AND answer_id = %(answer)s)"
)


class PostgresConversations:
    """Each visitor's conversations, with what a list needs (title, times) and the turn count limits use.

    While the database is down, new conversations are remembered and written when it is back (see
    `save_pending`); a limit cannot be checked then, so none is enforced.
    """

    def __init__(self, pool: Pool, health: DatabaseHealth, limits: StorageLimits, batches: BatchedWrites) -> None:
        self.pool = pool
        self.batches = batches  # an answer's search words go with the next batch of checkpoint writes
        self.health = health
        self.limits = limits
        self.pending: dict[str, Pending] = {}  # by thread
        self.retries = SaveRetries()

    async def touch(
        self,
        conversation_id: str,
        client_id: str,
        first_message: str,
        *,
        new_turn: bool = True,
        profile_id: str | None = None,
        agent_id: str | None = None,
    ) -> bool:
        """Record a turn of the visitor's conversation, creating it on its first; True when this created it.

        Refused when a storage limit is reached or PostgreSQL refuses the record's values. `agent_id` is kept
        from the first turn on.
        """
        if not self.health.down:
            try:
                params = self._params(conversation_id, client_id, first_message, new_turn, profile_id, agent_id)
                return await self._touch(params)
            except CONNECTION_ERRORS as exc:
                self.health.failed("recording a conversation", exc, conversation_id=conversation_id)
            except psycopg.Error as exc:
                raise unstorable(exc) from None
        pending = (client_id, conversation_id, title_from(first_message), agent_id)
        self.pending.setdefault(thread_of(client_id, conversation_id), pending)
        return False

    def along(
        self,
        conversation_id: str,
        client_id: str,
        first_message: str,
        *,
        new_turn: bool = True,
        profile_id: str | None = None,
        agent_id: str | None = None,
    ) -> TurnAlong | None:
        """`touch`, to be sent in the running answer's round trip (answers/active.py); None while the database is
        down: `touch` keeps the conversation for later then."""
        if self.health.down:
            return None
        return TurnAlong(self, self._params(conversation_id, client_id, first_message, new_turn, profile_id, agent_id))

    def _params(
        self,
        conversation_id: str,
        client_id: str,
        first_message: str,
        new_turn: bool,
        profile_id: str | None,
        agent_id: str | None,
    ) -> dict[str, object]:
        """`touch`'s arguments as its statement takes them."""
        return {
            "profile_id": profile_id,
            "agent_id": agent_id,
            "client_id": client_id,
            "id": conversation_id,
            "title": title_from(first_message),
            "turns": int(new_turn),
            "max_turns": self.limits.turns_per_conversation,
            "max_conversations": self.limits.conversations_per_visitor,
        }

    async def _touch(self, params: dict[str, object]) -> bool:
        async with self.pool.connection() as conn:
            return await self.touched(conn, await (await conn.execute(TOUCH, params)).fetchone(), params)

    async def touched(self, conn: Connection, row: DictRow | None, params: dict[str, object]) -> bool:
        """Whether the turn's statement created the conversation; refused when it wrote nothing."""
        if row is not None:
            return bool(row["created"])
        exists = await (
            await conn.execute(
                "SELECT agent_id FROM conversations WHERE client_id = %(client_id)s AND id = %(id)s", params
            )
        ).fetchone()
        agent_id = params["agent_id"]
        if exists and exists["agent_id"] not in (None, agent_id) and agent_id is not None:
            raise Refused(  # a redeploy dropped the agent it was started with: no other answers in its place
                "CONFLICT",
                f"This conversation's agent {exists['agent_id']!r} is no longer served here: start a new conversation.",
            )
        raise self.limits.too_many_turns() if exists else self.limits.too_many_conversations()

    async def save_pending(self) -> None:
        """Record conversations started while the database was down; one it refuses waits on its own."""

        async def save(thread_id: str) -> None:
            async with self.pool.connection() as conn:
                await conn.execute(
                    "INSERT INTO conversations (client_id, id, title, turns, agent_id) VALUES (%s, %s, %s, 1, %s) "
                    "ON CONFLICT (client_id, id) DO UPDATE SET last_message_at = now(), "
                    "agent_id = coalesce(conversations.agent_id, EXCLUDED.agent_id)",
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

    async def get(self, conversation_id: str, client_id: str) -> ConversationSummary | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT {COLUMNS} FROM conversations WHERE client_id = %s AND id = %s", (client_id, conversation_id)
            )
            row = await cursor.fetchone()
        return None if row is None else ConversationSummary(**row)

    async def list(self, client_id: str, page: Page = FIRST_PAGE) -> list[ConversationSummary]:
        """The visitor's conversations, most recently used first; a search uses the GIN index on `words`."""
        where, params = ["client_id = %(client)s"], {"client": client_id, "limit": page.limit}
        if page.query:
            if not (terms := search_terms(page.query)):
                return []
            where.append("words @@ to_tsquery('simple', %(query)s)")
            params["query"] = ts_query(terms)
        if page.after is not None:
            where.append("(last_message_at, id) < (%(at)s, %(id)s)")
            params |= {"at": page.after[0], "id": page.after[1]}
        sql = (
            f"SELECT {COLUMNS} FROM conversations WHERE {' AND '.join(where)} "
            "ORDER BY last_message_at DESC, id DESC LIMIT %(limit)s"
        )
        async with self.pool.connection() as conn:
            # A search is planned for its words each time, never prepared: a plan made once for any word (PostgreSQL's
            # generic plan, after five runs) goes through the words' index even for a word most conversations hold.
            cursor = await conn.execute(sql, params, prepare=False if page.query else None)
            return [ConversationSummary(**row) for row in await cursor.fetchall()]

    async def name(self, conversation_id: str, client_id: str, title: str, unless_not: str) -> bool:
        """Give the conversation a generated title, unless its title is no longer `unless_not` (the person
        renamed it meanwhile); True when it took it."""
        return await self.rename(conversation_id, client_id, title, unless_not) is not None

    async def remember_words(self, conversation_id: str, client_id: str, text: str) -> None:
        """Add a turn's words to what finds the conversation; a search misses them if they cannot be stored."""
        words = (text[:SEARCHED_CHARS], client_id, conversation_id)
        try:
            await self.batches.write(
                aside("words", thread_of(client_id, conversation_id)),
                [(f"UPDATE conversations SET {ADD_WORDS} WHERE client_id = %s AND id = %s", [words])],
            )
        except (*CONNECTION_ERRORS, psycopg.Error) as exc:
            log.warning("a turn's words were not kept for search: %s", exc, extra={"conversation_id": conversation_id})

    async def rename(
        self, conversation_id: str, client_id: str, title: str, unless_not: str | None = None
    ) -> ConversationSummary | None:
        """A new title (its words find the conversation too); with `unless_not`, only while the title is that."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"UPDATE conversations SET title = %s, {ADD_WORDS} WHERE client_id = %s AND id = %s "
                f"AND (%s::text IS NULL OR title = %s) RETURNING {COLUMNS}",
                (title, title, client_id, conversation_id, unless_not, unless_not),
            )
            row = await cursor.fetchone()
        return None if row is None else ConversationSummary(**row)

    async def idle(self, days: float, anonymous_only: bool = False, limit: int = 500) -> Sequence[tuple[str, str]]:
        """(visitor, conversation) of conversations with no message for `days` days, oldest first; with
        `anonymous_only`, anonymous visitors' only."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT client_id, id FROM conversations WHERE last_message_at < now() - make_interval(secs => %s) "
                "AND (NOT %s OR client_id ~ %s) ORDER BY last_message_at LIMIT %s",
                (days * 86_400, anonymous_only, ANONYMOUS, limit),
            )
            return [(row["client_id"], row["id"]) for row in await cursor.fetchall()]

    async def delete(self, conversation_id: str, client_id: str) -> bool:
        self.pending.pop(thread_of(client_id, conversation_id), None)
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "DELETE FROM conversations WHERE client_id = %s AND id = %s", (client_id, conversation_id)
            )
            return cursor.rowcount > 0


class TurnAlong:
    """A conversation's turn sent after the running answer's row, in its round trip: one round trip before the
    answer's first token instead of two (each one costs every answer starting at that moment its wait). It is
    written only if the answer's row is; refused as `touch` refuses."""

    def __init__(self, conversations: PostgresConversations, params: dict[str, object]) -> None:
        self.conversations = conversations
        self.params = params

    async def send(self, conn: Connection, thread_id: str, answer_id: str) -> psycopg.AsyncCursor[DictRow]:
        """Queue the statement in `conn`'s pipeline, after the answer's row."""
        return await conn.execute(TOUCH_WITH_THE_ANSWER, self.params | {"thread": thread_id, "answer": answer_id})

    async def written(self, conn: Connection, sent: psycopg.AsyncCursor[DictRow]) -> bool:
        """Once the answer's row is written: whether this created the conversation; refused when it wrote nothing."""
        return await self.conversations.touched(conn, await sent.fetchone(), self.params)

    @staticmethod
    def refused(exc: psycopg.Error) -> Refused:
        """What a refusal of the round trip's values by PostgreSQL answers (the answer's row went with it)."""
        return unstorable(exc)
