"""What every MCP connection shares: one error type, and a call bounded by the tool timeout."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
_cancelling: set[asyncio.Task[None]] = set()


class McpCallError(Exception):
    """A call that produced no tool result: unreachable, timed out, refused, or answered with nonsense."""

    def __init__(
        self,
        message: str,
        *,
        request_id: Any = None,
        code: int | None = None,
        data: Any = None,
        status: int | None = None,
        unreachable: bool = False,
        timed_out: bool = False,
    ) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.code = code
        self.data = data
        self.status = status
        self.unreachable = unreachable
        self.timed_out = timed_out


async def bounded(
    call: Awaitable[T], *, timeout: float, request_id: Any, cancel: Callable[[Any, str], Coroutine[Any, Any, None]]
) -> T:
    """Await `call` for at most `timeout` seconds; on timeout, or when the answer itself is stopped,
    tell the server to cancel the request so it does not keep working for nobody."""
    try:
        async with asyncio.timeout(timeout):
            return await call
    except TimeoutError:
        await cancel(request_id, f"timed out after {timeout:g} s")
        raise McpCallError(f"no result within {timeout:g} s", request_id=request_id, timed_out=True) from None
    except asyncio.CancelledError:
        task = asyncio.create_task(cancel(request_id, "the answer was stopped"))
        _cancelling.add(task)
        task.add_done_callback(_cancelling.discard)
        raise
