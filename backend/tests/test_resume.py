"""Resumable streams: a reader that comes later (a reload, another device, another process) replays the
running answer from its first chunk and follows it live, with the real `ai` Chat's resumeStream()."""

from __future__ import annotations

import asyncio

import httpx
from helpers import chat_body, new_conversation_id, serving, sse_chunks
from threadline.identity import COOKIE
from threadline_testing.ai_sdk import resume_with_chat

SLOW = {"demo_token_delay_ms": 10.0}


def text_of_message(message: dict) -> str:
    return "".join(part["text"] for part in message["parts"] if part["type"] == "text")


async def first_deltas(response, count: int) -> tuple[str, object]:
    chunks = sse_chunks(response)
    text = ""
    async for chunk in chunks:
        if chunk["type"] == "text-delta":
            text += chunk["delta"]
            count -= 1
            if count == 0:
                return text, chunks
    raise AssertionError("the answer ended early")


async def test_another_process_replays_the_answer_from_its_start_and_follows_it_to_the_end(make_settings):
    settings = make_settings(**SLOW)
    with serving(settings) as first_url, serving(settings) as second_url:
        async with httpx.AsyncClient(base_url=first_url, timeout=30) as client:
            conversation_id = new_conversation_id()
            assert (await client.get("/api/conversations")).status_code == 200
            cookie = f"{COOKIE}={client.cookies[COOKIE]}"
            async with client.stream("POST", "/api/chat", json=chat_body(conversation_id, "count to 200")) as answer:
                text, chunks = await first_deltas(answer, 5)
                resumed = asyncio.create_task(asyncio.to_thread(resume_with_chat, second_url, cookie, conversation_id))
                async for chunk in chunks:
                    if chunk["type"] == "text-delta":
                        text += chunk["delta"]
            replayed = await resumed
            idle = await client.get(f"/api/chat/{conversation_id}/stream")
        async with httpx.AsyncClient(base_url=second_url, timeout=30) as stranger:
            missing = await stranger.get(f"/api/chat/{conversation_id}/stream")
    assert not replayed["errors"]
    (message,) = replayed["messages"]
    assert text_of_message(message) == text and text.endswith("200"), "the same answer, from its first chunk"
    assert idle.status_code == 204, "nothing runs once it has ended"
    assert missing.status_code == 404


async def test_continue_mode_finishes_an_answer_whose_reader_went_away(make_settings):
    with serving(make_settings(on_disconnect="continue", **SLOW)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            conversation_id = new_conversation_id()
            async with client.stream("POST", "/api/chat", json=chat_body(conversation_id, "count to 100")) as answer:
                await first_deltas(answer, 3)  # then the tab closes
            resumed = client.build_request("GET", f"/api/chat/{conversation_id}/stream")
            response = await client.send(resumed, stream=True)
            assert response.status_code == 200
            replayed = "".join([c["delta"] async for c in sse_chunks(response) if c["type"] == "text-delta"])
            saved = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"][-1]
    assert replayed.endswith(" 100") and text_of_message(saved) == replayed
    assert "interrupted" not in saved["metadata"], "it ran to its end"
