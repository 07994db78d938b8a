"""Stopping an answer: a closed connection, a stop request from here or from another server process."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import httpx
import psycopg
import pytest
from helpers import chat, chat_body, last_text, new_conversation_id, saved_answer, serving, stream_some
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from msgspec.structs import replace
from threadline.agent.demo_model import DemoChatModel
from threadline.agent.graph import GraphOptions, build_graph, keep_lost_input
from threadline.answers.turn import Stop, Timeouts, Turn, TurnSetup
from threadline.conversations.closing import recover_turn
from threadline.conversations.history import ui_messages
from threadline.conversations.state import config_of, load
from threadline.observability.answers import Observability
from threadline.storage.memory.traces import MemoryTraces
from threadline.storage.threads import thread_of
from threadline_testing.database import thread_footprint
from threadline_testing.ports import free_port
from threadline_testing.processes import wait_until_up
from threadline_testing.sse import parse_sse
from threadline_testing.turns import turn_request

SLOW = {"demo_token_delay_ms": 20.0}


async def test_a_closed_connection_cancels_the_model_and_saves_the_partial_answer(make_settings):
    conversation_id = new_conversation_id()
    with serving(make_settings(**SLOW)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            response, _, shown = await stream_some(client, conversation_id, deltas=5)
            await response.aclose()  # the tab is closed
            answer = await saved_answer(client, conversation_id)
            _, _, after = await chat(client, conversation_id, "count to 3")
    assert answer["metadata"]["interrupted"] == "client-disconnected"
    saved = last_text(answer)
    assert saved.startswith(shown), "everything that was shown is kept"
    assert len(saved.split()) < 50, "the model stopped instead of running on with nobody listening"
    assert [c for c in after if c["type"] == "finish"], "the next turn works"


async def test_a_stop_request_ends_the_stream_with_finish_and_keeps_the_partial(make_settings):
    conversation_id = new_conversation_id()
    with serving(make_settings(**SLOW)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            _response, chunks, shown = await stream_some(client, conversation_id, deltas=3)
            stop = await client.post("/api/cancel_stream", json={"conversationId": conversation_id})
            rest = [chunk async for chunk in chunks]
            again = await client.delete(f"/api/chat/{conversation_id}/stream")
            unknown = await client.post("/api/cancel_stream", json={"conversationId": new_conversation_id()})
            answer = await saved_answer(client, conversation_id)
    assert stop.status_code == 200 and stop.json() == {"cancelled": True, "conversationId": conversation_id}
    assert rest[-1]["type"] == "finish" and rest[-1]["finishReason"] == "other"
    assert rest[-1]["messageMetadata"]["interrupted"] == "cancelled"
    assert "usage" not in rest[-1]["messageMetadata"], "stopped in its one model call: nothing counted"
    streamed = shown + "".join(chunk["delta"] for chunk in rest if chunk["type"] == "text-delta")
    assert last_text(answer) == streamed, "the saved answer is exactly what was streamed"
    assert answer["metadata"]["interrupted"] == "cancelled" and "usage" not in answer["metadata"], "as live"
    assert again.status_code == 409 and again.json()["error"]["code"] == "CONFLICT"
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "NOT_FOUND"


async def test_one_answer_at_a_time_per_conversation_and_a_few_per_visitor(make_settings):
    with serving(make_settings(**SLOW, answers_per_visitor=2)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            first, second = new_conversation_id(), new_conversation_id()
            # The chunk iterators are kept: one dropped closes its stream, and a closed stream stops its answer.
            running, _running_chunks, _ = await stream_some(client, first, deltas=1)
            same = await client.post("/api/chat", json=chat_body(first, "and this?"))
            other, _other_chunks, _ = await stream_some(client, second, deltas=1)  # a new chat in another tab
            third = await client.post("/api/chat", json=chat_body(new_conversation_id(), "hello"))
            await client.post("/api/cancel_stream", json={"conversationId": first})
            await running.aclose()
            after_a_stop = await client.post("/api/chat", json=chat_body(new_conversation_id(), "hello"))
            await client.post("/api/cancel_stream", json={"conversationId": second})
            await other.aclose()
    assert same.status_code == 409 and same.json()["error"]["code"] == "CONFLICT"
    assert "already streaming in this conversation" in same.json()["error"]["message"]
    assert third.status_code == 409 and third.json()["error"]["code"] == "TOO_MANY_ANSWERS"
    assert "2 answers are already streaming" in third.json()["error"]["message"]
    assert after_a_stop.status_code == 200


async def test_another_visitor_using_a_streaming_conversations_id_gets_a_conversation_of_their_own(make_settings):
    with serving(make_settings(**SLOW)) as base_url:
        async with (
            httpx.AsyncClient(base_url=base_url, timeout=30) as owner,
            httpx.AsyncClient(base_url=base_url, timeout=30) as stranger,
        ):
            conversation_id = new_conversation_id()
            _response, chunks, _ = await stream_some(owner, conversation_id, deltas=1)
            _, _, theirs = await chat(stranger, conversation_id, "hello")
            stop = await stranger.delete(f"/api/chat/{conversation_id}/stream")
            rest = [chunk async for chunk in chunks]
            owners = (await owner.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    assert theirs[-1]["type"] == "finish", "not 409: that would tell the stranger the id is in use"
    assert stop.status_code == 409, "the stranger cannot stop the owner's answer: theirs has finished"
    assert rest[-1]["type"] == "finish" and "interrupted" not in rest[-1].get("messageMetadata", {})
    assert next(last_text(message) for message in owners) == "count to 300"


def _server_process(database_url: str, tmp_path, port: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "CHAT_MODEL_PROVIDER": "demo",
        "DATABASE_URL": database_url,
        "THREADLINE_PORT": str(port),
        "CHAT_DEMO_TOKEN_DELAY_MS": "20",
        "THREADLINE_DATA_DIR": str(tmp_path),
        "LOG_LEVEL": "WARNING",
    }
    return subprocess.Popen([sys.executable, "-m", "threadline", "serve"], env=env)


@pytest.fixture
async def two_servers(database_url, tmp_path):
    """Two server processes on one database, sharing one secret (in tmp_path); their base URLs."""
    ports = [free_port(), free_port()]
    processes = [_server_process(database_url, tmp_path, port) for port in ports]
    try:
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        await asyncio.gather(*(asyncio.to_thread(wait_until_up, url, process) for url, process in zip(urls, processes)))
        yield urls
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)


@asynccontextmanager
async def one_visitor_on(first: str, second: str) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """Clients of one visitor (one identity) on two server processes."""
    async with httpx.AsyncClient(base_url=first, timeout=30) as a:
        a.headers["x-threadline-client"] = (await a.get("/health")).headers["x-threadline-client"]
        async with httpx.AsyncClient(base_url=second, timeout=30, headers=a.headers) as b:
            yield a, b


async def test_a_stop_request_reaches_an_answer_running_in_another_process(two_servers):
    conversation_id = new_conversation_id()
    async with one_visitor_on(*two_servers) as (a, b):
        _response, chunks, shown = await stream_some(a, conversation_id, deltas=3)
        busy = await b.post("/api/chat", json=chat_body(conversation_id, "hello"))
        stop = await b.delete(f"/api/chat/{conversation_id}/stream")
        rest = [chunk async for chunk in chunks]
        answer = await saved_answer(b, conversation_id)
    assert busy.status_code == 409, "one answer at a time per conversation holds across processes"
    assert stop.status_code == 200
    assert rest[-1]["type"] == "finish" and rest[-1]["messageMetadata"]["interrupted"] == "cancelled"
    assert answer["metadata"]["interrupted"] == "cancelled" and last_text(answer).startswith(shown)


async def test_a_message_another_process_refuses_counts_no_turn_and_starts_no_conversation(two_servers, database_url):
    """The conversation's turn goes to PostgreSQL with the answer's row, in one round trip, and is written only
    with it: a message refused there (its conversation busy, or the visitor's three answers running) leaves the
    conversations as they were."""
    streaming = [new_conversation_id() for _ in range(3)]  # CHAT_ANSWERS_PER_VISITOR's default
    refused_id = new_conversation_id()
    async with one_visitor_on(*two_servers) as (a, b):
        # Answers of 40 s, stopped at the end: on a busy machine they still run when the refusals are asked for.
        running = [await stream_some(a, streaming[0], deltas=1, tokens=2000)]
        busy = await b.post("/api/chat", json=chat_body(streaming[0], "and this?"))
        running += [await stream_some(a, conversation_id, deltas=1, tokens=2000) for conversation_id in streaming[1:]]
        too_many = await b.post("/api/chat", json=chat_body(refused_id, "hello"))
        client_id = b.headers["x-threadline-client"].split(".")[0]
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
            rows = await (
                await conn.execute(
                    "SELECT id, turns FROM threadline.conversations WHERE client_id = %s ORDER BY id", (client_id,)
                )
            ).fetchall()
        for conversation_id, (response, _chunks, _) in zip(streaming, running, strict=True):
            await b.delete(f"/api/chat/{conversation_id}/stream")
            await response.aclose()
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "CONFLICT"
    assert too_many.status_code == 409 and too_many.json()["error"]["code"] == "TOO_MANY_ANSWERS"
    assert rows == sorted((conversation_id, 1) for conversation_id in streaming), "one turn each, nothing else"


async def no_answer_runs(database_url: str, thread_id: str, seconds: float = 10.0) -> None:
    """Until no process holds a running answer in the thread (an answer lets go once its writes are done)."""
    deadline = time.monotonic() + seconds
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        while (await (await conn.execute(RUNNING, (thread_id,))).fetchone())[0]:
            assert time.monotonic() < deadline, "the answer never let go of its conversation"
            await asyncio.sleep(0.05)


RUNNING = "SELECT count(*) FROM active_turns WHERE thread_id = %s"


async def test_deleting_a_conversation_while_another_process_streams_its_answer_leaves_nothing(
    two_servers, database_url
):
    conversation_id = new_conversation_id()
    async with one_visitor_on(*two_servers) as (a, b):
        _response, chunks, _ = await stream_some(a, conversation_id, deltas=3)
        deleted = await b.delete(f"/api/conversations/{conversation_id}")
        rest = [chunk async for chunk in chunks]
        client_id = b.headers["x-threadline-client"].split(".")[0]
        await no_answer_runs(database_url, thread_of(client_id, conversation_id))  # its last writes are done
        gone = await b.get(f"/api/conversations/{conversation_id}")
        listed = [row["id"] for row in (await b.get("/api/conversations")).json()]
        rows, _ = await thread_footprint(database_url, thread_of(client_id, conversation_id))
        _, _, fresh = await chat(b, conversation_id, "hello again")
    assert deleted.status_code == 204
    assert rest[-1]["type"] == "finish" and rest[-1]["messageMetadata"]["interrupted"] == "cancelled"
    assert gone.status_code == 404 and conversation_id not in listed, "nothing brought it back"
    assert "0 earlier messages" in "".join(c.get("delta", "") for c in fresh), "the id starts afresh"
    assert rows == 0, "no checkpoint of it is left in the database"


class Takeover:
    """A server process to kill mid-answer (`kill -9`), then another on the same database that takes over."""

    def __init__(self, database_url: str, tmp_path) -> None:
        self.start = partial(_server_process, database_url, tmp_path)
        self.ports = [free_port(), free_port()]
        self.first, self.second = (f"http://127.0.0.1:{port}" for port in self.ports)
        self.processes: list[subprocess.Popen] = []

    async def __aenter__(self) -> Takeover:
        self.processes.append(self.start(self.ports[0]))
        await asyncio.to_thread(wait_until_up, self.first, self.processes[0])
        return self

    def kill(self) -> None:
        self.processes[0].send_signal(signal.SIGKILL)
        self.processes[0].wait(timeout=30)

    async def take_over(self, identity: str) -> httpx.AsyncClient:
        """Start the second server; a client of it for the visitor `identity`."""
        self.processes.append(self.start(self.ports[1]))
        await asyncio.to_thread(wait_until_up, self.second, self.processes[1])
        return httpx.AsyncClient(base_url=self.second, timeout=30, headers={"x-threadline-client": identity})

    async def __aexit__(self, *_) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=30)


async def identified(client: httpx.AsyncClient) -> str:
    """The visitor identity the server gives `client`, which it sends from now on."""
    identity = (await client.get("/health")).headers["x-threadline-client"]
    client.headers["x-threadline-client"] = identity
    return identity


async def test_an_answer_whose_process_is_killed_blocks_no_one_and_its_turn_is_closed(database_url, tmp_path):
    """`kill -9` mid-answer: PostgreSQL ends the dead process's session, so its running-answer row is stale
    at once; a server starting up closes the turn (marked interrupted) and the visitor can go on."""
    async with Takeover(database_url, tmp_path) as servers:
        conversation_id = new_conversation_id()
        async with httpx.AsyncClient(base_url=servers.first, timeout=30) as a:
            identity = await identified(a)
            await a.post("/api/chat", json=chat_body(conversation_id, "calculate 6*7"))
            await stream_some(a, conversation_id, deltas=3)
            servers.kill()
        async with await servers.take_over(identity) as b:
            closed = await saved_answer(b, conversation_id)
            started = time.monotonic()
            stop = await b.post("/api/cancel_stream", json={"conversationId": conversation_id})
            stop_took = time.monotonic() - started
            _, _, after = await chat(b, conversation_id, "count to 3")
            elsewhere = await b.post("/api/chat", json=chat_body(new_conversation_id(), "hello"))
            history = (await b.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    assert closed["metadata"]["interrupted"] == "server-stopped", "the dead answer's turn is closed"
    assert stop.status_code == 409 and stop_took < 5, "no stop is reported for an answer that is not running"
    assert after[-1]["type"] == "finish" and elsewhere.status_code == 200, "the visitor is not locked out"
    assert [message["role"] for message in history] == ["user", "assistant"] * 3
    assert "42" in last_text(history[1]), "finished turns before the kill are kept"


async def test_the_question_of_an_answer_killed_before_any_checkpoint_held_it_is_kept(database_url, tmp_path):
    """LangGraph writes checkpoints while the answer streams, so a process can die after the first token and before
    the step that took the question in was written. A lock on the checkpoints table holds the dead process's writes
    back here; the question, recorded with the answer's row, is kept all the same when its turn is closed."""
    async with Takeover(database_url, tmp_path) as servers:
        conversation_id = new_conversation_id()
        async with httpx.AsyncClient(base_url=servers.first, timeout=30) as a:
            identity = await identified(a)
            async with await psycopg.AsyncConnection.connect(database_url) as holder:
                await holder.execute("LOCK TABLE threadline.checkpoints IN SHARE ROW EXCLUSIVE MODE")  # reads go on
                await stream_some(a, conversation_id, deltas=3)
                servers.kill()
        async with await servers.take_over(identity) as b:
            closed = await saved_answer(b, conversation_id)
            history = (await b.get(f"/api/conversations/{conversation_id}")).json()["messages"]
            _, _, after = await chat(b, conversation_id, "and now?")
    assert closed["metadata"]["interrupted"] == "server-stopped"
    assert [message["role"] for message in history] == ["user", "assistant"]
    assert last_text(history[0]) == "count to 300"
    assert "I can see 1 earlier message" in "".join(chunk.get("delta", "") for chunk in after), "the model sees it too"


async def test_a_lost_question_regeneration_or_edit_is_taken_in_as_the_input_node_would_have():
    """What the dead answer's row kept, for each kind of turn: the turn is then closed as interrupted."""
    graph = build_graph(
        DemoChatModel(token_delay=0), [], InMemorySaver(), GraphOptions(system_prompt="", max_model_calls=3)
    )

    async def lost(request) -> list[dict]:
        await keep_lost_input(graph, "lost", request.graph_input())
        await recover_turn(graph, "lost", "server-stopped")
        return ui_messages(await load(graph, "lost"), "lost")

    first = turn_request("first question")
    await graph.ainvoke({"request": first.graph_input()}, config_of("lost"))
    question = turn_request("second question")
    asked = await lost(question)
    regenerated = await lost(
        replace(turn_request("second question", regenerate=True), user_message_id=question.user_message_id)
    )
    edit = replace(turn_request("first, edited"), user_message_id=first.user_message_id, edit=True)
    edited = await lost(edit)
    again = await lost(edit)  # a checkpoint that holds the turn is left as it is

    assert [last_text(message) for message in asked[::2]] == ["first question", "second question"]
    assert asked[3]["metadata"]["interrupted"] == "server-stopped" and asked[3]["id"] == question.assistant_message_id
    assert regenerated[3]["metadata"]["versions"] == 2 and regenerated[3]["metadata"]["interrupted"] == "server-stopped"
    assert [message["role"] for message in edited] == ["user", "assistant"]
    assert last_text(edited[0]) == "first, edited" and edited[0]["metadata"]["versions"] == 2
    assert edited[1]["metadata"]["interrupted"] == "server-stopped" and again == edited


async def test_a_tool_cut_off_by_a_stop_gets_an_error_result_and_the_next_turn_works(caplog):
    """A calculator that never finishes, so the stop lands while the tools node runs."""
    started = asyncio.Event()

    @tool
    async def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression (this one hangs)."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    strict = InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=None))  # what LangGraph will enforce
    graph = build_graph(
        DemoChatModel(token_delay=0), [calculator], strict, GraphOptions(system_prompt="", max_model_calls=3)
    )

    def turn(text: str) -> Turn:
        return Turn(
            graph,
            "conversation",
            "conversation",
            "client",
            turn_request(text),
            TurnSetup("messages", Timeouts(), Observability(MemoryTraces())),
        )

    async def events(running_turn: Turn) -> list:
        done = asyncio.Event()

        async def finished(_turn: Turn) -> None:
            done.set()

        running_turn.start(finished)
        await done.wait()
        return await running_turn.outbox.take()

    cut = turn("calculate 2+2")
    collecting = asyncio.create_task(events(cut))
    await started.wait()
    cut.stop(Stop.CANCELLED)
    first = await collecting
    second = await events(turn("count to 2"))
    tool_error = next(event for event in first if event.__class__.__name__ == "ToolOutputError")
    assert "cancelled" in tool_error.error_text
    assert second[-2].__class__.__name__ == "Finish", "the conversation is not wedged"
    saved = ui_messages(await load(graph, "conversation"), "conversation")
    part = next(part for part in saved[1]["parts"] if part["type"] == "tool-calculator")
    assert part["state"] == "output-error" and "interrupted" in part["errorText"]
    assert saved[1]["metadata"]["interrupted"] == "cancelled"
    assert not [record for record in caplog.records if "threadline" in record.getMessage()], (
        "the checkpoint holds plain data only, which LangGraph's strict deserializing loads"
    )


async def test_rollback_across_processes_removes_only_an_answer_it_cut_short(two_servers):
    """Four messages at once with `multitaskStrategy: "rollback"`, alternating between two processes: each
    may stop the one before it, but an answer delivered in full is never removed, and nothing fails."""
    conversation_id = new_conversation_id()
    async with one_visitor_on(*two_servers) as (a, b):
        _, _, first = await chat(a, conversation_id, "count to 3")

        async def send(client: httpx.AsyncClient, text: str) -> tuple[int, list[dict]]:
            body = chat_body(conversation_id, text, multitaskStrategy="rollback")
            response = await client.post("/api/chat", json=body)
            return response.status_code, parse_sse(response.content) if response.status_code == 200 else []

        sent = await asyncio.gather(*(send((a, b)[n % 2], f"count to {10 + n}") for n in range(4)))
        history = (await b.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    assert {status for status, _ in sent} <= {200, 409}, sent
    kept = {message["id"] for message in history}
    delivered = [first] + [chunks for status, chunks in sent if status == 200]
    for chunks in delivered:
        if chunks[-1]["type"] == "finish" and "interrupted" not in chunks[-1]["messageMetadata"]:
            assert chunks[0]["messageId"] in kept, "an answer delivered in full stays"
