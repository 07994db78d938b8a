"""A new conversation's title is written by its model after the first answer: a small call beside the answer,
sent as a `data-title` part before the answer ends, stored for the list, and never over a title the person
gave; the demo model writes a deterministic one."""

from __future__ import annotations

import pytest
from helpers import chat_body, new_conversation_id, on_backend, running, serving
from test_attachments import visitor
from threadline.client import Client
from threadline_testing import standins
from threadline_testing.ai_sdk import read_with_ai
from threadline_testing.sse import parse_sse


async def title_of(client, me, conversation_id: str) -> str:
    listed = (await client.get("/api/conversations", headers=me)).json()
    return next(row["title"] for row in listed if row["id"] == conversation_id)


@pytest.mark.parametrize("backend", ["postgres", "memory"])
async def test_the_first_answer_brings_a_title_which_is_stored(make_settings, backend):
    async with running(on_backend(make_settings, backend, generated_titles=True)) as client:
        me = await visitor(client)
        conversation_id = new_conversation_id()
        body = chat_body(conversation_id, "Tell me about **Granny Smith** apples, please?")
        response = await client.post("/api/chat", json=body, headers=me)
        chunks = parse_sse(response.content)
        titles = [chunk for chunk in chunks if chunk["type"] == "data-title"]
        title = {"type": "title", "title": "Granny Smith apples please"}
        assert titles == [{"type": "data-title", "data": title, "transient": True}]
        assert [chunk["type"] for chunk in chunks][-1] == "finish"
        assert await title_of(client, me, conversation_id) == "Granny Smith apples please"
        assert read_with_ai(response.content)["errors"] == []

        # Later answers leave the title alone, and so does the model after the person renamed it.
        second = await client.post("/api/chat", json=chat_body(conversation_id, "and pears?"), headers=me)
        assert not [chunk for chunk in parse_sse(second.content) if chunk["type"] == "data-title"]
        await client.patch(f"/api/conversations/{conversation_id}", json={"title": "Fruit"}, headers=me)
        conversations = client.app.state.services.conversations
        owner = await owner_of(conversations, conversation_id)
        assert not await conversations.name(conversation_id, owner, "Other", "Granny Smith apples please")
        assert await conversations.name(conversation_id, owner, "Orchard", "Fruit")
        assert await title_of(client, me, conversation_id) == "Orchard"
        found = (await client.get("/api/conversations?q=granny", headers=me)).json()
        assert [row["id"] for row in found] == [conversation_id]  # the first words still find it


async def owner_of(conversations, conversation_id: str) -> str:
    """Whose conversation it is, as the store keys it (the visitor's id is not in what the client holds)."""
    if hasattr(conversations, "rows"):
        return next(owner for owner, id_ in conversations.rows if id_ == conversation_id)
    async with conversations.pool.connection() as conn:
        row = await (
            await conn.execute("SELECT client_id FROM conversations WHERE id = %s", (conversation_id,))
        ).fetchone()
    return row["client_id"]


async def test_without_generated_titles_the_first_words_stay(make_settings):
    async with running(make_settings(generated_titles=False)) as client:
        me = await visitor(client)
        conversation_id = new_conversation_id()
        response = await client.post("/api/chat", json=chat_body(conversation_id, "Tell me about apples"), headers=me)
        assert not [chunk for chunk in parse_sse(response.content) if chunk["type"] == "data-title"]
        assert await title_of(client, me, conversation_id) == "Tell me about apples"


def test_a_provider_writes_the_title_with_one_call_kept_out_of_the_answer(make_settings):
    """Through langchain-openai against the stand-in: the title request is a call of its own, not streamed."""
    standin = standins.start("openai")
    try:
        settings = make_settings(
            generated_titles=True,
            model_provider="openai",
            model_name="gpt-standin",
            openai_api_key="sk-test",
            openai_base_url=standin.base_url,
        )
        with serving(settings) as base_url, Client(base_url, wire="sse") as client:
            answer = client.ask("hello there")
            assert "Write a title" not in answer.text
            asked = [request for request in standin.requests if "Write a title for this chat." in str(request)]
            assert len(asked) == 1 and asked[0].get("stream") in (None, False)
            listed = list(client.conversations())
            assert listed[0].title == standins.TITLE
    finally:
        standin.stop()
