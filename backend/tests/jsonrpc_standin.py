"""A stand-in for the seed's custom MCP server: JSON-RPC 2.0 over HTTP POST at /mcp/rpc, bearer JWT.

Besides one honest tool (`lookup`), each tool misbehaves in one way a real server might: a JSON-RPC
error object, a reply with the wrong id, a reply that is not JSON, an HTTP 500, a call that never ends.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from litestar import Litestar, Request, Response, post
from threadline_testing.standins import serve_in_thread

TOKEN = "stand-in-jwt"
TOOLS = {
    "lookup": "Look up a key.",
    "rpc_error": "Answers with a JSON-RPC error object.",
    "wrong_id": "Answers with another request's id.",
    "garbage": "Answers with HTML instead of JSON.",
    "http_500": "Answers with HTTP 500 and no JSON.",
    "sleepy": "Never answers in time.",
}


@dataclass
class JsonRpcStandIn:
    url: str = ""
    received: list[dict[str, Any]] = field(default_factory=list)
    server: Any = None

    def methods(self) -> list[str]:
        return [message.get("method") for message in self.received]

    def stop(self) -> None:
        self.server.should_exit = True


def _app(standin: JsonRpcStandIn) -> Litestar:
    @post("/mcp/rpc", status_code=200)
    async def rpc(request: Request) -> Response:
        message = await request.json()
        standin.received.append(message)
        request_id = message.get("id")
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            return Response(
                {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32001, "message": "Unauthorized"}},
                status_code=401,
            )
        if request_id is None:
            return Response(b"", status_code=202)
        method, params = message["method"], message.get("params", {})
        result: Any = {}
        if method == "initialize":
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "stand-in", "version": "1"},
            }
        elif method == "tools/list":
            result = {
                "tools": [
                    {
                        "name": name,
                        "description": about,
                        "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}}},
                    }
                    for name, about in TOOLS.items()
                ]
            }
        elif method == "tools/call":
            name = params["name"]
            if name == "rpc_error":
                return Response(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "error": {"code": -32050, "message": "Lookup backend offline", "data": {"retryable": True}},
                    }
                )
            if name == "wrong_id":
                return Response({"jsonrpc": "2.0", "id": request_id + 1000, "result": {"content": []}})
            if name == "garbage":
                return Response(b"<html>oops</html>", media_type="text/html")
            if name == "http_500":
                return Response(b"Internal Server Error", status_code=500, media_type="text/plain")
            if name == "sleepy":
                await asyncio.sleep(30)
            key = (params.get("arguments") or {}).get("key", "")
            result = {"content": [{"type": "text", "text": f"value of {key}"}]}
        return Response({"jsonrpc": "2.0", "id": request_id, "result": result})

    return Litestar([rpc], logging_config=None)


def start_jsonrpc_standin() -> JsonRpcStandIn:
    standin = JsonRpcStandIn()
    base_url, standin.server = serve_in_thread(_app(standin), "JSON-RPC MCP")
    standin.url = f"{base_url}/mcp/rpc"
    return standin
