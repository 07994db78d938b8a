"""GET /api/conversations searches the visitor's conversations (titles, questions and answers; PostgreSQL's
full-text index, or a simple match in memory) and pages through them by last activity with a cursor."""

from __future__ import annotations

import base64
import re
import uuid

import psycopg
import pytest
from helpers import chat_body, new_conversation_id, on_backend, running, serving
from test_attachments import visitor
from threadline.client import Client


async def start(client, me, text: str) -> str:
    conversation_id = new_conversation_id()
    response = await client.post("/api/chat", json=chat_body(conversation_id, text), headers=me)
    assert response.status_code == 200, response.text
    return conversation_id


async def listed(client, me, url: str = "/api/conversations", **params) -> tuple[list[str], str | None]:
    """The ids of one page, and the next page's URL from the Link header."""
    response = await client.get(url, params=params or None, headers=me)
    assert response.status_code == 200, response.text
    link = re.fullmatch(r'<([^>]+)>; rel="next"', response.headers.get("link", ""))
    return [row["id"] for row in response.json()], link.group(1) if link else None


@pytest.mark.parametrize("backend", ["postgres", "memory"])
async def test_search_finds_questions_answers_and_titles_of_ones_own_conversations(make_settings, backend):
    async with running(on_backend(make_settings, backend)) as client:
        me, other = await visitor(client), await visitor(client)
        apples = await start(client, me, "Tell me about Granny Smith apples")
        pears = await start(client, me, "Tell me about Conference pears")
        tools = await start(client, me, "calculate (17 * 23) + 4")
        await start(client, other, "Tell me about apples too")

        assert (await listed(client, me, q="apples"))[0] == [apples]
        assert (await listed(client, me, q="gran"))[0] == [apples]  # the beginning of a word
        assert (await listed(client, me, q="TELL me"))[0] == [pears, apples]  # every word, newest first
        assert (await listed(client, me, q="tell apples"))[0] == [apples]
        assert (await listed(client, me, q="395"))[0] == [tools]  # the answer's words (17 * 23 + 4)
        assert (await listed(client, me, q="scripted"))[0] == [pears, apples]  # the demo model's answers
        assert (await listed(client, me, q="bananas"))[0] == []
        assert (await listed(client, me, q="?!"))[0] == []  # no words at all: nothing matches

        renamed = await client.patch(f"/api/conversations/{pears}", json={"title": "Orchard notes"}, headers=me)
        assert renamed.status_code == 200
        assert (await listed(client, me, q="orchard"))[0] == [pears]
        assert (await listed(client, other, q="tell"))[0] != [pears, apples]  # another visitor sees only theirs
        assert apples not in (await listed(client, other, q="apples"))[0]


@pytest.mark.parametrize("backend", ["postgres", "memory"])
async def test_pages_follow_last_activity_with_a_cursor(make_settings, backend):
    async with running(on_backend(make_settings, backend)) as client:
        me = await visitor(client)
        made = [await start(client, me, f"note number {n}") for n in range(7)]
        newest_first = made[::-1]

        first, following = await listed(client, me, limit=3)
        assert first == newest_first[:3] and following is not None
        second, following = await listed(client, me, following)
        assert second == newest_first[3:6] and following is not None
        assert await listed(client, me, following) == (newest_first[6:], None)

        # A search is paged the same way, and a conversation that moves on goes to the top.
        await client.post("/api/chat", json=chat_body(made[0], "number again"), headers=me)
        page, following = await listed(client, me, q="number", limit=4)
        assert page == [made[0], *newest_first[:3]] and following is not None
        assert (await client.get(following, headers=me)).json()[0]["id"] == newest_first[3]


async def test_bad_list_requests_are_refused(make_settings):
    async with running(make_settings()) as client:
        me = await visitor(client)
        forged = base64.urlsafe_b64encode(b"2026-11-25T10:00:00+00:00|t\x00x").decode()  # a NUL in the id
        bad = ({"limit": 0}, {"limit": 101}, {"limit": "x"}, {"cursor": "not-a-cursor"}, {"cursor": forged})
        for params in (*bad, {"q": "x" * 201}):
            response = await client.get("/api/conversations", params=params, headers=me)
            assert response.status_code == 400, (params, response.text)
            assert response.json()["error"]["code"] == "VALIDATION_ERROR"
        assert (await client.get("/api/conversations", params={"q": "a\x00b"}, headers=me)).status_code == 400


async def test_a_search_over_many_conversations_uses_the_index(make_settings, database_url):
    """Not timed, and not the planner's choice (bench/search_bench.py shows both for 10,000 conversations of
    one visitor): the search condition has the shape the GIN index answers."""
    async with running(make_settings()):
        owner = f"search-{uuid.uuid4().hex[:8]}"
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
            await conn.execute(
                "INSERT INTO conversations (client_id, id, title, words) "
                "SELECT %s, 'c' || n, 'Conversation ' || n, to_tsvector('simple', 'words ' || md5(n::text)) "
                "FROM generate_series(1, 3000) AS n",
                (owner,),
            )
            await conn.execute("ANALYZE conversations")
            await conn.execute("SET enable_seqscan = off")  # a table this small is cheaper to scan
            rows = await (
                await conn.execute(
                    "EXPLAIN SELECT id FROM conversations WHERE words @@ to_tsquery('simple', %s)",
                    ("'c4ca4238':*",),
                )
            ).fetchall()
        plan = "\n".join(row[0] for row in rows)
        assert "conversations_words" in plan, plan


def test_the_python_client_iterates_over_pages_and_searches(make_settings):
    with serving(make_settings()) as base_url, Client(base_url) as client:
        made = [client.ask(f"count to 1, note {n}").conversation_id for n in range(5)]
        client.ask("count to 1 about walruses")
        listed = [conversation.id for conversation in client.conversations(page_size=2)]
        assert listed[1:] == made[::-1] and len(listed) == 6
        assert [c.title for c in client.conversations("walrus")] == ["count to 1 about walruses"]
