"""MCP_SERVERS: which tool servers the graph may call, read from JSON or from a JSON file."""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

Transport = Literal["builtin", "jsonrpc-http", "streamable-http", "stdio"]
BUILTIN = "builtin"


class McpServerConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename="camel"):
    """One server. `jwt` is sent as `Authorization: Bearer …`; `headers` are sent as they are.
    `require_approval` / `auto_approve`: tool names or globs that do, or do not, wait for the person's approval
    (conversations/approvals.py), whatever the server's annotations say."""

    name: str
    transport: Transport
    url: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    jwt: str | None = None
    headers: dict[str, str] = {}
    require_approval: tuple[str, ...] = ()
    auto_approve: tuple[str, ...] = ()


DEFAULT_SERVERS = (McpServerConfig(name="threadline", transport="builtin"),)
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


class McpConfigError(ValueError):
    pass


def _expand(value: str, env: Mapping[str, str]) -> str:
    """`${NAME}` in a credential is read from the environment, so a config file need not hold secrets."""
    try:
        return string.Template(value).substitute(env)
    except KeyError as missing:
        raise McpConfigError(f"MCP_SERVERS refers to ${{{missing.args[0]}}}, which is not set") from None
    except ValueError as error:
        raise McpConfigError(f"MCP_SERVERS has a bad ${{…}} reference: {error}") from None


def parse_servers(raw: str, env: Mapping[str, str]) -> tuple[McpServerConfig, ...]:
    """Parse MCP_SERVERS: a JSON list (or `{"servers": [...]}`), inline or as the path of a JSON file."""
    text = raw.strip()
    if not text.startswith(("[", "{")):
        path = Path(text).expanduser()
        try:
            text = path.read_text()
        except OSError as error:
            raise McpConfigError(f"MCP_SERVERS names a file that cannot be read: {path} ({error.strerror})") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise McpConfigError(f"MCP_SERVERS is not valid JSON: {error}") from None
    if isinstance(document, dict):
        document = document.get("servers")
    try:
        servers = msgspec.convert(document, tuple[McpServerConfig, ...])
    except msgspec.ValidationError as error:
        raise McpConfigError(f"MCP_SERVERS: {error}") from None
    checked = []
    for server in servers:
        if not _NAME.match(server.name):
            raise McpConfigError(f"MCP_SERVERS: server name {server.name!r} must be 1-32 letters, digits, _ or -")
        if server.transport in ("jsonrpc-http", "streamable-http") and not (
            server.url and server.url.startswith(("http://", "https://"))
        ):
            raise McpConfigError(f"MCP_SERVERS: server {server.name!r} ({server.transport}) needs an http(s) url")
        if server.transport == "stdio" and not server.command:
            raise McpConfigError(f"MCP_SERVERS: server {server.name!r} (stdio) needs a command")
        checked.append(
            msgspec.structs.replace(
                server,
                jwt=_expand(server.jwt, env) if server.jwt else None,
                headers={key: _expand(value, env) for key, value in server.headers.items()},
                env={key: _expand(value, env) for key, value in server.env.items()} if server.env else None,
            )
        )
    names = [server.name for server in checked]
    if len(set(names)) != len(names):
        raise McpConfigError("MCP_SERVERS: server names must be unique")
    return tuple(checked)


_URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)([^/@\s]*@)?([^\s?#]*)(\?[^\s#]*)?")


def redacted(text: str) -> str:
    """Text with every URL's credentials and query string hidden, for logs and tool errors."""
    return _URL.sub(lambda url: url[1] + ("***@" if url[2] else "") + url[3] + ("?***" if url[4] else ""), text)
