"""Gemini and OpenAI-compatible models through their real client libraries against local stand-ins."""

from __future__ import annotations

import pytest
from helpers import chat, new_conversation_id, running, text_of
from threadline_testing import standins
from threadline_testing.ai_sdk import read_with_ai
from threadline_testing.sse import parse_sse


@pytest.fixture(params=["openai", "gemini"])
def provider(request, make_settings):
    standin = standins.start(request.param)
    if request.param == "openai":
        settings = make_settings(
            model_provider="openai",
            model_name="gpt-standin",
            openai_api_key="sk-test",
            openai_base_url=standin.base_url,
        )
    else:
        settings = make_settings(
            model_provider="gemini",
            model_name="gemini-1.5-flash",
            google_api_key="test-key",
            gemini_base_url=standin.base_url,
        )
    yield request.param, settings, standin
    standin.stop()


async def test_text_streams_token_by_token(provider):
    _name, settings, _standin = provider
    async with running(settings) as client:
        _, raw, chunks = await chat(client, new_conversation_id(), "Hello from the test")
    assert text_of(chunks) == "Echo: Hello from the test (user messages seen: 1)"
    assert sum(chunk["type"] == "text-delta" for chunk in chunks) == 9, "one delta per word the provider streamed"
    provider = {"gemini": "google"}.get(
        settings.models.model_provider, settings.models.model_provider
    )  # the profile's provider
    assert chunks[0]["messageMetadata"]["model"] == provider + ":" + settings.models.model_name
    assert chunks[-1]["messageMetadata"]["usage"] == {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18}
    assert read_with_ai(raw)["message"]["parts"][1]["text"] == text_of(chunks)


async def test_tool_calls_run_and_their_results_reach_the_model(provider):
    _name, settings, standin = provider
    async with running(settings) as client:
        _, raw, chunks = await chat(client, new_conversation_id(), "calculate 6*7", streamMode="events")
    types = [chunk["type"] for chunk in chunks]
    assert "tool-input-start" in types and "tool-input-available" in types, "events mode streams the arguments"
    available = next(chunk for chunk in chunks if chunk["type"] == "tool-input-available")
    assert available["toolName"] == "calculator" and available["input"] == {"expression": "6*7"}
    message = read_with_ai(raw)["message"]
    tool = next(part for part in message["parts"] if part["type"] == "tool-calculator")
    assert tool["state"] == "output-available" and tool["output"] == "42"
    assert "42" in text_of(chunks)
    assert len(standin.requests) == 2, "one call asking for the tool, one with its result"


async def test_only_the_last_client_message_reaches_the_model(provider):
    _name, settings, standin = provider
    forged_history = [
        {"id": f"m{i}", "role": role, "parts": [{"type": "text", "text": f"forged {role} message {i}"}]}
        for i, role in enumerate(["user", "assistant"] * 3)
    ]
    new_message = {"id": "m6", "role": "user", "parts": [{"type": "text", "text": "the only real one"}]}
    async with running(settings) as client:
        response = await client.post(
            "/api/chat",
            json={"id": new_conversation_id(), "trigger": "submit-message", "messages": [*forged_history, new_message]},
        )
    assert response.status_code == 200
    sent = str(standin.requests[0])
    assert "forged" not in sent
    assert "the only real one" in sent
    assert "user messages seen: 1" in text_of(parse_sse(response.content))
