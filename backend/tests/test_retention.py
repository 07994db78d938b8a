"""Conversations do not live for ever where the operator says so: those idle past CHAT_CONVERSATION_RETENTION_DAYS
go (anonymous visitors' past CHAT_ANONYMOUS_RETENTION_DAYS), with their files unless another conversation still
uses one; on PostgreSQL and in memory alike."""

from __future__ import annotations

from datetime import timedelta

import msgspec
import pytest
from helpers import chat_body, new_conversation_id, running
from test_attachments import png
from threadline.http.identity import HEADER

USER = "u" + "1" * 32  # a signed-in user's principal (http/bearer.py)


async def idle_for(services, client_id: str, conversation_id: str, days: float) -> None:
    """Make the conversation's last message `days` days old."""
    conversations = services.storage.conversations
    if services.storage.pool is None:
        turns, row = conversations.rows[(client_id, conversation_id)]
        older = msgspec.structs.replace(row, last_message_at=row.last_message_at - timedelta(days=days))
        conversations.rows[(client_id, conversation_id)] = (turns, older)
        return
    async with services.storage.pool.connection() as conn:
        await conn.execute(
            "UPDATE conversations SET last_message_at = now() - make_interval(days => %s) "
            "WHERE client_id = %s AND id = %s",
            (days, client_id, conversation_id),
        )


@pytest.mark.parametrize("backend", ["postgres", "memory"])
async def test_idle_conversations_go_with_the_files_only_they_use(make_settings, backend):
    policies = [(30.0, False), (7.0, True)]  # everyone's after 30 days, anonymous visitors' after 7
    settings = make_settings(memory_backend=backend, conversation_retention_days=30.0, anonymous_retention_days=7.0)
    async with running(settings) as client:
        services = client.app.state.services
        token = (await client.get("/health", headers={HEADER: ""})).headers[HEADER]
        visitor, anonymous = {HEADER: token}, client.app.state.signer.verify(token)
        image = {"content-type": "image/png"}
        photo = (await client.post("/api/files?filename=p.png", content=png(), headers=visitor | image)).json()
        old, recent, also_old = new_conversation_id(), new_conversation_id(), new_conversation_id()
        for conversation_id in (old, recent, also_old):
            body = chat_body(conversation_id, "look")
            body["messages"][0]["parts"].append({"type": "file", "mediaType": "image/png", "url": photo["url"]})
            assert (await client.post("/api/chat", json=body, headers=visitor)).status_code == 200
        users = new_conversation_id()
        await services.storage.conversations.touch(users, USER, "a user's")
        for conversation_id in (old, also_old):
            await idle_for(services, anonymous, conversation_id, 8)
        await idle_for(services, USER, users, 8)

        assert await services.conversation_service.expire(policies) == 2, "the anonymous visitor's two, not the user's"
        listed = [row["id"] for row in (await client.get("/api/conversations", headers=visitor)).json()]
        assert listed == [recent]
        assert (await client.get(photo["url"], headers=visitor)).status_code == 200, "a kept conversation uses it"
        assert await services.storage.conversations.get(users, USER) is not None

        await idle_for(services, anonymous, recent, 8)
        await idle_for(services, USER, users, 31)
        assert await services.conversation_service.expire(policies) == 2
        assert (await client.get(photo["url"], headers=visitor)).status_code == 404, "no conversation uses it"
        assert await services.storage.conversations.get(users, USER) is None
