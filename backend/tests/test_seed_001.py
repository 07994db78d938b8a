"""Seed 001's chat wire (POST /api/general_chat/stream), read by a client written from the document alone:
typed events, `[[tool:N]]` markers where tools ran, the tool history, suggestions, errors and `cancelled`."""

from __future__ import annotations

import re
import time

import httpx
from helpers import serving
from test_mcp import mcp_server_process
from threadline.client import Client
from threadline.settings.mcp_servers import DEFAULT_SERVERS, McpServerConfig
from threadline_testing.sse import events_of

EVENT_TYPES = {"status", "text_delta", "tool_start", "tool_progress", "tool_complete", "complete", "error", "cancelled"}
MARKER = re.compile(r"\[\[tool:(\d+)\]\]")


class GeneralChat:
    """What seed 001's `useGeneralChat` keeps, fed event by event as its switch statement does."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.streaming_text = ""
        self.status_text: str | None = None
        self.tool_progress: list[dict] = []
        self.completed: dict | None = None
        self.error: str | None = None
        self.cancelled = False

    def feed(self, event: dict) -> None:
        self.events.append(event)
        match event["type"]:
            case "status":
                self.status_text = event["message"]
            case "text_delta":
                self.status_text = None
                self.streaming_text += event["text"]
            case "tool_start":
                self.status_text = f"Running {event['tool']}..."
            case "tool_progress":
                self.tool_progress.append(event)
            case "complete":
                self.completed = event["payload"]
            case "error":
                self.error = event["message"]
            case "cancelled":
                self.cancelled = True

    def rendered(self) -> list[str | dict]:
        """The final message as the document's ChatTray shows it: text, with each marker replaced by its tool card."""
        assert self.completed is not None
        history = (self.completed.get("custom_payload") or {}).get("data", [])
        pieces: list[str | dict] = []
        for index, piece in enumerate(MARKER.split(self.completed["message"])):
            pieces.append(history[int(piece)] if index % 2 else piece)
        return [piece for piece in pieces if not isinstance(piece, str) or piece.strip()]


def read(client: Client, message: str, conversation_id: str | None = None) -> GeneralChat:
    chat = GeneralChat()
    for event in client.stream_contract("seed-001", message, conversation_id):
        chat.feed(event)
    return chat


def test_a_tool_answer_renders_with_its_card_where_the_tool_ran_and_suggestions(make_settings):
    with serving(make_settings()) as base_url, Client(base_url) as client:
        chat = read(client, "calculate (17 * 23) + 4")
        conversation_id = client.http.get("/api/list_conversations").json()[0]["conversation_id"]
        stored = client.load_conversation(conversation_id)["messages"][-1]["content"]
    types = [event["type"] for event in chat.events]
    assert set(types) <= EVENT_TYPES and chat.events[0] == {"type": "status", "message": "Thinking..."}
    assert types.index("tool_start") < types.index("tool_complete") < types.index("complete") == len(types) - 1
    start = next(event for event in chat.events if event["type"] == "tool_start")
    assert start["tool"] == "calculator" and start["input"] == {"expression": "(17 * 23) + 4"}
    assert start["tool_use_id"]
    complete = next(event for event in chat.events if event["type"] == "tool_complete")
    assert complete == {"type": "tool_complete", "tool": "calculator", "index": 0}
    marker = chat.events[types.index("tool_complete") + 1]
    assert marker == {"type": "text_delta", "text": "[[tool:0]]"}, "the marker is a delta of its own, exactly"
    payload = chat.completed
    assert payload["message"] == chat.streaming_text.strip() and MARKER.findall(payload["message"]) == ["0"]
    assert payload["custom_payload"] == {
        "type": "tool_history",
        "data": [{"tool_name": "calculator", "input": {"expression": "(17 * 23) + 4"}, "output": "395"}],
    }
    card, text = chat.rendered()
    assert card["tool_name"] == "calculator" and "395" in text
    assert {"label": "Double it", "value": "calculate ((17 * 23) + 4) * 2"} in payload["suggested_values"]
    assert {"action": "summarize_conversation", "handler": "server"}.items() <= payload["suggested_actions"][0].items()
    assert "[[tool:" not in stored and "395" in stored, "markers are this wire's alone, never stored"


def test_two_declined_tools_get_two_markers_and_a_text_answer_has_no_history(make_settings):
    with serving(make_settings()) as base_url, Client(base_url) as client:
        chat = read(client, "delete conversation abc and def")  # waits for approval, which this wire declines
        plain = read(client, "hello")
    completes = [event for event in chat.events if event["type"] == "tool_complete"]
    assert [event["index"] for event in completes] == [0, 1]
    assert MARKER.findall(chat.completed["message"]) == ["0", "1"]
    history = chat.completed["custom_payload"]["data"]
    assert [entry["input"] for entry in history] == [{"conversation_id": "abc"}, {"conversation_id": "def"}]
    assert all(entry["output"].startswith("Not run") for entry in history)
    assert "custom_payload" not in plain.completed and not MARKER.search(plain.completed["message"])
    assert plain.completed["message"] == plain.streaming_text and "You said" in plain.streaming_text


def test_tool_progress_from_mcp_notifications(make_settings):
    with mcp_server_process() as url:
        servers = (*DEFAULT_SERVERS, McpServerConfig(name="tests", transport="streamable-http", url=url))
        with serving(make_settings(mcp_servers=servers)) as base_url, Client(base_url) as client:
            chat = read(client, 'use the slow tool with {"seconds": 0.5}')
    assert len(chat.tool_progress) >= 3
    first, last = chat.tool_progress[0], chat.tool_progress[-1]
    assert first["tool"] == "slow" and first["stage"] == "running" and 0 <= first["progress"] < 1
    assert last["message"] == "step 5 of 5" and last["progress"] == 0.8 and last["data"] == {"progress": 4, "total": 5}
    assert chat.completed["custom_payload"]["data"][0]["output"] == "waited 0.5 s"


def test_a_stop_ends_with_cancelled_and_a_failure_with_error(make_settings, openai_settings):
    with serving(make_settings(demo_token_delay_ms=20.0)) as base_url, Client(base_url) as client:
        chat = GeneralChat()
        with client.http.stream("POST", "/api/general_chat/stream", json={"message": "count to 300"}) as response:
            conversation_id = response.headers["x-conversation-id"]
            for event in events_of(response):
                chat.feed(event)
                if len(chat.events) == 4:
                    assert client.cancel(conversation_id) is True
        deadline = time.monotonic() + 10
        while client.load_conversation(conversation_id)["messages"][-1]["role"] != "assistant":
            assert time.monotonic() < deadline, "the partial answer was not saved"
            time.sleep(0.05)
    assert chat.cancelled and chat.events[-1] == {"type": "cancelled"} and chat.completed is None
    with serving(openai_settings()) as base_url, Client(base_url) as client:
        broken = read(client, "break after 3")
        refused = httpx.post(f"{base_url}/api/general_chat/stream", json={"message": "  "})
    assert broken.error and broken.events[-1]["type"] == "error" and broken.completed is None
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "VALIDATION_ERROR"


def test_the_iteration_limit_is_said_after_the_last_calls_tool_card(openai_settings):
    """The last model call the budget allows asks for a tool it does not run: its card comes first, then the words
    that say the agent stopped, so no tool appears to run after them (the stand-in's model always wants a tool)."""
    with serving(openai_settings(max_model_calls=2)) as base_url, Client(base_url) as client:
        chat = read(client, "loop forever please")
    types = [event["type"] for event in chat.events]
    assert [event["index"] for event in chat.events if event["type"] == "tool_complete"] == [0, 1]
    said = chat.streaming_text.index("I stopped after 2 model calls")
    assert said > chat.streaming_text.index("[[tool:1]]"), chat.streaming_text
    assert types.index("complete") == len(types) - 1
