"""Tools over MCP: the connections to configured servers (`jsonrpc`, `standard`, `tool`, `toolbox`, `calls`;
the servers themselves are settings: `settings.mcp_servers`), and threadline's own MCP server (`server`) with
its tokens (`tokens`) and its offline tools (`builtin_tools`)."""

__all__ = ["builtin_tools", "calls", "jsonrpc", "server", "standard", "tokens", "tool", "toolbox"]
