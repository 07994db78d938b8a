"""Tools over MCP: the connections to configured servers (`config`, `jsonrpc`, `standard`, `tool`,
`toolbox`, `calls`), and threadline's own MCP server (`server`) with its tokens (`tokens`) and its
offline tools (`builtin_tools`)."""

__all__ = ["builtin_tools", "calls", "config", "jsonrpc", "server", "standard", "tokens", "tool", "toolbox"]
