"""Tools over MCP: the connections to configured servers (`jsonrpc`, `standard`, `tool`, `toolbox`, `calls`;
the servers themselves are settings: `settings.mcp_servers`), and threadline's own MCP server (`builtin_server`,
its offline tools in `builtin_tools`, its tokens in `tokens`), which the app also serves over HTTP
(`http/routes/mcp_server.py`)."""

__all__ = ["builtin_server", "builtin_tools", "calls", "jsonrpc", "standard", "tokens", "tool", "toolbox"]
