"""Rating answers: set, changed, cleared, the visitor's own only, and seen in the history, seed 002 and the trace."""

from __future__ import annotations

import asyncio

import psycopg
from helpers import chat, new_conversation_id, running, saved_answer
from threadline.http.identity import COOKIE


async def test_an_answer_is_rated_changed_and_cleared_and_every_view_shows_it(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        await chat(client, conversation_id, "hello")
        answer = await saved_answer(client, conversation_id)
        path = f"/api/messages/{answer['id']}/feedback"
        up = await client.put(path, json={"rating": "up"})
        liked = await saved_answer(client, conversation_id)
        down = await client.put(path, json={"rating": "down", "comment": "  Too long.  "})
        disliked = await saved_answer(client, conversation_id)
        loaded = (await client.post("/api/load_conversation", json={"conversation_id": conversation_id})).json()
        trace = (await client.get(f"/api/trace/{answer['metadata']['traceId']}")).json()
        cleared = await client.delete(path)
        after = await saved_answer(client, conversation_id)
        cleared_again = await client.delete(path)
    assert up.status_code == 200 and up.json()["rating"] == "up" and "comment" not in up.json()
    assert liked["metadata"]["feedback"]["rating"] == "up"
    assert down.json()["rating"] == "down" and down.json()["comment"] == "Too long."
    assert disliked["metadata"]["feedback"] == down.json(), "changing it replaces it"
    assert [message["feedback"] for message in loaded["messages"]] == [None, "down"]
    assert trace["feedback"] == down.json(), "the trace shows the rating as it is now"
    assert cleared.status_code == cleared_again.status_code == 204
    assert "feedback" not in after["metadata"]


async def test_only_the_visitors_own_answers_and_only_valid_ratings(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        await chat(client, conversation_id, "hello")
        answer = await saved_answer(client, conversation_id)
        path = f"/api/messages/{answer['id']}/feedback"
        messages = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
        question = f"/api/messages/{messages[0]['id']}/feedback"
        bad_rating = await client.put(path, json={"rating": "meh"})
        long_comment = await client.put(path, json={"rating": "down", "comment": "x" * 2001})
        missing = await client.put("/api/messages/nothing-here/feedback", json={"rating": "up"})
        users_message = await client.put(question, json={"rating": "up"})
        owner = client.cookies[COOKIE]
        client.cookies.clear()
        stranger = await client.put(path, json={"rating": "down"})
        stranger_clear = await client.delete(path)
        client.cookies.set(COOKIE, owner, domain=client.base_url.host)
        untouched = await saved_answer(client, conversation_id)
    assert bad_rating.status_code == long_comment.status_code == 400
    assert bad_rating.json()["error"]["code"] == "VALIDATION_ERROR"
    not_found = {"error": {"code": "NOT_FOUND", "message": "Message not found"}}
    for response in (missing, users_message, stranger, stranger_clear):
        assert response.status_code == 404 and response.json() == not_found
    assert "feedback" not in untouched["metadata"]


async def test_an_answer_whose_trace_is_not_kept_can_still_be_rated(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings(trace_retention_days=0)) as client:
        await chat(client, conversation_id, "hello")
        await chat(client, conversation_id, "again")
        first = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"][1]
        rated = await client.put(f"/api/messages/{first['id']}/feedback", json={"rating": "up"})
        shown = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    assert rated.status_code == 200
    assert [message["metadata"].get("feedback", {}).get("rating") for message in shown] == [None, "up", None, None]


async def test_ratings_go_with_their_conversation(make_settings, database_url):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        await chat(client, conversation_id, "hello")
        answer = await saved_answer(client, conversation_id)
        await client.put(f"/api/messages/{answer['id']}/feedback", json={"rating": "up", "comment": "nice"})
        with psycopg.connect(database_url) as conn:
            [(before,)] = conn.execute("SELECT count(*) FROM feedback WHERE message_id = %s", (answer["id"],))
            [(trace_id,)] = conn.execute("SELECT trace_id FROM feedback WHERE message_id = %s", (answer["id"],))
        await client.delete(f"/api/conversations/{conversation_id}")
        with psycopg.connect(database_url) as conn:
            [(after,)] = conn.execute("SELECT count(*) FROM feedback WHERE message_id = %s", (answer["id"],))
    assert (before, after) == (1, 0)
    assert trace_id == answer["metadata"]["traceId"], "stored with the trace it belongs to"


async def test_a_nul_in_a_comment_is_a_400_not_a_database_outage(make_settings, caplog):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        await chat(client, conversation_id, "hello")
        answer = await saved_answer(client, conversation_id)
        refused = await client.put(f"/api/messages/{answer['id']}/feedback", json={"rating": "up", "comment": "a\x00"})
        health = await client.get("/health")
    assert refused.status_code == 400 and refused.json()["error"]["details"][0]["field"] == "comment"
    assert health.json()["status"] == "ok"
    assert not [record for record in caplog.records if record.levelname == "ERROR"]


async def trace_stored(database_url: str, trace_id: str) -> None:
    """Until the answer's trace is in its row: until then the trace is served live, and stored after a drop."""
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        for _ in range(200):
            stored = "SELECT FROM traces WHERE trace_id = %s AND trace IS NOT NULL"
            if await (await conn.execute(stored, (trace_id,))).fetchone() is not None:
                return
            await asyncio.sleep(0.05)
    raise AssertionError("the answer's trace was never stored")


async def test_an_answer_is_found_through_its_trace_row_alone_and_the_row_outlives_retention(
    make_settings, database_url
):
    """A rating looks up one trace row by message id: an unknown id costs that lookup, not a read of every
    conversation the visitor has; the row stays when retention drops the trace's document."""
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        for n in range(3):
            await chat(client, new_conversation_id(), f"other {n}")
        await chat(client, conversation_id, "hello")
        answer = await saved_answer(client, conversation_id)
        trace_url = f"/api/trace/{answer['metadata']['traceId']}"
        await trace_stored(database_url, answer["metadata"]["traceId"])  # after the answer's last byte
        services = client.app.state.services
        assert await services.observability.traces.drop_older_than(0.0) >= 4
        after_retention = await client.put(f"/api/messages/{answer['id']}/feedback", json={"rating": "up"})
        trace = await client.get(trace_url)
        with psycopg.connect(database_url) as conn:
            conn.execute("DELETE FROM traces WHERE message_id = %s", (answer["id"],))
        without_row = await client.put(f"/api/messages/{answer['id']}/feedback", json={"rating": "down"})
    assert after_retention.status_code == 200, "the row still names the conversation"
    assert trace.status_code == 404, "the document itself is gone"
    assert without_row.status_code == 404, "no scan of the visitor's conversations stands in for the lookup"
