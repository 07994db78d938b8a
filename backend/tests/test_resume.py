"""Resumable streams: a reader that comes later (a reload, another device, another process) replays the
running answer from its first chunk and follows it live, with the real `ai` Chat's resumeStream()."""

from __future__ import annotations

import asyncio
import signal
import time

import httpx
from helpers import chat_body, first_deltas, new_conversation_id, serving, sse_chunks
from threadline.http.identity import COOKIE
from threadline_testing.ai_sdk import resume_with_chat
from threadline_testing.ports import free_port
from threadline_testing.processes import start_threadline
from threadline_testing.sse import parse_sse

SLOW = {"demo_token_delay_ms": 10.0}


def text_of_message(message: dict) -> str:
    return "".join(part["text"] for part in message["parts"] if part["type"] == "text")


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


async def second_message(settings, strategy: str) -> tuple[list[dict], int, list[dict], list[dict]]:
    """A message sent while the conversation's answer streams: the first answer's chunks, the second
    request's status and chunks, and the conversation afterwards."""
    with serving(settings) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            conversation_id = new_conversation_id()
            async with client.stream("POST", "/api/chat", json=chat_body(conversation_id, "count to 100")) as first:
                _, chunks = await first_deltas(first, 3)
                body = chat_body(conversation_id, "and now?", multitaskStrategy=strategy)
                second = asyncio.create_task(client.post("/api/chat", json=body))
                rest = [chunk async for chunk in chunks]
            response = await second
            second_chunks = parse_sse(response.content) if response.status_code == 200 else []
            history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    return rest, response.status_code, second_chunks, history


async def test_double_texting_rejects_interrupts_enqueues_or_rolls_back(make_settings):
    settings = make_settings(**SLOW)
    rest, status, _, history = await second_message(settings, "reject")
    assert status == 409 and rest[-1]["type"] == "finish" and len(history) == 2

    rest, status, chunks, history = await second_message(settings, "interrupt")
    assert status == 200 and rest[-1]["messageMetadata"]["interrupted"] == "cancelled"
    assert [message["role"] for message in history] == ["user", "assistant", "user", "assistant"]
    assert history[1]["metadata"]["interrupted"] == "cancelled" and history[2]["parts"][0]["text"] == "and now?"

    rest, status, chunks, history = await second_message(settings, "enqueue")
    assert status == 200 and "interrupted" not in rest[-1]["messageMetadata"]
    assert text_of_message(history[1]).endswith(" 100"), "the first answer ran to its end"
    assert len(history) == 4 and chunks[-1]["type"] == "finish"

    rest, status, chunks, history = await second_message(settings, "rollback")
    assert status == 200 and [message["parts"][0]["text"] for message in history if message["role"] == "user"] == [
        "and now?"
    ], "the first question and its answer are gone"


async def test_a_replay_ends_with_the_partial_when_the_answering_process_is_killed(database_url, tmp_path):
    """`kill -9` of the process answering: a reader following it from another process gets the partial and a
    finish at once, and a reload afterwards finds nothing running (204), with the turn closed."""
    ports = [free_port(), free_port()]
    doomed = start_threadline(database_url, tmp_path, ports[0], CHAT_DEMO_TOKEN_DELAY_MS="20")
    survivor = start_threadline(database_url, tmp_path, ports[1])
    first, second = (f"http://127.0.0.1:{port}" for port in ports)
    conversation_id = new_conversation_id()
    try:
        async with httpx.AsyncClient(base_url=first, timeout=30) as a:
            a.headers["x-threadline-client"] = (await a.get("/health")).headers["x-threadline-client"]
            async with httpx.AsyncClient(base_url=second, timeout=30, headers=a.headers) as b:
                answer = await a.send(
                    a.build_request("POST", "/api/chat", json=chat_body(conversation_id, "count to 300")), stream=True
                )
                _, _rest = await first_deltas(answer, 3)  # kept: dropping it would close the response
                reader = await b.send(b.build_request("GET", f"/api/chat/{conversation_id}/stream"), stream=True)
                assert reader.status_code == 200, reader.status_code
                replay = reader.aiter_raw()
                seen = await anext(replay)
                doomed.send_signal(signal.SIGKILL)
                doomed.wait(timeout=30)
                killed = time.monotonic()
                async for data in replay:
                    seen += data
                ended_after = time.monotonic() - killed
                started = time.monotonic()
                reload = await b.get(f"/api/chat/{conversation_id}/stream")
                reload_took = time.monotonic() - started
                saved = (await b.get(f"/api/conversations/{conversation_id}")).json()["messages"][-1]
    finally:
        for process in (doomed, survivor):
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
    chunks = parse_sse(seen)
    assert seen.endswith(b"data: [DONE]\n\n") and ended_after < 5, "the replay ended soon after the kill"
    assert chunks[-1]["type"] == "finish" and chunks[-1]["messageMetadata"]["interrupted"] == "server-stopped"
    started_parts = {chunk["id"] for chunk in chunks if chunk["type"] == "text-start"}
    assert started_parts == {chunk["id"] for chunk in chunks if chunk["type"] == "text-end"}, "every part is closed"
    assert reload.status_code == 204 and reload_took < 3, "nothing runs: no replay of the dead partial"
    assert saved["metadata"]["interrupted"] == "server-stopped", "its turn is closed as the replay said"


async def test_a_request_can_ask_for_its_answer_to_outlive_a_disconnect(make_settings):
    """`onDisconnect: "continue"` in the body, whatever CHAT_ON_DISCONNECT says (here the default, cancel)."""
    with serving(make_settings(**SLOW)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            conversation_id = new_conversation_id()
            body = chat_body(conversation_id, "count to 60", onDisconnect="continue")
            async with client.stream("POST", "/api/chat", json=body) as answer:
                await first_deltas(answer, 3)  # then the page reloads
            deadline = time.monotonic() + 20
            while (
                "finishedAt"
                not in (saved := (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"][-1])[
                    "metadata"
                ]
            ):
                assert time.monotonic() < deadline, "the answer never finished"
                await asyncio.sleep(0.1)
    assert text_of_message(saved).endswith(" 60") and "interrupted" not in saved["metadata"]
