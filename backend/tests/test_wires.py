"""One event stream, every wire: each read by the client code that consumes it.

The UI Message Stream by the real `ai` 7 client, the AI SDK 4 data stream by the real ai@4 client
(`callChatApi`, what its useChat runs), NDJSON by threadline.client, across scenarios: plain text,
a tool call with streamed arguments, a failing tool, a model error mid-stream, a cancelled answer
and reasoning.
"""

from __future__ import annotations

import asyncio

import httpx
import msgspec
import pytest
from helpers import chat_body, new_conversation_id, running, serving
from threadline.client import AsyncClient, Client, DataChunk, ReasoningDelta, TextDelta, ToolInputDelta, parse_chunk
from threadline_testing import standins
from threadline_testing.ai_sdk import read_with_ai, read_with_ai4
from threadline_testing.sse import parse_sse

ACCEPT = {"sse": "text/event-stream", "ndjson": "application/x-ndjson"}


async def answer_bytes(base_url: str, text: str, wire: str, *, cancel: bool = False) -> bytes:
    """The raw bytes of one answer on one wire, in events mode; with `cancel`, stopped after its first token."""
    conversation_id = new_conversation_id()
    query, headers = ("?protocol=data-stream", {}) if wire == "data" else ("", {"accept": ACCEPT[wire]})
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        async with client.stream(
            "POST", f"/api/chat{query}", headers=headers, json=chat_body(conversation_id, text, streamMode="events")
        ) as response:
            assert response.status_code == 200, await response.aread()
            client.headers["x-threadline-client"] = response.headers["x-threadline-client"]
            raw = b""
            stopping = None
            async for data in response.aiter_bytes():
                raw += data
                if cancel and stopping is None and (b"text-delta" in raw or b'\n0:"' in raw):
                    stopping = asyncio.create_task(
                        client.post("/api/cancel_stream", json={"conversationId": conversation_id})
                    )
            if stopping:
                assert (await stopping).status_code == 200
    return raw


def ndjson_chunks(raw: bytes) -> list:
    return [parse_chunk(line) for line in raw.splitlines() if line]


SCENARIOS = {
    "text": ("demo", "hello there", False),
    "tool with streamed arguments": ("demo", "calculate (17 * 23) + 4", False),
    "failing tool": ("demo", "calculate 1/0", False),
    "model error mid-stream": ("openai", "break after 3", False),
    "cancelled": ("demo", "count to 300", True),
    "reasoning": ("demo", "think about tea", False),
}


@pytest.fixture(scope="module")
def servers(database_url, tmp_path_factory):
    """A demo server (slow enough to cancel) and one on the OpenAI stand-in, which fails on request."""
    from threadline.settings import Settings, replaced

    standin = standins.start("openai")
    common = dict(
        database_url=database_url, rate_limit="10000/minute", api_rate_limit="100000/minute", demo_token_delay_ms=10.0
    )
    demo = replaced(
        Settings(), model_provider="demo", model_name="demo", data_dir=tmp_path_factory.mktemp("demo"), **common
    )
    openai = replaced(
        Settings(),
        model_provider="openai",
        model_name="gpt-standin",
        openai_api_key="sk-test",
        openai_base_url=standin.base_url,
        data_dir=tmp_path_factory.mktemp("openai"),
        **common,
    )
    with serving(demo) as demo_url, serving(openai) as openai_url:
        yield {"demo": demo_url, "openai": openai_url}
    standin.stop()


@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_every_wire_is_accepted_by_its_client(servers, scenario):
    server, text, cancel = SCENARIOS[scenario]
    base_url = servers[server]
    sse = read_with_ai(await answer_bytes(base_url, text, "sse", cancel=cancel))
    data = read_with_ai4(await answer_bytes(base_url, text, "data", cancel=cancel))
    chunks = ndjson_chunks(await answer_bytes(base_url, text, "ndjson", cancel=cancel))
    streamed = sse["message"]
    ui_text = "".join(part.get("text", "") for part in streamed["parts"] if part["type"] == "text")
    ndjson_text = "".join(chunk.delta for chunk in chunks if isinstance(chunk, TextDelta))
    if scenario == "cancelled":  # each wire was stopped at its own moment
        assert streamed["metadata"]["interrupted"] == "cancelled" and data["finish"]["finishReason"] == "other"
        assert chunks[-1].message_metadata["interrupted"] == "cancelled"
        assert ui_text.startswith("1") and data["message"]["content"].startswith("1") and "300" not in ui_text
        return
    assert ui_text == data["message"]["content"] == ndjson_text
    ui_tools = [part for part in streamed["parts"] if part["type"].startswith("tool-")]
    ai4_tools = (data["message"] or {}).get("toolInvocations", [])
    assert len(ui_tools) == len(ai4_tools), "ai@4 keeps the tool calls that its own LangChain adapter drops"
    for ui_tool, ai4_tool in zip(ui_tools, ai4_tools):
        assert ui_tool["input"] == ai4_tool["args"] and ai4_tool["state"] == "result"
        assert ui_tool.get("output", {"error": ui_tool.get("errorText")}) == ai4_tool["result"]
    if scenario == "model error mid-stream":
        assert sse["errors"] == [data["error"]] and "Connection failed" in data["error"]
        assert ui_text.startswith("word0 word1 word2")
    if scenario == "tool with streamed arguments":
        assert "tool-input-delta" in sse["chunkTypes"] and "tool_call_delta" in data["codes"]
        assert any(isinstance(chunk, ToolInputDelta) for chunk in chunks)
    if scenario == "failing tool":
        assert ui_tools[0]["state"] == "output-error" and "division by zero" in ui_tools[0]["errorText"]
    if scenario == "reasoning":
        reasoning = next(part for part in streamed["parts"] if part["type"] == "reasoning")
        assert "think about tea" in reasoning["text"]
        assert "reasoning" in data["codes"]
        assert "".join(c.delta for c in chunks if isinstance(c, ReasoningDelta)) == reasoning["text"]


async def test_ndjson_carries_the_same_chunks_as_sse(servers):
    """Read by threadline.client on both wires: identical apart from ids and times."""

    varies = {"messageId", "toolCallId", "conversationId", "createdAt", "finishedAt", "traceId"}

    def normal(value):
        if isinstance(value, list):
            return [normal(item) for item in value]
        if isinstance(value, dict):
            return {key: "<varies>" if key in varies else normal(item) for key, item in value.items()}
        return value

    wires = {}
    for wire in ("sse", "ndjson"):
        async with AsyncClient(servers["demo"], wire=wire) as client:
            wires[wire] = [chunk async for chunk in client.stream("calculate 6*7", stream_mode="events")]
    assert normal(msgspec.to_builtins(wires["sse"], str_keys=True)) == normal(
        msgspec.to_builtins(wires["ndjson"], str_keys=True)
    )
    assert any(isinstance(chunk, DataChunk) and chunk.name == "status" for chunk in wires["ndjson"])


def test_the_python_client_reassembles_answers_and_can_stop_them(servers):
    with Client(servers["demo"]) as client:
        answer = client.ask("calculate 6*7")
        assert answer.tool_calls[0].tool_name == "calculator" and answer.tool_calls[0].output == "42"
        assert "42" in answer.text and answer.finish_reason == "stop"
        follow_up = client.ask("what did I say?", answer.conversation_id)
        assert "1 earlier message" in follow_up.text, "the same identity continues the conversation"
        stream = client.stream("count to 300", answer.conversation_id)
        seen = [chunk for chunk, _ in zip(stream, range(8))]
        stream.close()  # leaving early stops the answer on the server
        assert any(isinstance(chunk, TextDelta) for chunk in seen)
        client.cancel(answer.conversation_id)  # True if the server had not yet seen the connection close
        assert client.cancel(answer.conversation_id) is False, "nothing left running"
        assert client.ask("count to 3", answer.conversation_id).text == "1 2 3"


async def test_the_wire_is_chosen_by_accept_or_protocol_and_others_get_406(make_settings):
    async with running(make_settings()) as client:
        default = await client.post("/api/chat", json=chat_body(None, "hi"), headers={"accept": "*/*"})
        ndjson = await client.post("/api/chat", json=chat_body(None, "hi"), headers={"accept": "application/x-ndjson"})
        xml = await client.post("/api/chat", json=chat_body(None, "hi"), headers={"accept": "application/xml"})
        unknown = await client.post("/api/chat?protocol=smoke-signals", json=chat_body(None, "hi"))
        ai4 = await client.post(
            "/api/chat?protocol=data-stream",
            json={"id": new_conversation_id(), "messages": [{"role": "user", "content": "hi"}]},
        )
    assert default.headers["content-type"].startswith("text/event-stream") and parse_sse(default.content)
    assert ndjson.headers["content-type"] == "application/x-ndjson"
    assert [parse_chunk(line) for line in ndjson.content.splitlines()][-1].__class__.__name__ == "FinishChunk"
    for refused in (xml, unknown):
        assert refused.status_code == 406
        error = refused.json()["error"]
        assert error["code"] == "NOT_ACCEPTABLE" and "application/x-ndjson" in error["message"]
    assert ai4.headers["x-vercel-ai-data-stream"] == "v1"
    assert "You said: “hi”" in read_with_ai4(ai4.content)["message"]["content"], "ai@4's body shape is read"


async def test_messages_mode_streams_text_reasoning_and_results_while_events_mode_shows_the_work(make_settings):
    async with running(make_settings()) as client:
        quiet = parse_sse((await client.post("/api/chat", json=chat_body(None, "calculate 2+2"))).content)
        busy = parse_sse(
            (await client.post("/api/chat", json=chat_body(None, "calculate 2+2", streamMode="events"))).content
        )
        thinking = parse_sse((await client.post("/api/chat", json=chat_body(None, "think about tea"))).content)
    quiet_types = {chunk["type"] for chunk in quiet}
    busy_types = {chunk["type"] for chunk in busy}
    assert {"tool-input-available", "tool-output-available", "text-delta"} <= quiet_types
    assert not quiet_types & {"data-status", "tool-input-start", "tool-input-delta"}
    assert {"data-status", "tool-input-start", "tool-input-delta"} <= busy_types
    statuses = [chunk["data"]["text"] for chunk in busy if chunk["type"] == "data-status"]
    assert statuses[:2] == ["Thinking…", "Calling tool calculator…"]
    reasoning = [chunk["type"] for chunk in thinking if chunk["type"].startswith("reasoning")]
    assert reasoning[0] == "reasoning-start" and reasoning[-1] == "reasoning-end", "reasoning is part of the answer"


def test_the_terminal_chat_streams_answers_and_shows_tool_calls(servers):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "threadline", "chat", "--url", servers["demo"]],
        input="calculate 6*7\nwhat did I say?\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert '⚙ calculator {"expression": "6*7"} → 42' in result.stdout
    assert "I can see 1 earlier message" in result.stdout, "the second line continues the same conversation"
