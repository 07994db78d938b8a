"""Tools over MCP: the connections to configured servers (`jsonrpc`, `standard`, `tool`, `toolbox`, `calls`;
the servers themselves are settings: `settings.mcp_servers`), and the tokens (`tokens`) and offline tools
(`builtin_tools`) of threadline's own MCP server, which the app serves (`http/routes/mcp_server.py`)."""

__all__ = ["builtin_tools", "calls", "jsonrpc", "standard", "tokens", "tool", "toolbox"]
