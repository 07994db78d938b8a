"""A standard MCP server (streamable HTTP or stdio) through the official SDK's ClientSession.

The SDK's transports are context managers that must be entered and left in one task, so each
connection holds its session open in a task of its own; calls from any turn go through that session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from datetime import timedelta
from typing import Any

import httpx
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from mcp.shared.session import ProgressFnT

from threadline import __version__
from threadline.mcp.calls import McpCallError, bounded
from threadline.settings.mcp_servers import McpServerConfig

log = logging.getLogger(__name__)
CLIENT_INFO = types.Implementation(name="threadline", version=__version__)


def _first_cause(error: BaseException) -> BaseException:
    """The SDK's task groups wrap failures in ExceptionGroups; the first leaf says what went wrong."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def transport_for(config: McpServerConfig) -> Callable[[], AbstractAsyncContextManager[Any]]:
    if config.transport == "stdio":
        assert config.command, "parse_servers requires a command for stdio"
        parameters = StdioServerParameters(command=config.command, args=list(config.args), env=config.env)
        return lambda: stdio_client(parameters)
    headers = dict(config.headers) | ({"Authorization": f"Bearer {config.jwt}"} if config.jwt else {})

    url = config.url
    assert url, "parse_servers requires a url for streamable-http"

    @asynccontextmanager
    async def streamable_http() -> AsyncIterator[Any]:
        # The SDK's own defaults: a long read timeout, since an SSE response may stay quiet between events.
        async with (
            httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(30.0, read=300.0), follow_redirects=True) as http,
            streamable_http_client(url, http_client=http) as streams,
        ):
            yield streams

    return streamable_http


class StandardConnection:
    supports_progress = True

    def __init__(
        self, name: str, transport: Callable[[], AbstractAsyncContextManager[Any]], on_lost: Callable[[str], None]
    ) -> None:
        self.name = name
        self._transport = transport
        self._on_lost = on_lost
        self._session: ClientSession | None = None
        self._closing = asyncio.Event()
        self._holder: asyncio.Task[None] | None = None
        self._ended: asyncio.Future[None] | None = None

    async def open(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._ended = asyncio.get_running_loop().create_future()  # done when the session is over, for any reason
        self._holder = asyncio.create_task(self._hold(ready), name=f"mcp-{self.name}")
        await ready

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        try:
            async with AsyncExitStack() as stack:
                streams = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(
                    ClientSession(streams[0], streams[1], client_info=CLIENT_INFO)
                )
                await session.initialize()
                self._session = session
                ready.set_result(None)
                await self._closing.wait()
        except BaseException as error:
            cause = _first_cause(error)
            if not ready.done():
                ready.set_exception(McpCallError(f"cannot connect: {cause}", unreachable=True))
            elif not self._closing.is_set():
                self._on_lost(f"connection lost: {cause}")
            if isinstance(error, asyncio.CancelledError):
                raise
        finally:
            self._session = None
            if self._ended is not None:
                self._ended.set_result(None)

    async def list_tools(self) -> list[types.Tool]:
        tools: list[types.Tool] = []
        params = None
        while True:  # every page
            page = await self._live().list_tools(params=params)
            tools += page.tools
            if not page.nextCursor:
                return tools
            params = types.PaginatedRequestParams(cursor=page.nextCursor)

    def _live(self) -> ClientSession:
        if self._session is None:
            raise McpCallError("not connected", unreachable=True)
        return self._session

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout: float, on_progress: ProgressFnT | None = None
    ) -> types.CallToolResult:
        session = self._live()
        # ClientSession numbers requests in order and exposes no id; the next one is this call's, which
        # the cancellation notification must name.
        request_id = session._request_id
        # The SDK's own read timeout is a backstop only: `bounded` times out first and sends the cancellation.
        call = session.call_tool(
            name, arguments, read_timeout_seconds=timedelta(seconds=timeout + 5), progress_callback=on_progress
        )
        # The SDK leaves a call waiting when its session ends under it; end the wait with the session.
        task, ended = asyncio.current_task(), self._ended
        assert task is not None and ended is not None, "called from a task, on an open connection"

        def abandon(_: asyncio.Future[None]) -> None:
            task.cancel()

        ended.add_done_callback(abandon)
        try:
            return await bounded(call, timeout=timeout, request_id=request_id, cancel=self.cancel)
        except asyncio.CancelledError:
            if ended.done() and task.uncancel() == 0:  # our cancel, not the answer being stopped
                raise McpCallError(
                    "the connection was lost during the call", request_id=request_id, unreachable=True
                ) from None
            raise
        except McpError as error:
            raise McpCallError(
                f"JSON-RPC error {error.error.code}: {error.error.message}",
                request_id=request_id,
                code=error.error.code,
                data=error.error.data,
            ) from None
        except McpCallError:
            raise
        except Exception as error:  # noqa: BLE001 - the transport failed under the session: reconnect
            raise McpCallError(
                f"the session failed: {_first_cause(error)}", request_id=request_id, unreachable=True
            ) from None
        finally:
            ended.remove_done_callback(abandon)

    async def cancel(self, request_id: Any, reason: str) -> None:
        if (session := self._session) is None:
            return
        try:
            await session.send_notification(
                types.ClientNotification(
                    types.CancelledNotification(
                        params=types.CancelledNotificationParams(requestId=request_id, reason=reason)
                    )
                )
            )
        except Exception as error:  # noqa: BLE001 - the session may be gone; cancelling is best effort
            log.debug("could not cancel request %s on %s: %s", request_id, self.name, error)

    async def close(self) -> None:
        self._closing.set()
        if self._holder is not None:
            try:
                await asyncio.wait_for(self._holder, 5)
            except (TimeoutError, asyncio.CancelledError, Exception):  # noqa: BLE001
                self._holder.cancel()
