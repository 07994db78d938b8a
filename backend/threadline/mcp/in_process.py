"""threadline's own MCP server called in process: an answer's tool calls reach the built-in tools through the
toolbox's one connection interface, as any server's do, without HTTP, a token or JSON in between. The caller is
the answer's visitor and conversation (turn_context.py), as the token the HTTP endpoints check would name."""

from __future__ import annotations

from typing import Any

from mcp import types
from mcp.server.fastmcp import FastMCP

from threadline.mcp.builtin_server import call_tool, calling_as
from threadline.mcp.calls import bounded
from threadline.mcp.tokens import Caller
from threadline.turn_context import current_turn


class InProcessConnection:
    supports_progress = False

    def __init__(self, server: FastMCP) -> None:
        self.server = server

    async def open(self) -> None:
        pass  # nothing to connect to

    async def list_tools(self) -> list[types.Tool]:
        return await self.server.list_tools()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout: float, on_progress: Any = None
    ) -> types.CallToolResult:
        turn = current_turn.get()
        caller = Caller(client_id=turn.client_id, conversation_id=turn.conversation_id) if turn else Caller()
        with calling_as(caller):
            return await bounded(
                call_tool(self.server, name, arguments), timeout=timeout, request_id=None, cancel=_stop
            )

    async def close(self) -> None:
        pass


async def _stop(request_id: Any, reason: str) -> None:
    """Nothing to tell: in process, a call timed out or stopped is cancelled itself."""
