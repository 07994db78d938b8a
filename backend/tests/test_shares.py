"""Read-only links: the owner shares a snapshot; anyone with the link reads it (and the files it shows) but
cannot continue, list or find the conversation; sharing again updates the same link; revoking or deleting the
conversation makes it 404; another visitor's conversation cannot be shared, read or revoked."""

from __future__ import annotations

import base64

import httpx
import pytest
from helpers import new_conversation_id, on_backend, running, serving
from test_attachments import file_part, png, visitor, with_files
from threadline.client import Client, ThreadlineError


async def say(client, me, conversation_id: str, text: str, *parts: dict) -> None:
    response = await client.post("/api/chat", json=with_files(conversation_id, text, *parts), headers=me)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("backend", ["postgres", "memory"])
async def test_a_link_shows_a_snapshot_to_anyone_until_it_is_revoked(make_settings, backend):
    settings = on_backend(make_settings, backend)
    async with running(settings) as client:
        owner, stranger = await visitor(client), await visitor(client)
        conversation_id = new_conversation_id()
        image = png(width=9, color="blue")  # bytes of its own: test_attachments counts stored blue 8×8 PNGs
        await say(client, owner, conversation_id, "what is this?", file_part(image, "image/png", "blue.png"))
        history = (await client.get(f"/api/conversations/{conversation_id}", headers=owner)).json()["messages"]
        answer_id = history[1]["id"]
        await client.put(f"/api/messages/{answer_id}/feedback", json={"rating": "up"}, headers=owner)

        share_path = f"/api/conversations/{conversation_id}/share"
        assert (await client.get(share_path, headers=owner)).status_code == 204, "not shared yet: no error"
        assert (await client.get(share_path, headers=stranger)).status_code == 404, "another's: not found"
        shared = await client.post(share_path, headers=owner)
        assert shared.status_code == 201, shared.text
        link = shared.json()
        assert link["url"] == f"/share/{link['id']}" and len(link["id"]) == 24
        assert (await client.get(f"/api/conversations/{conversation_id}/share", headers=owner)).json() == link

        seen = await client.get(f"/api/shared/{link['id']}", headers=stranger)
        assert seen.status_code == 200 and seen.headers["x-robots-tag"] == "noindex, nofollow"
        body = seen.json()
        assert body["title"] == "what is this?"
        assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
        for message in body["messages"]:  # nothing that is the owner's alone
            assert not {"conversationId", "traceId", "feedback"} & set(message["metadata"])
        picture = next(part for part in body["messages"][0]["parts"] if part["type"] == "file")
        assert picture["url"].startswith(f"/api/shared/{link['id']}/files/")
        served = await client.get(picture["url"], headers=stranger)
        assert served.status_code == 200 and served.content == image
        other_file = picture["url"].rsplit("/", 1)[0] + "/" + "0" * 32
        assert (await client.get(other_file, headers=stranger)).status_code == 404

        # The stranger cannot read, find or continue the owner's conversation, nor touch its link: the id is
        # theirs to use for a conversation of their own.
        assert (await client.get(f"/api/conversations/{conversation_id}", headers=stranger)).status_code == 404
        assert (await client.get("/api/conversations?q=blue", headers=stranger)).json() == []
        for method in ("get", "delete"):
            response = await client.request(method, f"/api/conversations/{conversation_id}/share", headers=stranger)
            assert response.status_code == 404
        assert (await client.post(f"/api/conversations/{conversation_id}/share", headers=stranger)).status_code == 404

        # The snapshot stays as it was; sharing again updates it under the same link.
        await say(client, owner, conversation_id, "and now?")
        assert len((await client.get(f"/api/shared/{link['id']}")).json()["messages"]) == 2
        again = (await client.post(f"/api/conversations/{conversation_id}/share", headers=owner)).json()
        assert again["id"] == link["id"]
        assert len((await client.get(f"/api/shared/{link['id']}")).json()["messages"]) == 4

        assert (await client.delete(f"/api/conversations/{conversation_id}/share", headers=owner)).status_code == 204
        assert (await client.get(f"/api/shared/{link['id']}")).status_code == 404
        assert (await client.get(picture["url"])).status_code == 404
        assert (await client.delete(f"/api/conversations/{conversation_id}/share", headers=owner)).status_code == 404


async def test_deleting_the_conversation_deletes_its_link_and_bad_ids_are_refused(make_settings):
    async with running(make_settings()) as client:
        owner = await visitor(client)
        conversation_id = new_conversation_id()
        await say(client, owner, conversation_id, "hello")
        link = (await client.post(f"/api/conversations/{conversation_id}/share", headers=owner)).json()
        assert (await client.delete(f"/api/conversations/{conversation_id}", headers=owner)).status_code == 204
        assert (await client.get(f"/api/shared/{link['id']}")).status_code == 404
        missing = await client.post(f"/api/conversations/{new_conversation_id()}/share", headers=owner)
        assert missing.status_code == 404
        for bad in ("short", "x" * 25, "a/b", base64.b64encode(b"\x00" * 18).decode()):
            assert (await client.get(f"/api/shared/{bad}")).status_code in (400, 404)
        guess = "A" * 24
        assert (await client.get(f"/api/shared/{guess}")).status_code == 404


async def test_a_link_opens_for_anyone_on_a_server_that_denies_anonymous_visitors(make_settings):
    async with running(make_settings()) as client:
        owner = await visitor(client)
        conversation_id = new_conversation_id()
        await say(client, owner, conversation_id, "hello")
        link = (await client.post(f"/api/conversations/{conversation_id}/share", headers=owner)).json()
    async with running(make_settings(auth_anonymous="deny", auth_issuer="https://issuer.invalid")) as client:
        assert (await client.get("/api/conversations")).status_code == 401
        assert (await client.get(f"/api/shared/{link['id']}")).status_code == 200


def test_the_python_client_shares_and_stops_sharing(make_settings):
    with serving(make_settings()) as base_url, Client(base_url) as client:
        answer = client.ask("hello")
        link = client.share(answer.conversation_id)
        assert link["url"] == f"/share/{link['id']}"
        assert httpx.get(f"{base_url}/api/shared/{link['id']}").json()["title"] == "hello"
        client.stop_sharing(answer.conversation_id)
        assert httpx.get(f"{base_url}/api/shared/{link['id']}").status_code == 404
        with pytest.raises(ThreadlineError) as refused:
            client.stop_sharing(answer.conversation_id)
        assert refused.value.status == 404
