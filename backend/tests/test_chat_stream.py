"""POST /api/chat end to end: real graph, real PostgreSQL, streams read by the real `ai` client."""

from __future__ import annotations

import json

import pytest
from helpers import chat, chat_body, last_text, new_conversation_id, running, text_of
from threadline_testing.ai_sdk import read_with_ai


async def test_text_turn_is_accepted_by_the_ai_client(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        response, raw, chunks = await chat(client, conversation_id, "Hello there")

    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["x-accel-buffering"] == "no"
    assert response.headers["cache-control"] == "no-cache"
    types = [chunk["type"] for chunk in chunks]
    assert types[:3] == ["start", "start-step", "text-start"]
    assert types[-5:] == ["text-end", "message-metadata", "finish-step", "data-suggestions", "finish"]
    start, finish = chunks[0], chunks[-1]
    assert start["messageMetadata"]["conversationId"] == conversation_id
    assert start["messageMetadata"]["model"] == "demo:demo"
    assert finish["finishReason"] == "stop"
    assert finish["messageMetadata"]["usage"]["outputTokens"] > 10
    assert types.count("text-delta") > 10, "the demo model streams token by token"

    parsed = read_with_ai(raw)
    assert parsed["errors"] == []
    message = parsed["message"]
    assert message["id"] == start["messageId"]
    assert [part["type"] for part in message["parts"]] == ["step-start", "text", "data-suggestions"]
    assert message["parts"][1]["text"] == text_of(chunks)
    assert message["parts"][2]["data"]["values"][0] == {"label": "Count to 5", "value": "count to 5"}
    assert "Hello there" in text_of(chunks)


async def test_tool_turn_is_accepted_and_reload_shows_what_was_streamed(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        _, raw, chunks = await chat(client, conversation_id, "calculate (17 * 23) + 4")
        stored = (await client.get(f"/api/conversations/{conversation_id}")).json()

    types = [chunk["type"] for chunk in chunks]
    assert types[:3] == ["start", "start-step", "tool-input-available"], "messages mode: no arguments as generated"
    assert "tool-output-available" in types
    streamed = read_with_ai(raw)["message"]
    tool = streamed["parts"][1]
    assert tool["type"] == "tool-calculator"
    assert tool["state"] == "output-available"
    assert tool["input"] == {"expression": "(17 * 23) + 4"}
    assert tool["output"] == "395"
    assert "395" in streamed["parts"][3]["text"]

    user, assistant = stored["messages"]
    assert user["role"] == "user" and user["parts"] == [{"type": "text", "text": "calculate (17 * 23) + 4"}]
    assert assistant["id"] == streamed["id"]
    assert assistant["parts"] == streamed["parts"], "a reloaded page shows exactly what was streamed"
    assert assistant["metadata"] == streamed["metadata"]


async def test_regenerate_replaces_the_last_answer(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        await chat(client, conversation_id, "first question")
        _, _, first = await chat(client, conversation_id, "second question")
        response = await client.post(
            "/api/chat",
            json={
                "id": conversation_id,
                "trigger": "regenerate-message",
                "messageId": first[0]["messageId"],
                "messages": [{"id": "x", "role": "user", "parts": [{"type": "text", "text": "second question"}]}],
            },
        )
        assert response.status_code == 200
        stored = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]

    assert [message["role"] for message in stored] == ["user", "assistant", "user", "assistant"]
    assert stored[3]["id"] != first[0]["messageId"]
    assert "second question" in stored[3]["parts"][1]["text"]
    assert "1 earlier message from you" in stored[3]["parts"][1]["text"]


async def test_the_model_call_budget_ends_with_a_clear_answer(make_settings):
    from threadline_testing.standins import start

    standin = start("openai")
    try:
        settings = make_settings(
            model_provider="openai",
            model_name="gpt-standin",
            openai_api_key="sk-test",
            openai_base_url=standin.base_url,
        )
        conversation_id = new_conversation_id()
        async with running(settings) as client:
            _, raw, chunks = await chat(client, conversation_id, "loop forever please")
            _, _, after = await chat(client, conversation_id, "are you still there?")
    finally:
        standin.stop()

    assert len(standin.requests) == 6, "5 model calls for the first turn, 1 for the next"
    message = read_with_ai(raw)["message"]
    tools = [part for part in message["parts"] if part["type"] == "tool-calculator"]
    assert [part["state"] for part in tools] == ["output-available"] * 4 + ["output-error"]
    assert "stopped after 5 model calls" in last_text(message)
    assert chunks[-1]["type"] == "finish"
    assert "Echo: are you still there?" in text_of(after)


@pytest.mark.parametrize(
    "body, field",
    [
        ({"id": "c1", "messages": [{"role": "user", "parts": [{"type": "text", "text": "   "}]}]}, "messages"),
        ({"id": "c1", "messages": []}, "messages"),
        ({"id": "not a valid id!", "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]}, "id"),
        ({"id": "c1", "messages": [{"role": "assistant", "parts": [{"type": "text", "text": "hi"}]}]}, "messages"),
        ({"id": "c1", "messages": [{"role": "robot", "parts": []}]}, "messages[0].role"),
        ({"id": "c1", "messages": [{"role": "user", "parts": [{"type": "text", "text": "x" * 10_001}]}]}, "messages"),
    ],
)
async def test_invalid_chat_requests_get_a_json_400(make_settings, body, field):
    async with running(make_settings()) as client:
        response = await client.post("/api/chat", json=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"][0]["field"] == field
    assert "Traceback" not in response.text


async def test_malformed_json_and_unknown_routes_get_json_errors(make_settings):
    async with running(make_settings()) as client:
        malformed = await client.post("/api/chat", content=b"{not json", headers={"content-type": "application/json"})
        unknown = await client.get("/api/nothing-here")
        regenerate_unknown = await client.post(
            "/api/chat",
            json={
                "id": new_conversation_id(),
                "trigger": "regenerate-message",
                "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
            },
        )
    assert malformed.status_code == 400 and malformed.json()["error"]["code"] == "VALIDATION_ERROR"
    assert malformed.json()["error"]["details"][0]["field"] == "body"
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "NOT_FOUND"
    assert regenerate_unknown.status_code == 404 and regenerate_unknown.json()["error"]["code"] == "NOT_FOUND"


async def test_a_wrong_content_type_and_an_oversized_body_are_refused(make_settings):
    body = json.dumps(chat_body(None, "hi")).encode()
    huge = json.dumps(chat_body(None, "x" * 2_000_000)).encode()
    async with running(make_settings()) as client:
        as_text = await client.post("/api/chat", content=body, headers={"content-type": "text/plain"})
        as_form = await client.post("/api/chat", data={"messages": "hi"})
        too_big = await client.post("/api/chat", content=huge, headers={"content-type": "application/json"})
    for response in (as_text, as_form):
        assert response.status_code == 400
        [detail] = response.json()["error"]["details"]
        assert detail["field"] == "content-type" and "application/json" in detail["message"]
    assert too_big.status_code == 413
    assert too_big.json() == {
        "error": {"code": "PAYLOAD_TOO_LARGE", "message": "The request body is too large (the limit is 1 MB)."}
    }


async def test_a_missing_conversation_id_is_created_and_returned(make_settings):
    async with running(make_settings()) as client:
        response, _, chunks = await chat(client, None, "no id here")
        conversation_id = chunks[0]["messageMetadata"]["conversationId"]
        assert response.headers["x-conversation-id"] == conversation_id
        stored = await client.get(f"/api/conversations/{conversation_id}")
    assert stored.status_code == 200
    assert stored.json()["title"] == "no id here"


async def test_a_reused_message_id_never_overwrites_saved_history(make_settings):
    conversation_id = new_conversation_id()

    def body(text: str) -> dict:
        return {
            "id": conversation_id,
            "trigger": "submit-message",
            "messages": [{"id": "same-id", "role": "user", "parts": [{"type": "text", "text": text}]}],
        }

    async with running(make_settings()) as client:
        assert (await client.post("/api/chat", json=body("first"))).status_code == 200
        assert (await client.post("/api/chat", json=body("second"))).status_code == 200
        stored = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    texts = [message["parts"][0]["text"] for message in stored if message["role"] == "user"]
    assert texts == ["first", "second"]


async def test_a_user_message_with_an_earlier_answers_id_gets_an_id_of_its_own(make_settings):
    """useChat keys messages by id: two messages with one id in the read-back would be one key twice."""
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        _, _, chunks = await chat(client, conversation_id, "first")
        answer_id = chunks[0]["messageId"]
        body = chat_body(conversation_id, "second")
        body["messages"][-1]["id"] = answer_id
        assert (await client.post("/api/chat", json=body)).status_code == 200
        stored = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    ids = [message["id"] for message in stored]
    assert len(ids) == len(set(ids)) == 4
    assert [message["role"] for message in stored if message["id"] == answer_id] == ["assistant"]


async def test_an_empty_message_is_worded_on_every_route_as_the_seeds_word_it(make_settings):
    async with running(make_settings()) as client:
        refused = [
            await client.post("/api/chat", json=chat_body(None, "   ")),
            await client.post("/api/general_chat/stream", json={"message": " "}),
            await client.post("/api/get_chat_response_stream", json={"message": ""}),
            await client.post("/api/chat/stream", json={"message": ""}),
        ]
    for response in refused:
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
        assert response.json()["error"]["message"] == "Message cannot be empty"
