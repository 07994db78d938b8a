"""HttpMcpTransport: the seed's custom MCP transport, JSON-RPC 2.0 in single HTTP POSTs with a bearer JWT.

Not a standard MCP transport: no session, no server-to-client messages, so no progress. Every failure
(an HTTP error, a reply that is not JSON-RPC, an id that does not match, a JSON-RPC error object)
becomes an McpCallError that says what happened.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from typing import Any

import httpx
from mcp import types
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS

from threadline import __version__
from threadline.mcp.calls import McpCallError, bounded
from threadline.settings.mcp_servers import redacted


class HttpMcpTransport:
    def __init__(
        self,
        url: str,
        *,
        client: httpx.AsyncClient,
        authorization: Callable[[], str | None],
        headers: dict[str, str] | None = None,
    ) -> None:
        self.url = url
        self._client = client
        self._authorization = authorization
        self._headers = headers or {}
        self.new_id = itertools.count(1).__next__

    def _request_headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json", **self._headers}
        if token := self._authorization():
            headers["authorization"] = f"Bearer {token}"
        return headers

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, request_id: int | None = None
    ) -> dict[str, Any]:
        """Send one request and return its `result`; raise McpCallError for anything else."""
        request_id = self.new_id() if request_id is None else request_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method} | ({"params": params} if params else {})
        try:
            response = await self._client.post(self.url, json=message, headers=self._request_headers())
        except httpx.TimeoutException as error:
            raise McpCallError(f"no answer from {self.url}: {type(error).__name__}", request_id=request_id) from error
        except httpx.HTTPError as error:
            raise McpCallError(
                f"cannot reach {redacted(self.url)}: {redacted(str(error))}", request_id=request_id, unreachable=True
            ) from error
        try:
            reply = response.json()
        except ValueError:
            reply = None
        failure = reply.get("error") if isinstance(reply, dict) else None
        if isinstance(failure, dict):  # also on 4xx/5xx: a JSON-RPC error body says more than the status
            raise McpCallError(
                f"JSON-RPC error {failure.get('code')}: {failure.get('message')}",
                request_id=request_id,
                code=failure.get("code"),
                data=failure.get("data"),
                status=response.status_code,
            )
        if response.status_code >= 400:
            raise McpCallError(
                f"HTTP {response.status_code} from {self.url}", request_id=request_id, status=response.status_code
            )
        if not isinstance(reply, dict) or reply.get("jsonrpc") != "2.0" or "result" not in reply:
            raise McpCallError(
                f"malformed JSON-RPC reply from {self.url}", request_id=request_id, status=response.status_code
            )
        if reply.get("id") != request_id:
            raise McpCallError(
                f"reply id {reply.get('id')!r} does not match request id {request_id}",
                request_id=request_id,
                status=response.status_code,
            )
        result: dict[str, Any] = reply["result"]
        return result

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method} | ({"params": params} if params else {})
        with contextlib.suppress(httpx.HTTPError):  # a notification is best effort by definition
            await self._client.post(self.url, json=message, headers=self._request_headers(), timeout=2.0)


class JsonRpcConnection:
    """An MCP server behind HttpMcpTransport, with the same interface as StandardConnection."""

    supports_progress = False

    def __init__(self, transport: HttpMcpTransport) -> None:
        self.transport = transport

    async def open(self) -> None:
        await self.transport.request(
            "initialize",
            {
                "protocolVersion": SUPPORTED_PROTOCOL_VERSIONS[-1],
                "capabilities": {},
                "clientInfo": {"name": "threadline", "version": __version__},
            },
        )
        await self.transport.notify("notifications/initialized")

    async def list_tools(self) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor = None
        while True:  # every page
            result = await self.transport.request("tools/list", {"cursor": cursor} if cursor else None)
            try:
                page = types.ListToolsResult.model_validate(result)
            except ValueError as error:
                raise McpCallError(f"malformed tools/list result: {error}") from None
            tools += page.tools
            if not (cursor := page.nextCursor):
                return tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout: float, on_progress: Any = None
    ) -> types.CallToolResult:
        request_id = self.transport.new_id()
        result = await bounded(
            self.transport.request("tools/call", {"name": name, "arguments": arguments}, request_id=request_id),
            timeout=timeout,
            request_id=request_id,
            cancel=self.cancel,
        )
        try:
            return types.CallToolResult.model_validate(result)
        except ValueError as error:
            raise McpCallError(f"malformed tools/call result: {error}", request_id=request_id) from None

    async def cancel(self, request_id: Any, reason: str) -> None:
        await self.transport.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})

    async def close(self) -> None:
        pass
