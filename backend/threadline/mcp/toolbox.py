"""The graph's tools: every tool of every configured MCP server, as LangChain tools.

Servers are connected at start-up; one that is down is logged and retried in the background, and its
tools join the graph when it answers. Each call is bounded by MCP_TOOL_TIMEOUT; whatever goes wrong
comes back to the graph as an error tool result, so a tool never ends an answer.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from fnmatch import fnmatch
from functools import partial
from typing import Any, Protocol

import httpx
from langchain_core.tools import BaseTool
from mcp import types
from mcp.server.fastmcp import FastMCP

from threadline.mcp.in_process import InProcessConnection
from threadline.mcp.jsonrpc import HttpMcpTransport, JsonRpcConnection
from threadline.mcp.standard import StandardConnection, transport_for
from threadline.mcp.tool import KeepFile, McpTool
from threadline.settings.mcp_servers import BUILTIN, McpServerConfig, redacted

log = logging.getLogger(__name__)

_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64  # what OpenAI and Gemini accept for a function name


class Connection(Protocol):
    supports_progress: bool

    async def open(self) -> None: ...
    async def list_tools(self) -> list[types.Tool]: ...
    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout: float, on_progress: Any = None
    ) -> types.CallToolResult: ...
    async def close(self) -> None: ...


def tool_name(server: str, remote: str, taken: set[str]) -> str:
    """A name the model providers accept and no other tool has: the tool's own when it is free."""
    base = _INVALID_NAME_CHARS.sub("_", remote)[:MAX_NAME] or "tool"
    if base not in taken:
        return base
    candidate = f"{server}_{base}"[:MAX_NAME]
    suffix = 2
    while candidate in taken:
        candidate = f"{server}_{base}"[: MAX_NAME - 3] + f"_{suffix}"
        suffix += 1
    return candidate


def needs_approval(tool: types.Tool, config: McpServerConfig) -> bool:
    """Whether a call waits for the person's approval: the server marks the tool destructive (and not
    read-only), or the configuration's `requireApproval` names it; `autoApprove` overrides both. A tool with
    no annotations runs without asking (MCP's default would ask for every unannotated tool)."""
    if any(fnmatch(tool.name, pattern) for pattern in config.auto_approve):
        return False
    if any(fnmatch(tool.name, pattern) for pattern in config.require_approval):
        return True
    hints = tool.annotations
    return bool(hints and hints.destructiveHint is True and not hints.readOnlyHint)


class ServerState:
    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self.connection: Connection | None = None
        self.tools: list[types.Tool] = []
        self.error: str | None = "not connected yet"


class McpToolbox:
    """Owns the connections; `tools` is the current list for the graph, `on_change` fires when it changes."""

    def __init__(
        self,
        servers: tuple[McpServerConfig, ...],
        *,
        timeout: float,
        builtin: FastMCP,
        on_change: Callable[[list[BaseTool]], None],
        retry_after: tuple[float, float] = (1.0, 30.0),
        keep_file: KeepFile | None = None,
    ) -> None:
        self.timeout = timeout
        self.keep_file = keep_file  # stores the files tools return
        self.servers = [ServerState(config) for config in servers]
        self._builtin = builtin  # threadline's own server, called in process
        self._on_change = on_change
        self._first_retry, self._longest_wait = retry_after
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(timeout + 5, connect=5.0))
        self._retrying: asyncio.Task[None] | None = None
        self._lost = asyncio.Event()
        self._closing: set[asyncio.Task[None]] = set()
        self.tools: list[BaseTool] = []

    def _connection(self, config: McpServerConfig) -> Connection:
        if config.transport == BUILTIN:
            return InProcessConnection(self._builtin)
        if config.transport == "jsonrpc-http":
            assert config.url, "parse_servers requires a url for jsonrpc-http"
            return JsonRpcConnection(
                HttpMcpTransport(
                    config.url, client=self._http, authorization=lambda: config.jwt, headers=config.headers
                )
            )
        return StandardConnection(config.name, transport_for(config), on_lost=partial(self._mark_lost, config.name))

    async def start(self) -> None:
        """Connect every server at once; none of them failing stops start-up."""
        await asyncio.gather(*(self._connect(server) for server in self.servers))
        self._rebuild()
        self._retrying = asyncio.create_task(self._retry_down_servers(), name="mcp-retry")

    async def _connect(self, server: ServerState) -> bool:
        connection = self._connection(server.config)
        try:
            async with asyncio.timeout(10):
                await connection.open()
                tools = await connection.list_tools()
        except Exception as error:  # noqa: BLE001 - whatever the failure, the server is down: retry later
            await connection.close()
            reason = "timed out connecting" if isinstance(error, TimeoutError) else redacted(str(error))
            if server.error != reason:
                log.warning(
                    "MCP server %s is down: %s (retrying in the background)",
                    server.config.name,
                    reason,
                    extra={"mcp_server": server.config.name},
                )
            server.error = reason
            return False
        server.connection, server.tools, server.error = connection, tools, None
        log.info(
            "MCP server %s: %d tool(s) over %s",
            server.config.name,
            len(tools),
            server.config.transport,
            extra={"mcp_server": server.config.name},
        )
        return True

    def _mark_lost(self, name: str, why: str) -> None:
        for server in self.servers:
            if server.config.name == name and server.error is None:
                log.warning("MCP server %s: %s", name, why, extra={"mcp_server": name})
                lost, server.connection, server.tools, server.error = server.connection, None, [], why
                if lost is not None:
                    self._closing.add(task := asyncio.get_running_loop().create_task(lost.close()))
                    task.add_done_callback(self._closing.discard)
                self._rebuild()
                self._lost.set()

    async def _retry_down_servers(self) -> None:
        """Reconnect servers that are down, waiting twice as long after each failed round."""
        wait = self._first_retry
        while True:
            try:
                await asyncio.wait_for(self._lost.wait(), wait)
                wait = self._first_retry  # a server was just lost: try it again soon
            except TimeoutError:
                pass
            self._lost.clear()
            down = [server for server in self.servers if server.connection is None]
            if not down:
                continue
            if any(await asyncio.gather(*(self._connect(server) for server in down))):
                self._rebuild()
            if any(server.connection is None for server in down):
                wait = min(wait * 2, self._longest_wait)

    def _rebuild(self) -> None:
        taken: set[str] = set()
        tools: list[BaseTool] = []
        for server in self.servers:
            for tool in server.tools:
                name = tool_name(server.config.name, tool.name, taken)
                taken.add(name)
                tools.append(
                    McpTool(
                        name=name,
                        description=tool.description or tool.title or tool.name,
                        args_schema=tool.inputSchema,
                        server=server.config.name,
                        remote_name=tool.name,
                        connection=server.connection,
                        timeout=self.timeout,
                        on_unreachable=lambda why, name=server.config.name: self._mark_lost(name, why),
                        needs_approval=needs_approval(tool, server.config),
                        title=tool.title or (tool.annotations.title if tool.annotations else None),
                        keep_file=self.keep_file,
                    )
                )
        self.tools = tools
        self._on_change(tools)

    def status(self) -> dict[str, dict[str, Any]]:
        """What /health shows anyone: each server's name, up or down, and its tools; why one is down goes to the
        log only (with credentials and query strings redacted)."""
        return {
            server.config.name: {
                "status": "up" if server.connection else "down",
                "tools": [tool.name for tool in server.tools],
            }
            for server in self.servers
        }

    async def close(self) -> None:
        if self._retrying:
            self._retrying.cancel()
        await asyncio.gather(
            *(server.connection.close() for server in self.servers if server.connection), return_exceptions=True
        )
        await self._http.aclose()
