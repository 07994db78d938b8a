"""Tools through MCP: the built-in server on both endpoints, a standard server in another process, a
stdio server, and the seed's custom JSON-RPC transport, with its failures and the tool timeout."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest
from helpers import chat, running, serving, text_of
from jsonrpc_standin import TOKEN, start_jsonrpc_standin
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from threadline.mcp.tokens import Caller, McpTokens
from threadline.settings.mcp_servers import DEFAULT_SERVERS, McpServerConfig
from threadline_testing.ai_sdk import read_with_ai
from threadline_testing.ports import free_port

TEST_SERVER = Path(__file__).with_name("mcp_test_server.py")
SECRET = "a test secret for MCP tokens, 32+ bytes"
TOKENS = McpTokens(SECRET.encode())
BUILTIN_TOOLS = {"calculator", "current_time", "search_conversation", "list_conversations", "delete_conversation"}


@contextmanager
def mcp_server_process(port: int | None = None) -> Iterator[str]:
    """mcp_test_server.py over streamable HTTP in its own process; yields its /mcp URL."""
    port = port or free_port()
    process = subprocess.Popen(
        [sys.executable, str(TEST_SERVER), "streamable-http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, "the MCP test server did not start"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture(scope="module")
def mcp_server_url() -> Iterator[str]:
    with mcp_server_process() as url:
        yield url


def rpc(method: str, params: dict | None = None, request_id: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": method} | ({"params": params} if params else {})


NOBODY = Caller()


def bearer(caller: Caller = NOBODY, tokens: McpTokens = TOKENS, ttl: float = 60) -> dict[str, str]:
    return {"authorization": f"Bearer {tokens.mint(caller, ttl)}"}


def tool_parts(chunks: list[dict]) -> dict[str, list[dict]]:
    parts: dict[str, list[dict]] = {}
    for chunk in chunks:
        if chunk["type"].startswith("tool-") or chunk["type"] == "data-tool-progress":
            call_id = chunk.get("toolCallId") or chunk["data"]["toolCallId"]
            parts.setdefault(call_id, []).append(chunk)
    return parts


def only_tool(chunks: list[dict]) -> list[dict]:
    (parts,) = tool_parts(chunks).values()
    return parts


def client_id_of(client) -> str:
    return client.cookies["threadline_client"].split(".")[0]


WAITING_FOR_A_LOCK = "SELECT count(*) FROM pg_locks WHERE NOT granted"


async def test_builtin_rpc_endpoint_speaks_json_rpc_and_checks_the_jwt(make_settings):
    async with running(make_settings(mcp_secret=SECRET)) as client:
        for headers, reason in [
            ({}, "missing bearer token"),
            (bearer(tokens=McpTokens(b"another secret, also 32 bytes or more")), "not valid"),
            (bearer(ttl=-60), "expired"),
            ({"authorization": "Basic dXNlcjpwYXNz"}, "missing bearer token"),
        ]:
            response = await client.post("/mcp/rpc", json=rpc("tools/list", request_id=7), headers=headers)
            assert response.status_code == 401
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert response.json()["id"] == 7 and response.json()["error"]["code"] == -32001
            assert reason in response.json()["error"]["message"]

        async def call(message: dict) -> dict:
            response = await client.post("/mcp/rpc", json=message, headers=bearer())
            assert response.status_code == 200, response.text
            assert response.json()["id"] == message["id"]
            return response.json()

        initialized = await call(
            rpc(
                "initialize",
                {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
            )
        )
        assert initialized["result"]["protocolVersion"] == "2025-06-18"
        listed = (await call(rpc("tools/list", request_id=2)))["result"]["tools"]
        assert {tool["name"] for tool in listed} == BUILTIN_TOOLS
        assert all(tool["inputSchema"]["type"] == "object" and tool["description"] for tool in listed)
        hints = {tool["name"]: tool.get("annotations") or {} for tool in listed}
        assert hints["delete_conversation"]["destructiveHint"] is True, "it waits for the person's approval"
        answer = await call(rpc("tools/call", {"name": "calculator", "arguments": {"expression": "6*7"}}, 3))
        assert answer["result"] == {"content": [{"type": "text", "text": "42"}], "isError": False}
        failed = await call(rpc("tools/call", {"name": "calculator", "arguments": {"expression": "1/0"}}, 4))
        assert failed["result"]["isError"] and "division by zero" in failed["result"]["content"][0]["text"]
        unknown = await call(rpc("tools/call", {"name": "nope", "arguments": {}}, 5))
        assert unknown["error"]["code"] == -32602 and "Unknown tool" in unknown["error"]["message"]
        assert (await call(rpc("resources/list", request_id=6)))["error"]["code"] == -32601
        assert (await call(rpc("tools/call", {"name": 3}, 8)))["error"]["code"] == -32602

        notified = await client.post(
            "/mcp/rpc", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=bearer()
        )
        assert notified.status_code == 202
        garbled = await client.post("/mcp/rpc", content=b"{not json", headers=bearer())
        assert garbled.status_code == 400 and garbled.json()["error"]["code"] == -32700
        assert "Traceback" not in garbled.text


async def test_a_tool_reading_its_own_conversation_waits_for_the_answers_checkpoint_writes(make_settings):
    """LangGraph writes checkpoints in the background; here they are held up by a table lock, and the
    tool's read must still see the message that started this answer, not the state before it."""
    settings = make_settings(mcp_secret=SECRET)
    with serving(settings) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            first, _, _ = await chat(client, None, "My boat is called Pineapple Express")
            conversation_id = first.headers["x-conversation-id"]
            async with await psycopg.AsyncConnection.connect(settings.storage.database_url) as blocker:
                await blocker.execute("LOCK TABLE checkpoint_blobs IN EXCLUSIVE MODE")  # writes wait, reads don't
                answer = asyncio.create_task(chat(client, conversation_id, "search this conversation for pineapple"))
                while not (await (await blocker.execute(WAITING_FOR_A_LOCK)).fetchone())[0]:
                    assert not answer.done(), "the answer's write waits for the lock"
                    await asyncio.sleep(0.05)
                assert not answer.done()
            _, _, chunks = await answer  # leaving the block ended the transaction and its lock
    output = next(chunk for chunk in chunks if chunk["type"] == "tool-output-available")["output"]
    assert "#1 user: My boat is called Pineapple Express" in output


async def test_builtin_tools_read_only_the_callers_own_conversations(make_settings):
    async with running(make_settings(mcp_secret=SECRET)) as client:
        first, _, _ = await chat(client, None, "My boat is called Pineapple Express")
        conversation_id = first.headers["x-conversation-id"]
        _, raw, chunks = await chat(client, conversation_id, "search this conversation for pineapple")
        output = next(chunk for chunk in chunks if chunk["type"] == "tool-output-available")["output"]
        assert "#1 user: My boat is called Pineapple Express" in output
        assert "search this conversation" not in output  # the asking message is not an "earlier" one
        assert read_with_ai(raw)["message"]["parts"]

        _, _, chunks = await chat(client, None, "list my conversations")
        output = next(chunk for chunk in chunks if chunk["type"] == "tool-output-available")["output"]
        assert "My boat is called Pineapple Express" in output and conversation_id in output

        stranger = Caller(client_id="someone-else", conversation_id=conversation_id)
        for tool, arguments in [("search_conversation", {"query": "pineapple"}), ("list_conversations", {})]:
            response = await client.post(
                "/mcp/rpc", headers=bearer(stranger), json=rpc("tools/call", {"name": tool, "arguments": arguments})
            )
            text = response.json()["result"]["content"][0]["text"]
            assert "Pineapple" not in text, text


async def test_builtin_streamable_http_endpoint_with_the_official_sdk(make_settings):
    with serving(make_settings(mcp_secret=SECRET)) as base_url:
        async with (
            httpx.AsyncClient(headers=bearer(Caller(client_id="sdk-user"))) as http,
            streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            assert {tool.name for tool in (await session.list_tools()).tools} == BUILTIN_TOOLS
            paris = await session.call_tool("current_time", {"timezone": "Europe/Paris"})
            assert not paris.isError and paris.content[0].text[-6:] in ("+01:00", "+02:00")
            mine = await session.call_tool("list_conversations", {})
            assert mine.content[0].text == "You have no conversations yet."
        async with httpx.AsyncClient() as http:
            refused = await http.post(
                f"{base_url}/mcp", json=rpc("initialize"), headers={"accept": "application/json, text/event-stream"}
            )
        assert refused.status_code == 401 and refused.json()["error"]["code"] == -32001


def servers(*extra: McpServerConfig) -> tuple[McpServerConfig, ...]:
    return DEFAULT_SERVERS + extra


async def test_tools_of_a_server_in_another_process_stream_with_progress(make_settings, mcp_server_url):
    settings = make_settings(
        mcp_servers=servers(McpServerConfig(name="tests", transport="streamable-http", url=mcp_server_url))
    )
    async with running(settings) as client:
        health = (await client.get("/health")).json()
        assert health["status"] == "ok"
        assert health["toolServers"]["tests"]["status"] == "up"
        assert {"noop", "slow", "calculator"} <= set(health["toolServers"]["tests"]["tools"])
        names = {tool.name for tool in client.app.state.services.toolbox.tools}
        assert {"calculator", "tests_calculator", "slow"} <= names  # the clash is renamed, the first keeps its name

        _, raw, chunks = await chat(client, None, 'use the slow tool with {"seconds": 0.5}', streamMode="events")
        parts = only_tool(chunks)
        progress = [part["data"] for part in parts if part["type"] == "data-tool-progress"]
        assert len(progress) >= 3 and progress[0]["total"] == 5 and progress[-1]["message"] == "step 5 of 5"
        assert all(part.get("transient") for part in parts if part["type"] == "data-tool-progress")
        assert parts[-1] == {
            "type": "tool-output-available",
            "toolCallId": parts[0]["toolCallId"],
            "output": "waited 0.5 s",
        }
        message = read_with_ai(raw)["message"]
        tool = next(part for part in message["parts"] if part["type"] == "tool-slow")
        assert tool["state"] == "output-available" and tool["input"] == {"seconds": 0.5}

        _, _, chunks = await chat(client, None, 'use the tests_calculator tool with {"expression": "1"}')
        assert only_tool(chunks)[-1]["output"] == "test-tools calculator got 1"
        _, _, chunks = await chat(client, None, 'use the fail tool with {"message": "the disk is full"}')
        assert "the disk is full" in only_tool(chunks)[-1]["errorText"]
        assert chunks[-1]["type"] == "finish" and text_of(chunks)


async def test_a_tool_past_the_timeout_is_cancelled_and_the_answer_goes_on(make_settings, mcp_server_url):
    settings = make_settings(
        mcp_tool_timeout=0.5,
        mcp_servers=servers(McpServerConfig(name="tests", transport="streamable-http", url=mcp_server_url)),
    )
    async with running(settings) as client:

        async def cancelled_so_far() -> int:
            _, _, chunks = await chat(client, None, "use the cancelled tool")
            return int(only_tool(chunks)[-1]["output"])

        before = await cancelled_so_far()
        started = time.monotonic()
        _, raw, chunks = await chat(client, None, 'use the slow tool with {"seconds": 20}')
        assert time.monotonic() - started < 10
        error = only_tool(chunks)[-1]
        assert error["type"] == "tool-output-error" and error["errorText"].startswith("SERVICE_UNAVAILABLE: ")
        assert "did not answer within 0.5 s" in error["errorText"], "seed 003: the code in the tool result"
        assert "did not answer within 0.5 s" in text_of(chunks)  # the model answered with what happened
        assert chunks[-1]["type"] == "finish" and chunks[-1]["finishReason"] == "stop"
        assert read_with_ai(raw)["message"]["parts"]
        deadline = time.monotonic() + 5
        while await cancelled_so_far() == before:  # the server stopped the call on the cancellation notification
            assert time.monotonic() < deadline, "the MCP server never saw the cancellation"
            await asyncio.sleep(0.1)


async def test_a_stdio_server(make_settings):
    settings = make_settings(
        mcp_servers=(
            McpServerConfig(name="local", transport="stdio", command=sys.executable, args=(str(TEST_SERVER), "stdio")),
        )
    )
    async with running(settings) as client:
        assert (await client.get("/health")).json()["toolServers"]["local"]["status"] == "up"
        _, _raw, chunks = await chat(client, None, 'use the add tool with {"a": 2, "b": 3}')
        assert only_tool(chunks)[-1]["output"] == "5"
        assert "`add` returned **5**" in text_of(chunks)


async def test_custom_jsonrpc_server_failures_become_error_results(make_settings, caplog):
    standin = start_jsonrpc_standin()
    try:
        settings = make_settings(
            mcp_tool_timeout=0.5,
            mcp_servers=(McpServerConfig(name="custom", transport="jsonrpc-http", url=standin.url, jwt=TOKEN),),
        )
        async with running(settings) as client:
            assert standin.methods()[:3] == ["initialize", "notifications/initialized", "tools/list"]
            _, raw, chunks = await chat(client, None, 'use the lookup tool with {"key": "colour"}')
            assert only_tool(chunks)[-1]["output"] == "value of colour"
            expected = {
                "rpc_error": "JSON-RPC error -32050: Lookup backend offline",
                "wrong_id": "does not match request id",
                "garbage": "malformed JSON-RPC reply",
                "http_500": "HTTP 500",
                "sleepy": "did not answer within 0.5 s",
            }
            for tool, message in expected.items():
                _, raw, chunks = await chat(client, None, f"use the {tool} tool")
                error = only_tool(chunks)[-1]
                assert error["type"] == "tool-output-error" and message in error["errorText"], (tool, error)
                assert chunks[-1]["type"] == "finish" and text_of(chunks), tool  # the answer went on
                assert read_with_ai(raw)["message"]["parts"]
            logged = next(record for record in caplog.records if getattr(record, "rpc_code", None) == -32050)
            assert logged.mcp_server == "custom" and logged.tool == "rpc_error"
            assert logged.rpc_data == {"retryable": True}
            assert logged.request_id is not None and logged.duration_ms >= 0 and logged.conversation_id
            sleepy = next(m for m in standin.received if m.get("params", {}).get("name") == "sleepy")
            deadline = time.monotonic() + 5
            while not any(m.get("method") == "notifications/cancelled" for m in standin.received):
                assert time.monotonic() < deadline, "no cancellation was sent"
                await asyncio.sleep(0.05)
            cancel = next(m for m in standin.received if m.get("method") == "notifications/cancelled")
            assert cancel["params"]["requestId"] == sleepy["id"]
    finally:
        standin.stop()


async def test_servers_down_at_start_are_reported_and_retried(make_settings):
    standin = start_jsonrpc_standin()
    port = free_port()
    try:
        settings = make_settings(
            mcp_servers=servers(
                McpServerConfig(name="badjwt", transport="jsonrpc-http", url=standin.url, jwt="not-the-token"),
                McpServerConfig(name="later", transport="streamable-http", url=f"http://127.0.0.1:{port}/mcp"),
            )
        )
        async with running(settings) as client:
            health = (await client.get("/health")).json()
            assert health["status"] == "degraded"
            assert health["toolServers"]["threadline"]["status"] == "up"
            assert health["toolServers"]["badjwt"] == {"status": "down", "tools": []}
            assert health["toolServers"]["later"]["status"] == "down"
            _, _, chunks = await chat(client, None, "calculate 2+2")  # the servers that are up still serve
            assert only_tool(chunks)[-1]["output"] == "4"

            with mcp_server_process(port):
                deadline = time.monotonic() + 20
                while (await client.get("/health")).json()["toolServers"]["later"]["status"] != "up":
                    assert time.monotonic() < deadline, "the server that came up later was never connected"
                    await asyncio.sleep(0.2)
                _, _, chunks = await chat(client, None, 'use the add tool with {"a": 1, "b": 2}')
                assert only_tool(chunks)[-1]["output"] == "3"
    finally:
        standin.stop()


def test_mcp_servers_setting(tmp_path, monkeypatch):
    from threadline.settings import SettingsError, load_settings

    base = {"CHAT_MODEL_PROVIDER": "demo"}
    assert load_settings(base).mcp.mcp_servers == DEFAULT_SERVERS
    assert load_settings(base | {"MCP_SERVERS": "[]"}).mcp.mcp_servers == ()
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "servers": [
                    {"name": "threadline", "transport": "builtin"},
                    {
                        "name": "search",
                        "transport": "jsonrpc-http",
                        "url": "https://tools.example/mcp/rpc",
                        "jwt": "${SEARCH_JWT}",
                    },
                    {"name": "files", "transport": "stdio", "command": "mcp-files", "args": ["--root", "/srv"]},
                ]
            }
        )
    )
    loaded = load_settings(base | {"MCP_SERVERS": str(config), "SEARCH_JWT": "abc.def.ghi", "MCP_TOOL_TIMEOUT": "3"})
    assert [server.name for server in loaded.mcp.mcp_servers] == ["threadline", "search", "files"]
    assert loaded.mcp.mcp_servers[1].jwt == "abc.def.ghi" and loaded.mcp.mcp_tool_timeout == 3.0
    for value, complaint in [
        ("[{", "not valid JSON"),
        ('[{"name": "x", "transport": "jsonrpc-http"}]', "needs an http(s) url"),
        ('[{"name": "x", "transport": "stdio"}]', "needs a command"),
        ('[{"name": "x", "transport": "carrier-pigeon"}]', "transport"),
        ('[{"name": "x", "transport": "builtin"}, {"name": "x", "transport": "builtin"}]', "unique"),
        ('[{"name": "x y", "transport": "builtin"}]', "server name"),
        ('[{"name": "x", "transport": "builtin", "jwt": "${NOT_SET_ANYWHERE}"}]', "NOT_SET_ANYWHERE"),
        (str(tmp_path / "missing.json"), "cannot be read"),
    ]:
        with pytest.raises(SettingsError, match="MCP_SERVERS") as raised:
            load_settings(base | {"MCP_SERVERS": value})
        assert complaint in str(raised.value)
    with pytest.raises(SettingsError, match="MCP_JWT_SECRET"):
        load_settings(base | {"MCP_JWT_SECRET": "short"})
    with pytest.raises(SettingsError, match="MCP_TOOL_TIMEOUT"):
        load_settings(base | {"MCP_TOOL_TIMEOUT": "0"})


async def test_mcp_token_command_mints_a_token_the_server_accepts(make_settings):
    settings = make_settings()
    async with running(settings) as client:  # no MCP_JWT_SECRET: the key comes from the data directory
        minted = subprocess.run(
            [sys.executable, "-m", "threadline", "mcp-token", "--client-id", "cli-user"],
            env={"PATH": "", "THREADLINE_DATA_DIR": str(settings.storage.data_dir)},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.strip()
        response = await client.post(
            "/mcp/rpc",
            headers={"authorization": f"Bearer {minted}"},
            json=rpc("tools/call", {"name": "list_conversations", "arguments": {}}),
        )
        assert response.json()["result"]["content"][0]["text"] == "You have no conversations yet."


async def test_a_server_lost_mid_life_gives_error_results_and_is_reconnected(make_settings):
    port = free_port()
    settings = make_settings(
        mcp_servers=(McpServerConfig(name="tests", transport="streamable-http", url=f"http://127.0.0.1:{port}/mcp"),)
    )

    async def status() -> str:
        return (await client.get("/health")).json()["toolServers"]["tests"]["status"]

    first_life = ExitStack()
    first_life.enter_context(mcp_server_process(port))
    async with running(settings) as client:
        assert await status() == "up"
        first_life.close()  # the server goes away while threadline runs
        _, _, chunks = await chat(client, None, 'use the add tool with {"a": 1, "b": 1}')
        error = only_tool(chunks)[-1]
        assert error["type"] == "tool-output-error" and chunks[-1]["type"] == "finish", error
        assert await status() == "down", error
        with mcp_server_process(port):
            deadline = time.monotonic() + 20
            while await status() != "up":
                assert time.monotonic() < deadline, "the server was not reconnected"
                await asyncio.sleep(0.2)
            _, _, chunks = await chat(client, None, 'use the add tool with {"a": 1, "b": 1}')
            assert only_tool(chunks)[-1]["output"] == "2"


async def test_a_tools_progress_keeps_its_answer_alive_in_messages_mode_without_being_shown(
    make_settings, mcp_server_url
):
    """Progress travels as LangGraph custom stream events (any agent's tools may send them): without an event for
    longer than CHAT_IDLE_TIMEOUT an answer ends, but a tool that says how far it got is not idle."""
    settings = make_settings(
        mcp_servers=servers(McpServerConfig(name="tests", transport="streamable-http", url=mcp_server_url)),
        idle_timeout=0.6,
    )
    async with running(settings) as client:
        _, _, chunks = await chat(client, None, 'use the slow tool with {"seconds": 1.5}')
    assert not [chunk for chunk in chunks if chunk["type"] == "data-tool-progress"]
    assert only_tool(chunks)[-1]["output"] == "waited 1.5 s"
    assert chunks[-1]["type"] == "finish"
