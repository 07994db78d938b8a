"""Edits and regenerated answers keep what they replace as versions: an edit answers from the checkpoint before
the edited message, a regenerated answer keeps the earlier one, and POST /api/conversations/{id}/versions
switches the branch shown, which history, feedback and the seed wires follow, across a restart."""

from __future__ import annotations

import httpx
import pytest
from helpers import chat_body, new_conversation_id, on_backend, running, saved_answer, serving, stream_some, text_of
from test_attachments import visitor
from threadline.client import Client, ThreadlineError
from threadline.http.identity import HEADER
from threadline_testing.ai_sdk import edit_with_chat
from threadline_testing.sse import parse_sse


async def say(client, me, conversation_id: str, text: str, **extra) -> dict:
    """Send a message (or an edit, with messageId) and return the request's body."""
    body = chat_body(conversation_id, text, **extra)
    if "messageId" in extra:
        body["messages"][0]["id"] = extra["messageId"]
    response = await client.post("/api/chat", json=body, headers=me)
    assert response.status_code == 200, response.text
    return parse_sse(response.content)


async def history(client, me, conversation_id: str) -> list[dict]:
    response = await client.get(f"/api/conversations/{conversation_id}", headers=me)
    assert response.status_code == 200, response.text
    return response.json()["messages"]


def said(messages: list[dict]) -> list[str]:
    """The user messages' texts, in order."""
    return [part["text"] for m in messages if m["role"] == "user" for part in m["parts"] if part["type"] == "text"]


def numbers(messages: list[dict]) -> list[tuple[str, int, int]]:
    """(role, version, versions) of each message with versions."""
    return [
        (m["role"], m["metadata"]["version"], m["metadata"]["versions"])
        for m in messages
        if "versions" in m["metadata"]
    ]


async def show(client, me, conversation_id: str, message_id: str, version: int):
    return await client.post(
        f"/api/conversations/{conversation_id}/versions", json={"messageId": message_id, "version": version}, headers=me
    )


@pytest.mark.parametrize("backend", ["postgres", "memory"])
async def test_an_edit_answers_from_before_the_edited_message_and_keeps_the_old_branch(make_settings, backend):
    settings = on_backend(make_settings, backend)
    async with running(settings) as client:
        me = await visitor(client)
        conversation_id = new_conversation_id()
        for text in ("one", "two", "three"):
            await say(client, me, conversation_id, text)
        second = (await history(client, me, conversation_id))[2]
        assert said([second]) == ["two"]

        answer = text_of(await say(client, me, conversation_id, "two, edited", messageId=second["id"]))
        assert "You said: \u201ctwo, edited\u201d" in answer and "I can see 1 earlier message " in answer
        messages = await history(client, me, conversation_id)
        assert said(messages) == ["one", "two, edited"]
        assert numbers(messages) == [("user", 2, 2)]
        assert messages[2]["id"] == second["id"]  # useChat's edit keeps the message's id

        shown = await show(client, me, conversation_id, second["id"], 1)
        assert shown.status_code == 200, shown.text
        assert said(shown.json()["messages"]) == ["one", "two", "three"]
        assert numbers(shown.json()["messages"]) == [("user", 1, 2)]
        assert said(await history(client, me, conversation_id)) == ["one", "two", "three"]

        # A message sent on the first branch goes on from it; the second branch is still there.
        await say(client, me, conversation_id, "four")
        assert said(await history(client, me, conversation_id)) == ["one", "two", "three", "four"]
        back = await show(client, me, conversation_id, second["id"], 2)
        assert said(back.json()["messages"]) == ["one", "two, edited"]
        again = await show(client, me, conversation_id, second["id"], 1)
        assert said(again.json()["messages"]) == ["one", "two", "three", "four"]

        first = (await history(client, me, conversation_id))[0]
        await say(client, me, conversation_id, "uno", messageId=first["id"])
        detail = (await client.get(f"/api/conversations/{conversation_id}", headers=me)).json()
        assert detail["title"] == "uno", "a title taken from the first message follows its edit (and a link shows it)"


async def test_regenerated_answers_are_versions_and_survive_a_restart(make_settings):
    settings = make_settings()
    conversation_id = new_conversation_id()
    async with running(settings) as client:
        me = await visitor(client)
        await say(client, me, conversation_id, "hello")
        first = (await history(client, me, conversation_id))[1]["id"]
        for _ in range(2):
            await say(client, me, conversation_id, "", trigger="regenerate-message", messageId=first)
        messages = await history(client, me, conversation_id)
        third = messages[1]["id"]
        assert len(messages) == 2 and third != first and numbers(messages) == [("assistant", 3, 3)]
        rated = await client.put(f"/api/messages/{third}/feedback", json={"rating": "up"}, headers=me)
        assert rated.status_code in (200, 201), rated.text
        # A hidden version cannot be rated: feedback follows the branch shown.
        hidden = await client.put(f"/api/messages/{first}/feedback", json={"rating": "up"}, headers=me)
        assert hidden.status_code == 404

    async with running(settings) as client:  # a new process on the same database
        shown = await show(client, me, conversation_id, third, 1)
        assert shown.status_code == 200, shown.text
        messages = shown.json()["messages"]
        assert messages[1]["id"] == first and numbers(messages) == [("assistant", 1, 3)]
        assert "feedback" not in messages[1]["metadata"]
        # Regenerating the answer shown adds a version and keeps the others.
        await say(client, me, conversation_id, "", trigger="regenerate-message", messageId=first)
        messages = await history(client, me, conversation_id)
        assert numbers(messages) == [("assistant", 4, 4)]
        rated = (await show(client, me, conversation_id, messages[1]["id"], 3)).json()["messages"][1]
        assert rated["id"] == third and rated["metadata"]["feedback"]["rating"] == "up"


async def test_versions_nest_an_edit_keeps_the_regenerations_made_on_its_branch(make_settings):
    async with running(make_settings()) as client:
        me = await visitor(client)
        conversation_id = new_conversation_id()
        await say(client, me, conversation_id, "question")
        question = (await history(client, me, conversation_id))[0]["id"]
        await say(client, me, conversation_id, "", trigger="regenerate-message")
        assert numbers(await history(client, me, conversation_id)) == [("assistant", 2, 2)]

        await say(client, me, conversation_id, "question, edited", messageId=question)
        messages = await history(client, me, conversation_id)
        assert numbers(messages) == [("user", 2, 2)]  # the new branch's answer has no versions of its own
        await say(client, me, conversation_id, "", trigger="regenerate-message")
        assert numbers(await history(client, me, conversation_id)) == [("user", 2, 2), ("assistant", 2, 2)]

        first_branch = (await show(client, me, conversation_id, question, 1)).json()["messages"]
        assert said(first_branch) == ["question"] and numbers(first_branch) == [("user", 1, 2), ("assistant", 2, 2)]
        oldest = (await show(client, me, conversation_id, first_branch[1]["id"], 1)).json()["messages"]
        assert numbers(oldest) == [("user", 1, 2), ("assistant", 1, 2)]
        second_branch = (await show(client, me, conversation_id, question, 2)).json()["messages"]
        assert said(second_branch) == ["question, edited"]
        assert numbers(second_branch) == [("user", 2, 2), ("assistant", 2, 2)]


async def test_version_requests_are_checked_and_owned(make_settings):
    async with running(make_settings()) as client:
        me, other = await visitor(client), await visitor(client)
        conversation_id = new_conversation_id()
        await say(client, me, conversation_id, "one")
        question = (await history(client, me, conversation_id))[0]["id"]
        await say(client, me, conversation_id, "one, edited", messageId=question)

        for version, status in ((3, 404), (0, 400), ("two", 400)):
            response = await show(client, me, conversation_id, question, version)  # type: ignore[arg-type]
            assert response.status_code == status, response.text
            assert response.json()["error"]["code"] in ("NOT_FOUND", "VALIDATION_ERROR")
        assert (await show(client, me, conversation_id, "no-such-message", 1)).status_code == 404
        assert (await show(client, other, conversation_id, question, 1)).status_code == 404
        assert (await show(client, me, new_conversation_id(), question, 1)).status_code == 404
        # Another visitor cannot edit into the conversation either, and an edit of no message is not found.
        body = chat_body(conversation_id, "mine now", messageId=question)
        body["messages"][0]["id"] = question
        assert (await client.post("/api/chat", json=body, headers=other)).status_code == 404
        body = chat_body(conversation_id, "edit of nothing", messageId="u-missing")
        assert (await client.post("/api/chat", json=body, headers=me)).status_code == 404
        assert said(await history(client, me, conversation_id)) == ["one, edited"]


async def test_switching_while_an_answer_streams_is_a_conflict(make_settings):
    with serving(make_settings(demo_token_delay_ms=20.0)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            me = await visitor(client)
            client.headers.update(me)
            conversation_id = new_conversation_id()
            await say(client, me, conversation_id, "one")
            question = (await history(client, me, conversation_id))[0]["id"]
            await say(client, me, conversation_id, "one, edited", messageId=question)
            response, _chunks, _ = await stream_some(client, conversation_id, 3)
            switched = await show(client, me, conversation_id, question, 1)
            assert switched.status_code == 409 and switched.json()["error"]["code"] == "CONFLICT"
            await client.delete(f"/api/chat/{conversation_id}/stream")
            await response.aclose()
            await saved_answer(client, conversation_id)
            assert (await show(client, me, conversation_id, question, 1)).status_code == 200


def test_the_real_ai_chat_edits_and_regenerates(make_settings):
    """useChat's `sendMessage({ text, messageId })` and `regenerate()`, by the real `ai` Chat."""
    with serving(make_settings()) as base_url:
        cookie = f"threadline_client={httpx.get(f'{base_url}/health').headers[HEADER]}"
        result = edit_with_chat(base_url, cookie, new_conversation_id())
    assert result["errors"] == [] and result["valid"] is True
    assert [said([m]) for m in result["messages"] if m["role"] == "user"] == [["one"], ["two, edited"]]
    answer = result["messages"][-1]["parts"]
    assert "I can see 1 earlier message " in "".join(p.get("text", "") for p in answer)
    assert numbers(result["history"]) == [("user", 2, 2), ("assistant", 2, 2)]
    assert said(result["history"]) == ["one", "two, edited"]


def test_the_python_client_edits_regenerates_and_switches(make_settings):
    with serving(make_settings()) as base_url, Client(base_url) as client:
        first = client.ask("one")
        client.ask("two", first.conversation_id)
        conversation_id = first.conversation_id
        question = client.messages(conversation_id)[2]
        edited = client.edit(conversation_id, question["id"], "two, edited")
        assert "You said: \u201ctwo, edited\u201d" in edited.text
        again = client.regenerate(conversation_id)
        assert again.id != edited.id
        messages = client.messages(conversation_id)
        assert numbers(messages) == [("user", 2, 2), ("assistant", 2, 2)]
        shown = client.show_version(conversation_id, question["id"], 1)
        assert said(shown) == ["one", "two"] and numbers(shown) == [("user", 1, 2)]
        with pytest.raises(ThreadlineError) as refused:
            client.show_version(conversation_id, question["id"], 5)
        assert refused.value.status == 404
