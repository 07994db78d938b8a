"""Which answers are running, so a visitor streams one at a time and a stop request reaches its answer.

In one process a dict is enough. With PostgreSQL every process records its running answers in the
`active_turns` table (a unique index keeps one per client across processes), and a stop request for
an answer running elsewhere travels as a NOTIFY on `threadline_cancel` to the process that runs it.
If the database is down, each process still enforces and cancels what it runs itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable

import psycopg
from psycopg_pool import AsyncConnectionPool

from threadline.errors import ApiError
from threadline.fallback import DB_ERRORS, DatabaseHealth
from threadline.turns import Stop, Turn

log = logging.getLogger("threadline.active_turns")

CHANNEL = "threadline_cancel"


def busy() -> ApiError:
    return ApiError(409, "CONFLICT", "An answer is already streaming for you. Stop it or wait for it to finish, "
                    "then send again.")


class ActiveTurns:
    def __init__(self, pool: AsyncConnectionPool | None, database_url: str | None, health: DatabaseHealth | None,
                 stale_after: float) -> None:
        self.pool = pool
        self.health = health
        self.database_url = database_url
        self.stale_after = stale_after
        self.by_conversation: dict[str, Turn] = {}
        self.by_client: dict[str, Turn] = {}
        self.recorded: set[str] = set()

    async def begin(self, turn: Turn, owned: Awaitable[bool]) -> bool:
        """Register the answer and start it once `owned` confirms the conversation is the client's.

        False, with nothing started, when it is not theirs; ApiError 409 when this client already has an
        answer running. Checking ownership and recording the answer are separate writes, made at once.
        """
        if turn.client_id in self.by_client or turn.conversation_id in self.by_conversation:
            if not await owned:  # someone else's conversation is "not found", busy or not
                return False
            raise busy()
        self.by_conversation[turn.conversation_id] = turn
        self.by_client[turn.client_id] = turn
        try:
            steps = [owned]
            if self.pool is not None and not self.health.down:
                steps.append(self._record(turn))
            mine, *recorded = await asyncio.gather(*steps, return_exceptions=True)
            if mine is not True:
                await self._end(turn)  # forget it, and its row if one was written
                if isinstance(mine, BaseException):
                    raise mine
                return False
            for outcome in recorded:
                if isinstance(outcome, BaseException):
                    raise outcome
        except BaseException:
            self.by_conversation.pop(turn.conversation_id, None)
            self.by_client.pop(turn.client_id, None)
            raise
        turn.start(self._end)
        return True

    async def _record(self, turn: Turn) -> None:
        insert = "INSERT INTO active_turns (conversation_id, client_id) VALUES (%s, %s)"
        try:
            async with self.pool.connection() as conn:
                try:
                    await conn.execute(insert, (turn.conversation_id, turn.client_id))
                except psycopg.errors.UniqueViolation:
                    # Only now look for rows a crashed process left behind: one statement less per answer.
                    await conn.execute("DELETE FROM active_turns WHERE started_at < now() - make_interval(secs => %s)",
                                       (self.stale_after,))
                    await conn.execute(insert, (turn.conversation_id, turn.client_id))
            self.recorded.add(turn.conversation_id)
        except psycopg.errors.UniqueViolation:
            raise busy() from None
        except DB_ERRORS as exc:  # PoolTimeout is a psycopg.Error
            self.health.failed("recording a running answer", exc, conversation_id=turn.conversation_id)

    async def _end(self, turn: Turn) -> None:
        self.by_conversation.pop(turn.conversation_id, None)
        self.by_client.pop(turn.client_id, None)
        if turn.conversation_id in self.recorded:
            self.recorded.discard(turn.conversation_id)
            try:
                async with self.pool.connection() as conn:
                    await conn.execute("DELETE FROM active_turns WHERE conversation_id = %s", (turn.conversation_id,))
            except DB_ERRORS as exc:
                log.warning("could not clear a finished answer (%s); it expires by itself", exc)

    async def cancel(self, conversation_id: str, client_id: str) -> bool:
        """Stop the client's running answer in this conversation and wait until it is saved; False if none runs."""
        turn = self.by_conversation.get(conversation_id)
        if turn is not None and turn.client_id == client_id:
            turn.stop(Stop.CANCELLED)
            await turn.finished()
            return True
        if self.pool is None or self.health.down:
            return False
        return await self._cancel_elsewhere(conversation_id, client_id)

    async def _cancel_elsewhere(self, conversation_id: str, client_id: str, wait: float = 10.0) -> bool:
        query = "SELECT 1 FROM active_turns WHERE conversation_id = %s AND client_id = %s"
        async with self.pool.connection() as conn:
            if await (await conn.execute(query, (conversation_id, client_id))).fetchone() is None:
                return False
            await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, conversation_id))
        deadline = asyncio.get_running_loop().time() + wait
        while asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
            async with self.pool.connection() as conn:
                if await (await conn.execute(query, (conversation_id, client_id))).fetchone() is None:
                    break
        return True

    async def stop_all(self) -> None:
        """At shutdown: end every running answer the way a stop does, so each is saved."""
        turns = list(self.by_conversation.values())
        for turn in turns:
            turn.stop(Stop.SHUTDOWN)
        await asyncio.gather(*(turn.finished() for turn in turns), return_exceptions=True)

    async def listen(self) -> None:
        """Stop answers of this process that another process was asked to stop; reconnects when the DB returns."""
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.database_url, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    async for notice in conn.notifies():
                        if (turn := self.by_conversation.get(notice.payload)) is not None:
                            turn.stop(Stop.CANCELLED)
            except (psycopg.Error, OSError) as exc:
                log.debug("cancel listener reconnecting: %s", exc)
                await asyncio.sleep(1.0)
