"""Stopping an answer: a closed connection, a stop request from here or from another server process."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import httpx
import psycopg
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from helpers import chat, chat_body, new_conversation_id, serving, sse_chunks
from standins import _free_port
from threadline.demo_model import DemoChatModel
from threadline.graph import TurnRequest, build_graph
from threadline.history import ui_messages
from threadline.turns import Stop, Timeouts, Turn

SLOW = {"demo_token_delay_ms": 20.0}


async def stream_some(client: httpx.AsyncClient, conversation_id: str, deltas: int):
    """Start a long answer; return the open response, its chunk iterator and the text of the first deltas."""
    request = client.build_request("POST", "/api/chat", json=chat_body(conversation_id, "count to 300"))
    response = await client.send(request, stream=True)
    assert response.status_code == 200
    chunks = sse_chunks(response)
    text = ""
    async for chunk in chunks:
        if chunk["type"] == "text-delta":
            text += chunk["delta"]
            deltas -= 1
            if deltas == 0:
                return response, chunks, text
    raise AssertionError("the answer ended early")


async def saved_answer(client: httpx.AsyncClient, conversation_id: str, *, wait: float = 10.0) -> dict:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        response = await client.get(f"/api/conversations/{conversation_id}")
        assert response.status_code == 200, response.text
        messages = response.json()["messages"]
        if len(messages) > 1 and messages[-1]["metadata"].get("finishedAt"):
            return messages[-1]
        await asyncio.sleep(0.05)
    raise AssertionError("the answer was not saved")


async def test_a_closed_connection_cancels_the_model_and_saves_the_partial_answer(make_settings):
    conversation_id = new_conversation_id()
    with serving(make_settings(**SLOW)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            response, _, shown = await stream_some(client, conversation_id, deltas=5)
            await response.aclose()  # the tab is closed
            answer = await saved_answer(client, conversation_id)
            _, _, after = await chat(client, conversation_id, "count to 3")
    assert answer["metadata"]["interrupted"] == "client-disconnected"
    saved = answer["parts"][-1]["text"]
    assert saved.startswith(shown), "everything that was shown is kept"
    assert len(saved.split()) < 50, "the model stopped instead of running on with nobody listening"
    assert [c for c in after if c["type"] == "finish"], "the next turn works"


async def test_a_stop_request_ends_the_stream_with_finish_and_keeps_the_partial(make_settings):
    conversation_id = new_conversation_id()
    with serving(make_settings(**SLOW)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            response, chunks, shown = await stream_some(client, conversation_id, deltas=3)
            stop = await client.post("/api/cancel_stream", json={"conversationId": conversation_id})
            rest = [chunk async for chunk in chunks]
            again = await client.delete(f"/api/chat/{conversation_id}/stream")
            unknown = await client.post("/api/cancel_stream", json={"conversationId": new_conversation_id()})
            answer = await saved_answer(client, conversation_id)
    assert stop.status_code == 200 and stop.json() == {"cancelled": True, "conversationId": conversation_id}
    assert rest[-1]["type"] == "finish" and rest[-1]["finishReason"] == "other"
    assert rest[-1]["messageMetadata"]["interrupted"] == "cancelled"
    streamed = shown + "".join(chunk["delta"] for chunk in rest if chunk["type"] == "text-delta")
    assert answer["parts"][-1]["text"] == streamed, "the saved answer is exactly what was streamed"
    assert answer["metadata"]["interrupted"] == "cancelled"
    assert again.status_code == 409 and again.json()["error"]["code"] == "CONFLICT"
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "NOT_FOUND"


async def test_one_answer_at_a_time_per_visitor(make_settings):
    with serving(make_settings(**SLOW)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            first = new_conversation_id()
            response, _, _ = await stream_some(client, first, deltas=1)
            second = await client.post("/api/chat", json=chat_body(new_conversation_id(), "hello"))
            await client.post("/api/cancel_stream", json={"conversationId": first})
            await response.aclose()
            third = await client.post("/api/chat", json=chat_body(new_conversation_id(), "hello"))
    assert second.status_code == 409 and second.json()["error"]["code"] == "CONFLICT"
    assert "already streaming" in second.json()["error"]["message"]
    assert third.status_code == 200


async def test_someone_elses_streaming_conversation_is_not_found_and_keeps_streaming(make_settings):
    with serving(make_settings(**SLOW)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as owner, \
                httpx.AsyncClient(base_url=base_url, timeout=30) as stranger:
            conversation_id = new_conversation_id()
            response, chunks, _ = await stream_some(owner, conversation_id, deltas=1)
            intrusion = await stranger.post("/api/chat", json=chat_body(conversation_id, "hello"))
            rest = [chunk async for chunk in chunks]
    assert intrusion.status_code == 404  # not 409: that would tell the stranger the conversation exists
    assert rest[-1]["type"] == "finish" and "interrupted" not in rest[-1].get("messageMetadata", {})


async def test_a_running_answer_left_behind_by_a_crashed_process_blocks_no_one_for_long(make_settings, database_url):
    """A row in active_turns older than the total time limit (+30 s) belongs to no running answer."""
    with serving(make_settings()) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            client_id = (await client.get("/health")).headers["x-threadline-client"].split(".")[0]
            async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
                await conn.execute("INSERT INTO active_turns (conversation_id, client_id, started_at) "
                                   "VALUES (%s, %s, now() - interval '1 day')", (new_conversation_id(), client_id))
            answered = await client.post("/api/chat", json=chat_body(new_conversation_id(), "hello"))
    assert answered.status_code == 200


def _server_process(database_url: str, tmp_path, port: int) -> subprocess.Popen:
    env = {**os.environ, "CHAT_MODEL_PROVIDER": "demo", "DATABASE_URL": database_url, "THREADLINE_PORT": str(port),
           "CHAT_DEMO_TOKEN_DELAY_MS": "20", "THREADLINE_DATA_DIR": str(tmp_path), "LOG_LEVEL": "WARNING"}
    return subprocess.Popen([sys.executable, "-m", "threadline", "serve"], env=env)


async def _wait_up(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=2) as client:
        for _ in range(300):
            try:
                if (await client.get("/health")).status_code == 200:
                    return
            except httpx.TransportError:
                await asyncio.sleep(0.1)
    raise AssertionError(f"{base_url} did not start")


async def test_a_stop_request_reaches_an_answer_running_in_another_process(database_url, tmp_path):
    ports = [_free_port(), _free_port()]
    processes = [_server_process(database_url, tmp_path, port) for port in ports]  # one secret, in tmp_path
    try:
        first, second = (f"http://127.0.0.1:{port}" for port in ports)
        await asyncio.gather(_wait_up(first), _wait_up(second))
        conversation_id = new_conversation_id()
        async with httpx.AsyncClient(base_url=first, timeout=30) as a:
            identity = (await a.get("/health")).headers["x-threadline-client"]
            a.headers["x-threadline-client"] = identity
            response, chunks, shown = await stream_some(a, conversation_id, deltas=3)
            async with httpx.AsyncClient(base_url=second, timeout=30,
                                         headers={"x-threadline-client": identity}) as b:
                busy = await b.post("/api/chat", json=chat_body(new_conversation_id(), "hello"))
                stop = await b.delete(f"/api/chat/{conversation_id}/stream")
                rest = [chunk async for chunk in chunks]
                answer = await saved_answer(b, conversation_id)
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)
    assert busy.status_code == 409, "one answer at a time holds across processes"
    assert stop.status_code == 200
    assert rest[-1]["type"] == "finish" and rest[-1]["messageMetadata"]["interrupted"] == "cancelled"
    assert answer["metadata"]["interrupted"] == "cancelled" and answer["parts"][-1]["text"].startswith(shown)


async def test_a_tool_cut_off_by_a_stop_gets_an_error_result_and_the_next_turn_works():
    """A calculator that never finishes, so the stop lands while the tools node runs."""
    started = asyncio.Event()

    @tool
    async def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression (this one hangs)."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    graph = build_graph(DemoChatModel(token_delay=0), [calculator], InMemorySaver(), system_prompt="", max_model_calls=3)

    def turn(text: str) -> Turn:
        request = TurnRequest(user_message_id=new_conversation_id(), text=text, regenerate=False,
                              assistant_message_id=new_conversation_id(), model="demo:demo", created_at="now")
        return Turn(graph, "conversation", "client", request, stream_mode="messages", timeouts=Timeouts())

    async def events(running_turn: Turn) -> list:
        done = asyncio.Event()

        async def finished(_turn: Turn) -> None:
            done.set()

        running_turn.start(finished)
        await done.wait()
        return [running_turn.queue.get_nowait() for _ in range(running_turn.queue.qsize())]

    cut = turn("calculate 2+2")
    collecting = asyncio.create_task(events(cut))
    await started.wait()
    cut.stop(Stop.CANCELLED)
    first = await collecting
    second = await events(turn("count to 2"))
    tool_error = next(event for event in first if event.__class__.__name__ == "ToolOutputError")
    assert "cancelled" in tool_error.error_text
    assert second[-2].__class__.__name__ == "Finish", "the conversation is not wedged"
    state = (await graph.aget_state({"configurable": {"thread_id": "conversation"}})).values
    saved = ui_messages(state["messages"], state["turns"], "conversation")
    part = next(part for part in saved[1]["parts"] if part["type"] == "tool-calculator")
    assert part["state"] == "output-error" and "interrupted" in part["errorText"]
