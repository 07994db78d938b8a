"""The `conversations` table: what a list of conversations needs (title and times) and the turn counts the
storage limits need, so listing never reads a checkpoint; kept in memory, too, while PostgreSQL is down."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

import msgspec
import psycopg

from threadline.refusals import Refused
from threadline.storage.fallback import CONNECTION_ERRORS, DatabaseHealth, SaveRetries, save_each
from threadline.storage.saver import UNFLUSHED, Pool
from threadline.storage.threads import thread_of

log = logging.getLogger(__name__)

TITLE_LENGTH = 80
SEARCHED_CHARS = 100_000  # of one turn's text: what a tsvector can hold is bounded (1 MB)
SEARCH_TERMS = 8
ADD_WORDS = "words = strip(words || to_tsvector('simple', %s))"  # positions are not needed: no ranking


class ConversationSummary(msgspec.Struct, rename="camel", frozen=True):
    id: str
    title: str
    created_at: datetime
    last_message_at: datetime
    profile_id: str | None = None  # the model profile of its latest answer
    agent_id: str | None = None  # the agent it was started with (GET /api/agents), which it keeps


COLUMNS = "id, title, created_at, last_message_at, profile_id, agent_id"


# A conversation started while PostgreSQL was down, to record once it is back: visitor, id, title, agent.
Pending = tuple[str, str, str, str | None]

ANONYMOUS = r"^[0-9a-f]{32}$"  # an anonymous visitor's id (http/identity.py); users' start with a letter


class Page(msgspec.Struct, frozen=True):
    """Which conversations a list shows: those matching `query` (every word, as a word's beginning), older than
    the conversation `after` names (last activity, id) when it goes on from an earlier page, at most `limit`."""

    limit: int = 100
    query: str = ""
    after: tuple[datetime, str] | None = None


FIRST_PAGE = Page()


def search_terms(query: str) -> list[str]:
    """The words a search looks for, lower case, at most SEARCH_TERMS."""
    return re.findall(r"\w+", query.lower())[:SEARCH_TERMS]


def ts_query(terms: list[str]) -> str:
    """A tsquery matching conversations with every term as a word or a word's beginning ("tre" finds "tree")."""
    return " & ".join(f"'{term}':*" for term in terms)  # \w+ has no quote, colon or operator to escape


# What makes a first message Markdown rather than words: a link's or image's address, emphasis and code
# marks, and the markers that open a heading, a quote or a list item.
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
EMPHASIS = re.compile(r"(\*\*|__|~~|\*|`+)(?=\S)(.+?)(?<=\S)\1")  # paired: `2*3` stays
MARKS = re.compile(r"(?m)^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+|`{3,}\w*)")


def title_from(text: str) -> str:
    """A conversation's first title: its first message's words, without Markdown markup, on one line."""
    words = EMPHASIS.sub(r"\2", MARKS.sub("", LINK.sub(r"\1", text)))
    line = " ".join("".join(char for char in words if char.isprintable() or char.isspace()).split())
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
# visitor has room for a conversation. No row back means one of the two limits was reached. It does not wait
# for PostgreSQL to flush it to disk: the answer's checkpoints, written after it and flushed, flush it too (the
# write-ahead log is one sequence, flushed in order), so a crash cannot keep a conversation's checkpoint and
# lose its row; and the answer's first token no longer waits for a flush of its own.
TOUCH = f"""
WITH {UNFLUSHED}, continued AS (
    UPDATE conversations
    SET last_message_at = now(), turns = turns + %(turns)s, profile_id = coalesce(%(profile_id)s, profile_id)
    WHERE client_id = %(client_id)s AND id = %(id)s AND turns + %(turns)s <= %(max_turns)s
      AND (agent_id IS NULL OR %(agent_id)s::text IS NULL OR agent_id = %(agent_id)s)
      AND EXISTS (SELECT FROM unflushed)
    RETURNING false AS created
), started AS (
    INSERT INTO conversations (client_id, id, title, turns, profile_id, agent_id, words)
    SELECT %(client_id)s, %(id)s, %(title)s, %(turns)s, %(profile_id)s, %(agent_id)s, to_tsvector('simple', %(title)s)
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
        title = title_from(first_message)
        if not self.health.down:
            try:
                ids = {"profile_id": profile_id, "agent_id": agent_id}
                return await self._touch(conversation_id, client_id, title, 1 if new_turn else 0, ids)
            except CONNECTION_ERRORS as exc:
                self.health.failed("recording a conversation", exc, conversation_id=conversation_id)
            except psycopg.Error as exc:
                raise unstorable(exc) from None
        self.pending.setdefault(thread_of(client_id, conversation_id), (client_id, conversation_id, title, agent_id))
        return False

    async def _touch(
        self, conversation_id: str, client_id: str, title: str, turns: int, ids: dict[str, str | None]
    ) -> bool:
        params = {
            **ids,
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
                    "SELECT agent_id FROM conversations WHERE client_id = %s AND id = %s", (client_id, conversation_id)
                )
            ).fetchone()
        if exists and exists["agent_id"] not in (None, ids.get("agent_id")) and ids.get("agent_id") is not None:
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
            cursor = await conn.execute(sql, params)
            return [ConversationSummary(**row) for row in await cursor.fetchall()]

    async def name(self, conversation_id: str, client_id: str, title: str, unless_not: str) -> bool:
        """Give the conversation a generated title, unless its title is no longer `unless_not` (the person
        renamed it meanwhile); True when it took it."""
        return await self.rename(conversation_id, client_id, title, unless_not) is not None

    async def remember_words(self, conversation_id: str, client_id: str, text: str) -> None:
        """Add a turn's words to what finds the conversation; a search misses them if they cannot be stored."""
        try:
            async with self.pool.connection() as conn:
                await conn.execute(
                    f"UPDATE conversations SET {ADD_WORDS} WHERE client_id = %s AND id = %s",
                    (text[:SEARCHED_CHARS], client_id, conversation_id),
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


class MemoryConversations:
    """The same interface in process memory, for CHAT_MEMORY_BACKEND=memory."""

    def __init__(self, limits: StorageLimits) -> None:
        self.limits = limits
        self.rows: dict[tuple[str, str], tuple[int, ConversationSummary]] = {}
        self.counts: dict[str, int] = {}  # conversations per visitor, so a limit check does not scan every row
        self.pending: dict[str, Pending] = {}  # never anything: memory cannot go away
        self.retries = SaveRetries()
        self.words: dict[tuple[str, str], list[str]] = {}  # what finds each conversation, lower case

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
        agent_id: str | None = None,
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
            ConversationSummary(
                id=conversation_id,
                title=known.title if known else title_from(first_message),
                created_at=known.created_at if known else now,
                last_message_at=now,
                profile_id=profile_id,
                agent_id=known.agent_id if known else agent_id,
            ),
        )
        return known is None

    async def get(self, conversation_id: str, client_id: str) -> ConversationSummary | None:
        return self.rows.get((client_id, conversation_id), (0, None))[1]

    async def list(self, client_id: str, page: Page = FIRST_PAGE) -> list[ConversationSummary]:
        """A simple match: every term somewhere in the title or the words said."""
        terms = search_terms(page.query)
        if page.query and not terms:
            return []
        mine = [
            conversation
            for (owner, id_), (_, conversation) in self.rows.items()
            if owner == client_id
            and (page.after is None or (conversation.last_message_at, id_) < page.after)
            and all(term in conversation.title.lower() or term in self._said(owner, id_) for term in terms)
        ]
        return sorted(mine, key=lambda row: (row.last_message_at, row.id), reverse=True)[: page.limit]

    def _said(self, client_id: str, conversation_id: str) -> str:
        return "\n".join(self.words.get((client_id, conversation_id), ()))

    async def name(self, conversation_id: str, client_id: str, title: str, unless_not: str) -> bool:
        return await self.rename(conversation_id, client_id, title, unless_not) is not None

    async def remember_words(self, conversation_id: str, client_id: str, text: str) -> None:
        if (client_id, conversation_id) in self.rows:
            self.words.setdefault((client_id, conversation_id), []).append(text[:SEARCHED_CHARS].lower())

    async def rename(
        self, conversation_id: str, client_id: str, title: str, unless_not: str | None = None
    ) -> ConversationSummary | None:
        row = self.rows.get((client_id, conversation_id))
        if row is None or unless_not not in (None, row[1].title):
            return None
        renamed = msgspec.structs.replace(row[1], title=title)
        self.rows[(client_id, conversation_id)] = (row[0], renamed)
        return renamed

    async def idle(self, days: float, anonymous_only: bool = False, limit: int = 500) -> Sequence[tuple[str, str]]:
        cutoff = datetime.now(UTC) - timedelta(days=days)
        found = sorted(
            (row.last_message_at, owner, id_)
            for (owner, id_), (_, row) in self.rows.items()
            if row.last_message_at < cutoff and (not anonymous_only or re.match(ANONYMOUS, owner))
        )
        return [(owner, id_) for _, owner, id_ in found[:limit]]

    async def delete(self, conversation_id: str, client_id: str) -> bool:
        self.words.pop((client_id, conversation_id), None)
        if self.rows.pop((client_id, conversation_id), None) is None:
            return False
        if left := self.counts.pop(client_id) - 1:
            self.counts[client_id] = left
        return True


class Conversations(Protocol):
    """A visitor's conversations, in PostgreSQL or in memory."""

    pending: dict[str, Pending]
    retries: SaveRetries

    async def touch(
        self,
        conversation_id: str,
        client_id: str,
        first_message: str,
        *,
        new_turn: bool = True,
        profile_id: str | None = None,
        agent_id: str | None = None,
    ) -> bool: ...

    async def get(self, conversation_id: str, client_id: str) -> ConversationSummary | None: ...

    async def list(self, client_id: str, page: Page = FIRST_PAGE) -> list[ConversationSummary]: ...

    async def remember_words(self, conversation_id: str, client_id: str, text: str) -> None: ...

    async def name(self, conversation_id: str, client_id: str, title: str, unless_not: str) -> bool: ...

    async def rename(
        self, conversation_id: str, client_id: str, title: str, unless_not: str | None = None
    ) -> ConversationSummary | None: ...

    async def idle(self, days: float, anonymous_only: bool = False, limit: int = 500) -> Sequence[tuple[str, str]]: ...

    async def delete(self, conversation_id: str, client_id: str) -> bool: ...

    async def save_pending(self) -> None: ...
