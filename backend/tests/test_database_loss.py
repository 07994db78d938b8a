"""PostgreSQL stops mid-conversation: the conversation goes on in memory and is saved when it is back."""

from __future__ import annotations

import asyncio
import subprocess
import time

import httpx
import pgserver
import pytest
from helpers import chat, chat_body, last_text, new_conversation_id, running, serving, text_of
from pgserver._commands import pg_ctl
from threadline_testing import standins
from threadline_testing.sse import parse_sse


@pytest.fixture
def own_postgres(tmp_path):
    """A PostgreSQL server of this test's own (from the pgserver wheel), so it can be stopped and started."""
    server = pgserver.get_server(tmp_path / "pg", cleanup_mode="stop")
    yield server
    start(server)
    server.cleanup()


def stop(server) -> None:
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)


def start(server) -> None:
    deadline = time.monotonic() + 10
    while True:  # pg_ctl start can lose a race with the previous shutdown's cleanup: tried again until it is done
        try:
            server.ensure_postgres_running()
            return
        except subprocess.CalledProcessError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


async def wait_for(condition, seconds: float = 20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if result := await condition():
            return result
        await asyncio.sleep(0.2)
    raise AssertionError("timed out waiting")


async def test_a_conversation_survives_the_database_going_away_and_is_saved_when_it_returns(
    own_postgres, make_settings
):
    standin = standins.start("openai")  # its answers say how many user messages it was sent
    settings = make_settings(
        model_provider="openai",
        model_name="gpt-standin",
        openai_api_key="sk-test",
        openai_base_url=standin.base_url,
        database_url=own_postgres.get_uri(),
    )
    try:
        async with running(settings) as client:
            _, _, before = await chat(client, "kept", "one")
            identity = client.cookies["threadline_client"]
            ready_before = (await client.get("/health/ready")).status_code
            stop(own_postgres)
            not_ready, alive = await client.get("/health/ready"), await client.get("/health/live")
            _, _raw, during = await chat(client, "kept", "two")
            _, _, started_during = await chat(client, "begun-while-down", "three")
            unavailable = await client.get("/api/conversations/kept")
            intruder = await client.post(
                "/api/chat", json=chat_body("kept", "let me in"), headers={"x-threadline-client": "someone-else"}
            )
            client.headers["x-threadline-client"] = identity  # the intruder's answer replaced the cookie
            start(own_postgres)

            degraded = (await client.get("/health")).json()

            async def saved():
                return (await client.get("/health")).json()["unsavedConversations"] == 0

            await wait_for(saved)
            ready_again = (await client.get("/health/ready")).status_code
        async with running(settings) as fresh:  # a new process: only the database remembers
            fresh.headers["x-threadline-client"] = identity
            response = await fresh.get("/api/conversations/kept")
            assert response.status_code == 200, response.text
            kept = response.json()["messages"]
            listed = [row["id"] for row in (await fresh.get("/api/conversations")).json()]
            begun = (await fresh.get("/api/conversations/begun-while-down")).json()["messages"]
        async with running(settings) as restarted:  # has no copy of "kept": it goes on from nothing meanwhile, and
            restarted.headers["x-threadline-client"] = identity  # what it says then is saved after the history
            stop(own_postgres)
            _, _, without_history = await chat(restarted, "kept", "three")
            start(own_postgres)

            async def saved_again():
                return (await restarted.get("/health")).json()["unsavedConversations"] == 0

            await wait_for(saved_again)
            _, _, after = await chat(restarted, "kept", "four")
            whole = (await restarted.get("/api/conversations/kept")).json()["messages"]
    finally:
        standin.stop()
    assert text_of(before) == "Echo: one (user messages seen: 1)"
    assert (ready_before, not_ready.status_code, alive.status_code, ready_again) == (200, 503, 200, 200)
    assert not_ready.json() == {"status": "unavailable", "reason": "the database does not answer"}
    warnings = [chunk for chunk in during if chunk["type"] == "data-warning"]
    assert warnings and warnings[0]["data"]["code"] == "DATABASE_UNAVAILABLE" and warnings[0]["transient"]
    assert text_of(during) == "Echo: two (user messages seen: 2)", "the history was still there"
    assert during[-1]["type"] == "finish"
    assert text_of(started_during) == "Echo: three (user messages seen: 1)"
    assert degraded["status"] == "degraded" and degraded["unsavedConversations"] == 3
    assert intruder.status_code == 200, "another visitor's `kept` is their own conversation, even while it is down"
    assert unavailable.status_code == 503 and unavailable.json()["error"]["code"] == "DATABASE_ERROR"
    assert [last_text(message) for message in kept] == [
        "one",
        "Echo: one (user messages seen: 1)",
        "two",
        "Echo: two (user messages seen: 2)",
    ]
    assert "begun-while-down" in listed and len(begun) == 2
    assert text_of(without_history) == "Echo: three (user messages seen: 1)", "its history could not be read then"
    assert text_of(after) == "Echo: four (user messages seen: 4)", "the history is back, with what came meanwhile"
    assert [last_text(message) for message in whole][4:] == [
        "three",
        "Echo: three (user messages seen: 1)",
        "four",
        "Echo: four (user messages seen: 4)",
    ]
    assert [last_text(message) for message in whole][:4] == [last_text(message) for message in kept]


async def test_one_answer_per_conversation_holds_across_processes_through_a_database_restart(
    own_postgres, make_settings
):
    """An answer streams in one process while PostgreSQL restarts; the same visitor's next messages to that
    conversation reach another process. Its pooled connections are dead sessions and the running answer's row names
    a session the restart ended, yet the answer is alive: the messages are refused, and nothing is lost."""
    settings = make_settings(database_url=own_postgres.get_uri(), demo_token_delay_ms=40.0)
    with serving(settings) as first_url, serving(settings) as second_url:
        async with httpx.AsyncClient(base_url=first_url, timeout=30) as first:
            conversation_id = new_conversation_id()
            assert (await first.post("/api/chat", json=chat_body(conversation_id, "hello"))).status_code == 200
            identity = {"x-threadline-client": first.cookies["threadline_client"]}
            async with httpx.AsyncClient(base_url=second_url, timeout=30, headers=identity) as second:
                await second.get(f"/api/conversations/{conversation_id}")  # its pool's connections are from before
                streaming = asyncio.create_task(
                    first.post("/api/chat", json=chat_body(conversation_id, "count to 100"))
                )
                await asyncio.sleep(0.5)
                await asyncio.to_thread(stop, own_postgres)
                await asyncio.to_thread(start, own_postgres)
                refused = [await second.post("/api/chat", json=chat_body(conversation_id, f"me {n}")) for n in range(3)]
                answered = await streaming

                async def settled():
                    health = (await second.get("/health")).json()
                    return health["unsavedConversations"] == 0 and (await first.get("/health")).status_code == 200

                await wait_for(settled)
                history = (await second.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    assert [response.status_code for response in refused] == [409, 409, 409], [r.text for r in refused]
    assert all(response.json()["error"]["code"] == "CONFLICT" for response in refused)
    said = text_of(parse_sse(answered.content))
    assert answered.status_code == 200 and said.rstrip().endswith("100"), said[-40:]
    assert [last_text(message) for message in history] == ["hello", last_text(history[1]), "count to 100", said]
