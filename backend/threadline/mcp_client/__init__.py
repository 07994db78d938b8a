"""Connecting the graph to MCP servers: configuration, the two kinds of connection, and the toolbox."""
