"""History lives on the server: it survives restarts and other instances, and can be listed and deleted."""

from __future__ import annotations

from helpers import chat, new_conversation_id, running, text_of
from threadline_testing import standins


async def test_a_second_instance_continues_with_the_history(make_settings):
    standin = standins.start("openai")
    settings = make_settings(
        model_provider="openai", model_name="gpt-standin", openai_api_key="sk-test", openai_base_url=standin.base_url
    )
    conversation_id = new_conversation_id()
    try:
        async with running(settings) as first_instance:
            await chat(first_instance, conversation_id, "my name is Ada")
            identity = dict(first_instance.cookies)
        async with running(settings) as second_instance:
            second_instance.cookies.update(identity)  # the same browser, another server instance
            _, _, chunks = await chat(second_instance, conversation_id, "what is my name?")
            stored = (await second_instance.get(f"/api/conversations/{conversation_id}")).json()
    finally:
        standin.stop()
    assert "user messages seen: 2" in text_of(chunks)
    roles_sent = [message["role"] for message in standin.requests[1]["messages"]]
    assert roles_sent == ["system", "user", "assistant", "user"]
    assert standin.requests[1]["messages"][1]["content"] == "my name is Ada"
    assert [message["role"] for message in stored["messages"]] == ["user", "assistant", "user", "assistant"]


async def test_list_read_and_delete(make_settings):
    first, second = new_conversation_id(), new_conversation_id()
    async with running(make_settings()) as client:
        await chat(client, first, "the first conversation, with a title long enough to be cut somewhere near the end")
        await chat(client, second, "the second one")
        listed = (await client.get("/api/conversations")).json()
        ids = [row["id"] for row in listed]
        assert ids.index(second) < ids.index(first), "newest lastMessageAt first"
        row = next(row for row in listed if row["id"] == first)
        assert set(row) == {"id", "title", "createdAt", "lastMessageAt", "profileId", "agentId"}
        assert len(row["title"]) <= 80 and row["title"].endswith("…")

        await chat(client, first, "first again")
        listed = [row["id"] for row in (await client.get("/api/conversations")).json()]
        assert listed.index(first) < listed.index(second)

        deleted = await client.delete(f"/api/conversations/{first}")
        assert deleted.status_code == 204
        assert (await client.get(f"/api/conversations/{first}")).status_code == 404
        assert (await client.delete(f"/api/conversations/{first}")).status_code == 404
        assert first not in [row["id"] for row in (await client.get("/api/conversations")).json()]
        missing = await client.get(f"/api/conversations/{new_conversation_id()}")
        assert missing.status_code == 404
        assert missing.json() == {"error": {"code": "NOT_FOUND", "message": "Conversation not found"}}


async def test_memory_backend_keeps_history_for_the_process(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings(memory_backend="memory", database_url=None)) as client:
        await chat(client, conversation_id, "one")
        _, _, chunks = await chat(client, conversation_id, "two")
        health = (await client.get("/health")).json()
    assert "1 earlier message from you" in text_of(chunks)
    assert health["storage"].startswith("memory")


async def test_embedded_postgres_keeps_history_across_restarts(make_settings, tmp_path):
    settings = make_settings(database_url=None, data_dir=tmp_path / "embedded")
    conversation_id = new_conversation_id()
    async with running(settings) as client:
        assert "embedded PostgreSQL" in (await client.get("/health")).json()["storage"]
        await chat(client, conversation_id, "remember me")
        identity = dict(client.cookies)
    async with running(settings) as client:
        client.cookies.update(identity)
        _, _, chunks = await chat(client, conversation_id, "do you?")
    assert "1 earlier message from you" in text_of(chunks)
    assert (tmp_path / "embedded" / "postgres" / "PG_VERSION").exists()


async def test_a_conversation_is_renamed_by_its_owner_only(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        await chat(client, conversation_id, "## Plan a **trip** to [Paris](https://example.com)")
        listed = (await client.get("/api/conversations")).json()
        assert listed[0]["title"] == "Plan a trip to Paris", "a title without the Markdown"
        renamed = await client.patch(f"/api/conversations/{conversation_id}", json={"title": "  Paris\n in May "})
        assert renamed.status_code == 200 and renamed.json()["title"] == "Paris in May"
        assert (await client.get("/api/conversations")).json()[0]["title"] == "Paris in May"
        await chat(client, conversation_id, "and June?")
        assert (await client.get(f"/api/conversations/{conversation_id}")).json()["title"] == "Paris in May", "kept"
        for bad in ("", "   ", "x" * 121, "nul\u0000", "report\u202egnp.exe", "\u200b\u200b", "\u2066x\u2069"):
            refused = await client.patch(f"/api/conversations/{conversation_id}", json={"title": bad})
            assert refused.status_code == 400 and refused.json()["error"]["code"] == "VALIDATION_ERROR", bad
        client.cookies.clear()
        stranger = await client.patch(f"/api/conversations/{conversation_id}", json={"title": "mine"})
        assert stranger.status_code == 404


async def test_the_memory_backend_renames_too(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings(memory_backend="memory", database_url=None)) as client:
        await chat(client, conversation_id, "hello")
        assert (await client.patch(f"/api/conversations/{conversation_id}", json={"title": "Hi"})).json()[
            "title"
        ] == "Hi"
