"""threadline's own MCP server: its tools (a calculator, a clock, and the caller's conversations) declared once with
the official SDK's FastMCP. Answers call them in process (mcp/in_process.py); the app also serves them to other
clients over HTTP (`/mcp`, `/mcp/rpc`: http/routes/mcp_server.py), each request with a token naming its caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations

from threadline.conversations.state import StateReader, load
from threadline.mcp.builtin_tools import calculate, time_in
from threadline.mcp.tokens import Caller
from threadline.storage.conversation_list import Conversations, Page
from threadline.storage.threads import thread_of

CALLER = "threadline.mcp_caller"  # the ASGI scope key carrying the verified caller to the tools over /mcp
_caller_var: ContextVar[Caller | None] = ContextVar("mcp_caller", default=None)
SNIPPET = 160


class Deletes(Protocol):
    async def delete(self, client_id: str, conversation_id: str) -> bool: ...


class ToolServices(Protocol):
    """What the tools read and change (the app's services give them): the conversations, the graph's state, and
    deleting a whole conversation."""

    @property
    def conversations(self) -> Conversations: ...
    @property
    def graph(self) -> StateReader: ...
    @property
    def conversation_service(self) -> Deletes: ...


@contextmanager
def calling_as(caller: Caller) -> Iterator[None]:
    """The tools called within answer for `caller` (in process, or over /mcp/rpc)."""
    reset = _caller_var.set(caller)
    try:
        yield
    finally:
        _caller_var.reset(reset)


def _caller(ctx: Context[Any, Any, Any]) -> Caller:
    caller = _caller_var.get()
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


def build_server(services: Callable[[], ToolServices]) -> FastMCP:
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


async def _search(services: ToolServices, caller: Caller, query: str, limit: int) -> str:
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


async def call_tool(server: FastMCP, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """A tool's result as MCP's `CallToolResult`: a ToolError (a tool's own refusal, or its failure) is one with
    `isError`."""
    try:
        result = await server.call_tool(name, arguments)
    except ToolError as error:
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(error))], isError=True)
    if isinstance(result, tuple):
        content, structured = result
        return types.CallToolResult(content=list(content), structuredContent=structured)
    assert not isinstance(result, dict), "tools declared with structured_output=False return content blocks"
    return types.CallToolResult(content=list(result))
