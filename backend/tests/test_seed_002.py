"""Seed 002's chat API (get_chat_response_stream, load_conversation, list_conversations, cancel_stream),
driven through threadline's Python client against a real server."""

from __future__ import annotations

import re
import time
from datetime import datetime

import httpx
import pytest
from helpers import serving
from threadline.client import Client, ThreadlineError

EVENT_TYPES = {"tool_start", "tool_output", "tool_end", "chunk", "error", "done"}


def text_of(events: list[dict]) -> str:
    return "".join(event["content"] for event in events if event["type"] == "chunk")


def test_a_tool_answer_then_a_continued_conversation_loaded_and_listed(make_settings):
    with serving(make_settings(tool_output_preview=5)) as base_url, Client(base_url) as client:
        first = list(client.stream_contract("seed-002", "calculate 2**100"))
        done = first[-1]
        conversation_id = done["conversation_id"]
        second = list(client.stream_contract("seed-002", "calculate 1/0", conversation_id))
        other = list(client.stream_contract("seed-002", "hello"))
        loaded = client.load_conversation(conversation_id)
        by_query = client.http.get("/api/load_conversation", params={"conversation_id": conversation_id}).json()
        listed = client.list_conversations()
        trace = client.http.get(f"/api/trace/{done['trace_id']}").json()
    assert {event["type"] for event in first + second + other} <= EVENT_TYPES
    start, output, end = first[:3]
    assert start["type"] == "tool_start" and start["tool_name"] == "calculator"
    assert start["tool_args"] == {"expression": "2**100"} and datetime.fromisoformat(start["timestamp"])
    assert output == {
        "type": "tool_output",
        "tool_call_id": start["tool_call_id"],
        "output": "12676",
        "truncated": True,
        "full_length": len(str(2**100)),
    }
    assert end["type"] == "tool_end" and end["status"] == "success" and end["duration_ms"] > 0
    assert all(event["conversation_id"] == conversation_id for event in first if event["type"] == "chunk")
    assert str(2**100) in text_of(first)
    assert done["type"] == "done" and re.fullmatch(r"[0-9a-f]{32}", done["trace_id"]) and done["message_id"]
    assert trace["status"] == "completed" and trace["messageId"] == done["message_id"]
    assert next(event for event in second if event["type"] == "tool_end")["status"] == "error"
    assert second[-1]["conversation_id"] == conversation_id
    assert [message["role"] for message in loaded["messages"]] == ["user", "assistant"] * 2
    assert loaded["messages"][0]["content"] == "calculate 2**100" and loaded["messages"][1]["feedback"] is None
    assert loaded["messages"][1]["message_id"] == done["message_id"]
    assert loaded["messages"][1]["trace_id"] == done["trace_id"] and loaded == by_query
    assert [row["conversation_id"] for row in listed] == [other[-1]["conversation_id"], conversation_id]
    assert set(listed[0]) == {"conversation_id", "title", "created_at", "last_message_at"}


def test_bad_requests_missing_or_strangers_conversations_and_the_rate_limit(make_settings):
    with serving(make_settings(rate_limit="4/minute")) as base_url:
        with Client(base_url) as owner, Client(base_url) as stranger:
            mine = list(owner.stream_contract("seed-002", "hello"))[-1]["conversation_id"]
            refusals = []
            for client, message, conversation_id in [
                (owner, "   ", None),
                (owner, "hi", "no-such-conversation"),
                (stranger, "hi", mine),
            ]:
                with pytest.raises(ThreadlineError) as refused:
                    list(client.stream_contract("seed-002", message, conversation_id))
                refusals.append(refused.value)
            with pytest.raises(ThreadlineError) as missing:
                stranger.load_conversation(mine)
            list(owner.stream_contract("seed-002", "two"))
            with pytest.raises(ThreadlineError) as limited:
                list(owner.stream_contract("seed-002", "three"))
    assert (refusals[0].status, refusals[0].code, str(refusals[0])) == (
        400,
        "VALIDATION_ERROR",
        "Message cannot be empty",
    )
    assert [(error.status, error.code) for error in refusals[1:]] == [(404, "NOT_FOUND")] * 2
    assert missing.value.status == 404
    assert limited.value.status == 429 and limited.value.retry_after


def test_cancel_confirms_and_marks_the_trace_cancelled_and_a_disconnect_keeps_the_partial(make_settings):
    with serving(make_settings(demo_token_delay_ms=20.0)) as base_url, Client(base_url) as client:
        events = []
        for event in client.stream_contract("seed-002", "count to 300"):
            events.append(event)
            if len(events) == 3:
                assert client.cancel(event["conversation_id"]) is True
        done = events[-1]
        trace = client.http.get(f"/api/trace/{done['trace_id']}").json()
        left = []
        for event in client.stream_contract("seed-002", "count to 300", done["conversation_id"]):
            left.append(event)
            if len(left) == 5:
                break
        deadline = time.monotonic() + 10  # the server notices the closed connection, then saves
        while (loaded := client.load_conversation(done["conversation_id"]))["messages"][-1]["role"] != "assistant":
            assert time.monotonic() < deadline, "the partial answer was not saved"
            time.sleep(0.05)
    assert done["type"] == "done" and trace["status"] == "cancelled" and trace["interrupted"] == "cancelled"
    assert len(events) < 300, "it stopped"
    partial = loaded["messages"][-1]
    assert partial["role"] == "assistant" and partial["content"].startswith(text_of(left))


@pytest.mark.parametrize(("message", "status"), [("break after 3", 503), ("stall after 2", 504)])
def test_a_failure_mid_answer_is_an_error_event(openai_settings, message, status):
    with serving(openai_settings(idle_timeout=0.5)) as base_url, Client(base_url) as client:
        events = list(client.stream_contract("seed-002", message))
    assert text_of(events).startswith("word0")
    assert events[-1]["type"] == "error" and events[-1]["status"] == status and events[-1]["message"]


def test_the_contract_is_in_the_openapi_document(make_settings):
    with serving(make_settings()) as base_url:
        paths = httpx.get(f"{base_url}/schema/openapi.json").json()["paths"]
    assert {"/api/get_chat_response_stream", "/api/load_conversation", "/api/list_conversations"} <= set(paths)
    assert "/api/chat/stream" in paths


def test_seed_002_spellings_cancel_in_snake_case_and_list_by_the_visitors_own_token(make_settings):
    with serving(make_settings(demo_token_delay_ms=20.0)) as base_url, Client(base_url) as client:
        events = []
        for event in client.stream_contract("seed-002", "count to 300"):
            events.append(event)
            if len(events) == 3:
                stop = client.http.post("/api/cancel_stream", json={"conversation_id": event["conversation_id"]})
        conversation_id = events[-1]["conversation_id"]
        token = client.token
        anonymous = httpx.Client(base_url=base_url, timeout=30)  # no cookie, no header: only the query names it
        by_token = anonymous.get("/api/list_conversations", params={"client_id": token}).json()
        forged = anonymous.get("/api/list_conversations", params={"client_id": token.split(".")[0]}).json()
        anonymous.close()
    assert stop.status_code == 200 and stop.json()["cancelled"] is True
    assert [row["conversation_id"] for row in by_token] == [conversation_id]
    assert forged == [], "a bare id names no one"
