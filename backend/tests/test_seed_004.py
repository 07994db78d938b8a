"""Seed 004's `POST /api/chat/stream`, driven by the document's own client (`streamChatResponse`, in Node)."""

from __future__ import annotations

import re
import time

import httpx
import pytest
from helpers import last_text, serving
from threadline.http.identity import COOKIE
from threadline_testing.ai_sdk import seed_004_client

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
EVENT_TYPES = {"message_start", "text_delta", "tool_call", "tool_result", "message_end", "error"}


class Visitor:
    """One browser: its identity cookie, the document's client, and the REST API for checking."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.http = httpx.Client(base_url=base_url, timeout=30)
        self.http.get("/health")
        self.cookie = f"{COOKIE}={self.http.cookies[COOKIE]}"

    def send(self, message: str, **options: object) -> dict:
        return seed_004_client(self.base_url, self.cookie, message, **options)

    def history(self, conversation_id: str) -> list[dict]:
        response = self.http.get(f"/api/conversations/{conversation_id}")
        assert response.status_code == 200, response.text
        return response.json()["messages"]


def text_of(events: list[dict]) -> str:
    return "".join(event["content"] for event in events if event["type"] == "text_delta")


def test_a_new_conversation_then_a_continued_one_with_a_tool(make_settings):
    with serving(make_settings()) as base_url:
        visitor = Visitor(base_url)
        first = visitor.send("hello there")["events"]
        start = first[0]
        continued = visitor.send("calculate 12*7", conversationId=start["conversationId"])["events"]
        listed = visitor.http.get("/api/conversations").json()
        history = visitor.history(start["conversationId"])
    assert {event["type"] for event in first + continued} <= EVENT_TYPES, "only the document's event types"
    assert start["type"] == "message_start" and UUID.fullmatch(start["messageId"])
    assert UUID.fullmatch(start["conversationId"])
    assert first[-1] == {
        "type": "message_end",
        "usage": {"inputTokens": first[-1]["usage"]["inputTokens"], "outputTokens": first[-1]["usage"]["outputTokens"]},
    }
    assert first[-1]["usage"]["outputTokens"] > 0 and "hello there" in text_of(first)
    assert [event["type"] for event in continued[:3]] == ["message_start", "tool_call", "tool_result"]
    call, result = continued[1], continued[2]
    assert call["name"] == "calculator" and call["input"] == {"expression": "12*7"}
    assert result == {"type": "tool_result", "toolCallId": call["id"], "result": "84"}
    assert continued[0]["conversationId"] == start["conversationId"]
    assert [conversation["id"] for conversation in listed] == [start["conversationId"]], "the same conversations"
    assert [message["role"] for message in history] == ["user", "assistant"] * 2
    assert history[1]["id"] == start["messageId"] and history[3]["id"] == continued[0]["messageId"]
    assert "84" in last_text(history[3])


def test_validation_errors_and_a_missing_or_strangers_conversation(make_settings):
    with serving(make_settings()) as base_url:
        owner, stranger = Visitor(base_url), Visitor(base_url)
        mine = owner.send("hello")["events"][0]["conversationId"]
        empty = owner.send("   ")
        bad_id = owner.send("hi", conversationId="not-a-uuid")
        too_long = owner.send("x" * 10_001)
        missing = owner.send("hi", conversationId="550e8400-e29b-41d4-a716-446655440000")
        theirs = stranger.send("hi", conversationId=mine)
        no_message = owner.http.post("/api/chat/stream", json={})
        upper_case = owner.send("again", conversationId=mine.upper())
    assert empty == {
        "status": 400,
        "retryAfter": None,
        "body": {
            "error": {
                "code": "VALIDATION_ERROR",
                "message": "Message cannot be empty",
                "details": [{"field": "message", "message": "Message is required"}],
            }
        },
    }
    assert bad_id["status"] == 400 and bad_id["body"]["error"]["details"][0]["field"] == "conversationId"
    assert too_long["status"] == 400 and too_long["body"]["error"]["details"][0]["field"] == "message"
    not_found = {"error": {"code": "NOT_FOUND", "message": "Conversation not found"}}
    assert missing["status"] == theirs["status"] == 404 and missing["body"] == theirs["body"] == not_found
    assert no_message.status_code == 400 and no_message.json() == empty["body"], "a missing message is an empty one"
    assert upper_case["events"][0]["conversationId"] == mine, "UUIDs are case-insensitive"


def test_requests_per_visitor_and_one_stream_at_a_time_are_limited_with_429(make_settings):
    with serving(make_settings(chat_stream_rate_limit="2/minute", demo_token_delay_ms=30.0)) as base_url:
        visitor = Visitor(base_url)
        request = visitor.http.build_request(
            "POST", "/api/chat/stream", json={"message": "count to 100"}, headers={"accept": "text/event-stream"}
        )
        streaming = visitor.http.send(request, stream=True)
        lines = streaming.iter_lines()  # kept: a dropped iterator would close the stream, and stop the answer
        next(lines)  # the first answer is running
        second = visitor.send("hello")
        streaming.close()
        third = visitor.send("hello")  # refused by the per-visitor limit, whether or not the first has let go
        other = Visitor(base_url).send("hello")
    assert second["status"] == 429 and second["body"]["error"]["code"] == "RATE_LIMITED"
    assert second["retryAfter"] == "1" and "one at a time" in second["body"]["error"]["message"]
    assert third["status"] == 429 and int(third["retryAfter"]) > 1, "the third request in a minute"
    assert other["events"][-1]["type"] == "message_end", "counted per visitor"


def test_a_disconnect_keeps_the_partial_answer(make_settings):
    with serving(make_settings(demo_token_delay_ms=20.0)) as base_url:
        visitor = Visitor(base_url)
        result = visitor.send("count to 300", abortAfterDeltas=5)
        conversation_id = result["events"][0]["conversationId"]
        deadline = time.monotonic() + 10
        while len(history := visitor.history(conversation_id)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert result["aborted"] and text_of(result["events"]).startswith("1 2 3 4 5")
    answer = history[1]
    assert (
        answer["id"] == result["events"][0]["messageId"] and answer["metadata"]["interrupted"] == "client-disconnected"
    )
    assert last_text(answer).startswith(text_of(result["events"]))


@pytest.mark.parametrize(
    ("message", "code", "retryable"),
    [
        ("break after 3", "AI_SERVICE_UNAVAILABLE", True),
        ("stall after 0", "TIMEOUT", True),
        ("fail 401", "AI_SERVICE_UNAVAILABLE", False),
    ],
)
def test_an_error_is_an_event_on_a_200_stream_and_leaves_no_assistant_message(
    openai_settings, message, code, retryable
):
    # The retry below must get its first token within the same timeouts, through the OpenAI client and the stand-in,
    # while the whole suite runs beside it on two cores: 2 s, not the 0.5 s that once timed it out under that load.
    with serving(openai_settings(first_token_timeout=2.0, idle_timeout=2.0)) as base_url:
        visitor = Visitor(base_url)
        events = visitor.send(message)["events"]
        conversation_id = events[0]["conversationId"]
        history = visitor.history(conversation_id)
        retried = visitor.send("hello again", conversationId=conversation_id)["events"]
    assert events[0]["type"] == "message_start"
    error = events[-1]
    assert error["type"] == "error" and error["code"] == code and error["retryable"] is retryable and error["message"]
    assert [message["role"] for message in history] == ["user"], "no assistant message: the user can retry"
    assert retried[-1]["type"] == "message_end" and "user messages seen: 2" in text_of(retried)
