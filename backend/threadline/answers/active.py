"""Which answers are running, so a conversation streams one answer at a time, a visitor a few at most
(CHAT_ANSWERS_PER_VISITOR), and a stop request reaches its answer.

In one process a dict is enough. With PostgreSQL every process records its running answers in the
`active_turns` table (its key keeps one per conversation across processes; the count per visitor is taken
under an advisory lock on the visitor, which a claim of their conversations takes too), and a stop request
for an answer running elsewhere travels as a NOTIFY on `threadline_cancel` to the process that runs it.
If the database is down, each process still enforces and cancels what it runs itself.

A row names the database session of the process that runs the answer (its LISTEN connection). When
that process dies, even by `kill -9`, PostgreSQL ends the session, so the row is known to be stale at
once: it is cleared, and the conversation's unfinished turn is closed and marked interrupted. The row also keeps
what the turn brought (its question): LangGraph writes checkpoints while the answer streams, so the process may
have died before one held it, and the turn is closed with it all the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from functools import partial
from typing import Any

import msgspec
import psycopg
from psycopg.rows import DictRow

from threadline.answers.turn import Stop, Turn
from threadline.refusals import Refused, busy, too_many_answers
from threadline.storage.fallback import CONNECTION_ERRORS, DatabaseHealth
from threadline.storage.postgres import running_answers as rows
from threadline.storage.postgres.conversation_list import TurnAlong
from threadline.storage.saver import Pool, ReadAhead
from threadline.storage.threads import branches_of

log = logging.getLogger(__name__)


class ActiveTurns:
    def __init__(
        self,
        pool: Pool | None,
        database_url: str | None,
        health: DatabaseHealth,
        stale_after: float,
        recover: Callable[[str, str, dict[str, Any] | None], Awaitable[None]],
    ) -> None:
        """`recover(thread_id, why, turn_input)` closes the unfinished turn of an answer whose process died, and keeps
        what the turn brought (its graph input, recorded with the answer's row) if no checkpoint held it yet."""
        self.pool = pool
        self.health = health
        self.database_url = database_url
        self.stale_after = stale_after
        self.recover = recover
        self.by_thread: dict[str, Turn] = {}
        self.by_client: dict[str, list[Turn]] = {}  # each visitor's running answers in this process
        self.recorded: dict[Turn, datetime] = {}  # each running answer's row, by when it was written
        self.tasks: dict[str, asyncio.Task[None]] = {}  # each answer's task, until it has also pruned its checkpoints
        self.session: str | None = None  # the LISTEN connection's session: it lives as long as this process
        # Called with a thread whose running answer a reader in another process wants (answers/recordings.py).

    def claim(self, turn: Turn, most: int) -> None:
        """Hold the conversation's one running answer for `turn` in this process: refused (CONFLICT) when one
        runs in it here, or the client has `most` running here. Then `record` it for every process, and
        `launch` it, or `release` it."""
        if turn.thread_id in self.by_thread:
            raise busy()
        running = self.by_client.setdefault(turn.client_id, [])
        if len(running) >= most:
            raise busy() if most == 1 else too_many_answers(most)
        self.by_thread[turn.thread_id] = turn
        running.append(turn)

    async def record(self, turn: Turn, most: int, along: TurnAlong | None = None) -> bool | None:
        """Write the claimed answer's row, which every process sees (refused when another process runs one in
        the conversation, or `most` for the client); while the database is down, the claim in this process is
        all there is. `along`, the conversation's turn, goes in the same round trip and is written only with the
        row: whether it created the conversation, or None when it did not go (then `touch` it). The turn's
        `read_ahead`, its conversation's latest checkpoint, is read in that round trip too, for its run."""
        if self.pool is not None and not self.health.down:
            return await self._record(turn, most, along)
        return None

    def launch(self, turn: Turn) -> None:
        """Start the claimed answer's task; it releases its claim when it ends."""
        task = turn.start(self.release)
        self.tasks[turn.thread_id] = task
        task.add_done_callback(partial(self._forget_task, turn.thread_id))

    def begin_branch(self, turn: Turn) -> None:
        """Start the second answer of an A/B comparison beside the visitor's first, which was begun (and
        recorded) as usual: it is stopped with its conversation's answer and at shutdown, in this process."""
        self.by_thread[turn.thread_id] = turn
        self.launch(turn)

    def _forget_task(self, thread_id: str, task: asyncio.Task[None]) -> None:
        if self.tasks.get(thread_id) is task:
            del self.tasks[thread_id]

    async def _record(self, turn: Turn, most: int, along: TurnAlong | None) -> bool | None:
        assert self.pool is not None, "recorded only with a database"
        try:
            return await self._insert(turn, most, along)
        except psycopg.errors.UniqueViolation:
            raise busy() from None
        except CONNECTION_ERRORS as exc:  # PoolTimeout is an OperationalError
            self.health.failed("recording a running answer", exc, conversation_id=turn.conversation_id)
            return None

    async def _insert(self, turn: Turn, most: int, along: TurnAlong | None) -> bool | None:
        assert self.pool is not None
        key = (turn.thread_id, turn.client_id, self.session, turn.request.assistant_message_id, most, _input_of(turn))
        async with self.pool.connection() as conn:
            sent = None
            if along is None:
                started_at = await self._first_try(conn, key)
            else:
                started_at, sent = await self._first_try_along(conn, key, along, turn.read_ahead)
            if started_at is None:
                # Only now look for rows left behind: one statement less per answer. Then insert again
                # whatever they found: the ended answer's own removal may have taken its row meanwhile,
                # and a row that is really there refuses the second insert too.
                await self._clear_ended_here(conn, turn) or await self.clear_stale(conn)
                started_at, sent = await rows.record(conn, key), None
            if started_at is None:
                raise busy() if most == 1 else too_many_answers(most)
            self.recorded[turn] = started_at
            return None if along is None or sent is None else await along.written(conn, sent)

    @staticmethod
    async def _first_try(conn: psycopg.AsyncConnection[DictRow], key: rows.RowKey) -> datetime | None:
        try:
            return await rows.record(conn, key)
        except psycopg.errors.UniqueViolation:
            return None

    @staticmethod
    async def _first_try_along(
        conn: psycopg.AsyncConnection[DictRow], key: rows.RowKey, along: TurnAlong, ahead: ReadAhead | None
    ) -> tuple[datetime | None, psycopg.AsyncCursor[DictRow]]:
        try:
            return await rows.record_along(conn, key, along=along, ahead=ahead)
        except (psycopg.errors.IntegrityError, psycopg.errors.DataError) as exc:  # the turn's values; no row either
            raise along.refused(exc) from None

    async def _clear_ended_here(self, conn: psycopg.AsyncConnection[DictRow], turn: Turn) -> int:
        """Remove this client's rows of answers this process ran and has ended, whose own removal is still on
        its way: the next message right after an answer must not be refused."""
        if self.session is None:
            return 0
        running = [thread_id for thread_id, other in self.by_thread.items() if other is not turn]
        return await rows.clear_ended(conn, turn.client_id, self.session, running)

    async def clear_stale(self, conn: psycopg.AsyncConnection[DictRow]) -> int:
        """Remove the rows of answers whose process is gone and close their turns; how many there were."""
        stale = await rows.clear_stale(conn, self.stale_after)
        for thread_id, turn_input in stale:
            log.warning("an answer's server process died mid-answer; closing its turn", extra={"thread_id": thread_id})
            try:
                await self.recover(thread_id, "server-stopped", turn_input)
            except Exception:
                log.exception("could not close the turn of an answer whose process died")
        return len(stale)

    async def runs_in_a_live_process(self, conn: psycopg.AsyncConnection[DictRow], thread_id: str) -> bool:
        """Whether an answer of this conversation runs in a process that is alive. A row a dead process left
        is cleared first, and its turn closed, so a reader never waits for an answer nobody runs."""
        await self.clear_stale(conn)
        return await rows.runs(conn, thread_id)

    async def release(self, turn: Turn) -> None:
        """Forget an answer that ended or was refused, and its row if one was written."""
        if self.by_thread.get(turn.thread_id) is turn:
            del self.by_thread[turn.thread_id]
        running = self.by_client.get(turn.client_id, [])
        if turn in running:
            running.remove(turn)
            if not running:
                del self.by_client[turn.client_id]
        if (started_at := self.recorded.pop(turn, None)) is not None and self.pool is not None:
            try:  # this answer's row only: the next answer in the conversation may have written its own
                async with self.pool.connection() as conn:
                    await rows.forget(conn, turn.thread_id, started_at)
            except CONNECTION_ERRORS as exc:
                log.warning("could not clear a finished answer (%s); it is cleared when this process ends", exc)

    async def cancel(self, thread_id: str, client_id: str, answer_id: str | None = None) -> bool:
        """Stop the client's running answer in this conversation and wait until it is saved; False if none runs,
        or, with `answer_id`, if that answer no longer runs (another may have taken its place: it is left).

        Refused (STOP_UNCONFIRMED) when the answer runs in another process that did not confirm the stop in time.
        """
        if answer_id is not None and await self.answer_running_in(thread_id) != answer_id:
            return False
        branches = [
            turn
            for key, turn in self.by_thread.items()
            if key.startswith(branches_of(thread_id)) and turn.client_id == client_id
        ]
        for branch in branches:
            branch.stop(Stop.CANCELLED)
        await asyncio.gather(*(branch.finished() for branch in branches))
        if await self._stop_here(thread_id, client_id):
            return True
        if branches:
            return True
        if (task := self.tasks.get(thread_id)) is not None:  # an answer that ended and is still tidying up
            await asyncio.gather(asyncio.shield(task), return_exceptions=True)
        if self.pool is None or self.health.down:
            return False
        return await self._cancel_elsewhere(thread_id, client_id)

    async def running_answer(self, client_id: str) -> tuple[str, str] | None:
        """The conversation (thread) where the client's answer runs, in this process or another, and that
        answer's message id; None if none runs."""
        if running := self.by_client.get(client_id):
            return running[0].thread_id, running[0].request.assistant_message_id
        if self.pool is None or self.health.down:
            return None
        async with self.pool.connection() as conn:
            return await rows.running_of(conn, client_id)

    async def answer_running_in(self, thread_id: str) -> str | None:
        """The message id of the answer running in this conversation, in this process or another; None if none."""
        if (turn := self.by_thread.get(thread_id)) is not None:
            return turn.request.assistant_message_id
        if self.pool is None or self.health.down:
            return None
        async with self.pool.connection() as conn:
            return await rows.answer_in(conn, thread_id)

    async def wait_until_idle(self, thread_id: str, client_id: str, wait: float) -> None:
        """Wait until no answer runs in this conversation, in this process or another (at most `wait` s)."""
        if (turn := self.by_thread.get(thread_id)) is not None and turn.client_id == client_id:
            with contextlib.suppress(TimeoutError):  # still running: the new answer is refused as busy
                await asyncio.wait_for(turn.finished(), wait)
        if (task := self.tasks.get(thread_id)) is not None:
            await asyncio.gather(asyncio.shield(task), return_exceptions=True)
        if self.pool is None or self.health.down:
            return
        deadline = asyncio.get_running_loop().time() + wait
        while asyncio.get_running_loop().time() < deadline:
            async with self.pool.connection() as conn:
                if not await rows.runs(conn, thread_id, client_id):
                    return
            await asyncio.sleep(0.1)

    async def _stop_here(self, thread_id: str, client_id: str) -> bool:
        """Stop the client's answer in this conversation if it runs in this process, and wait until it is saved."""
        turn = self.by_thread.get(thread_id)
        if turn is None or turn.client_id != client_id:
            return False
        turn.stop(Stop.CANCELLED)
        await turn.finished()
        return True

    async def _cancel_elsewhere(self, thread_id: str, client_id: str, wait: float = 10.0) -> bool:
        assert self.pool is not None, "other processes are reached through the database"
        async with self.pool.connection() as conn:
            if not await rows.runs(conn, thread_id, client_id):
                return False
            # The answer may have begun here while its row was looked for: a notice to this process's own
            # listener could be lost while it connects, and the stop would then wait for the answer's end.
            if await self._stop_here(thread_id, client_id):
                return True
            await self.clear_stale(conn)
            if not await rows.runs(conn, thread_id, client_id):
                return False  # its process had died: nothing was running
            await rows.notify(conn, rows.STOP_CHANNEL, thread_id)
        deadline = asyncio.get_running_loop().time() + wait
        while asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
            async with self.pool.connection() as conn:
                if not await rows.runs(conn, thread_id, client_id):
                    return True
        raise Refused("STOP_UNCONFIRMED", "The server running this answer did not confirm the stop. Please try again.")

    async def stop_all(self) -> None:
        """At shutdown: end every running answer the way a stop does, and wait until each is saved."""
        for turn in list(self.by_thread.values()):
            turn.stop(Stop.SHUTDOWN)
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    async def listen(self, on_resume: Callable[[str], None]) -> None:
        """Hold this process's session, clear what dead processes left, stop answers another process was asked to
        stop, and pass on another process's request to resume a conversation's answer (`on_resume(thread_id)`);
        reconnects when the database returns."""
        assert self.pool is not None and self.database_url is not None, "listening needs the database"
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.database_url, autocommit=True) as conn:
                    self.session, notices = await rows.listen(conn)
                    async with self.pool.connection() as pooled:
                        if self.recorded:  # answers recorded under a session that ended with the old connection
                            await rows.adopt(pooled, self.session, [turn.thread_id for turn in self.recorded])
                        await self.clear_stale(pooled)
                    async for notice in notices:
                        if notice.channel == rows.RESUME_CHANNEL:
                            on_resume(notice.payload)
                        elif (turn := self.by_thread.get(notice.payload)) is not None:
                            turn.stop(Stop.CANCELLED)
            except (psycopg.Error, OSError) as exc:
                log.debug("cancel listener reconnecting: %s", exc)
                await asyncio.sleep(1.0)


def _input_of(turn: Turn) -> str | None:
    """What the turn brings, as JSON for its row; None for a turn that goes on after the person answered it (what
    it brings was saved when it was asked)."""
    if turn.request.resume is not None:
        return None
    return msgspec.json.encode(turn.request.graph_input()).decode()
