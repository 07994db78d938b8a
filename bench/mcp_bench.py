"""MCP tool round trips: p50/p95 of a no-op tool call through each transport, as the graph makes it.

Each call goes through the same LangChain tool object the graph's tools node invokes (McpTool from
threadline.mcp.toolbox), so the figures include threadline's own per-call work: the timeout,
the per-call JWT, the result conversion. The seed's target is under 500 ms per call; on loopback
it should be a few milliseconds. A benchmark, never a test: run it by hand

    python3 tasks.py bench mcp [--calls 500]

Transports: `builtin` (the built-in server in-process over the custom JSON-RPC transport, the
default), `jsonrpc-http` (a threadline server in another process, over loopback), `streamable-http` and `stdio`
(the test MCP server, backend/tests/mcp_test_server.py, in another process).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
from threadline.http.app import create_app
from threadline.mcp.tokens import Caller, McpTokens
from threadline.settings import Settings, replaced
from threadline.settings.mcp_servers import McpServerConfig
from threadline_testing.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
TEST_SERVER = ROOT / "backend" / "tests" / "mcp_test_server.py"
SECRET = "the benchmark's MCP token key, 32+ bytes long"


@contextmanager
def process(command: list[str], ready_url: str, env: dict[str, str] | None = None):
    child = subprocess.Popen(
        command, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(ready_url, timeout=1)
            break
        except httpx.TransportError:
            if time.monotonic() > deadline or child.poll() is not None:
                child.kill()
                raise SystemExit(f"{command} did not start") from None
            time.sleep(0.1)
    try:
        yield
    finally:
        child.terminate()
        child.wait(10)


async def measure(tool, arguments: dict, calls: int) -> list[float]:
    timings = []
    for index in range(calls + 20):
        started = time.perf_counter()
        message = await tool.ainvoke({"type": "tool_call", "id": f"call-{index}", "name": tool.name, "args": arguments})
        elapsed = time.perf_counter() - started
        assert message.status != "error", message.content
        if index >= 20:  # the first calls warm up connections and caches
            timings.append(elapsed * 1000)
    return timings


async def run(calls: int) -> None:
    threadline_port, test_port = free_port(), free_port()
    servers = [
        McpServerConfig(name="builtin", transport="builtin"),
        McpServerConfig(
            name="jsonrpc",
            transport="jsonrpc-http",
            url=f"http://127.0.0.1:{threadline_port}/mcp/rpc",
            jwt=McpTokens(SECRET.encode()).mint(Caller(), ttl=3600),
        ),
        McpServerConfig(name="streamable", transport="streamable-http", url=f"http://127.0.0.1:{test_port}/mcp"),
        McpServerConfig(name="stdio", transport="stdio", command=sys.executable, args=(str(TEST_SERVER), "stdio")),
    ]
    server_env = {
        "CHAT_MODEL_PROVIDER": "demo",
        "CHAT_MEMORY_BACKEND": "memory",
        "MCP_JWT_SECRET": SECRET,
        "THREADLINE_PORT": str(threadline_port),
        "LOG_LEVEL": "WARNING",
        "MCP_SERVERS": "[]",
    }
    with (
        tempfile.TemporaryDirectory() as data_dir,
        process(
            [sys.executable, "-m", "threadline", "serve"],
            f"http://127.0.0.1:{threadline_port}/health",
            server_env | {"THREADLINE_DATA_DIR": data_dir},
        ),
        process(
            [sys.executable, str(TEST_SERVER), "streamable-http", str(test_port)], f"http://127.0.0.1:{test_port}/mcp"
        ),
    ):
        settings = replaced(
            Settings(),
            model_provider="demo",
            model_name="demo",
            memory_backend="memory",
            data_dir=Path(data_dir),
            mcp_servers=tuple(servers),
            mcp_secret=SECRET,
        )
        app = create_app(settings)
        async with app.lifespan():  # on this event loop, so the toolbox's connections are usable from here
            toolbox = app.state.services.toolbox
            status = toolbox.status()
            down = [name for name, server in status.items() if server["status"] != "up"]
            if down:
                raise SystemExit(f"servers down (the log says why): {down}")
            tools = {(tool.server, tool.remote_name): tool for tool in toolbox.tools}
            plan = [
                ("builtin", "calculator", {"expression": "1"}),
                ("jsonrpc", "calculator", {"expression": "1"}),
                ("streamable", "noop", {}),
                ("stdio", "noop", {}),
            ]
            rows = []
            for server, remote, arguments in plan:
                timings = await measure(tools[(server, remote)], arguments, calls)
                quantiles = statistics.quantiles(timings, n=100)
                rows.append(
                    {
                        "transport": next(s.transport for s in servers if s.name == server),
                        "tool": remote,
                        "calls": calls,
                        "p50_ms": round(quantiles[49], 2),
                        "p95_ms": round(quantiles[94], 2),
                        "max_ms": round(max(timings), 2),
                    }
                )
    print(f"\nMCP no-op tool round trip, {calls} calls each, through the graph's tool object\n")
    print("| transport | tool | p50 | p95 | max |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['transport']} | `{row['tool']}` | {row['p50_ms']:.2f} ms | {row['p95_ms']:.2f} ms "
            f"| {row['max_ms']:.2f} ms |"
        )
    print("\n" + json.dumps(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500)
    asyncio.run(run(parser.parse_args().calls))


if __name__ == "__main__":
    main()
