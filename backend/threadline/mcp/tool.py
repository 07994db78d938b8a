"""One MCP tool as the graph's tools node calls it: bounded, reporting progress, never raising.

A failed call (unreachable server, timeout, JSON-RPC error, malformed reply, or the tool's own
`isError`) becomes a ToolException, which LangChain turns into an error tool result for the model.

Images and binary resources in a result are stored like uploads (`keep_file`) and resource links become
sources: both travel in the tool message's artifact (conversations/state.py's tool_results shows them).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar, copy_context
from typing import Any, Literal

from langchain_core.tools import BaseTool, ToolException
from langgraph.config import get_stream_writer
from mcp import types

from threadline.conversations.state import FileRef
from threadline.mcp.calls import McpCallError
from threadline.refusals import Refused
from threadline.turn_context import current_turn

log = logging.getLogger(__name__)

_tool_call_id: ContextVar[str | None] = ContextVar("tool_call_id", default=None)


KeepFile = Callable[[str, str, bytes, str, str], Awaitable[FileRef]]  # (owner, conversation, bytes, type, name)


async def produced(result: types.CallToolResult, keep_file: KeepFile | None) -> tuple[dict[str, Any] | None, list[str]]:
    """The files and sources a result holds, as the tool message's artifact; and a note for each file that
    could not be kept (not an accepted type, too big), for the model to read."""
    turn = current_turn.get()
    files: list[FileRef] = []
    sources: list[dict[str, str]] = []
    notes: list[str] = []
    for block in result.content:
        if isinstance(block, types.ResourceLink) and str(block.uri).startswith(("https://", "http://")):
            sources.append({"url": str(block.uri), "title": block.title or block.name})
            continue
        if isinstance(block, types.ImageContent):
            data, media_type, name = block.data, block.mimeType, "image"
        elif isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.BlobResourceContents):
            resource = block.resource
            data, media_type, name = resource.blob, resource.mimeType or "", str(resource.uri).rsplit("/", 1)[-1]
        else:
            continue
        if keep_file is None or turn is None:
            continue
        try:
            files.append(
                await keep_file(turn.client_id, turn.conversation_id, base64.b64decode(data), media_type, name)
            )
        except (Refused, binascii.Error, ValueError) as refused:
            notes.append(f"[a file the tool returned was not kept: {refused}]")
    return ({"files": files, "sources": sources} if files or sources else None), notes


def result_text(result: types.CallToolResult) -> str:
    """What the model reads: the text blocks, a note for each other block, or the structured content."""
    parts = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.TextResourceContents):
            parts.append(block.resource.text)
        else:
            mime_type = getattr(block, "mimeType", None)
            parts.append(f"[{block.type} content{' ' + mime_type if mime_type else ''}]")
    if not parts and result.structuredContent is not None:
        parts.append(json.dumps(result.structuredContent, ensure_ascii=False))
    return "\n".join(parts)


def _progress_writer(tool_call_id: str) -> Callable[[float, float | None, str | None], Awaitable[None]] | None:
    """The server's progress notifications as LangGraph custom stream events (`get_stream_writer()`), the one way
    any agent's tools report progress (answers/runner.py); None outside a graph run. The notifications arrive in
    the MCP session's own task, so the writer is called in this call's context, where LangGraph finds its run."""
    try:
        write = get_stream_writer()
    except RuntimeError:  # not inside a graph run
        return None
    context = copy_context()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        payload = {"tool_call_id": tool_call_id, "progress": progress, "total": total, "message": message}
        context.run(write, payload)

    return on_progress


class McpTool(BaseTool):
    """One MCP tool; its input schema is the server's JSON schema, passed to the model unchanged."""

    server: str
    remote_name: str
    connection: Any
    timeout: float
    on_unreachable: Any = None
    handle_tool_error: bool = True  # a ToolException becomes an error tool result, not a failed answer
    needs_approval: bool = False  # a call waits for the person's approval before it runs (conversations/approvals.py)
    keep_file: Any = None  # KeepFile: stores a file the tool returns, for the person to see
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    title: str | None = None  # the server's human-readable name for it, shown on the tool's card

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        # The tool call's id is needed to tag progress events; LangChain only injects it into pydantic schemas.
        token = _tool_call_id.set(input.get("id") if isinstance(input, dict) else None)
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            _tool_call_id.reset(token)

    def _run(self, *args: Any, **kwargs: Any) -> str:
        raise NotImplementedError("MCP tools are called asynchronously")

    async def _arun(
        self, **arguments: Any
    ) -> tuple[str, dict[str, Any] | None]:  # a tool may have arguments named run_manager or config
        turn, tool_call_id = current_turn.get(), _tool_call_id.get()
        on_progress = _progress_writer(tool_call_id) if tool_call_id and self.connection.supports_progress else None

        started = time.perf_counter()
        context = {
            "mcp_server": self.server,
            "tool": self.remote_name,
            "conversation_id": turn.conversation_id if turn else None,
        }
        try:
            result = await self.connection.call_tool(
                self.remote_name, arguments, timeout=self.timeout, on_progress=on_progress
            )
        except McpCallError as error:
            log.warning(
                "MCP tool call failed: %s",
                error,
                extra=context
                | {
                    "request_id": error.request_id,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                    "rpc_code": error.code,
                    "rpc_data": error.data,
                    "http_status": error.status,
                },
            )
            if error.unreachable and self.on_unreachable:
                self.on_unreachable(str(error))
            # Seed 003 names the code of a tool that timed out or could not be reached in its result.
            if error.timed_out:
                raise ToolException(
                    f"SERVICE_UNAVAILABLE: The tool {self.name} did not answer within {self.timeout:g} s "
                    "and was cancelled."
                ) from None
            if error.unreachable:
                raise ToolException(f"SERVICE_UNAVAILABLE: The tool {self.name} failed: {error}") from None
            raise ToolException(f"The tool {self.name} failed: {error}") from None
        finally:
            if turn is not None and tool_call_id:
                turn.trace.tool_called(tool_call_id, self.server, started)
        text = result_text(result)
        if result.isError:
            log.info("MCP tool reported an error: %s", text[:200], extra=context)
            raise ToolException(text or f"The tool {self.name} failed without saying why.")
        artifact, notes = await produced(result, self.keep_file)
        return "\n".join([text, *notes]), artifact
