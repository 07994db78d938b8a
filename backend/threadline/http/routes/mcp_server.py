"""The built-in MCP server: threadline's own tools, over the seed's JSON-RPC at `/mcp/rpc` and over
standard streamable HTTP at `/mcp`.

Tools are declared once with the official SDK's FastMCP; `/mcp` is the SDK's own transport, and
`/mcp/rpc` answers `initialize`, `tools/list` and `tools/call` as single JSON-RPC 2.0 POSTs by asking
the same FastMCP instance. Both require a bearer JWT (threadline.mcp.tokens) that names the caller.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from litestar import Response, asgi, post
from litestar.handlers import ASGIRouteHandler, HTTPRouteHandler
from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Receive, Scope, Send
from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
from mcp.types import ToolAnnotations

from threadline import __version__
from threadline.conversations.state import load
from threadline.http.errors import AnyRequest
from threadline.mcp.builtin_tools import calculate, time_in
from threadline.mcp.tokens import Caller, InvalidToken, McpTokens
from threadline.runtime import Services
from threadline.storage.conversation_list import Page
from threadline.storage.threads import thread_of

log = logging.getLogger(__name__)

CALLER = "threadline.mcp_caller"  # the ASGI scope key carrying the verified caller to the tools
_rpc_caller: ContextVar[Caller | None] = ContextVar("rpc_caller", default=None)
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
UNAUTHORIZED = -32001
SNIPPET = 160


def _caller(ctx: Context[Any, Any, Any]) -> Caller:
    caller = _rpc_caller.get()
    if caller is None:  # over /mcp the tool runs in the SDK's session task: the caller rides on the request
        try:
            request = ctx.request_context.request
        except ValueError:
            request = None
        caller = request.scope.get(CALLER) if request is not None else None
    if caller is None:
        raise ToolError("no caller: this server only answers requests that carry a threadline token")
    return caller


def _snippet(text: str, needle: str) -> str:
    start = max(text.lower().find(needle.lower()), 0)
    begin = max(start - SNIPPET // 3, 0)
    piece = " ".join(text[begin : begin + SNIPPET].split())
    return ("…" if begin else "") + piece + ("…" if begin + SNIPPET < len(text) else "")


def build_server(services: Callable[[], Services]) -> FastMCP:
    """The FastMCP server whose tools read the visitor's conversations (the services exist once the app runs)."""
    server = FastMCP(
        "threadline",
        instructions="Tools over the user's conversations, plus a calculator and a clock.",
        # Every request must carry our JWT, which a page on another site cannot attach.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    @server.tool(structured_output=False, annotations=ToolAnnotations(title="Calculator", readOnlyHint=True))
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression exactly, e.g. "(17 * 23) + sqrt(16)": + - * / // % **, parentheses, pi, e, sqrt, sin, cos, tan, log, log10, exp, floor, ceil, abs, round."""  # noqa: E501 - one line: FastMCP sends docstrings as they are
        return calculate(expression)

    @server.tool(structured_output=False, annotations=ToolAnnotations(title="Current time", readOnlyHint=True))
    def current_time(timezone: str = "UTC") -> str:
        """The current date and time in an IANA time zone such as "Europe/Paris" or "America/New_York"."""
        return time_in(timezone)

    @server.tool(
        structured_output=False, annotations=ToolAnnotations(title="Search this conversation", readOnlyHint=True)
    )
    async def search_conversation(query: str, ctx: Context[Any, Any, Any], limit: int = 5) -> str:
        """Search the current conversation's earlier messages for words (case-insensitive); returns the newest matches with their position and author."""  # noqa: E501
        return await _search(services(), _caller(ctx), query, limit)

    @server.tool(
        structured_output=False,
        annotations=ToolAnnotations(title="Delete a conversation", destructiveHint=True, readOnlyHint=False),
    )
    async def delete_conversation(conversation_id: str, ctx: Context[Any, Any, Any]) -> str:
        """Delete one of the user's other conversations, by its id (list_conversations shows the ids). It cannot be undone, so the user is asked to approve it first."""  # noqa: E501
        caller = _caller(ctx)
        if not caller.client_id:
            raise ToolError("no visitor: this token does not name whose conversation to delete")
        if conversation_id == caller.conversation_id:
            raise ToolError("this is the conversation we are in: delete it from the conversation list instead")
        if not await services().conversation_service.delete(caller.client_id, conversation_id):
            raise ToolError(f"no conversation with the id {conversation_id!r}")
        return f"Deleted the conversation {conversation_id}."

    @server.tool(structured_output=False, annotations=ToolAnnotations(title="List conversations", readOnlyHint=True))
    async def list_conversations(ctx: Context[Any, Any, Any], limit: int = 20) -> str:
        """List the user's conversations, most recently used first, with their titles and last activity."""
        caller = _caller(ctx)
        if not caller.client_id:
            raise ToolError("no visitor: this token does not name whose conversations to list")
        conversations = await services().conversations.list(caller.client_id, Page(limit=max(1, min(limit, 100))))
        if not conversations:
            return "You have no conversations yet."
        return "\n".join(
            f"- {c.title} (last message {c.last_message_at:%Y-%m-%d %H:%M} UTC, id {c.id})" for c in conversations
        )

    return server


async def _search(services: Services, caller: Caller, query: str, limit: int) -> str:
    """The earlier messages of the caller's conversation that hold every word of `query`, newest first."""
    words = re.findall(r"\w+", query.lower())
    if not words:
        raise ToolError("the query has no words to search for")
    if (
        not caller.conversation_id
        or not caller.client_id
        or await services.conversations.get(caller.conversation_id, caller.client_id) is None
    ):
        raise ToolError("no conversation to search: call this tool from within a conversation")
    messages = (await load(services.graph, thread_of(caller.client_id, caller.conversation_id))).messages
    last_user = max((i for i, m in enumerate(messages) if m.type == "human"), default=len(messages))
    hits = []
    for position, message in enumerate(messages[:last_user], start=1):  # the current turn is not "earlier"
        text = message.text if message.type in ("human", "ai") else ""
        if text and all(word in text.lower() for word in words):
            who = "user" if message.type == "human" else "assistant"
            hits.append(f"#{position} {who}: {_snippet(text, words[0])}")
    if not hits:
        return f"No earlier message mentions {query!r}."
    newest = hits[::-1][: max(1, min(limit, 20))]
    return f"{len(hits)} earlier message(s) mention {query!r}; newest first:\n" + "\n".join(newest)


def _rpc_error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error = {"code": code, "message": message} | ({"data": data} if data is not None else {})
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _dump(model: types.CallToolResult | types.Tool) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


async def _call_tool(server: FastMCP, params: dict[str, Any]) -> dict[str, Any]:
    try:
        result = await server.call_tool(params["name"], params.get("arguments") or {})
    except ToolError as error:
        return _dump(types.CallToolResult(content=[types.TextContent(type="text", text=str(error))], isError=True))
    if isinstance(result, tuple):
        content, structured = result
        return _dump(types.CallToolResult(content=list(content), structuredContent=structured))
    assert not isinstance(result, dict), "tools declared with structured_output=False return content blocks"
    return _dump(types.CallToolResult(content=list(result)))


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
        result = await _call_tool(server, params)
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
        reset = _rpc_caller.set(caller)
        try:
            answer = await _answer(server, tool_names, message)
        finally:
            _rpc_caller.reset(reset)
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
