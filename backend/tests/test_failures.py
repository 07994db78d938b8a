"""Model failures, timeouts and dropped connections: a clear error, and nothing that was shown is lost."""

from __future__ import annotations

import json

import pytest
from helpers import chat, chat_body, last_text, new_conversation_id, running, text_of
from threadline.observability.logs import JsonFormatter
from threadline_testing import standins
from threadline_testing.ai_sdk import read_with_ai
from threadline_testing.sse import parse_sse


@pytest.fixture(params=["openai", "gemini"])
def provider_settings(request, make_settings):
    standin = standins.start(request.param)

    def settings(**overrides):
        if request.param == "openai":
            return make_settings(
                model_provider="openai",
                model_name="gpt-standin",
                openai_api_key="sk-test",
                openai_base_url=standin.base_url,
                **overrides,
            )
        return make_settings(
            model_provider="gemini",
            model_name="gemini-1.5-flash",
            google_api_key="test-key",
            gemini_base_url=standin.base_url,
            **overrides,
        )

    yield settings
    standin.stop()


async def history(client, conversation_id: str) -> list[dict]:
    response = await client.get(f"/api/conversations/{conversation_id}")
    assert response.status_code == 200, response.text
    return response.json()["messages"]


@pytest.mark.parametrize(
    "status, code, words",
    [
        (401, "UNAUTHORIZED", "Invalid API key"),
        (403, "UNAUTHORIZED", "Invalid API key"),
        (429, "RATE_LIMITED", "Rate limited, try again"),
        (500, "AI_SERVICE_UNAVAILABLE", "unavailable right now"),
    ],
)
async def test_a_provider_error_before_any_token_is_an_http_error_with_its_code(
    provider_settings, status, code, words, caplog
):
    conversation_id = new_conversation_id()
    async with running(provider_settings()) as client:
        response = await client.post("/api/chat", json=chat_body(conversation_id, f"fail {status}"))
        assert response.status_code == 500
        assert response.headers["content-type"].startswith("application/json")
        error = response.json()["error"]
        assert error["code"] == code and words in error["message"]
        assert "stand-in" not in response.text and "Traceback" not in response.text, "no provider internals"
        messages = await history(client, conversation_id)
    assert messages[0]["parts"] == [{"type": "text", "text": f"fail {status}"}], "the question is kept"
    [logged] = [record for record in caplog.records if record.name == "threadline.answers.turn"]
    line = json.loads(JsonFormatter().format(logged))
    assert line["conversation_id"] == conversation_id and line["error_code"] == code
    assert f"stand-in status {status}" in line["exception"], "the full provider error is in the server log"


async def test_an_unreachable_model_is_a_retryable_network_error(make_settings):
    settings = make_settings(
        model_provider="openai",
        model_name="gpt-standin",
        openai_api_key="sk-test",
        openai_base_url=f"http://127.0.0.1:{standins.free_port()}/v1",
    )  # nothing listens
    conversation_id = new_conversation_id()
    async with running(settings) as client:
        response = await client.post("/api/chat", json=chat_body(conversation_id, "anyone there?"))
        assert response.status_code == 500
        assert response.json()["error"]["code"] == "NETWORK_ERROR"
        assert (await history(client, conversation_id))[0]["parts"][0]["text"] == "anyone there?"


async def test_a_connection_dropped_mid_answer_ends_with_an_error_chunk_and_keeps_the_partial(provider_settings):
    conversation_id = new_conversation_id()
    async with running(provider_settings()) as client:
        _, raw, chunks = await chat(client, conversation_id, "break after 4")
        messages = await history(client, conversation_id)
        _, _, after = await chat(client, conversation_id, "still there?")
    assert text_of(chunks).startswith("word0 word1 word2")
    assert chunks[-1]["type"] == "error" and "Connection failed" in chunks[-1]["errorText"]
    assert [chunk["type"] for chunk in chunks].index("text-end") < len(chunks) - 1, "the text part is closed"
    seen = read_with_ai(raw)
    assert seen["errors"] == [chunks[-1]["errorText"]]
    answer = messages[1]
    assert answer["metadata"]["interrupted"] == "error"
    assert last_text(answer) == text_of(chunks), "what was shown is what was saved"
    assert "user messages seen: 2" in text_of(after), "the next turn works and sees the whole conversation"


async def test_an_answer_that_stalls_times_out_and_keeps_what_arrived(provider_settings):
    conversation_id = new_conversation_id()
    async with running(provider_settings(idle_timeout=0.5)) as client:
        _, _raw, chunks = await chat(client, conversation_id, "stall after 3")
        messages = await history(client, conversation_id)
    assert text_of(chunks).startswith("word0 word1")
    assert chunks[-1] == {"type": "error", "errorText": "The assistant took too long to answer. Please try again."}
    assert messages[1]["metadata"]["interrupted"] == "timeout"
    assert last_text(messages[1]) == text_of(chunks)


async def test_no_first_token_in_time_is_a_timeout_before_the_stream_starts(provider_settings):
    async with running(provider_settings(first_token_timeout=0.5)) as client:
        response = await client.post("/api/chat", json=chat_body(new_conversation_id(), "stall after 0"))
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "TIMEOUT"


RATE_LIMITED_TEXT = "Rate limited, try again: the model provider is busy right now."


async def test_a_provider_that_rate_limits_is_waited_for_and_named_not_called_slow(openai_settings):
    """OpenAI's client waits out a 429's Retry-After twice before it gives up (here 1.5 s each, over a first-token
    limit of 1 s): the wait is the provider's, not the agent's silence, and the answer ends RATE_LIMITED, not
    TIMEOUT; in events mode the status says the provider is busy."""
    async with running(openai_settings(first_token_timeout=1.0)) as client:
        quiet = await client.post("/api/chat", json=chat_body(new_conversation_id(), "busy 1.5"))
        _, _, chunks = await chat(client, None, "busy 1.5", streamMode="events")
    assert quiet.status_code == 500 and quiet.json()["error"]["code"] == "RATE_LIMITED", quiet.text
    statuses = [chunk["data"]["text"] for chunk in chunks if chunk["type"] == "data-status"]
    assert "The model provider is busy; trying again in 2 s…" in statuses
    assert chunks[-1] == {"type": "error", "errorText": RATE_LIMITED_TEXT}


async def test_the_total_time_limit_ends_a_long_answer(make_settings):
    settings = make_settings(demo_token_delay_ms=50.0, total_timeout=1.0)
    conversation_id = new_conversation_id()
    async with running(settings) as client:
        _, raw, chunks = await chat(client, conversation_id, "count to 100")
        messages = await history(client, conversation_id)
    assert 0 < sum(chunk["type"] == "text-delta" for chunk in chunks) < 100, "cut off part way"
    assert chunks[-1]["type"] == "error" and "too long" in chunks[-1]["errorText"]
    assert last_text(messages[1]) == text_of(chunks)
    assert parse_sse(raw)[0]["type"] == "start"


async def test_an_answer_the_provider_cut_off_cleanly_is_not_shown_or_saved_as_complete(openai_settings):
    """The stream ended as if whole, but with no finish reason (a proxy closed it): an error chunk, and the answer
    is kept marked as not finished, not offered as a complete answer with 0 tokens of usage."""
    conversation_id = new_conversation_id()
    async with running(openai_settings()) as client:
        _, raw, chunks = await chat(client, conversation_id, "cut after 4")
        messages = await history(client, conversation_id)
    assert text_of(chunks).startswith("word0 word1 word2")
    assert chunks[-1]["type"] == "error" and "Connection failed" in chunks[-1]["errorText"]
    assert read_with_ai(raw)["errors"] == [chunks[-1]["errorText"]]
    assert messages[1]["metadata"]["interrupted"] == "error"
    assert last_text(messages[1]) == text_of(chunks)
