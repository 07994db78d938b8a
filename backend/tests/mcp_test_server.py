"""A standard MCP server for the tests and the benchmark, run as a separate process.

    python mcp_test_server.py streamable-http PORT   # http://127.0.0.1:PORT/mcp
    python mcp_test_server.py stdio

Its `slow` tool reports progress and notes when a cancellation stops it; `cancelled` tells.
"""

from __future__ import annotations

import sys

import anyio
from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.transport_security import TransportSecuritySettings

server = FastMCP(
    "test-tools",
    transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    log_level="WARNING",
)
stopped_early: list[float] = []


@server.tool(structured_output=False)
def noop() -> str:
    """Do nothing and say so: the cheapest possible round trip."""
    return "ok"


@server.tool(structured_output=False)
def add(a: float, b: float) -> str:
    """Add two numbers."""
    total = a + b
    return str(int(total) if total.is_integer() else total)


@server.tool(structured_output=False)
def calculator(expression: str) -> str:
    """A second calculator, whose name clashes with the built-in server's."""
    return f"test-tools calculator got {expression}"


@server.tool(structured_output=False)
async def slow(seconds: float, ctx: Context) -> str:
    """Wait, reporting progress every tenth of a second."""
    steps = max(1, round(seconds * 10))
    try:
        for step in range(steps):
            await ctx.report_progress(step, steps, f"step {step + 1} of {steps}")
            await anyio.sleep(seconds / steps)
    except anyio.get_cancelled_exc_class():
        stopped_early.append(seconds)
        raise
    return f"waited {seconds:g} s"


@server.tool(structured_output=False)
def cancelled() -> str:
    """How many `slow` calls a cancellation stopped before they finished."""
    return str(len(stopped_early))


# A 1×1 PNG, and a "PNG" that is HTML: a tool's files are checked like uploads.
DOT = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYPgPAAEDAQAIicLsAAAAAElFTkSuQmCC"
FAKE = "PGh0bWw+PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0PjwvaHRtbD4="


@server.tool(structured_output=False)
def chart() -> list[types.ContentBlock]:
    """Draws a chart (an image), cites its source (a link), and returns a broken image too."""
    return [
        types.TextContent(type="text", text="Here is the chart."),
        types.ImageContent(type="image", data=DOT, mimeType="image/png"),
        types.ImageContent(type="image", data=FAKE, mimeType="image/png"),
        types.ResourceLink(type="resource_link", uri="https://example.com/tides", name="tides", title="Tide tables"),
    ]


@server.tool(structured_output=False)
def fail(message: str = "it broke") -> str:
    """Always fails with the given message."""
    raise RuntimeError(message)


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.settings.port = int(sys.argv[2])
        server.run("streamable-http")
