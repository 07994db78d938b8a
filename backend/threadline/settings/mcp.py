"""The tools' settings: the MCP servers answers call, and the key of threadline's own."""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from threadline.settings.mcp_servers import DEFAULT_SERVERS, McpServerConfig
from threadline.settings.reading import Section, SettingsError, env, read_elsewhere, seconds


def mcp_secret(raw: str, name: str) -> str:
    if len(raw.encode()) < 32:
        raise SettingsError(f"{name} must be at least 32 bytes long (shorter HS256 keys can be guessed)")
    return raw


class McpSettings(Section, frozen=True, kw_only=True):
    TITLE: ClassVar[str] = "MCP tools"

    mcp_servers: Annotated[
        tuple[McpServerConfig, ...],
        env(
            "MCP_SERVERS",
            help="the MCP servers whose tools the model may call: JSON or a JSON file's path (see "
            "[Tools](../guides/tools.md)); `[]` for none",
            read=read_elsewhere,
            default="the built-in server",
        ),
    ] = DEFAULT_SERVERS
    mcp_tool_timeout: Annotated[
        float,
        seconds(),
        env(
            "MCP_TOOL_TIMEOUT",
            help="seconds a tool call may take before it is cancelled and the model is told it timed out",
        ),
    ] = 10.0
    mcp_secret: Annotated[
        str | None,
        env(
            "MCP_JWT_SECRET",
            help="the HS256 key (32+ bytes) of the built-in MCP server's tokens",
            read=mcp_secret,
            default="derived from `THREADLINE_SECRET`",
        ),
    ] = None
    tool_output_preview: Annotated[
        int,
        msgspec.Meta(ge=1, le=1_000_000),
        env("CHAT_TOOL_OUTPUT_PREVIEW", help="characters of a tool's result in seed 002's `tool_output` event"),
    ] = 2_000
