"""The built-in MCP server (mcp/builtin_server.py) for clients outside the process: over the seed's JSON-RPC at
`/mcp/rpc` and over standard streamable HTTP at `/mcp`.

`/mcp` is the SDK's own transport, and `/mcp/rpc` answers `initialize`, `tools/list` and `tools/call` as single
JSON-RPC 2.0 POSTs by asking the same FastMCP instance. Both require a bearer JWT (threadline.mcp.tokens) that
names the caller. threadline's own answers call the tools in process, not through these.
"""

from __future__ import annotations

import json
from typing import Any

from litestar import Response, asgi, post
from litestar.handlers import ASGIRouteHandler, HTTPRouteHandler
from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Receive, Scope, Send
from mcp import types
from mcp.server.fastmcp import FastMCP
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS

from threadline import __version__
from threadline.http.errors import AnyRequest
from threadline.mcp.builtin_server import CALLER, call_tool, calling_as
from threadline.mcp.tokens import InvalidToken, McpTokens

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
UNAUTHORIZED = -32001


def _rpc_error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error = {"code": code, "message": message} | ({"data": data} if data is not None else {})
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _dump(model: types.CallToolResult | types.Tool) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


async def _answer(server: FastMCP, tool_names: set[str], message: Any) -> dict[str, Any] | None:
    """The JSON-RPC response to one request, or None for a notification."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return _rpc_error(
            message.get("id") if isinstance(message, dict) else None,
            INVALID_REQUEST,
            "Invalid Request: expected a JSON-RPC 2.0 request object",
        )
    method, request_id, params = message["method"], message.get("id"), message.get("params") or {}
    if "id" not in message:
        return None  # notifications/initialized, notifications/cancelled: nothing runs long enough to cancel
    if not isinstance(params, dict):
        return _rpc_error(request_id, INVALID_PARAMS, "Invalid params: expected an object")
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in SUPPORTED_PROTOCOL_VERSIONS else SUPPORTED_PROTOCOL_VERSIONS[-1]
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "threadline", "version": __version__},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": [_dump(tool) for tool in await server.list_tools()]}
    elif method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            return _rpc_error(
                request_id, INVALID_PARAMS, "Invalid params: tools/call needs a name and an arguments object"
            )
        if name not in tool_names:
            return _rpc_error(request_id, INVALID_PARAMS, f"Unknown tool: {name}", {"tool": name})
        result = _dump(await call_tool(server, name, arguments or {}))
    else:
        return _rpc_error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _unauthorized(reason: str, request_id: Any = None) -> tuple[int, dict[str, str], bytes]:
    body = json.dumps(_rpc_error(request_id, UNAUTHORIZED, f"Unauthorized: {reason}")).encode()
    return 401, {"www-authenticate": 'Bearer realm="threadline-mcp"', "content-type": "application/json"}, body


def builtin_routes(server: FastMCP, tokens: McpTokens) -> list[HTTPRouteHandler | ASGIRouteHandler]:
    """The two endpoints of the built-in server, as Litestar route handlers."""
    tool_names: set[str] = set()  # all declared in build_server: listed on the first request

    @post("/mcp/rpc", include_in_schema=False, status_code=200)
    async def rpc(request: AnyRequest) -> Response[Any]:
        body = await request.body()
        parse_error: Exception | None = None
        try:
            message = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
            message, parse_error = None, error
        try:  # the token first: a caller without one learns nothing, not even that the body is malformed
            caller = tokens.verify(request.headers.get("authorization"))
        except InvalidToken as error:
            request_id = message.get("id") if isinstance(message, dict) else None
            status, headers, content = _unauthorized(str(error), request_id)
            return Response(content, status_code=status, headers=headers)
        if parse_error is not None:
            reason = "nested too deeply" if isinstance(parse_error, RecursionError) else parse_error
            return Response(_rpc_error(None, PARSE_ERROR, f"Parse error: {reason}"), status_code=400)
        if not tool_names:
            tool_names.update(tool.name for tool in await server.list_tools())
        with calling_as(caller):
            answer = await _answer(server, tool_names, message)
        return Response(answer, status_code=200) if answer is not None else Response(b"", status_code=202)

    @asgi("/mcp", include_in_schema=False, copy_scope=True)
    async def standard(scope: Scope, receive: Receive, send: Send) -> None:
        authorization = next(
            (value.decode("latin-1") for name, value in scope["headers"] if name == b"authorization"), None
        )
        try:
            scope[CALLER] = tokens.verify(authorization)  # type: ignore[literal-required]  # our own key
        except InvalidToken as error:
            status, headers, content = _unauthorized(str(error))
            await send(
                HTTPResponseStartEvent(
                    type="http.response.start",
                    status=status,
                    headers=[(k.encode(), v.encode()) for k, v in headers.items()],
                )
            )
            await send(HTTPResponseBodyEvent(type="http.response.body", body=content, more_body=False))
            return
        # The SDK types ASGI loosely (mutable mappings); Litestar's types are the precise ones.
        await server.session_manager.handle_request(scope, receive, send)  # type: ignore[arg-type]

    return [rpc, standard]
