"""Anonymous visitors own their conversations; nobody else can list, read, continue or delete them."""

from __future__ import annotations

import pytest
from helpers import chat, chat_body, last_text, new_conversation_id, running
from threadline.http.identity import COOKIE, HEADER


def as_visitor(client, token: str | None) -> None:
    client.cookies.clear()
    if token:
        client.cookies.set(COOKIE, token, domain=client.base_url.host)


async def test_each_visitor_sees_only_their_own_conversations(make_settings):
    alice_chat, bob_chat = new_conversation_id(), new_conversation_id()
    async with running(make_settings()) as client:
        response, _, _ = await chat(client, alice_chat, "alice here")
        alice = client.cookies[COOKIE]
        assert response.headers[HEADER] == alice
        set_cookie = response.headers["set-cookie"]
        assert "HttpOnly" in set_cookie and "SameSite=Lax" in set_cookie and "Max-Age=" in set_cookie
        assert "Secure" not in set_cookie, "plain HTTP on loopback"

        as_visitor(client, None)
        await chat(client, bob_chat, "bob here")
        bob = client.cookies[COOKIE]
        assert bob != alice

        assert [row["id"] for row in (await client.get("/api/conversations")).json()] == [bob_chat]
        as_visitor(client, alice)
        listed = await client.get("/api/conversations")
        assert [row["id"] for row in listed.json()] == [alice_chat]
        assert "set-cookie" not in listed.headers, "a valid identity is kept, not reissued"

        as_visitor(client, bob)
        assert (await client.get(f"/api/conversations/{bob_chat}")).status_code == 200
        assert (await client.post("/api/chat", json=chat_body(bob_chat, "bob again"))).status_code == 200


@pytest.mark.parametrize("route", ["read", "regenerate", "delete"])
async def test_someone_elses_conversation_is_404_like_a_missing_one(make_settings, route):
    theirs = new_conversation_id()
    async with running(make_settings()) as client:
        await chat(client, theirs, "private matter")
        owner = client.cookies[COOKIE]
        as_visitor(client, None)
        answers = []
        for conversation_id in (theirs, new_conversation_id()):
            if route == "read":
                response = await client.get(f"/api/conversations/{conversation_id}")
            elif route == "delete":
                response = await client.delete(f"/api/conversations/{conversation_id}")
            elif route == "regenerate":
                response = await client.post(
                    "/api/chat", json=chat_body(conversation_id, "private matter", trigger="regenerate-message")
                )
            answers.append((response.status_code, response.json()))
        as_visitor(client, owner)
        stored = (await client.get(f"/api/conversations/{theirs}")).json()

    assert answers[0] == (404, {"error": {"code": "NOT_FOUND", "message": "Conversation not found"}})
    assert all(answer == answers[0] for answer in answers), "ids cannot be probed"
    assert [message["role"] for message in stored["messages"]] == ["user", "assistant"], "nothing was changed"


async def test_conversation_ids_are_scoped_per_visitor(make_settings):
    """Two visitors' `my-first-chat` are two conversations: an id can be neither claimed nor probed."""
    async with running(make_settings()) as client:
        await chat(client, "my-first-chat", "private matter")
        owner = client.cookies[COOKIE]
        as_visitor(client, None)
        _, _, second = await chat(client, "my-first-chat", "let me in")
        stranger = client.cookies[COOKIE]
        search = await client.post("/api/chat", json=chat_body("my-first-chat", "search this conversation for private"))
        strangers = (await client.get("/api/conversations/my-first-chat")).json()
        as_visitor(client, owner)
        owners = (await client.get("/api/conversations/my-first-chat")).json()
        listed = [row["title"] for row in (await client.get("/api/conversations")).json()]
    assert stranger != owner and second[-1]["type"] == "finish"
    assert "private matter" not in search.text, "the tools search the visitor's own conversation only"
    assert [last_text(m) for m in strangers["messages"] if m["role"] == "user"] == [
        "let me in",
        "search this conversation for private",
    ]
    assert [last_text(m) for m in owners["messages"] if m["role"] == "user"] == ["private matter"]
    assert strangers["title"] == "let me in" and listed == ["private matter"]


async def test_a_forged_or_tampered_cookie_is_replaced(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        await chat(client, conversation_id, "mine")
        genuine = client.cookies[COOKIE]
        client_id, _, signature = genuine.partition(".")
        for forged in (f"{client_id}.{signature[:-2]}xx", f"{client_id}", "someone-else.c2lnbmF0dXJl", "garbage"):
            as_visitor(client, forged)
            response = await client.get("/api/conversations")
            assert response.json() == []
            issued = client.cookies[COOKIE]
            assert issued != forged and issued.partition(".")[0] != client_id


async def test_programs_can_use_the_header_instead_of_cookies(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        first = await client.get("/health")
        token = first.headers[HEADER]
        client.cookies.clear()
        headers = {HEADER: token}
        response = await client.post("/api/chat", json=chat_body(conversation_id, "from a script"), headers=headers)
        assert response.status_code == 200 and HEADER not in response.headers
        client.cookies.clear()
        listed = await client.get("/api/conversations", headers=headers)
    assert [row["id"] for row in listed.json()] == [conversation_id]


async def test_identities_survive_a_restart(make_settings):
    settings = make_settings()
    conversation_id = new_conversation_id()
    async with running(settings) as client:
        await chat(client, conversation_id, "before the restart")
        token = client.cookies[COOKIE]
    async with running(settings) as client:  # same data directory, so the same generated secret
        as_visitor(client, token)
        listed = await client.get("/api/conversations")
    assert [row["id"] for row in listed.json()] == [conversation_id]
    assert (settings.storage.data_dir / "client-id-secret").stat().st_mode & 0o777 == 0o600


async def test_cors_preflight_only_for_listed_origins(make_settings):
    async with running(make_settings(cors_origins=("http://localhost:3000",))) as client:
        allowed = await client.options(
            "/api/chat",
            headers={
                "origin": "http://localhost:3000",
                "access-control-request-method": "POST",
                "access-control-request-headers": "content-type",
            },
        )
        other = await client.options(
            "/api/chat", headers={"origin": "http://evil.example", "access-control-request-method": "POST"}
        )
        simple = await client.get("/api/conversations", headers={"origin": "http://evil.example"})
    assert allowed.status_code in (200, 204)
    assert allowed.headers["access-control-allow-origin"] == "http://localhost:3000"
    assert allowed.headers["access-control-allow-credentials"] == "true"
    assert "access-control-allow-origin" not in other.headers
    assert other.status_code >= 400
    assert "access-control-allow-origin" not in simple.headers


async def test_without_cors_origins_there_are_no_cors_headers(make_settings):
    async with running(make_settings()) as client:
        response = await client.get("/api/conversations", headers={"origin": "http://localhost:3000"})
    assert "access-control-allow-origin" not in response.headers
